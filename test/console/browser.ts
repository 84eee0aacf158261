// What the console's browser tests share: Debian's chromium launched headless through playwright-core (running as
// root needs --no-sandbox; background networking is off so the browser talks only to the console), a wait for a
// locator's text, and screenshots into test-artifacts/console/ (ignored by git) for a person to look at.

import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

const ARTIFACTS = join(resolve(import.meta.dirname, '../../..'), 'test-artifacts/console');
/** Debian's chromium (.ci/install); BROOK_CHROMIUM names another build. */
const CHROMIUM = process.env.BROOK_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--headless=new'],
  });
}

/** Polls the locator's text until it matches; fails with the last text seen. */
export async function waitForText(locator: Locator, pattern: RegExp, timeoutMs = 45_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last =
      (await locator
        .first()
        .textContent({ timeout: Math.max(1, deadline - Date.now()) })
        .catch(() => null)) ?? '';
    if (pattern.test(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${pattern} in ${locator}; last text: ${JSON.stringify(last)}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
