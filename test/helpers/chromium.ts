import { access } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';

// Debian's Chromium, which .ci/run installs, driven by playwright-core: the browser tests' one way to it.
// Its headless shell (Chromium's old headless mode, as playwright itself runs headless) when there: a
// page load costs it 40 % less CPU than the full browser, and the tests share two cores.
const CANDIDATES = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];
const found = await Promise.all(
  CANDIDATES.map((path) =>
    access(path).then(
      () => path,
      () => undefined,
    ),
  ),
);
export const CHROMIUM = found.find((path) => path !== undefined) ?? (CANDIDATES[1] as string);
export const hasChromium = found.some((path) => path !== undefined);
export const NO_CHROMIUM = `${CHROMIUM} is not installed (.ci/run installs Debian's chromium-headless-shell)`;

/** A headless Chromium that reaches out to nothing on its own; `args` are added to its flags. */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
}
