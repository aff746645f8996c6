// Settings › General, as Syncthing's: this device's name, the minimum free space of the home's disk,
// and where folders go by default; and the worker's CPU priority. Each goes where the REST API keeps
// it: the device (PATCH /rest/config/devices/ID), the folder defaults, the options.
import { patch } from '../api.ts';
import { Field, Check } from '../parts/ui.tsx';
import { myID } from '../store.ts';
import { SaveBar, useSettingsForm } from './settings-form.tsx';

// Syncthing's units of a Size (lib/config/size.go), as its settings dialog offers them.
const UNITS = ['%', 'kB', 'MB', 'GB', 'TB'];

export function GeneralSettings() {
  const form = useSettingsForm(
    (config) => ({
      name: config.devices.find((device) => device.deviceID === myID.value)?.name ?? '',
      folderPath: config.defaults.folder.path,
      minFree: String(config.options.minHomeDiskFree.value),
      minFreeUnit: config.options.minHomeDiskFree.unit,
      setLowPriority: config.options.setLowPriority,
    }),
    async (changed) => {
      if (changed.name !== undefined) {
        await patch(`/rest/config/devices/${encodeURIComponent(myID.value)}`, { name: changed.name });
      }
      if (changed.folderPath !== undefined) {
        await patch('/rest/config/defaults/folder', { path: changed.folderPath });
      }
      const options: Record<string, unknown> = {};
      if (changed.minFree !== undefined || changed.minFreeUnit !== undefined) {
        options.minHomeDiskFree = { value: Number(form.value.minFree), unit: form.value.minFreeUnit };
      }
      if (changed.setLowPriority !== undefined) options.setLowPriority = changed.setLowPriority;
      if (Object.keys(options).length > 0) await patch('/rest/config/options', options);
    },
  );
  const { value, set } = form;
  return (
    <form aria-label="General settings" onSubmit={form.submit}>
      <Field label="Device name" hint="What other devices see of this one when they connect.">
        <input name="name" value={value.name} onInput={(event) => set('name', event.currentTarget.value)} />
      </Field>
      <Field
        label="Default folder path"
        hint="Where a folder offered by another device goes when it is accepted (auto-accepted folders need it). ~ is your home folder."
      >
        <input
          name="folderPath"
          value={value.folderPath}
          placeholder="not set"
          onInput={(event) => set('folderPath', event.currentTarget.value)}
        />
      </Field>
      <div class="field">
        <span class="label" id="min-free">
          Minimum free disk space
        </span>
        <div class="inline">
          <input
            type="number"
            step="any"
            required
            aria-labelledby="min-free"
            name="minHomeDiskFree"
            value={value.minFree}
            onInput={(event) => set('minFree', event.currentTarget.value)}
          />
          <select
            aria-label="Unit"
            value={value.minFreeUnit}
            onChange={(event) => set('minFreeUnit', event.currentTarget.value)}
          >
            {(UNITS.includes(value.minFreeUnit) ? UNITS : [...UNITS, value.minFreeUnit]).map((unit) => (
              <option key={unit} value={unit}>
                {unit}
              </option>
            ))}
          </select>
        </div>
        <span class="hint">
          Of the disk that holds syncd's home (its index): below it, every folder stops syncing. 0: not
          checked.
        </span>
      </div>
      <Check
        label="Run at low CPU priority"
        checked={value.setLowPriority}
        onChange={(checked) => set('setLowPriority', checked)}
        hint="So that syncing gives way to what you are doing. Takes effect at the next restart."
      />
      <SaveBar form={form} />
    </form>
  );
}
