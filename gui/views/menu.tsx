// Actions on the whole service, as Syncthing's Actions menu: rescan, pause and resume every device,
// restart, shut down, log out. The menu closes once an action succeeded; a failure stays shown in it.
import { useState } from 'preact/hooks';
import { forgetKey, loginNeeded, loginReason, post } from '../api.ts';
import { config } from '../store.ts';
import { ActionButton, Button } from '../parts/ui.tsx';

export function Menu() {
  const [open, setOpen] = useState(false);
  const close = () => setOpen(false);
  const passwordSet = config.value?.gui.user !== '' && config.value?.gui.password !== '';
  const logOut = async () => {
    forgetKey();
    await post('/rest/noauth/auth/logout');
    loginReason.value = { message: '', key: !passwordSet };
    loginNeeded.value = true;
  };
  return (
    <div class="menu">
      <Button aria-expanded={open} onClick={() => setOpen(!open)}>
        Actions ▾
      </Button>
      {open && (
        <div class="menu-items" role="menu">
          <ActionButton action={() => post('/rest/db/scan')} onDone={close}>
            Rescan all
          </ActionButton>
          <ActionButton action={() => post('/rest/system/pause')} onDone={close}>
            Pause all devices
          </ActionButton>
          <ActionButton action={() => post('/rest/system/resume')} onDone={close}>
            Resume all devices
          </ActionButton>
          <ActionButton action={() => post('/rest/system/restart')} onDone={close}>
            Restart
          </ActionButton>
          <ActionButton
            kind="danger"
            confirm="Shut syncd down? It stays down until it is started again."
            action={() => post('/rest/system/shutdown')}
            onDone={close}
          >
            Shut down
          </ActionButton>
          <ActionButton action={logOut} onDone={close}>
            Log out
          </ActionButton>
        </div>
      )}
    </div>
  );
}
