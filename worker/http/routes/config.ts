import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import { decodeConfiguration, sectionDefaults } from '../../../shared/config/decode.ts';
import type {
  Configuration,
  DeviceConfiguration,
  FolderConfiguration,
} from '../../../shared/config/defaults.ts';
import { ConfigProblem, isObject, overlay } from '../../../shared/config/shape.ts';
import { canonicalDeviceId, deviceIdProblem } from '../../../shared/device-id.ts';
import { ChangeFailed, type WorkerConfig } from '../../config/worker-config.ts';
import { HttpError, invalidConfig, invalidDeviceId, noSuch } from '../http-errors.ts';

export interface ConfigRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  /** Whether what was saved differs from what is served in a way only a new start applies. */
  requiresRestart: () => boolean;
}

/**
 * Syncthing's configuration endpoints, with its semantics: whole sections replaced (PUT) or merged
 * (PATCH), new folders and devices starting from `defaults`, a change answered with 200 and no body
 * once every worker has it. Registered without a prefix: they live under /rest/config and, for
 * Syncthing's own command-line client, /rest/system/config.
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

  const change = async (reply: FastifyReply, edit: (draft: Configuration) => void) => {
    try {
      await config.change(edit);
    } catch (error) {
      throw asHttpError(error);
    }
    // Syncthing answers a saved change with 200 and nothing else.
    return reply.code(200).send();
  };
  const whole = async (request: FastifyRequest, reply: FastifyReply) => {
    const next = decodeConfiguration(body(request), config.myId, '');
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

  // Devices: by canonical ID; each new one starts from defaults.device.
  const deviceAt = (request: FastifyRequest) => {
    const id = deviceIdParam(request);
    const device = config.current.devices.find((candidate) => candidate.deviceID === id);
    if (!device) throw noSuch(`no device with ID ${id}`);
    return device;
  };
  const newDevice = (input: unknown, field: string, id?: string) =>
    withId(overlay(config.current.defaults.device, input, field), 'deviceID', id, field);
  app.get('/rest/config/devices', async () => config.current.devices);
  app.put('/rest/config/devices', async (request, reply) => {
    const devices = list(body(request)).map((item, i) => newDevice(item, `devices[${i}]`));
    return change(reply, (draft) => setAll(draft.devices, devices, 'deviceID'));
  });
  app.post('/rest/config/devices', async (request, reply) => {
    const device = newDevice(object(body(request)), 'device');
    return change(reply, (draft) => setAll(draft.devices, [device], 'deviceID'));
  });
  app.get('/rest/config/devices/:id', async (request) => deviceAt(request));
  app.put('/rest/config/devices/:id', async (request, reply) => {
    const device = newDevice(object(body(request)), 'device', deviceIdParam(request));
    return change(reply, (draft) => setAll(draft.devices, [device], 'deviceID'));
  });
  app.patch('/rest/config/devices/:id', async (request, reply) => {
    const current = deviceAt(request);
    const device = withId(
      overlay(current, object(body(request)), 'device'),
      'deviceID',
      current.deviceID,
      'device',
    );
    return change(reply, (draft) => setAll(draft.devices, [device], 'deviceID'));
  });
  app.delete('/rest/config/devices/:id', async (request, reply) => {
    const { deviceID } = deviceAt(request);
    if (deviceID === config.myId) {
      throw invalidConfig(`${deviceID} is this device itself, which is always in the configuration`);
    }
    return change(reply, (draft) => {
      draft.devices = draft.devices.filter((device) => device.deviceID !== deviceID);
      // Its folders stop being shared with it: what deleting a device means.
      for (const folder of draft.folders) {
        folder.devices = folder.devices.filter((shared) => shared.deviceID !== deviceID);
      }
    });
  });

  // Folders: by ID; each new one starts from defaults.folder.
  const folderAt = (request: FastifyRequest) => {
    const { id } = request.params as { id: string };
    const folder = config.current.folders.find((candidate) => candidate.id === id);
    if (!folder) throw noSuch(`no folder with ID ${JSON.stringify(id)}`);
    return folder;
  };
  const newFolder = (input: unknown, field: string, id?: string) =>
    withId(overlay(config.current.defaults.folder, input, field), 'id', id, field);
  app.get('/rest/config/folders', async () => config.current.folders);
  app.put('/rest/config/folders', async (request, reply) => {
    const folders = list(body(request)).map((item, i) => newFolder(item, `folders[${i}]`));
    return change(reply, (draft) => setAll(draft.folders, folders, 'id'));
  });
  app.post('/rest/config/folders', async (request, reply) => {
    const folder = newFolder(object(body(request)), 'folder');
    return change(reply, (draft) => setAll(draft.folders, [folder], 'id'));
  });
  app.get('/rest/config/folders/:id', async (request) => folderAt(request));
  app.put('/rest/config/folders/:id', async (request, reply) => {
    const folder = newFolder(object(body(request)), 'folder', (request.params as { id: string }).id);
    return change(reply, (draft) => setAll(draft.folders, [folder], 'id'));
  });
  app.patch('/rest/config/folders/:id', async (request, reply) => {
    const current = folderAt(request);
    const folder = withId(overlay(current, object(body(request)), 'folder'), 'id', current.id, 'folder');
    return change(reply, (draft) => setAll(draft.folders, [folder], 'id'));
  });
  app.delete('/rest/config/folders/:id', async (request, reply) => {
    const { id } = folderAt(request);
    return change(reply, (draft) => {
      draft.folders = draft.folders.filter((folder) => folder.id !== id);
    });
  });

  // Sections: PUT starts from Syncthing's defaults, PATCH from what is there.
  const section = <K extends 'options' | 'gui' | 'ldap'>(path: string, key: K) => {
    app.get(path, async () => config.current[key]);
    app.put(path, async (request, reply) => {
      const value = overlay(sectionDefaults[key], object(body(request)), key);
      return change(reply, (draft) => {
        draft[key] = value as Configuration[K];
      });
    });
    app.patch(path, async (request, reply) => {
      const value = overlay(config.current[key], object(body(request)), key);
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
      const value = overlay(sectionDefaults[key], object(body(request)), `defaults.${key}`);
      return change(reply, (draft) => {
        draft.defaults[key] = value as Configuration['defaults'][K];
      });
    });
    app.patch(path, async (request, reply) => {
      const value = overlay(config.current.defaults[key], object(body(request)), `defaults.${key}`);
      return change(reply, (draft) => {
        draft.defaults[key] = value;
      });
    });
  };
  defaultsOf('/rest/config/defaults/folder', 'folder');
  defaultsOf('/rest/config/defaults/device', 'device');
  app.get('/rest/config/defaults/ignores', async () => config.current.defaults.ignores);
  app.put('/rest/config/defaults/ignores', async (request, reply) => {
    const value = overlay(sectionDefaults.ignores, object(body(request)), 'defaults.ignores');
    return change(reply, (draft) => {
      draft.defaults.ignores = value;
    });
  });
}

/** A device ID from the path, canonical; 400 naming what is wrong with a malformed one. */
export function deviceIdParam(request: FastifyRequest): string {
  const { id } = request.params as { id: string };
  return checkedDeviceId(id);
}

