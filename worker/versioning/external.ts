import { execa } from 'execa';
import { parse } from 'shell-quote';
import type { FolderFs } from '../files/folder-fs.ts';
import { kindOf } from './archive.ts';
import { asOperation, failed, VersioningError } from './errors.ts';
import type { FileVersion, Versioner } from './versioner.ts';

/*
 * lib/versioner/external.go: the file is handed to the user's command, which must remove it; there is
 * nothing to list, restore or clean.
 */

/**
 * A hung script would hold the folder's puller forever (Syncthing waits for it without end): it is
 * stopped (SIGTERM, then SIGKILL) after this long, generous enough for a slow copy to another disk.
 */
export const EXTERNAL_TIMEOUT_MS = 10 * 60 * 1000;

// external.go filters STGUIAUTH and STGUIAPIKEY; SYNCD_API_KEY is this service's own.
const HIDDEN_ENV = ['SYNCD_API_KEY', 'STGUIAPIKEY', 'STGUIAUTH'];

const NOT_SUPPORTED = 'version restoration not supported with the current versioner';

export class ExternalVersioner implements Versioner {
  readonly type = 'external';
  readonly #folderFs: FolderFs;
  readonly #folderPath: string;
  readonly #command: string;

  /** `folderPath` is the folder's absolute root, `%FOLDER_PATH%`. */
  constructor(folderFs: FolderFs, folderPath: string, command: string) {
    this.#folderFs = folderFs;
    this.#folderPath = folderPath;
    this.#command = command;
  }

  archive(name: string): Promise<void> {
    return asOperation(this.type, 'archive', async () => {
      const stats = await this.#folderFs.lstat(name);
      if (!stats) return;
      if (!stats.isFile()) throw new Error(`${name} is ${kindOf(stats)}, not a regular file: not archived`);
      const words = splitCommand(this.#command).map((word) =>
        word
          .replaceAll('%FOLDER_FILESYSTEM%', 'basic')
          .replaceAll('%FOLDER_PATH%', this.#folderPath)
          .replaceAll('%FILE_PATH%', name),
      );
      const [file, ...args] = words as [string, ...string[]];
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !HIDDEN_ENV.includes(key)),
      );
      // Syncthing captures the output for its debug log only; it is not kept here.
      const result = await execa(file, args, {
        reject: false,
        shell: false,
        env,
        extendEnv: false,
        stdin: 'ignore',
        stdout: 'ignore',
        stderr: 'ignore',
        timeout: EXTERNAL_TIMEOUT_MS,
      });
      if (result.timedOut)
        throw new Error(`${file} did not end within ${EXTERNAL_TIMEOUT_MS / 60000} minutes`);
      if (result.exitCode !== undefined && result.exitCode !== 0)
        throw new Error(`exit status ${result.exitCode}`);
      if (result.signal) throw new Error(`signal: ${result.signal}`);
      if (result.failed) {
        // Go's exec error for a command it cannot find, or cannot start.
        if ((result.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' && !file.includes('/')) {
          throw new Error(`exec: ${JSON.stringify(file)}: executable file not found in $PATH`);
        }
        throw failed(`fork/exec ${file}`, result.cause);
      }
      if (await this.#folderFs.lstat(name)) throw new Error('file was not removed by external script');
    });
  }

  versions(): Promise<Record<string, FileVersion[]>> {
    return Promise.reject(new VersioningError(`external versioner: get versions: ${NOT_SUPPORTED}`));
  }

  restore(): Promise<void> {
    return Promise.reject(new VersioningError(`external versioner: restore: ${NOT_SUPPORTED}`));
  }

  clean(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The words of the command, split with POSIX quoting as Syncthing's go-shellquote splits it, the
 * placeholders substituted after (so a path with spaces stays one argument). No shell runs it, so a
 * shell operator, glob, comment or `$VARIABLE` (which go-shellquote passes on as text and the
 * shell-quote library would expand) is refused as invalid, as is an unterminated quote.
 */
export function splitCommand(command: string): string[] {
  if (command.trim() === '') throw new Error('command is empty, please enter a valid command');
  const unterminated = unterminatedQuote(command);
  if (unterminated) throw new Error(`command is invalid: ${unterminated}`);
  let tokens: ReturnType<typeof parse<{ variable: string }>>;
  try {
    tokens = parse(command, (key) => (key === '' ? undefined : { variable: key }));
  } catch (error) {
    throw failed('command is invalid', error);
  }
  return tokens.map((token) => {
    if (typeof token === 'string') return token;
    if ('variable' in token) throw new Error(`command is invalid: $${token.variable} is not expanded`);
    if ('comment' in token) throw new Error('command is invalid: # starts a comment');
    if (token.op === 'glob') throw new Error(`command is invalid: ${token.pattern} is a glob pattern`);
    throw new Error(`command is invalid: ${token.op} is a shell operator, and no shell runs the command`);
  });
}

// go-shellquote's errors for what shell-quote would pass over in silence.
function unterminatedQuote(command: string): string | undefined {
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') {
      if (++i === command.length) return 'Unterminated backslash-escape';
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    }
  }
  if (quote === "'") return 'Unterminated single-quoted string';
  if (quote === '"') return 'Unterminated double-quoted string';
  return undefined;
}
