import { storedPassword } from '../../../shared/gui-password.ts';
import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import { decodeConfiguration, sectionDefaults } from '../../../shared/config/decode.ts';
import type {
  Configuration,
  DeviceConfiguration,
  FolderConfiguration,
} from '../../../shared/config/defaults.ts';
import { ConfigProblem, isObject, overlay } from '../../../shared/config/shape.ts';
import { canonicalDeviceId, deviceIdProblem } from '../../../shared/device-id.ts';
import type { WorkerConfig } from '../../config/worker-config.ts';
import { invalidConfig, invalidDeviceId, noSuch } from '../http-errors.ts';

export interface ConfigRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  /** Whether what was saved differs from what is served in a way only a new start applies. */
  requiresRestart: () => boolean;
}

/**
 * Syncthing's configuration endpoints, with its semantics: whole sections replaced (PUT) or merged
 * (PATCH), new folders and devices starting from `defaults`, a change answered with 200 and no body
 * once every worker has it. A field of a body that Syncthing does not have is skipped, as Syncthing
 * skips it (shape.ts, UnknownFields); every field it has is checked. Registered without a prefix: they
 * live under /rest/config and, for Syncthing's own command-line client, /rest/system/config.
 */
export async function configRoutes(app: FastifyInstance, options: ConfigRouteOptions): Promise<void> {
  const { config } = options;
  // Syncthing reads every body as JSON whatever its type says, and its clients rely on that.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(invalidConfig(`the body is not JSON: ${(error as Error).message}`), undefined);
    }
  });

  // A change that cannot be used or saved is answered by the app's error handler (asHttpError).
  const change = async (reply: FastifyReply, edit: (draft: Configuration) => void) => {
    // A password given in plain text is stored as its bcrypt hash, as Syncthing stores it.
    const probe = structuredClone(config.current);
    edit(probe);
    const password =
      probe.gui.password === config.current.gui.password
        ? undefined
        : await storedPassword(probe.gui.password);
    await config.change((draft) => {
      edit(draft);
      if (password !== undefined) draft.gui.password = password;
    });
    // Syncthing answers a saved change with 200 and nothing else.
    return reply.code(200).send();
  };
  // A section's body laid over `base`; what Syncthing does not have is skipped, the rest checked.
  const fromBody = <T>(base: T, request: FastifyRequest, field: string): T =>
    overlay(base, object(body(request)), field, 'ignore');
  const whole = async (request: FastifyRequest, reply: FastifyReply) => {
    const next = decodeConfiguration(await passwordHashed(body(request)), config.myId, '', 'ignore');
    return change(reply, (draft) => Object.assign(draft, next));
  };
  const inSync = async () => ({ configInSync: !options.requiresRestart() });

  for (const prefix of ['/rest/config', '/rest/system/config']) {
    app.get(prefix, async () => config.current);
    app.get(`${prefix}/insync`, inSync);
  }
  app.put('/rest/config', whole);
  // Deprecated in Syncthing, and what its command-line client 1.19 sends.
  app.post('/rest/system/config', whole);
  app.get('/rest/config/restart-required', async () => ({ requiresRestart: options.requiresRestart() }));

  // Devices by their canonical ID, folders by theirs; each new one starts from its defaults.
  collection<DeviceConfiguration>(app, change, config, {
    name: 'device',
    key: 'deviceID',
    items: (from) => from.devices,
    replace: (draft, items) => {
      draft.devices = items;
    },
    defaults: (from) => from.defaults.device,
    canonical: checkedDeviceId,
    beforeRemove: (id) => {
      if (id === config.myId) {
        throw invalidConfig(`${id} is this device itself, which is always in the configuration`);
      }
    },
    // Its folders stop being shared with it: what removing a device means.
    afterRemove: (draft, id) => {
      for (const folder of draft.folders) {
        folder.devices = folder.devices.filter((shared) => shared.deviceID !== id);
      }
    },
  });
  collection<FolderConfiguration>(app, change, config, {
    name: 'folder',
    key: 'id',
    items: (from) => from.folders,
    replace: (draft, items) => {
      draft.folders = items;
    },
    defaults: (from) => from.defaults.folder,
    canonical: (id) => id,
  });

  // Sections: PUT starts from Syncthing's defaults, PATCH from what is there.
  const section = <K extends 'options' | 'gui' | 'ldap'>(path: string, key: K) => {
    app.get(path, async () => config.current[key]);
    app.put(path, async (request, reply) => {
      const value = fromBody(sectionDefaults[key], request, key);
      return change(reply, (draft) => {
        draft[key] = value as Configuration[K];
      });
    });
    app.patch(path, async (request, reply) => {
      const value = fromBody(config.current[key], request, key);
      return change(reply, (draft) => {
        draft[key] = value;
      });
    });
  };
  section('/rest/config/options', 'options');
  section('/rest/config/gui', 'gui');
  section('/rest/config/ldap', 'ldap');

  const defaultsOf = <K extends 'folder' | 'device'>(path: string, key: K) => {
    app.get(path, async () => config.current.defaults[key]);
    app.put(path, async (request, reply) => {
      const value = fromBody(sectionDefaults[key], request, `defaults.${key}`);
      return change(reply, (draft) => {
        draft.defaults[key] = value as Configuration['defaults'][K];
      });
    });
    app.patch(path, async (request, reply) => {
      const value = fromBody(config.current.defaults[key], request, `defaults.${key}`);
      return change(reply, (draft) => {
        draft.defaults[key] = value;
      });
    });
  };
  defaultsOf('/rest/config/defaults/folder', 'folder');
  defaultsOf('/rest/config/defaults/device', 'device');
  app.get('/rest/config/defaults/ignores', async () => config.current.defaults.ignores);
  app.put('/rest/config/defaults/ignores', async (request, reply) => {
    const value = fromBody(sectionDefaults.ignores, request, 'defaults.ignores');
    return change(reply, (draft) => {
      draft.defaults.ignores = value;
    });
  });
}

