// What `syncd --help` and `syncd COMMAND --help` print: each command's forms, each with what it does,
// laid out the same way for every command.
import { HELP_WIDTH, wrap } from '../../shared/help-text.ts';

interface Command {
  /** The line of `syncd --help`. */
  summary: string;
  /** Each form of the command (after `syncd `) and what it does. */
  forms: Array<[string, string]>;
  /** Said after the forms, when there is more to know. */
  notes?: string;
}

const commands: Record<string, Command> = {
  serve: {
    summary: 'run the service (supervisor and worker) in the foreground',
    forms: [['serve [options]', 'run the service (what npm start runs); serve --help lists its settings']],
  },
  ping: {
    summary: 'check that the service answers',
    forms: [['ping', 'ask the service for a pong; says how long it took']],
  },
  status: {
    summary: 'pids, uptime, restarts, crashes, addresses, memory',
    forms: [['status', 'the worker and supervisor: pids, uptime, restarts, crashes, addresses, memory']],
  },
  id: {
    summary: "this device's ID, to give to the devices it syncs with",
    forms: [['id', "this device's ID: from the home's cert.pem, else from the running service"]],
  },
  restart: {
    summary: 'restart the service (--wait: until the new worker answers)',
    forms: [['restart [--wait]', 'restart at once; with --wait, return when the new worker answers']],
  },
  shutdown: {
    summary: 'stop the service (--wait: until its port refuses)',
    forms: [['shutdown [--wait]', 'stop for good; with --wait, return when its port refuses connections']],
  },
  devices: {
    summary: 'list devices (connection, traffic, completion); add, remove, pause, resume',
    forms: [
      ['devices', 'the devices: connected or not, traffic and rates, completion; pending ones'],
      [
        'devices add ID [--name NAME] [--device-address URL]... [--replace]',
        'add a device (addresses such as tcp://192.0.2.1:22000; default dynamic); one configured already is replaced only with --replace',
      ],
      ['devices remove ID', 'remove it, and stop sharing folders with it'],
      ['devices pause [ID]', 'pause one device, or every device but this one'],
      ['devices resume [ID]', 'resume one, or all'],
    ],
    notes: 'Rates are measured over one second while a device is connected.',
  },
  folders: {
    summary: 'list folders (state, progress, needs, changes); add, edit, share, pause, remove…',
    forms: [
      ['folders', 'the folders: state, progress and rate, needed items, local changes; pending ones'],
      [
        'folders add ID PATH [--label LABEL] [--type TYPE] [--share DEVICE]... [--replace]',
        'add a folder (PATH absolute; TYPE sendreceive, sendonly or receiveonly) shared with the devices given; one configured already is replaced only with --replace',
      ],
      ['folders edit ID [--label LABEL] [--type TYPE]', 'change its label or type; the rest stays'],
      ['folders share ID DEVICE...', 'share it with more devices'],
      ['folders unshare ID DEVICE...', 'stop sharing it with those devices'],
      ['folders override ID', "a send-only folder: make its versions the others' again"],
      ['folders revert ID', 'a receive-only folder: undo its local changes'],
      ['folders pause ID', 'pause it'],
      ['folders resume ID', 'resume it'],
      ['folders remove ID', 'remove it from the configuration (its files stay)'],
    ],
  },
  need: {
    summary: "what a folder lacks of the others' versions, and its local changes",
    forms: [['need FOLDER', "the items the folder still needs, and a receive-only folder's local changes"]],
  },
  pending: {
    summary: 'devices and folders offered by others: list, accept, dismiss',
    forms: [
      ['pending', 'the devices that connected unconfigured, the folders devices offer'],
      ['pending accept DEVICE [--name NAME]', 'add the device, as it named itself unless --name'],
      [
        'pending accept FOLDER [PATH] [--type TYPE]',
        'add the folder at PATH (default: defaults.folder.path/LABEL, when set), shared with the devices offering it',
      ],
      ['pending dismiss DEVICE', 'forget the device until it connects again'],
      ['pending dismiss FOLDER [DEVICE]', 'forget the offer (of one device) until offered again'],
    ],
  },
  ignores: {
    summary: "show or set a folder's ignore patterns (.stignore)",
    forms: [
      ['ignores get FOLDER', 'the lines of its .stignore'],
      ['ignores set FOLDER PATTERN...', 'replace them with these lines; - reads them from standard input'],
      ['ignores clear FOLDER', 'ignore nothing'],
    ],
  },
  scan: {
    summary: 'scan a folder, or all, now',
    forms: [['scan [FOLDER]', 'scan one folder, or every folder; return once the scan has ended']],
  },
  watch: {
    summary: 'print events as they happen, one line each',
    forms: [
      [
        'watch [--events TYPE,...] [--disk] [--count N] [--since ID]',
        "the service's events, one readable line each, until Ctrl-C, N events or --timeout; --disk: the files changed; --since: after that event (IDs as --json shows)",
      ],
    ],
    notes: 'It waits through restarts: the event numbers go on across workers.',
  },
  versions: {
    summary: "list a folder's versions of files; restore one",
    forms: [
      ['versions FOLDER', "the versions the folder's versioning keeps, newest first"],
      [
        'versions FOLDER restore NAME [TIME]',
        'restore NAME to its version of TIME (RFC 3339, as listed; default the newest), the current file versioned first',
      ],
    ],
  },
  reset: {
    summary: "erase a folder's index (or all) and rebuild it (--wait: until rebuilt)",
    forms: [
      [
        'reset [FOLDER] [--wait]',
        "erase one folder's index (or every folder's) and have a new worker rebuild it; no file is touched",
      ],
    ],
  },
  errors: {
    summary: 'list recent errors; errors clear; errors add MESSAGE',
    forms: [
      ['errors', 'the recent errors, oldest first'],
      ['errors clear', 'remove them all'],
      ['errors add MESSAGE...', 'record one'],
    ],
  },
  healthcheck: {
    summary: 'exit 0 if it answers within 2 s, else 1',
    forms: [
      ['healthcheck', 'exit 0 when the service answers pong within 2 s, else 1 (container health checks)'],
      [
        'healthcheck --sync',
        'also 1 when a TCP sync listener is not listening (or SYNCD_HEALTHCHECK_SYNC=1)',
      ],
    ],
  },
};

