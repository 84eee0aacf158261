// The web console in headless Chromium against a broker that stops answering (SIGSTOP: its connections stay open
// and nothing comes back, so only a deadline ends the calls): the page shows the error within the console's
// --timeout-ms instead of hanging. Screenshot in test-artifacts/console/broker-stopped.png.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { startBroker } from '../helpers/broker-process.js';
import { type ConsoleProcess, startConsole } from './console-process.js';

const ARTIFACTS = join(resolve(import.meta.dirname, '../../..'), 'test-artifacts/console');
const CHROMIUM = process.env.BROOK_CHROMIUM ?? '/usr/bin/chromium';

describe('web console with a broker that stops answering', () => {
  test('the page shows an error within the deadline, not a spinner', async () => {
    const broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    let web: ConsoleProcess | undefined;
    let browser: Browser | undefined;
    let stopped = false;
    try {
      web = await startConsole(['--bootstrap-server', broker.bootstrap, '--timeout-ms', '3000']);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-background-networking', '--headless=new'],
      });
      const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
      await page.goto(`${web.url}/#/topics`);
      await page.locator('[data-test=topics]').waitFor({ timeout: 15_000 });
      process.kill(broker.pid, 'SIGSTOP');
      stopped = true;
      const started = Date.now();
      await page.goto(`${web.url}/#/brokers`);
      const error = (await page.locator('[data-test=error]').textContent({ timeout: 20_000 })) ?? '';
      const elapsedMs = Date.now() - started;
      assert.ok(elapsedMs < 12_000, `error shown after ${elapsedMs} ms`);
      assert.match(error, /3000 ms|timed out|timeout/i);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'broker-stopped.png'), fullPage: true });
    } finally {
      if (stopped) process.kill(broker.pid, 'SIGCONT');
      await browser?.close();
      await web?.stop();
      await broker.stop();
    }
  });
});
