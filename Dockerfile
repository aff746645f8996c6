# syncd in a container (docs/container.md; compose.yaml): docker build -t syncd . &&
#   docker run -p 8384:8384 -p 22000:22000 -v syncd-state:/var/lib/syncd -v syncd-data:/data syncd
# The build stage bundles the sources into dist/: the bundles hold every dependency but native ones.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build

# The production dependencies: only native modules, which cannot be bundled, built for this Node.
# (prepare, the bundling, is the build stage's; npm rebuild runs the native modules' own install steps.)
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm rebuild && mkdir -p node_modules

FROM node:24-slim
ENV NODE_ENV=production \
    SYNCD_ADDRESS=0.0.0.0:8384 \
    SYNCD_HOME=/var/lib/syncd \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/dist ./dist
COPY --from=deps /app/node_modules ./node_modules
# The state, and /data for the folders to sync: the node user's, so that a named volume mounted there
# starts as theirs. `syncd` on the PATH, for `docker exec NAME syncd status`.
RUN mkdir -p /var/lib/syncd /data && chown node:node /var/lib/syncd /data && \
    ln -s /app/dist/bin/syncd.js /usr/local/bin/syncd
# The node user that the official image provides: the service never needs root.
USER node
VOLUME /var/lib/syncd
# The REST interface and GUI, and the sync protocol (options.listenAddresses' default tcp://0.0.0.0:22000).
EXPOSE 8384 22000/tcp
STOPSIGNAL SIGTERM
# Healthy when the REST interface answers and every TCP sync listener listens (--sync).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "dist/scripts/healthcheck.js", "--sync"]
CMD ["npm", "start", "--silent"]
