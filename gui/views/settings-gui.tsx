// Settings › GUI, as Syncthing's: where the GUI and the REST API listen, the login, HTTPS, the API
// key and the debugging endpoints (PATCH /rest/config/gui with what changed). The password field
// starts empty and empty means unchanged, as in Syncthing; a password sent in plain text is stored
// hashed by the service.
import { get, patch } from '../api.ts';
import { ActionButton, CopyButton, Field, Check } from '../parts/ui.tsx';
import { config, overridden, refreshConfig, status } from '../store.ts';
import { SaveBar, useSettingsForm } from './settings-form.tsx';

export function GuiSettings() {
  const form = useSettingsForm(
    (config) => ({
      address: config.gui.address,
      user: config.gui.user,
      password: '',
      useTLS: config.gui.useTLS,
      debugging: config.gui.debugging,
    }),
    async (changed) => {
      const body: Record<string, unknown> = { ...changed };
      if (body.password === '') delete body.password;
      await patch('/rest/config/gui', body);
      if (changed.address !== undefined && !overridden('gui.address')) {
        const at = newLocation(changed.address);
        return (
          <>
            The GUI has moved to <a href={at}>{at}</a>.
          </>
        );
      }
    },
  );
  const { value, set } = form;
  const gui = config.value?.gui;
  const passwordSet = (gui?.password ?? '') !== '';
  return (
    <>
      <form aria-label="GUI settings" onSubmit={form.submit}>
        <Field
          label="GUI listen address"
          hint={
            overridden('gui.address')
              ? `syncd was started with --address (or SYNCD_ADDRESS), which wins: it listens at ${status.value?.guiAddressUsed} until started without it.`
              : 'Saving a new address moves this page there at once: this page stops answering, open the new address.'
          }
        >
          <input
            name="address"
            value={value.address}
            onInput={(event) => set('address', event.currentTarget.value)}
          />
        </Field>
        <Field
          label="GUI authentication user"
          hint="Empty: no login, and the GUI answers this machine only. Changing the user or password ends every session: this page then asks you to log in."
        >
          <input
            name="user"
            autocomplete="username"
            value={value.user}
            onInput={(event) => set('user', event.currentTarget.value)}
          />
        </Field>
        <Field
          label="GUI authentication password"
          hint={passwordSet ? 'A password is set: empty keeps it.' : 'No password is set.'}
        >
          <input
            name="password"
            type="password"
            autocomplete="new-password"
            value={value.password}
            placeholder={passwordSet ? 'unchanged' : ''}
            onInput={(event) => set('password', event.currentTarget.value)}
          />
        </Field>
        <Check
          label="Use HTTPS for GUI"
          checked={value.useTLS}
          onChange={(checked) => set('useTLS', checked)}
          disabled={overridden('gui.useTLS')}
          hint={
            overridden('gui.useTLS')
              ? 'Decided by --tls (or --tls-cert) while syncd runs with it: start it without to choose here.'
              : 'Takes effect at the next restart; the page is then at https://.'
          }
        />
        <Check
          label="Enable debugging endpoints"
          checked={value.debugging}
          onChange={(checked) => set('debugging', checked)}
          hint="/rest/debug: CPU and heap profiles, a file's versions, a device's completion."
        />
        <SaveBar form={form} />
      </form>
      <ApiKey />
    </>
  );
}

/**
 * The API key, masked, with Copy; a new one is made by the service (as Syncthing's GUI asks for 32
 * random characters) and saved at once, since the old one stops working then.
 */
function ApiKey() {
  const key = config.value?.gui.apiKey ?? '';
  if (overridden('gui.apiKey')) {
    return (
      <section class="field api-key">
        <h3 id="api-key">API key</h3>
        <span class="hint">
          Given by --api-key (or SYNCD_API_KEY) while syncd runs with it: the key in config.json is not used
          then, and is not shown or changed here.
        </span>
      </section>
    );
  }
  return (
    <section class="field api-key">
      <h3 id="api-key">API key</h3>
      <div class="inline">
        <input type="password" readonly value={key} aria-labelledby="api-key" name="apiKey" />
        <CopyButton text={key} />
      </div>
      <div>
        <ActionButton
          confirm="Generate a new API key? Scripts and programs that use the old key (X-API-Key) stop working until they are given the new one."
          action={async () => {
            const { random } = await get<{ random: string }>('/rest/svc/random/string', { length: 32 });
            await patch('/rest/config/gui', { apiKey: random });
            await refreshConfig();
          }}
        >
          Generate new
        </ActionButton>
      </div>
      <span class="hint">
        What scripts and other programs send to use the REST API; this page needs none. A new one is saved at
        once.
      </span>
    </section>
  );
}

/**
 * Where the page is once the GUI listens at `address` (HTTPS changes only at a restart): an address of
 * every interface is reached by the host name used now.
 */
function newLocation(address: string): string {
  const match = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(address.trim());
  let host = match?.[1] ?? location.hostname;
  if (host === '' || host === '0.0.0.0' || host === '[::]') host = location.hostname;
  return `${location.protocol}//${host}:${match?.[2] ?? location.port}/${location.hash}`;
}
