// The overview, as Syncthing's main page: offers from other devices on top, the folders, then this
// device and the other devices (side by side on a wide screen, one below the other on a phone).
import { DevicesView } from './devices-view.tsx';
import { FoldersView } from './folders-view.tsx';
import { PendingNotices } from './pending-view.tsx';
import { ThisDevice } from './this-device.tsx';

export function Dashboard() {
  return (
    <>
      <PendingNotices />
      <div class="columns">
        <section aria-label="Folders">
          <FoldersView />
        </section>
        <section aria-label="Devices">
          <ThisDevice />
          <DevicesView />
        </section>
      </div>
    </>
  );
}
