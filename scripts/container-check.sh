#!/usr/bin/env bash
# The image built and run for real, as docs/container.md says, with podman (daemonless, so it runs where
# a Docker daemon cannot): it serves, passes its health check, lists itself with `syncd` through `exec`,
# pairs with a real Syncthing on this machine and syncs a file each way, runs as another uid on
# bind-mounted folders, reports a sync listener that cannot listen as unhealthy, and stops gracefully
# (exit 0) on `stop`. Not part of `npm test`: it takes minutes (the image's build runs `npm ci`).
#
#   scripts/container-check.sh      (as root; installs podman, runc and debootstrap from Debian if missing)
#
# Where node:24-slim cannot be pulled (no registry but npm's and Debian's is reachable here), a stand-in
# is made and tagged node:24-slim: Debian bookworm (debootstrap minbase) with this machine's node and
# npm, the node user (uid 1000), the CA bundle, and better-sqlite3's prebuilt binary where its installer
# looks before downloading (test/helpers/prebuilds.ts does the same for the process-level tests). It is
# kept for the next run, and made again when this machine's node changes; so is the image built
# (localhost/syncd-container-check, and its stages), as the next build's cache. Nothing else is left.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v syncthing >/dev/null || missing+=(syncthing)
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

started=$SECONDS
step() { printf '%4ss  %s\n' "$((SECONDS - started))" "$*"; }
fail() {
  printf 'FAILED: %s\n' "$*" >&2
  exit 1
}

