// The folders of the main page, as Syncthing's list: sorted by label (else ID), each a card that opens,
// and the dialog that adds or edits one.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { onEvent } from '../live.ts';
import { Button } from '../parts/ui.tsx';
import { config } from '../store.ts';
import type { FolderConfiguration } from '../types.ts';
import { FolderCard, type FolderStats } from './folder-card.tsx';
import { FolderEditor } from './folder-editor.tsx';
import { folderName } from './folder-state.ts';

export function FoldersView() {
  const [editing, setEditing] = useState<FolderConfiguration | 'new'>();
  const stats = useFolderStats();
  const folders = [...(config.value?.folders ?? [])].sort((a, b) =>
    folderName(a).localeCompare(folderName(b)),
  );
  return (
    <>
      <div class="section-head">
        <h2>Folders</h2>
        <Button onClick={() => setEditing('new')}>Add folder</Button>
      </div>
      {folders.length === 0 && <p class="muted">No folders yet.</p>}
      {folders.map((folder) => (
        <FolderCard
          key={folder.id}
          folder={folder}
          stats={stats[folder.id]}
          onEdit={() => setEditing(folder)}
        />
      ))}
      {editing && (
        <FolderEditor
          folder={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(undefined)}
        />
      )}
    </>
  );
}

// The last scan and latest change of each folder (GET /rest/stats/folder): no event carries them, so
// they are read at the start and again when a folder's index changes (at most once a few seconds).
function useFolderStats(): Record<string, FolderStats> {
  const [stats, setStats] = useState<Record<string, FolderStats>>({});
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () => {
      timer = undefined;
      get<Record<string, FolderStats>>('/rest/stats/folder').then(setStats, () => undefined);
    };
    read();
    const stop = onEvent((event) => {
      if (event.type === 'LocalIndexUpdated' || (event.type === 'StateChanged' && event.data.to === 'idle')) {
        timer ??= setTimeout(read, 2000);
      }
    });
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, []);
  return stats;
}
