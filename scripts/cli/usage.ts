// What `syncd --help` and `syncd COMMAND --help` print.
export const commandHelp: Record<string, string> = {
  serve:
    'syncd serve [options]\n  Run the service in the foreground (what npm start runs). `syncd serve --help` lists its settings.',
  ping: 'syncd ping [--json]\n  Ask the service for a pong; prints how long it took.',
  restart:
    'syncd restart [--wait] [--json]\n  Restart the service at once. With --wait, return only when the new worker answers, and say how long it took.',
  shutdown:
    'syncd shutdown [--wait] [--json]\n  Stop the service for good. With --wait, return only when its port refuses connections.',
  errors:
    'syncd errors [--json]              list the recent errors, oldest first\nsyncd errors clear                 remove them all\nsyncd errors add MESSAGE...        record one',
  status:
    'syncd status [--json]\n  The worker and supervisor: pids, uptime, restarts, crashes, address, memory.',
  id: "syncd id [--json]\n  This device's ID, as Syncthing writes it: from the home's cert.pem, else from the running service.",
  devices:
    'syncd devices [--json]                       list the configured devices, this one included\nsyncd devices add ID [--name NAME] [--device-address URL]... [--replace]\n                                             add a device (addresses such as tcp://192.0.2.1:22000; default dynamic);\n                                             one configured already is replaced only with --replace\nsyncd devices remove ID                      remove it, and stop sharing folders with it\nsyncd devices pause [ID]                     pause one device, or every device but this one\nsyncd devices resume [ID]                    resume one, or all',
  folders:
    'syncd folders [--json]                       list the configured folders\nsyncd folders add ID PATH [--label LABEL] [--type sendreceive|sendonly|receiveonly] [--share DEVICE_ID]... [--replace]\n                                             add a folder (PATH absolute), shared with the devices given;\n                                             one configured already is replaced only with --replace\nsyncd folders remove ID                      remove it from the configuration (its files stay)\nsyncd folders pause ID                       pause it\nsyncd folders resume ID                      resume it',
  versions:
    "syncd versions FOLDER [--json]                  list the versions the folder's versioning keeps, newest first\nsyncd versions FOLDER restore NAME [TIME]       restore NAME to its version of TIME (RFC 3339, as listed; default the newest), the current file versioned first",
  scan: 'syncd scan [FOLDER] [--json]\n  Scan one folder, or every folder, and return once the scan has ended.',
  reset:
    "syncd reset [FOLDER] [--wait] [--json]\n  Erase one folder's index (or every folder's) and have it rebuilt by a restarted worker; no file is touched. With --wait, return once it is rebuilt.",
  healthcheck:
    'syncd healthcheck\n  Exit 0 when the service answers pong within 2 s, else 1 (for container health checks).',
};

export const globalHelp = `Usage: syncd COMMAND [options]
       syncd --version

Commands:
  serve         run the service (supervisor and worker) in the foreground
  ping          check that the service answers
  restart       restart it (--wait: until the new worker answers)
  shutdown      stop it (--wait: until its port refuses)
  errors        list recent errors; errors clear; errors add MESSAGE
  status        pids, uptime, restarts, crashes, memory
  id            this device's ID, to give to the devices it syncs with
  devices       list, add, remove, pause or resume devices
  folders       list folders with their state; add, remove, pause or resume them
  scan          scan a folder, or all, now
  versions      list a folder's versions of files; versions FOLDER restore NAME [TIME]
  reset         erase a folder's index (or all) and rebuild it (--wait: until rebuilt)
  healthcheck   exit 0 if it answers within 2 s, else 1

Options for every command but serve:
  --address HOST:PORT   where the service is (else SYNCD_ADDRESS, else the home's address file, else 127.0.0.1:8384)
  --api-key KEY         its key (else SYNCD_API_KEY, else the home's config.json)
  --home DIR            its state folder (else SYNCD_HOME, else $XDG_STATE_HOME/syncd or ~/.local/state/syncd)
  --tls                 speak HTTPS (else SYNCD_TLS=1, else what the home's url file says)
  --json                print the service's JSON instead of text for people
  --timeout DURATION    how long to wait for an answer (default 10s; with --wait, for the whole wait)
  --help                this text, or a command's own

Exit codes: 0 success; 1 the service answered with an error or did not answer; 2 bad usage.`;
