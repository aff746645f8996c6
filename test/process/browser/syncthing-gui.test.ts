import { join } from 'node:path';
import t from 'tap';
import { copySyncthingGui } from '../../helpers/syncthing-gui-files.ts';
import { api, startService } from '../../helpers/service.ts';
import { newDeviceId } from '../../helpers/config.ts';
import { hasSyncthing, NO_SYNCTHING } from '../../helpers/syncthing.ts';
import { hasChromium, launchChromium, NO_CHROMIUM } from '../../helpers/chromium.ts';

// Syncthing 1.19's own web GUI, served by syncd from a folder (--gui-assets) and driven in real
// Chromium as a user would: every action the GUI offers for folders, devices, settings, logs and
// restarts, with no error dialog and every call answered 2xx. The GUI's files are copied at test time
// from a running Syncthing (the project contains none of them).
const skip = !hasSyncthing ? NO_SYNCTHING : !hasChromium ? NO_CHROMIUM : false;

// What the GUI shows when a call fails: each must stay hidden throughout.
const ERROR_DIALOGS = ['#networkError', '#httpError'];
// Syncthing's packaged builds (Debian's) answer this 500 too: the GUI then shows no upgrade.
const AS_SYNCTHING = new Set(['GET /rest/system/upgrade 500']);
const WAIT = { timeout: 30_000 };

