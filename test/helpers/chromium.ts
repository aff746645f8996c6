import { access } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';

// Debian's Chromium, which .ci/run installs, driven by playwright-core: the browser tests' one way to it.
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = await access(CHROMIUM).then(
  () => true,
  () => false,
);
export const NO_CHROMIUM = `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)`;

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
