// Actions on the whole service, as Syncthing's Actions menu: rescan, pause and resume every device,
// restart, shut down, log out.
import { useState } from 'preact/hooks';
import { loginNeeded, post } from '../api.ts';
import { config } from '../store.ts';
import { ActionButton, Button } from '../parts/ui.tsx';

export function Menu() {
  const [open, setOpen] = useState(false);
  const loggedIn = config.value?.gui.user !== '' && config.value?.gui.password !== '';
  return (
    <div class="menu">
      <Button aria-expanded={open} onClick={() => setOpen(!open)}>
        Actions ▾
      </Button>
      {open && (
        <div class="menu-items" role="menu" onClick={() => setOpen(false)}>
          <ActionButton action={() => post('/rest/db/scan')}>Rescan all</ActionButton>
          <ActionButton action={() => post('/rest/system/pause')}>Pause all devices</ActionButton>
          <ActionButton action={() => post('/rest/system/resume')}>Resume all devices</ActionButton>
          <ActionButton action={() => post('/rest/system/restart')}>Restart</ActionButton>
          <ActionButton
            kind="danger"
            confirm="Shut syncd down? It stays down until it is started again."
            action={() => post('/rest/system/shutdown')}
          >
            Shut down
          </ActionButton>
          {loggedIn && (
            <ActionButton
              action={async () => {
                await post('/rest/noauth/auth/logout');
                loginNeeded.value = true;
              }}
            >
              Log out
            </ActionButton>
          )}
        </div>
      )}
    </div>
  );
}
