// syncd's own web GUI in real Chromium, as a person uses it with their Syncthing: the page pairs the
// two (a pending device accepted), adds and shares a folder whose files arrive with a progress bar,
// pauses and resumes it, edits its ignores with their preview, restores a version, survives a restart
// without a reload, logs in with a user and password, and says so when the service is gone; no console
// error and no failed call on the way, but those a step expects. With SYNCD_GUI_SCREENSHOTS=DIR (npm run
// screenshots) the main views are saved there as PNG files for the docs, from this same setup.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { Configuration } from '../../../shared/config/defaults.ts';
import t from 'tap';
import { hasChromium, launchChromium, NO_CHROMIUM } from '../../helpers/chromium.ts';
import { api, startDevice } from '../../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil, startSyncthing } from '../../helpers/syncthing.ts';

const skip = !hasSyncthing ? NO_SYNCTHING : !hasChromium ? NO_CHROMIUM : false;
const SHOTS = process.env.SYNCD_GUI_SCREENSHOTS;
const WAIT = { timeout: 30_000 };

t.test('syncd’s web GUI with a Syncthing peer, from pairing to logging in', { skip }, async (t) => {
  const big = randomBytes(16 << 20);
  const smalls = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`note-${i}.txt`, `note ${i}\n`]));
  const dir = t.testdir({
    mine: {},
    notes: {},
    theirs: { 'a.txt': 'first version\n', 'big.bin': big, ...smalls },
  });
  const [mine, theirs] = [join(dir, 'mine'), join(dir, 'theirs')];
  const device = await startDevice(t);
  const { syncd } = device;
  const syncthing = await startSyncthing(t);
  const config = () => api<Configuration>(syncd, 'GET', '/rest/config');
  // Names as a person gives them; a pull slow enough (the test's loopback counts as a LAN) for its
  // progress to be seen.
  await api(syncd, 'PATCH', `/rest/config/devices/${device.id}`, { name: 'nas' });
  // For the docs' picture, slower still, and its progress told every second.
  await api(syncd, 'PATCH', '/rest/config/options', {
    maxRecvKbps: SHOTS ? 1000 : 4000,
    limitBandwidthInLan: true,
    ...(SHOTS ? { progressUpdateIntervalS: 1 } : {}),
  });
  await syncthing.call('PATCH', `/rest/config/devices/${syncthing.id}`, { name: 'laptop' });

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  const page = await context.newPage();
  // Everything that goes wrong in the page, but what the step under way expects (`expecting`).
  const problems: string[] = [];
  let expecting: RegExp | undefined;
  const problem = (text: string) => {
    if (!expecting?.test(text)) problems.push(text);
  };
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problem(`console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) {
      problem(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
    }
  });
  // A request the page cancels itself (a view's long poll as it closes) is no failure.
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    if (reason !== 'net::ERR_ABORTED') problem(`${request.method()} ${request.url()} failed: ${reason}`);
  });
  const shot = async (name: string, target: Page = page) => {
    if (SHOTS) await target.screenshot({ path: join(SHOTS, `gui-${name}.png`) });
  };

  // No GUI password: the page asks for the API key (a CSRF token, which any local process can take
  // from a page, lets nobody in), and opens with it; then this device's ID and its QR code.
  expecting = /\/rest\/.* 403|status of 403/;
  await page.goto(syncd.url);
  const keyLogin = page.getByRole('form', { name: 'Log in' });
  await keyLogin.getByLabel('API key').fill(syncd.apiKey);
  await keyLogin.getByRole('button', { name: 'Log in' }).click();
  expecting = undefined;
  // The link `npm start` prints logs a browser in by itself, and leaves no key in the address.
  const linked = await browser.newContext();
  t.teardown(() => linked.close());
  const byLink = await linked.newPage();
  await byLink.goto(`${syncd.url}/#key=${encodeURIComponent(syncd.apiKey)}`);
  await byLink.getByTestId('my-id').filter({ hasText: device.id }).waitFor(WAIT);
  t.notMatch(byLink.url(), /key=/, 'the key taken off the address');
  await linked.close();
  await page.getByTestId('my-id').filter({ hasText: device.id }).waitFor(WAIT);
  await page.getByRole('button', { name: 'Show ID' }).click();
  const qr = page.getByRole('img', { name: 'QR code of the device ID' });
  await qr.waitFor(WAIT);
  await page.waitForFunction(() => (document.querySelector('img.qr') as HTMLImageElement)?.naturalWidth > 0);
  await page.getByRole('dialog', { name: 'Device ID' }).getByRole('button', { name: 'Close' }).click();

  // The device ID checked as it is typed.
  const devices = page.getByRole('region', { name: 'Devices' });
  await devices.getByRole('button', { name: 'Add device' }).click();
  let dialog = page.getByRole('dialog', { name: 'Add device' });
  await dialog.getByLabel('Device ID').fill('ABCDEFG-not-an-id');
  expecting = /\/rest\/svc\/deviceid 400|status of 400/;
  await dialog.getByRole('alert').waitFor(WAIT);
  t.ok(await dialog.getByRole('button', { name: 'Save' }).isDisabled(), 'no saving a wrong ID');
  expecting = undefined;
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // Syncthing, told of syncd, dials it and offers its folder: syncd's page shows the device asking
  // to connect, and it is added from there.
  await syncthing.call('POST', '/rest/config/devices', { deviceID: device.id, addresses: [device.listen] });
  await syncthing.call('POST', '/rest/config/folders', {
    id: 'docs',
    label: 'Docs',
    path: theirs,
    devices: [{ deviceID: device.id }],
  });
  const asking = page.getByRole('article', { name: 'Pending device laptop' });
  await asking.getByRole('button', { name: 'Add device' }).click(WAIT);
  dialog = page.getByRole('dialog', { name: 'Add device' });
  t.equal(await dialog.getByLabel('Device ID').inputValue(), syncthing.id, 'the ID filled in');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  const laptop = devices.getByRole('group', { name: 'Device laptop' });
  await badge(laptop, 'Connected').waitFor(WAIT);

  // Its folder offered, accepted into a path chosen here; the files arrive with a progress bar.
  const offered = page.getByRole('article', { name: 'Pending folder Docs from laptop' });
  await offered.getByRole('button', { name: 'Add' }).click(WAIT);
  dialog = page.getByRole('dialog', { name: 'Accept folder' });
  await dialog.getByLabel('Folder path').fill(mine);
  await dialog.getByRole('button', { name: 'Save' }).click();
  const docs = page.getByRole('group', { name: 'Folder Docs' });
  await docs.locator('summary').click(WAIT);
  await docs.getByRole('progressbar', { name: 'Synchronization of Docs' }).waitFor(WAIT);
  await laptop.locator('summary').click();
  if (SHOTS) {
    // For the picture, a pull under way rather than just begun.
    await docs
      .getByText(/pulling 1 file: [1-9][\d.]* MiB of/)
      .waitFor(WAIT)
      .catch(() => undefined);
    await shot('syncing');
  }
  await badge(docs, 'Up to date').waitFor({ timeout: 120_000 });
  for (const name of ['a.txt', 'big.bin', 'note-0.txt', 'note-11.txt']) {
    t.equal(await digest(join(mine, name)), await digest(join(theirs, name)), `${name} arrived whole`);
  }
  await laptop.getByRole('img', { name: /^Traffic with laptop: in / }).waitFor(WAIT);
  await shot('overview');

  // Paused and resumed.
  await docs.getByRole('button', { name: 'Pause' }).click();
  await badge(docs, 'Paused').waitFor(WAIT);
  t.equal((await config()).folders.find((folder) => folder.id === 'docs')?.paused, true, 'paused');
  await docs.getByRole('button', { name: 'Resume' }).click();
  await badge(docs, 'Up to date').waitFor(WAIT);
  t.equal((await config()).folders.find((folder) => folder.id === 'docs')?.paused, false, 'resumed');

  // Nothing needed, no conflicts; the device edited, paused and resumed from its card.
  await docs.getByRole('button', { name: 'Needed items' }).click();
  dialog = page.getByRole('dialog', { name: 'Needed items' });
  await dialog.getByText('Nothing needed: the folder is up to date.').waitFor(WAIT);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await docs.getByRole('button', { name: 'Conflicts' }).click();
  dialog = page.getByRole('dialog', { name: 'Conflicts' });
  await dialog.getByText('No conflicts: the folder has no conflict copies.').waitFor(WAIT);
  await dialog.getByRole('button', { name: 'Close' }).click();
  // Its listening address given, syncd dials it back at once on resume.
  await laptop.getByRole('button', { name: 'Edit' }).click();
  dialog = page.getByRole('dialog', { name: 'Edit device laptop' });
  await dialog.getByLabel('Addresses').fill(syncthing.listen);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  t.same(
    (await config()).devices.find((entry) => entry.deviceID === syncthing.id)?.addresses,
    [syncthing.listen],
    'the address saved',
  );
  await laptop.getByRole('button', { name: 'Pause' }).click();
  await badge(laptop, 'Paused').waitFor(WAIT);
  await laptop.getByRole('button', { name: 'Resume' }).click();
  await badge(laptop, 'Connected').waitFor(WAIT);

  // Edited: versions kept, and ignore patterns whose preview names what they leave out.
  await writeFile(join(mine, 'scratch.tmp'), 'scratch');
  await docs.getByRole('button', { name: 'Edit' }).click();
  dialog = page.getByRole('dialog', { name: 'Edit folder Docs' });
  await dialog.getByRole('tab', { name: 'File versioning' }).click();
  await dialog.getByLabel('File versioning').selectOption('simple');
  await dialog.getByLabel('Keep versions').fill('5');
  await dialog.getByRole('tab', { name: 'Ignore patterns' }).click();
  await dialog.getByLabel('Ignore patterns').fill('*.tmp');
  await dialog.getByRole('region', { name: 'Ignored items' }).getByText('scratch.tmp').waitFor(WAIT);
  await shot('ignores', page);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  const ignores = await api<{ ignore: string[] }>(syncd, 'GET', '/rest/db/ignores?folder=docs');
  t.same(ignores.ignore, ['*.tmp'], 'the patterns saved');
  t.equal((await config()).folders.find((folder) => folder.id === 'docs')?.versioning.type, 'simple');

  // Changed on Syncthing: the old version is kept here, and restored from the Versions dialog.
  await writeFile(join(theirs, 'a.txt'), 'second version\n');
  await syncthing.call('POST', '/rest/db/scan?folder=docs');
  await pollUntil(
    'the second version here',
    async () => (await readFile(join(mine, 'a.txt'), 'utf8')) === 'second version\n',
    60_000,
  );
  await docs.getByRole('button', { name: 'Versions' }).click();
  dialog = page.getByRole('dialog', { name: 'Versions' });
  await dialog.getByRole('group', { name: 'a.txt' }).getByRole('checkbox').first().check(WAIT);
  await shot('versions');
  await dialog.getByRole('button', { name: 'Restore' }).click();
  await dialog.getByRole('status').getByText('Restored 1 file').waitFor(WAIT);
  t.equal(await readFile(join(mine, 'a.txt'), 'utf8'), 'first version\n', 'the first version is back');
  await pollUntil(
    'the first version on Syncthing',
    async () => (await readFile(join(theirs, 'a.txt'), 'utf8')) === 'first version\n',
    60_000,
  );
  await dialog.getByRole('button', { name: 'Close' }).click();

  // A folder added here and shared: Syncthing is offered it.
  const folders = page.getByRole('region', { name: 'Folders' });
  await folders.getByRole('button', { name: 'Add folder' }).click();
  dialog = page.getByRole('dialog', { name: 'Add folder' });
  await dialog.getByLabel('Folder label').fill('Notes');
  await dialog.getByLabel('Folder ID').fill('notes');
  await dialog.getByLabel('Folder path').fill(join(dir, 'notes'));
  await dialog.getByRole('tab', { name: 'Sharing' }).click();
  await dialog.getByLabel('laptop').check();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  await syncthing.until('offered Notes', async () => {
    const pending = await syncthing.call<Record<string, { offeredBy: Record<string, unknown> }>>(
      'GET',
      '/rest/cluster/pending/folders',
    );
    return pending.notes?.offeredBy[device.id] !== undefined;
  });

  // What changed on disk, and the same page at a phone's width.
  await page.getByRole('link', { name: 'Recent changes' }).click();
  await page.getByRole('region', { name: 'Recent changes' }).getByText('a.txt').first().waitFor(WAIT);
  await shot('changes');
  if (SHOTS) {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(syncd.url);
    await phone.getByRole('group', { name: 'Folder Docs' }).waitFor(WAIT);
    await shot('phone', phone);
    await phone.close();
  }

  // The log view shows the worker's lines.
  await page.getByRole('link', { name: 'Log' }).click();
  await page.getByRole('log', { name: 'Log lines' }).filter({ hasText: 'My ID' }).waitFor(WAIT);
  await shot('log');

  // A value the service refuses: the page shows the REST API's own message, and nothing changes.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('tab', { name: 'Connections' }).click();
  const connections = page.getByRole('form', { name: 'Connections settings' });
  await connections.getByLabel('Outgoing rate limit (KiB/s)').fill('-5');
  expecting = /\/rest\/config\/options 400|status of 400/;
  await connections.getByRole('button', { name: 'Save' }).click();
  const refusal = await api(syncd, 'PATCH', '/rest/config/options', { maxSendKbps: -5 }).then(
    () => 'accepted',
    (error: Error) => error.message,
  );
  await connections.getByRole('alert').waitFor(WAIT);
  const shown = (await connections.getByRole('alert').textContent()) ?? '';
  t.ok(shown !== '' && refusal.includes(shown), `the REST API's message: ${shown}`);
  expecting = undefined;
  t.equal((await config()).options.maxSendKbps, 0, 'nothing changed');

  // A user and password set in Settings › GUI: a browser without the key is then asked for them,
  // refused a wrong one with the service's words, and let in with the right one.
  await page.getByRole('tab', { name: 'GUI' }).click();
  // The harness gives the key by SYNCD_API_KEY: the page says so, and offers no key that would not act.
  await page.getByText('Given by --api-key (or SYNCD_API_KEY)').waitFor(WAIT);
  t.equal(await page.getByRole('button', { name: 'Generate new' }).count(), 0, 'no new key offered');
  const gui = page.getByRole('form', { name: 'GUI settings' });
  await gui.getByLabel('GUI authentication user').fill('admin');
  await gui.getByLabel('GUI authentication password').fill('a long passphrase');
  await shot('settings');
  await gui.getByRole('button', { name: 'Save' }).click();
  await gui.getByText('Saved.').waitFor(WAIT);
  const other = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  t.teardown(() => other.close());
  const stranger = await other.newPage();
  const strangerProblems: string[] = [];
  stranger.on('pageerror', (error) => strangerProblems.push(error.message));
  await stranger.goto(syncd.url);
  const login = stranger.getByRole('form', { name: 'Log in' });
  await login.getByLabel('User').fill('admin');
  await login.getByLabel('Password').fill('not it');
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.getByRole('alert').filter({ hasText: 'wrong user or password' }).waitFor(WAIT);
  await shot('login', stranger);
  await login.getByLabel('Password').fill('a long passphrase');
  await login.getByRole('button', { name: 'Log in' }).click();
  await stranger.getByTestId('my-id').waitFor(WAIT);
  t.ok(
    (await other.cookies()).some((cookie) => cookie.name.startsWith('sessionid-')),
    'logged in: a session cookie',
  );
  // Its CSRF token gone (as one expires after 30 days in a page left open): the page gets a new one
  // and goes on, rather than being refused until locked out.
  const csrf = (await other.cookies()).find((cookie) => cookie.name.startsWith('CSRF-Token-'));
  await other.clearCookies({ name: csrf?.name ?? '' });
  await stranger.getByRole('link', { name: 'Log' }).click();
  await stranger.getByRole('log', { name: 'Log lines' }).filter({ hasText: 'My ID' }).waitFor(WAIT);
  t.ok(
    (await other.cookies()).some((cookie) => cookie.name === csrf?.name),
    'a new token',
  );
  t.same(strangerProblems, [], 'no page error in the other browser');
  await stranger.close();

  // A restart: the page goes on without a reload, its event stream with it.
  const before = await syncd.workerPid();
  expecting = /\/rest\/events|failed|ERR_/;
  await page.getByRole('button', { name: 'Actions' }).click();
  await page.getByRole('button', { name: 'Restart' }).click();
  await pollUntil('a new worker', async () => (await syncd.workerPid()) !== before, 60_000);
  expecting = undefined;

  // The service gone: the page says so.
  expecting = /failed|ERR_|\/rest\//;
  await api(syncd, 'POST', '/rest/system/shutdown');
  await page.getByTestId('service-gone').waitFor(WAIT);
  t.same(problems, [], 'no console error, no failed call');
});

/** The state badge of a folder's or a device's card, when it starts with `text`. */
const badge = (card: Locator, text: string) =>
  card.locator('summary .badge').filter({ hasText: new RegExp(`^${text}`) });

/** The SHA-256 of a file, to compare copies. */
async function digest(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}
void digest;
void writeFile;
