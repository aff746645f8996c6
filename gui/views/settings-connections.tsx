// Settings › Connections, as Syncthing's: where this device listens for others, the rate limits,
// discovery and relays (PATCH /rest/config/options with what changed). No NAT traversal: syncd does
// none (options.natEnabled is refused), so it is not offered.
import { Badge, Field, Check } from '../parts/ui.tsx';
import { patch } from '../api.ts';
import { overridden, status } from '../store.ts';
import { SaveBar, listOf, listText, useSettingsForm } from './settings-form.tsx';

const NUMBERS = ['maxRecvKbps', 'maxSendKbps', 'reconnectionIntervalS'] as const;
const LISTS = { listen: 'listenAddresses', servers: 'globalAnnounceServers' } as const;

export function ConnectionSettings() {
  const form = useSettingsForm(
    ({ options }) => ({
      listen: listText(options.listenAddresses),
      maxRecvKbps: String(options.maxRecvKbps),
      maxSendKbps: String(options.maxSendKbps),
      limitBandwidthInLan: options.limitBandwidthInLan,
      reconnectionIntervalS: String(options.reconnectionIntervalS),
      globalAnnounceEnabled: options.globalAnnounceEnabled,
      servers: listText(options.globalAnnounceServers),
      localAnnounceEnabled: options.localAnnounceEnabled,
      relaysEnabled: options.relaysEnabled,
    }),
    async (changed) => {
      const body: Record<string, unknown> = { ...changed };
      for (const key of NUMBERS) if (key in body) body[key] = Number(body[key]);
      for (const [key, name] of Object.entries(LISTS)) {
        if (key in body) {
          body[name] = listOf(String(body[key]));
          delete body[key];
        }
      }
      await patch('/rest/config/options', body);
    },
  );
  const { value, set } = form;
  const number = (key: (typeof NUMBERS)[number], label: string, hint?: string) => (
    <Field label={label} hint={hint}>
      <input
        type="number"
        required
        name={key}
        value={value[key]}
        onInput={(event) => set(key, event.currentTarget.value)}
      />
    </Field>
  );
  const listening = Object.entries(status.value?.connectionServiceStatus ?? {});
  return (
    <form aria-label="Connections settings" onSubmit={form.submit}>
      <Field
        label="Sync protocol listen addresses"
        hint="Comma-separated: tcp://HOST:PORT, relay://… or dynamic+https://… (a relay pool); default is tcp://0.0.0.0:22000 (relays are off unless an address names them). A flag --sync-address, when syncd was started with one, wins."
      >
        <input
          name="listenAddresses"
          value={value.listen}
          onInput={(event) => set('listen', event.currentTarget.value)}
        />
      </Field>
      <div class="field" aria-label="Listening now">
        <span class="label">Listening now</span>
        {listening.length === 0 && <span class="muted">nowhere</span>}
        {listening.map(([address, state]) => (
          <div key={address}>
            <Badge tone={state.error ? 'error' : 'ok'}>{state.error ? 'failed' : 'listening'}</Badge>{' '}
            {address}
            {state.error && <div class="error-text">{state.error}</div>}
          </div>
        ))}
      </div>
      <div class="pair">
        {number('maxRecvKbps', 'Incoming rate limit (KiB/s)', '0: no limit')}
        {number('maxSendKbps', 'Outgoing rate limit (KiB/s)', '0: no limit')}
      </div>
      <Check
        label="Limit bandwidth in LAN"
        checked={value.limitBandwidthInLan}
        onChange={(checked) => set('limitBandwidthInLan', checked)}
        hint="Else devices on the local network (this machine's subnets, and options.alwaysLocalNets) are not limited."
      />
      {number(
        'reconnectionIntervalS',
        'Reconnection interval (s)',
        'How often a device not connected is dialed again.',
      )}
      <Check
        label="Global discovery"
        checked={value.globalAnnounceEnabled}
        onChange={(checked) => set('globalAnnounceEnabled', checked)}
        disabled={overridden('options.globalAnnounceEnabled')}
        hint={
          overridden('options.globalAnnounceEnabled')
            ? 'Decided by --global-announce (or SYNCD_GLOBAL_ANNOUNCE) while syncd runs with it.'
            : 'Announce this device to the discovery servers and ask them where others are.'
        }
      />
      <Field label="Global discovery servers" hint="Comma-separated URLs; default is Syncthing's servers.">
        <input
          name="globalAnnounceServers"
          value={value.servers}
          disabled={!value.globalAnnounceEnabled}
          onInput={(event) => set('servers', event.currentTarget.value)}
        />
      </Field>
      <Check
        label="Local discovery"
        checked={value.localAnnounceEnabled}
        onChange={(checked) => set('localAnnounceEnabled', checked)}
        disabled={overridden('options.localAnnounceEnabled')}
        hint={
          overridden('options.localAnnounceEnabled')
            ? 'Decided by --local-announce (or SYNCD_LOCAL_ANNOUNCE) while syncd runs with it.'
            : 'Announce this device on the local network and find others there.'
        }
      />
      <Check
        label="Enable relaying"
        checked={value.relaysEnabled}
        onChange={(checked) => set('relaysEnabled', checked)}
        hint="Reach devices through relays when no direct connection can be made (behind NAT, say)."
      />
      <SaveBar form={form} />
    </form>
  );
}
