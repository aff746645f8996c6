import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { GuiAuth } from '../gui-auth.ts';
import { invalidBody } from '../http-errors.ts';

export interface GuiLoginOptions extends FastifyPluginOptions {
  gui: GuiAuth;
}

/**
 * Syncthing 2.x's login form and logout (lib/api/api_auth.go): the user and password posted as JSON
 * open a session cookie; 1.19's GUI logs in through HTTP Basic instead (see gui-auth.ts). No key
 * needed: they are under /rest/noauth.
 */
export async function guiLoginRoutes(app: FastifyInstance, options: GuiLoginOptions): Promise<void> {
  const { gui } = options;
  app.post('/rest/noauth/auth/password', async (request, reply) => {
    const body = request.body as
      | { username?: unknown; password?: unknown; stayLoggedIn?: unknown }
      | undefined;
    if (typeof body?.username !== 'string' || typeof body.password !== 'string') {
      throw invalidBody('send {"username": "…", "password": "…", "stayLoggedIn": false} as JSON');
    }
    const client = request.socket.remoteAddress ?? '';
    const opened = await gui.login(client, body.username, body.password, body.stayLoggedIn === true);
    if (opened instanceof Error) throw opened;
    return reply.code(204).header('set-cookie', opened.cookies).send();
  });
  app.post('/rest/noauth/auth/logout', async (_request, reply) =>
    reply.code(204).header('set-cookie', gui.logoutCookie()).send(),
  );
}
