// The page: a header with this device's name, the service's state and the views; the view the
// address's #fragment names below it. Nothing shows but the login form while one is needed.
import { useEffect, useState } from 'preact/hooks';
import { loginNeeded, unreachable } from './api.ts';
import { startLive } from './live.ts';
import { config, loadError, ownDevice, restartRequired, status } from './store.ts';
import { ChangesView } from './views/changes-view.tsx';
import { Dashboard } from './views/dashboard.tsx';
import { LogView } from './views/log-view.tsx';
import { LoginView } from './views/login-view.tsx';
import { Menu } from './views/menu.tsx';
import { SettingsView } from './views/settings-view.tsx';

const VIEWS = [
  { path: '#/', name: 'Overview', view: Dashboard },
  { path: '#/changes', name: 'Recent changes', view: ChangesView },
  { path: '#/log', name: 'Log', view: LogView },
  { path: '#/settings', name: 'Settings', view: SettingsView },
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/');
  useEffect(() => {
    const changed = () => setHash(location.hash || '#/');
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

export function App() {
  const hash = useHash();
  useEffect(() => startLive(), []);
  if (loginNeeded.value) return <LoginView />;
  const current = VIEWS.find((view) => view.path === hash) ?? VIEWS[0];
  const View = current.view;
  const name = ownDevice.value?.name;
  return (
    <div class="page">
      <header class="top">
        <a class="brand" href="#/">
          <img src="icon.svg" alt="" width="24" height="24" />
          <span>{name || 'syncd'}</span>
        </a>
        <nav aria-label="Views">
          {VIEWS.map((view) => (
            <a href={view.path} aria-current={view === current ? 'page' : undefined}>
              {view.name}
            </a>
          ))}
        </nav>
        <Menu />
      </header>
      {unreachable.value && (
        <div class="banner error" role="alert" data-testid="service-gone">
          syncd does not answer at {location.host}: it may be restarting or stopped. Trying again every
          second; this page picks up where it was when it is back.
        </div>
      )}
      {restartRequired.value && !unreachable.value && (
        <div class="banner warn" role="status">
          A change takes effect at the next restart (Actions › Restart).
        </div>
      )}
      <main>
        {config.value && status.value ? (
          <View />
        ) : loadError.value ? (
          <p class="error-text" role="alert">
            {loadError.value}
          </p>
        ) : (
          <p class="loading">Loading…</p>
        )}
      </main>
    </div>
  );
}