t.test(
  'Syncthing’s GUI drives syncd: folders, devices, pause, settings, logs, restart',
  { skip },
  async (t) => {
    const dir = t.testdir({ gui: {}, docs: {} });
    const gui = join(dir, 'gui');
    const copied = await copySyncthingGui(gui);
    t.ok(copied.files.includes('default/index.html'), `${copied.files.length} files of Syncthing's GUI`);
    const syncd = await startService(t, { args: ['--gui-assets', gui] });
    const folderPath = join(dir, 'docs');

    const browser = await launchChromium();
    t.teardown(() => browser.close());
    const page = await browser.newPage();
    const failed: string[] = [];
    const calls: string[] = [];
    page.on('response', (response) => {
      const url = new URL(response.url());
      const line = `${response.request().method()} ${url.pathname} ${response.status()}`;
      if (url.pathname.startsWith('/rest/')) calls.push(line);
      if (response.status() >= 400 && !AS_SYNCTHING.has(line)) failed.push(line);
    });
    page.on('pageerror', (error) => failed.push(`page error: ${error.message}`));
    const noErrorDialog = async (when: string) => {
      for (const dialog of ERROR_DIALOGS)
        t.notOk(await page.isVisible(dialog), `${when}: no ${dialog} dialog`);
    };
    const click = (selector: string) => page.locator(selector).first().click();
    const shows = (selector: string) =>
      page.waitForSelector(selector, { state: 'visible', timeout: 5_000 }).then(
        () => true,
        () => false,
      );
    // Clicks through `steps` (a button, what it shows, a button, what it shows…), from the start
    // again if something did not show, as a user would on a busy machine.
    const open = async (...steps: string[]) => {
      const deadline = Date.now() + WAIT.timeout;
      for (;;) {
        let shown = true;
        for (let at = 0; at < steps.length && shown; at += 2) {
          await click(steps[at] as string);
          shown = await shows(steps[at + 1] as string);
        }
        if (shown) return;
        if (Date.now() > deadline) throw new Error(`${steps.join(' > ')} did not open`);
      }
    };
    // An entry of the Actions menu that opens a dialog, the menu opened first as a user opens it.
    const action = (entry: string, shown: string) =>
      open('a.dropdown-toggle:has-text("Actions")', '.dropdown-menu:visible', entry, shown);
    const config = () =>
      api<{
        folders: Array<{ id: string; label: string }>;
        devices: Array<{ deviceID: string; paused: boolean; name: string }>;
        gui: { theme: string };
      }>(syncd, 'GET', '/rest/config');

    // Load: the device's name and ID shown, no dialog.
    const myId = (await api<{ myID: string }>(syncd, 'GET', '/rest/system/status')).myID;
    const myName = (await config()).devices.find((device) => device.deviceID === myId)?.name ?? '';
    // The status and the configuration loaded: this device's name and listeners show (the dialogs
    // need the configuration).
    const loaded = () =>
      page.waitForFunction(
        (name) => document.body.innerText.includes('Listeners') && document.body.innerText.includes(name),
        myName,
        WAIT,
      );
    await page.goto(syncd.url);
    await loaded();
    await noErrorDialog('loaded');

    // Add a folder through its dialog.
    await open('[ng-click="addFolder()"]', '#folderLabel');
    await page.fill('#folderLabel', 'Documents');
    await page.fill('#folderPath', folderPath);
    await click('#editFolder [ng-click="saveFolder()"]');
    await page.waitForSelector('#editFolder', { state: 'hidden', ...WAIT });
    await until(async () => (await config()).folders.some((folder) => folder.label === 'Documents'));
    await page.waitForSelector('text=Documents', WAIT);

    // Add a remote device through its dialog.
    const peer = newDeviceId();
    await open('[ng-click="addDevice()"]', '#deviceID');
    await page.fill('#deviceID', peer);
    await click('#editDevice [ng-click="saveDevice()"]');
    await page.waitForSelector('#editDevice', { state: 'hidden', ...WAIT });
    await until(async () => (await config()).devices.some((device) => device.deviceID === peer));

    // Pause all, resume all.
    await click('[ng-click="setAllDevicesPause(true)"]');
    await until(async () => (await config()).devices.find((d) => d.deviceID === peer)?.paused === true);
    await click('[ng-click="setAllDevicesPause(false)"]');
    await until(async () => (await config()).devices.find((d) => d.deviceID === peer)?.paused === false);

    // Settings: this device's name changed in the General tab, and saved (a change of theme would
    // reload the page: routes/gui-assets.ts's own test shows themes served).
    await action('.dropdown-menu [ng-click="showSettings()"]', '#settings');
    await page.fill('#DeviceName', 'renamed-device');
    await click('#settings [ng-click="saveSettings()"]');
    await until(async () => (await config()).devices.some((device) => device.name === 'renamed-device'));
    await page.waitForSelector('#settings', { state: 'hidden', ...WAIT });

    // Logs: the viewer shows the worker's lines.
    await action('.dropdown-menu [ng-click="logging.show()"]', '#logViewer');
    await page.waitForFunction(
      () => (document.querySelector('#logViewerText') as HTMLTextAreaElement | null)?.value.includes(':'),
      undefined,
      WAIT,
    );
    // A debug facility turned on from its tab.
    await click('#logViewer a[href="#log-viewer-facilities"]');
    await page.locator('#log-viewer-facilities tr:has(span:text-is("model")) input[type="checkbox"]').click();
    await until(async () =>
      (await api<{ enabled: string[] }>(syncd, 'GET', '/rest/system/debug')).enabled.includes('model'),
    );
    await click('#logViewer button[data-dismiss="modal"]');
    await page.waitForSelector('#logViewer', { state: 'hidden', ...WAIT });
    await noErrorDialog('after the actions');

    // Restart: the Restarting dialog comes and goes, and the GUI stays live with the new worker.
    const before = await syncd.workerPid();
    await action('.dropdown-menu [ng-click="restart()"]', '#restarting');
    await page.waitForSelector('#restarting', { state: 'hidden', ...WAIT });
    t.not(await syncd.workerPid(), before, 'a new worker serves');
    // A change made after the restart shows in the page: its event stream goes on.
    await api(syncd, 'PATCH', '/rest/config/folders/' + (await config()).folders[0]?.id, {
      label: 'Renamed',
    });
    await page.waitForSelector('text=Renamed', WAIT);
    await noErrorDialog('after the restart');

    t.ok(calls.length > 20, `${calls.length} REST calls`);
    t.same(failed, [], 'every call 2xx (the upgrade check answered as Syncthing’s packaged builds do)');

    // A GUI password set: the browser logs in as Syncthing 1.19's GUI has it (HTTP Basic), and the
    // GUI works as before; without the password it gets nothing.
    await api(syncd, 'PATCH', '/rest/config/gui', { user: 'admin', password: 'a long passphrase' });
    const stranger = await fetch(syncd.url);
    t.same(
      [stranger.status, stranger.headers.get('www-authenticate')],
      [401, 'Basic realm="Authorization Required"'],
      'no password: the browser is asked for one',
    );
    const user = await browser.newContext({
      httpCredentials: { username: 'admin', password: 'a long passphrase' },
    });
    t.teardown(() => user.close());
    // A small page of the GUI's (meta.js) for the login, then a call as the GUI makes it: with the
    // session cookie the login opened and the CSRF token the page set.
    const logged = await user.newPage();
    t.equal((await logged.goto(new URL('meta.js', syncd.url).href))?.status(), 200, 'logged in');
    const cookies = await user.cookies();
    t.ok(
      cookies.some((cookie) => cookie.name.startsWith('sessionid-')),
      'the login opened a session',
    );
    const csrf = cookies.find((cookie) => cookie.name.startsWith('CSRF-Token-'));
    const status = await logged.evaluate(
      async ({ name, value }) =>
        (await fetch('/rest/system/status', { headers: { [`X-${name}`]: value } })).status,
      { name: csrf?.name ?? '', value: csrf?.value ?? '' },
    );
    t.equal(status, 200, 'the GUI’s calls go through in the session');
  },
);

async function until(test: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error('not within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