work=$(mktemp -d /var/tmp/syncd-container-check.XXXXXX)
name=syncd-check-$$
containers=("$name" "$name-down" "$name-uid")
syncthing_pid=
cleanup() {
  for container in "${containers[@]}"; do podman rm -f -v -t 0 "$container" >/dev/null 2>&1 || true; done
  podman volume rm -f "$name-state" "$name-data" >/dev/null 2>&1 || true
  [ -n "$syncthing_pid" ] && kill "$syncthing_pid" 2>/dev/null && wait "$syncthing_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Machines such as this one: crun 1.8 refuses cgroup v1 with a controller left on the unified hierarchy
# ("cgroups in hybrid mode not supported"), where runc works; and without CAP_SYS_RESOURCE no limit can
# be raised, so the containers get the limits podman itself runs with (it lowers nproc to 32768).
hard_nproc=$(ulimit -Hu)
[ "$hard_nproc" = unlimited ] || [ "$hard_nproc" -gt 32768 ] && hard_nproc=32768
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=$hard_nproc:$hard_nproc"]
[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF=$work/containers.conf
# Podman schedules health checks through systemd timers, and logs an error at every run and stop where
# there is no systemd: the checks below run the image's HEALTHCHECK themselves (`podman healthcheck
# run`); those lines are left out.
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

base=node:24-slim
# What the stand-in is made of: this machine's node, and the recipe below (its number raised when it changes).
stand_in="node $(node --version), recipe 1"
if podman pull -q "docker.io/library/$base" >/dev/null 2>&1; then
  step "pulled $base"
elif [ "$(podman image inspect "localhost/$base" --format '{{index .Labels "syncd.stand-in"}}' 2>/dev/null)" = "$stand_in" ]; then
  step "$base cannot be pulled: the stand-in made before (Debian bookworm, $stand_in)"
else
  step "$base cannot be pulled: making a stand-in (Debian bookworm minbase, $stand_in)"
  rootfs=$work/rootfs
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 ||
    fail "debootstrap: $(tail -3 "$work/debootstrap.log")"
  node_bin=$(command -v node)
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  cp "$node_bin" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules" "$rootfs/opt/prebuilds"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  # This machine's CA bundle: its HTTPS may pass a proxy with a certificate of its own.
  mkdir -p "$rootfs/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
  sqlite=$root/node_modules/better-sqlite3
  version=$(node -p "require('$sqlite/package.json').version")
  tar -czf "$rootfs/opt/prebuilds/better-sqlite3-v$version-node-v$(node -p process.versions.modules)-linux-x64.tar.gz" \
    -C "$sqlite" build/Release/better_sqlite3.node
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import -q \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV npm_config_better_sqlite3_local_prebuilds=/opt/prebuilds' \
    --change "LABEL syncd.stand-in=\"$stand_in\"" \
    --change 'CMD ["node"]' - "localhost/$base" >/dev/null
  rm -rf "$rootfs"
  step "stand-in $base made"
fi

# --format docker: the OCI format has no HEALTHCHECK. The image and its stages stay tagged, the build's
# cache for the next run; those of builds before, untagged now, are removed.
image=localhost/syncd-container-check
nice -n 10 podman build -q --format docker -t "$image" . >"$work/build.log" 2>&1 ||
  fail "podman build: $(tail -20 "$work/build.log")"
for stage in build deps; do podman build -q --format docker --target "$stage" -t "$image:$stage" . >/dev/null; done
podman image prune -f >/dev/null
step "image built"

port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
gui_port=$(port)
sync_port=$(port)
run() { podman run -d "$@" >/dev/null; }
run --name "$name" --hostname syncd -p "127.0.0.1:$gui_port:8384" -p "127.0.0.1:$sync_port:22000/tcp" \
  -v "$name-state:/var/lib/syncd" -v "$name-data:/data" --stop-timeout 30 "$image"

healthy() {
  for _ in $(seq 1 60); do
    podman healthcheck run "$1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}
healthy "$name" || fail "not healthy within 30 s: $(podman logs "$name" 2>&1 | tail -5)"
step "running and healthy (the image's HEALTHCHECK: node dist/scripts/healthcheck.js --sync)"

status=$(podman exec "$name" syncd status)
grep -q '^sync  *tcp://0.0.0.0:22000' <<<"$status" || fail "syncd status: $status"
syncd_id=$(podman exec "$name" syncd id)
api_key=$(podman exec "$name" grep -m1 apiKey /var/lib/syncd/config.json | sed 's/.*"apiKey": *"\([^"]*\)".*/\1/')
pong=$(curl -sf -H "X-API-Key: $api_key" "http://127.0.0.1:$gui_port/rest/system/ping") || fail "ping from the host"
[ "$pong" = '{"ping":"pong"}' ] || fail "ping: $pong"
step "syncd status and id through exec; ping from the host with the key from config.json"

# A real Syncthing on this machine, where the container reaches it: the bridge's gateway.
gateway=$(podman inspect "$name" --format '{{.NetworkSettings.Gateway}}')
st=$work/syncthing
st_gui=$(port)
st_listen=$(port)
syncthing generate --home="$st/home" --no-default-folder --skip-port-probing >/dev/null 2>&1
sed -i -E "s#<listenAddress>[^<]*</listenAddress>#<listenAddress>tcp://$gateway:$st_listen</listenAddress>#;
  s#<(globalAnnounceEnabled|localAnnounceEnabled|relaysEnabled|natEnabled)>true#<\1>false#g;
  s#<urAccepted>0#<urAccepted>-1#" "$st/home/config.xml"
STNODEFAULTFOLDER=1 HOME=$st syncthing serve --home="$st/home" --no-browser --no-upgrade --no-restart \
  --gui-address="http://127.0.0.1:$st_gui" --gui-apikey=check-key >"$st/log" 2>&1 &
syncthing_pid=$!
st_api() { curl -sf -H 'X-API-Key: check-key' "$@"; }
for _ in $(seq 1 60); do st_api "http://127.0.0.1:$st_gui/rest/system/ping" >/dev/null 2>&1 && break; sleep 0.5; done
st_id=$(st_api "http://127.0.0.1:$st_gui/rest/system/status" | node -p 'JSON.parse(require("fs").readFileSync(0)).myID')

# docs/container.md's pairing block as written, but for the two addresses a reader sets (given here):
# `docker` is podman, its container "syncd" this check's, `syncthing cli` this Syncthing's, ~ its home.
pairing=$(node -e '
  const page = require("fs").readFileSync("docs/container.md", "utf8");
  const section = page.split(/^## /m).find((part) => part.startsWith("Pairing with Syncthing\n"));
  process.stdout.write(section?.match(/^```sh\n([\s\S]*?)^```$/m)?.[1] ?? "");
')
[ -n "$pairing" ] || fail "docs/container.md has no sh block under Pairing with Syncthing"
grep -q '^SYNCTHING_ADDRESS=' <<<"$pairing" && grep -q '^SYNCD_ADDRESS=' <<<"$pairing" ||
  fail "the pairing block no longer sets SYNCTHING_ADDRESS and SYNCD_ADDRESS first"
(
  docker() {
    if [ "$1" = exec ] && [ "$2" = syncd ]; then podman exec "$name" "${@:3}"; else podman "$@"; fi
  }
  syncthing() {
    case "$1" in
      cli) command syncthing cli --gui-address="127.0.0.1:$st_gui" --gui-apikey=check-key "${@:2}" ;;
      --device-id) command syncthing --device-id --home="$st/home" ;;
      *) command syncthing "$@" ;;
    esac
  }
  export HOME=$st
  SYNCTHING_ADDRESS=tcp://$gateway:$st_listen
  SYNCD_ADDRESS=tcp://127.0.0.1:$sync_port
  set -x
  eval "$(grep -vE '^(SYNCTHING_ADDRESS|SYNCD_ADDRESS)=' <<<"$pairing")"
) >"$work/pairing.log" 2>&1 || fail "the pairing block of docs/container.md: $(tail -5 "$work/pairing.log")"
echo from-syncthing >"$st/photos/to-syncd.txt"
for _ in $(seq 1 120); do
  [ "$(podman exec "$name" cat /data/photos/to-syncd.txt 2>/dev/null)" = from-syncthing ] && break
  sleep 0.5
done
[ "$(podman exec "$name" cat /data/photos/to-syncd.txt 2>/dev/null)" = from-syncthing ] ||
  fail "Syncthing's file did not reach /data/photos: $(podman exec "$name" syncd folders 2>&1)"
podman exec "$name" sh -c 'echo from-syncd >/data/photos/to-syncthing.txt && syncd scan photos' >/dev/null
for _ in $(seq 1 120); do
  [ "$(cat "$st/photos/to-syncthing.txt" 2>/dev/null)" = from-syncd ] && break
  sleep 0.5
done
[ "$(cat "$st/photos/to-syncthing.txt" 2>/dev/null)" = from-syncd ] || fail "syncd's file did not reach Syncthing"
step "paired with Syncthing $(command syncthing --version | cut -d' ' -f2) by the docs' block: a file each way"

# A sync listener that cannot listen: a second container in the first one's network, where port 22000
# is taken (its REST API at another port). The plain check passes, the image's fails, and says why.
run --name "$name-down" --network "container:$name" -e SYNCD_ADDRESS=0.0.0.0:8385 "$image"
for _ in $(seq 1 60); do podman exec "$name-down" node dist/scripts/healthcheck.js >/dev/null 2>&1 && break; sleep 0.5; done
podman exec "$name-down" node dist/scripts/healthcheck.js >/dev/null || fail "the plain check, listener down"
if podman healthcheck run "$name-down" >/dev/null 2>&1; then fail "healthy with its sync listener down"; fi
message=$(podman exec "$name-down" node dist/scripts/healthcheck.js --sync 2>&1 || true)
grep -q 'sync listener tcp://0.0.0.0:22000 is not listening: .*(EADDRINUSE)' <<<"$message" || fail "the message: $message"
podman rm -f -v -t 0 "$name-down" >/dev/null
step "unhealthy while its sync listener cannot listen: $message"

# Graceful stop: SIGTERM, a drained worker, exit 0, well within the grace time.
stop_started=$SECONDS
podman stop "$name" >/dev/null
code=$(podman inspect "$name" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || fail "exit code $code after stop: $(podman logs "$name" 2>&1 | tail -5)"
podman logs "$name" 2>&1 | tail -1 | grep -q '"msg":"supervisor stopped"' || fail "no 'supervisor stopped' line"
step "stopped with exit code 0 in $((SECONDS - stop_started)) s"

# Another uid, as docs/container.md says: the state a named volume given to it with chown, the data a
# bind-mounted folder it owns.
mkdir -p "$work/uid-data"
chown 4242:4242 "$work/uid-data"
podman volume rm -f "$name-state" >/dev/null
podman run --rm --user 0 -v "$name-state:/var/lib/syncd" "$image" chown -R 4242:4242 /var/lib/syncd
run --name "$name-uid" --user 4242:4242 -v "$name-state:/var/lib/syncd" -v "$work/uid-data:/data" "$image"
healthy "$name-uid" || fail "--user 4242:4242 not healthy: $(podman logs "$name-uid" 2>&1 | tail -5)"
podman exec "$name-uid" syncd folders add mine /data/mine >/dev/null
podman exec "$name-uid" sh -c 'echo x >/data/mine/file && syncd scan mine' >/dev/null
[ "$(stat -c %u "$work/uid-data/mine/file")" = 4242 ] || fail "the synced folder's file is not the uid's"
podman stop "$name-uid" >/dev/null
[ "$(podman inspect "$name-uid" --format '{{.State.ExitCode}}')" = 0 ] || fail "--user: exit code after stop"
step "--user 4242:4242 (state chowned, data bind-mounted): healthy, a folder added and scanned, stopped with 0"

echo "container check passed in $((SECONDS - started)) s"
