// Settings, as Syncthing's settings dialog but a page: its tabs General, GUI and Connections, each a
// form of the fields syncd acts on (shared/config/field-status.ts) with its own Save. The tabs stay
// mounted while hidden, so that what was typed in one survives a look at another.
import { useState } from 'preact/hooks';
import { Tabs } from '../parts/ui.tsx';
import { ConnectionSettings } from './settings-connections.tsx';
import { GeneralSettings } from './settings-general.tsx';
import { GuiSettings } from './settings-gui.tsx';

const TABS = [
  { name: 'General', panel: GeneralSettings },
  { name: 'GUI', panel: GuiSettings },
  { name: 'Connections', panel: ConnectionSettings },
] as const;

export function SettingsView() {
  const [tab, setTab] = useState<string>('General');
  return (
    <section class="card settings" aria-label="Settings">
      <h1>Settings</h1>
      <Tabs tabs={TABS.map(({ name }) => name)} current={tab} onPick={setTab} />
      {TABS.map(({ name, panel: Panel }) => (
        <div role="tabpanel" aria-label={name} hidden={tab !== name}>
          <Panel />
        </div>
      ))}
    </section>
  );
}