const WIDTH = HELP_WIDTH;
const FORM_COLUMN = 46;

function commandText(name: string, command: Command): string {
  const lines: string[] = [];
  for (const [form, what] of command.forms) {
    const usage = `syncd ${form}`;
    const described = wrap(what, WIDTH - FORM_COLUMN);
    // A long form takes lines of its own; its description starts below, in the column.
    if (usage.length <= FORM_COLUMN - 2) lines.push(usage.padEnd(FORM_COLUMN) + described.shift());
    else lines.push(...wrap(usage, WIDTH));
    for (const rest of described) lines.push(' '.repeat(FORM_COLUMN) + rest);
  }
  if (command.notes) lines.push('', ...wrap(command.notes, WIDTH));
  // serve has settings of its own (serve --help); the others share the options of syncd --help.
  if (name !== 'serve')
    lines.push('', 'Options: --json, --address, --api-key, --home, --tls, --timeout (see syncd --help).');
  return lines.join('\n');
}

/** Each command's own help. */
export const commandHelp: Record<string, string> = Object.fromEntries(
  Object.entries(commands).map(([name, command]) => [name, commandText(name, command)]),
);

const commandList = Object.entries(commands)
  .map(([name, { summary }]) => `  ${name.padEnd(13)} ${summary}`)
  .join('\n');

export const globalHelp = `Usage: syncd COMMAND [options]
       syncd COMMAND --help
       syncd --version

Commands:
${commandList}

Options for every command but serve:
  --address HOST:PORT   where the service is (else SYNCD_ADDRESS, else the home's address file, else
                        127.0.0.1:8384)
  --api-key KEY         its key (else SYNCD_API_KEY, else the home's config.json)
  --home DIR            its state folder (else SYNCD_HOME, else $XDG_STATE_HOME/syncd or
                        ~/.local/state/syncd)
  --tls                 speak HTTPS (else SYNCD_TLS=1, else what the home's url file says)
  --json                print the service's JSON instead of text for people
  --timeout DURATION    how long to wait for an answer (default 10s; with --wait, for the whole
                        wait; with watch, how long to watch)
  --help                this text, or a command's own

Exit codes: 0 success; 1 the service answered with an error or did not answer; 2 bad usage.`;