export function checkedDeviceId(text: string): string {
  const problem = deviceIdProblem(text);
  if (problem) throw invalidDeviceId(text, problem);
  return canonicalDeviceId(text);
}

/** A configuration error as the answer says it: 400 for the request, 409 or 500 for a failed save. */
export function asHttpError(error: unknown): unknown {
  if (error instanceof ConfigProblem) return invalidConfig(error.message);
  if (error instanceof ChangeFailed) {
    const code =
      error.status === 400
        ? 'SYNCD_ERR_INVALID_CONFIG'
        : error.status === 409
          ? 'SYNCD_ERR_CONFIG_CONFLICT'
          : 'SYNCD_ERR_CONFIG_NOT_SAVED';
    return new HttpError(code, error.message);
  }
  return error;
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

// The ID in the body decides, as in Syncthing; the one in the path fills it in, and must not disagree.
function withId<T extends FolderConfiguration | DeviceConfiguration>(
  value: T,
  key: keyof T & ('id' | 'deviceID'),
  fromPath: string | undefined,
  field: string,
): T {
  const inBody = value[key] as string;
  if (fromPath === undefined || inBody === '') {
    if (fromPath !== undefined) (value as Record<string, unknown>)[key] = fromPath;
    return value;
  }
  const same =
    key === 'deviceID'
      ? deviceIdProblem(inBody) === undefined && canonicalDeviceId(inBody) === fromPath
      : inBody === fromPath;
  if (!same) {
    throw new ConfigProblem(
      field === '' ? key : `${field}.${key}`,
      `${JSON.stringify(inBody)} differs from the ID in the path (${fromPath})`,
    );
  }
  return value;
}

// Syncthing's SetDevices/SetFolders: each replaces the one with its ID, or is added. One ID twice in a
// request is a mistake: Syncthing would refuse the result as a duplicate.
function setAll<T>(into: T[], items: T[], key: keyof T): void {
  const given: unknown[] = [];
  items.forEach((item, i) => {
    if (given.some((other) => other === item[key] || sameDevice(other, item[key], key))) {
      throw new ConfigProblem(
        `[${i}].${String(key)}`,
        `${JSON.stringify(item[key])} is listed twice in the request`,
      );
    }
    given.push(item[key]);
    const at = into.findIndex(
      (existing) => existing[key] === item[key] || sameDevice(existing[key], item[key], key),
    );
    if (at >= 0) into[at] = item;
    else into.push(item);
  });
}

function sameDevice(a: unknown, b: unknown, key: unknown): boolean {
  if (key !== 'deviceID' || typeof a !== 'string' || typeof b !== 'string') return false;
  return deviceIdProblem(b) === undefined && canonicalDeviceId(b) === a;
}
