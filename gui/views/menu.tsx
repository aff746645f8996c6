// Actions on the whole service, as Syncthing's Actions menu: rescan, pause and resume every device,
// restart, shut down, log out. The menu closes once an action succeeded; a failure stays shown in it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { forgetKey, loginNeeded, loginReason, post } from '../api.ts';
import { config } from '../store.ts';
import { ActionButton, Button } from '../parts/ui.tsx';

export function Menu() {
  const [open, setOpen] = useState(false);
  const close = () => setOpen(false);
  const menu = useRef<HTMLDivElement>(null);
  // Closed by a click elsewhere or Escape, as menus are.
  useEffect(() => {
    if (!open) return;
    const away = (event: Event) => {
      if (!menu.current?.contains(event.target as Node)) close();
    };
    const escape = (event: KeyboardEvent) => {
      if (event.key === 'Escape') close();
    };
    document.addEventListener('click', away);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('click', away);
      document.removeEventListener('keydown', escape);
    };
  }, [open]);
  const passwordSet = config.value?.gui.user !== '' && config.value?.gui.password !== '';
  const logOut = async () => {
    forgetKey();
    await post('/rest/noauth/auth/logout');
    loginReason.value = { message: '', key: !passwordSet };
    loginNeeded.value = true;
  };
  return (
    <div class="menu" ref={menu}>
      <Button aria-expanded={open} onClick={() => setOpen(!open)}>
        Actions ▾
      </Button>
      {open && (
        <div class="menu-items">
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
