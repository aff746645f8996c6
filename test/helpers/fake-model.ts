import type { SyncModel } from '../../worker/service/model.ts';

/**
 * A SyncModel with nothing behind it: every method throws "not faked" unless `overrides` gives it,
 * and each call is recorded, so that a route test states what it expects the model to be asked.
 */
export function fakeModel(overrides: Partial<SyncModel> = {}) {
  const calls: Array<[string, unknown[]]> = [];
  const model = new Proxy({} as SyncModel, {
    get(_target, property: string) {
      return (...args: unknown[]) => {
        calls.push([property, args]);
        const method = (overrides as Record<string, ((...a: unknown[]) => unknown) | undefined>)[property];
        if (!method) throw new Error(`the fake model was not given ${property}`);
        return method(...args);
      };
    },
  });
  return { model, calls };
}
