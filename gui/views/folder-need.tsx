// What a folder still needs of the other devices, as Syncthing's GUI lists it (GET /rest/db/need): the
// files being pulled first, with their progress from the DownloadProgress events, then those queued,
// then the rest, a page at a time. "Pull first" is Syncthing's move to the top (POST /rest/db/prio).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, messageOf, post } from '../api.ts';
import { bytes, count } from '../format.ts';
import { ActionButton, Button, ErrorText, Modal, Progress } from '../parts/ui.tsx';
import { downloads, folderStatus } from '../store.ts';
import type { FolderConfiguration, Need, NeededFile } from '../types.ts';

const PER_PAGE = 100;
// Read again this often while open: a pull moves the lists on without an event that says how.
const REFRESH_MS = 2_000;

export function NeedDialog(props: { folder: FolderConfiguration; onClose: () => void }) {
  const id = props.folder.id;
  const [page, setPage] = useState(1);
  const [need, setNeed] = useState<Need>();
  const [error, setError] = useState('');

  useEffect(() => {
    // One read at a time, the next one 2 s after the last answer; none once the dialog is closed.
    let open = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const answer = await get<Need>('/rest/db/need', { folder: id, page, perpage: PER_PAGE });
        if (!open) return;
        setNeed(answer);
        setError('');
      } catch (failure) {
        if (open) setError(messageOf(failure));
      }
      if (open) timer = setTimeout(read, REFRESH_MS);
    };
    void read();
    return () => {
      open = false;
      clearTimeout(timer);
    };
  }, [id, page]);

  // A new page is read from its top.
  const top = useRef<HTMLParagraphElement>(null);
  const firstPage = useRef(page);
  useEffect(() => {
    if (page !== firstPage.current) top.current?.scrollIntoView({ block: 'nearest' });
  }, [page]);

  const shown = need?.page === page ? need : undefined;
  const items = shown ? shown.progress.length + shown.queued.length + shown.rest.length : 0;
  // A page emptied by the pull meanwhile: the one before it.
  useEffect(() => {
    if (shown && items === 0 && page > 1) setPage(page - 1);
  }, [shown, items, page]);

  const status = folderStatus.value[id];
  const total = status?.needTotalItems;
  const pages = total === undefined ? undefined : Math.max(1, Math.ceil(total / PER_PAGE));
  const more = pages === undefined ? items === PER_PAGE : page < pages;

  const pullFirst = async (file: NeededFile) => {
    const answer = await post<Need>('/rest/db/prio', undefined, {
      folder: id,
      file: file.name,
      page,
      perpage: PER_PAGE,
    });
    setNeed({ ...answer, page });
  };

  return (
    <Modal title="Needed items" onClose={props.onClose} wide>
      <p class="muted" ref={top}>
        {props.folder.label || id}
        {status && status.needTotalItems > 0 && (
          <>
            {' '}
            · {count(status.needTotalItems)} {status.needTotalItems === 1 ? 'item' : 'items'},{' '}
            {bytes(status.needBytes)} to bring in
          </>
        )}
      </p>
      {error && <ErrorText>{error}</ErrorText>}
      {!shown && !error && <p class="loading">Loading…</p>}
      {shown && items === 0 && page === 1 && <p>Nothing needed: the folder is up to date.</p>}
      {shown && (
        <>
          <NeedList title="Pulling now" folder={id} files={shown.progress} pulling />
          <NeedList title="Queued" folder={id} files={shown.queued} onPullFirst={pullFirst} />
          <NeedList title="Waiting" folder={id} files={shown.rest} onPullFirst={pullFirst} />
        </>
      )}
      {(page > 1 || more) && (
        <nav class="pager" aria-label="Pages">
          <Button disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <span>
            Page {page}
            {pages !== undefined && ` of ${pages}`}
          </span>
          <Button disabled={!more} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </nav>
      )}
    </Modal>
  );
}

function NeedList(props: {
  title: string;
  folder: string;
  files: NeededFile[];
  pulling?: boolean;
  onPullFirst?: (file: NeededFile) => Promise<void>;
}) {
  if (props.files.length === 0) return null;
  const progress = downloads.value[props.folder] ?? {};
  return (
    <section aria-label={props.title}>
      <h3>{props.title}</h3>
      <ul class="file-list">
        {props.files.map((file) => {
          const done = progress[file.name];
          const canPull = props.onPullFirst && !file.deleted && kindOf(file) === 'file';
          return (
            <li key={file.name} aria-label={file.name}>
              <span class="path">{file.name}</span>
              <span class="muted">
                {file.deleted
                  ? 'to delete'
                  : kindOf(file) !== 'file'
                    ? kindOf(file)
                    : done && props.pulling
                      ? `${bytes(done.bytesDone)} of ${bytes(done.bytesTotal)}`
                      : bytes(file.size)}
              </span>
              {canPull && (
                <ActionButton
                  action={() => props.onPullFirst?.(file) ?? Promise.resolve()}
                  title="Pull this file before the folder's other files"
                >
                  Pull first
                </ActionButton>
              )}
              {props.pulling && kindOf(file) === 'file' && !file.deleted && (
                <div class="file-progress">
                  <Progress
                    value={done && done.bytesTotal > 0 ? (100 * done.bytesDone) / done.bytesTotal : 0}
                    label={`${file.name} pulled`}
                  />
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

// Syncthing's REST names the type FILE_INFO_TYPE_FILE and so on (older versions: a number, 0 a file).
function kindOf(file: NeededFile): 'file' | 'directory' | 'symlink' {
  const type = String(file.type);
  if (type.includes('DIRECTORY') || type === '1') return 'directory';
  if (type.includes('SYMLINK') || type === '4') return 'symlink';
  return 'file';
}
