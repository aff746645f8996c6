import { FOLDER_DEVICE, OBSERVED_DEVICE, OBSERVED_FOLDER } from './defaults.ts';

/** A configuration value that cannot be used; `field` names it as a path (`folders[0].path`). */
export class ConfigProblem extends Error {
  readonly field: string;
  constructor(field: string, problem: string) {
    super(field === '' ? problem : `${field}: ${problem}`);
    this.name = 'ConfigProblem';
    this.field = field;
  }
}

// Lists of objects, by field name, with the value each element starts from; other lists hold strings.
const listElements: Record<string, object> = {
  devices: FOLDER_DEVICE,
  ignoredFolders: OBSERVED_FOLDER,
  remoteIgnoredDevices: OBSERVED_DEVICE,
};
// Maps of string to string, by field name: any key is allowed.
const dictionaries = new Set(['params']);

/**
 * What becomes of a field the base does not have: a request body's is skipped, as Syncthing's JSON
 * decoding skips it (its GUI sends working fields of its own with every save: `$$hashKey`, `_editing`,
 * `options._listenAddressesStr`); the configuration file's is refused, so that a field misspelt by
 * hand is named instead of silently doing nothing.
 */
export type UnknownFields = 'refuse' | 'ignore';

/**
 * `input` laid over `base`, as Syncthing decodes JSON onto a value: a field the input leaves out keeps
 * the base's value, objects merge field by field, lists are replaced whole, and `null` empties a list
 * and leaves anything else as it was. The result has exactly the base's fields and types: a value of
 * another type is a ConfigProblem naming it, and so is a field the base does not have unless `unknown`
 * is 'ignore'. Neither argument is changed.
 */
export function overlay<T>(base: T, input: unknown, field = '', unknown: UnknownFields = 'refuse'): T {
  return merge(base, input, field, lastName(field), unknown) as T;
}

function merge(base: unknown, input: unknown, field: string, name: string, unknown: UnknownFields): unknown {
  if (input === undefined) return structuredClone(base);
  if (input === null) return Array.isArray(base) ? [] : structuredClone(base);
  if (Array.isArray(base)) {
    if (!Array.isArray(input)) throw new ConfigProblem(field, `must be a list, not ${describe(input)}`);
    const element = listElements[name];
    return input.map((item, index) =>
      element === undefined
        ? text(item, `${field}[${index}]`)
        : merge(element, item, `${field}[${index}]`, '', unknown),
    );
  }
  if (isObject(base)) {
    if (!isObject(input)) throw new ConfigProblem(field, `must be an object, not ${describe(input)}`);
    if (dictionaries.has(name)) {
      const result: Record<string, string> = {};
      for (const [key, value] of Object.entries(input)) result[key] = text(value, `${field}.${key}`);
      return result;
    }
    const result: Record<string, unknown> = structuredClone(base);
    for (const [key, value] of Object.entries(input)) {
      const inner = field === '' ? key : `${field}.${key}`;
      if (!Object.hasOwn(base, key)) {
        if (unknown === 'ignore') continue;
        throw new ConfigProblem(inner, 'is not a field of this object');
      }
      result[key] = merge(base[key], value, inner, key, unknown);
    }
    return result;
  }
  if (typeof input !== typeof base) {
    throw new ConfigProblem(field, `must be a ${typeof base}, not ${describe(input)}`);
  }
  if (typeof input === 'number' && !Number.isFinite(input)) {
    throw new ConfigProblem(field, 'must be a finite number');
  }
  return input;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new ConfigProblem(field, `must be a string, not ${describe(value)}`);
  return value;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as an error message shows it: short, and with its type visible. */
export function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'an object';
  const shown = JSON.stringify(value) ?? String(value);
  return shown.length > 40 ? `${shown.slice(0, 37)}...` : shown;
}

function lastName(field: string): string {
  return /([A-Za-z]+)(?:\[\d+\])?$/.exec(field)?.[1] ?? '';
}