export function checkedDeviceId(text: string): string {
  const problem = deviceIdProblem(text);
  if (problem) throw invalidDeviceId(text, problem);
  return canonicalDeviceId(text);
}

/** A whole configuration's GUI password, given in plain text, as its hash: checked as such after. */
async function passwordHashed(value: unknown): Promise<unknown> {
  if (!isObject(value) || !isObject(value.gui) || typeof value.gui.password !== 'string') return value;
  return { ...value, gui: { ...value.gui, password: await storedPassword(value.gui.password) } };
}

function body(request: FastifyRequest): unknown {
  if (request.body === undefined) throw invalidConfig('the request has no body: send the JSON to save');
  return request.body;
}

function object(value: unknown): Record<string, unknown> {
  if (!isObject(value)) throw invalidConfig('the body must be a JSON object');
  return value;
}

function list(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw invalidConfig('the body must be a JSON list');
  return value;
}

interface Collection<T> {
  /** As error messages name one: `device`, `folder`; the path is /rest/config/NAMEs. */
  name: string;
  key: keyof T & string;
  items: (config: Configuration) => T[];
  replace: (draft: Configuration, items: T[]) => void;
  defaults: (config: Configuration) => T;
  /** The canonical form of an ID, or an HttpError for a malformed one. */
  canonical: (id: string) => string;
  beforeRemove?: (id: string) => void;
  afterRemove?: (draft: Configuration, id: string) => void;
}

/**
 * A list of the configuration as Syncthing serves it: GET the list, PUT a list (each added or
 * replaced), POST one (added or replaced), and GET, PUT (from the defaults), PATCH (merged) and DELETE
 * one by ID; an unknown ID is a 404.
 */
function collection<T extends DeviceConfiguration | FolderConfiguration>(
  app: FastifyInstance,
  change: (reply: FastifyReply, edit: (draft: Configuration) => void) => Promise<unknown>,
  config: WorkerConfig,
  spec: Collection<T>,
): void {
  const { name, key } = spec;
  const path = `/rest/config/${name}s`;
  // Leniently: a malformed ID in a body is named with its field when the result is checked.
  const idOf = (item: T) => {
    try {
      return spec.canonical(item[key] as string);
    } catch {
      return item[key] as string;
    }
  };
  const paramId = (request: FastifyRequest) => spec.canonical((request.params as { id: string }).id);
  const existing = (request: FastifyRequest) => {
    const id = paramId(request);
    const item = spec.items(config.current).find((candidate) => candidate[key] === id);
    if (!item) throw noSuch(`no ${name} with ID ${JSON.stringify(id).replace(/^"([A-Z2-7-]{63})"$/, '$1')}`);
    return item;
  };
  // The ID in the body decides, as in Syncthing; the one in the path fills it in, and must not disagree.
  const made = (input: unknown, field: string, base: T, fromPath?: string): T => {
    const item = overlay(base, input, field, 'ignore');
    const given = item[key] as string;
    if (fromPath === undefined) return item;
    if (given === '') return { ...item, [key]: fromPath };
    if (idOf(item) !== fromPath) {
      throw new ConfigProblem(
        `${field}.${key}`,
        `${JSON.stringify(given)} differs from the ID in the path (${fromPath})`,
      );
    }
    return item;
  };
  // Syncthing's SetDevices/SetFolders: each replaces the one with its ID, or is added. One ID twice in a
  // request is a mistake: Syncthing would refuse the result as a duplicate.
  const setAll = (items: T[]) => (draft: Configuration) => {
    const list = [...spec.items(draft)];
    const given = new Set<string>();
    items.forEach((item, i) => {
      const id = item[key] === '' ? '' : idOf(item);
      if (id !== '' && given.has(id)) {
        throw new ConfigProblem(
          `${name}s[${i}].${key}`,
          `${JSON.stringify(item[key])} is listed twice in the request`,
        );
      }
      given.add(id);
      const at = list.findIndex((other) => id !== '' && other[key] === id);
      if (at >= 0) list[at] = item;
      else list.push(item);
    });
    spec.replace(draft, list);
  };

  app.get(path, async () => spec.items(config.current));
  app.put(path, async (request, reply) => {
    const defaults = spec.defaults(config.current);
    const items = list(body(request)).map((item, i) => made(item, `${name}s[${i}]`, defaults));
    return change(reply, setAll(items));
  });
  app.post(path, async (request, reply) =>
    change(reply, setAll([made(object(body(request)), name, spec.defaults(config.current))])),
  );
  app.get(`${path}/:id`, async (request) => existing(request));
  app.put(`${path}/:id`, async (request, reply) => {
    const item = made(object(body(request)), name, spec.defaults(config.current), paramId(request));
    return change(reply, setAll([item]));
  });
  app.patch(`${path}/:id`, async (request, reply) => {
    const current = existing(request);
    return change(reply, setAll([made(object(body(request)), name, current, current[key] as string)]));
  });
  app.delete(`${path}/:id`, async (request, reply) => {
    const id = existing(request)[key] as string;
    spec.beforeRemove?.(id);
    return change(reply, (draft) => {
      spec.replace(
        draft,
        spec.items(draft).filter((item) => item[key] !== id),
      );
      spec.afterRemove?.(draft, id);
    });
  });
}
