// The web console served by the broker itself (`brook.console.listener`): a broker process with the key serves the
// pages on that address, as a client of its own listener, with the charts fed from its own /metrics; a topic made
// in the page is listed by `brook topics --list`; the console stops with the broker. Unset, the key serves nothing;
// a malformed address is refused when the configuration is read. Screenshots in test-artifacts/console/.

import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { resolveBrokerConfig } from '../../src/broker/config/broker-config.js';
import { run, startBroker } from '../helpers/broker-process.js';
import { freePort } from '../helpers/zookeeper.js';
import { launchChromium, screenshot, waitForText } from './browser.js';

const BROOK = join(resolve(import.meta.dirname, '../../..'), 'bin/brook');

describe('brook.console.listener', () => {
  test('unset, no console; a malformed address is a configuration error', () => {
    const base = { 'log.dirs': '/tmp/unused', listeners: 'PLAINTEXT://127.0.0.1:9092' };
    assert.equal(resolveBrokerConfig(new Map(Object.entries(base))).brookConsoleListener, null);
    const set = { ...base, 'brook.console.listener': 'http://127.0.0.1:9021' };
    assert.equal(
      resolveBrokerConfig(new Map(Object.entries(set))).brookConsoleListener,
      'http://127.0.0.1:9021',
    );
    assert.throws(
      () =>
        resolveBrokerConfig(new Map(Object.entries({ ...base, 'brook.console.listener': '127.0.0.1:9021' }))),
      /brook\.console\.listener/,
    );
  });

  test('a broker process serves the console on that address, speaking to its own listener', async () => {
    const consolePort = await freePort();
    const metricsPort = await freePort();
    const broker = await startBroker({
      overrides: {
        'num.partitions': 1,
        'brook.console.listener': `http://127.0.0.1:${consolePort}`,
        'brook.metrics.listener': `http://127.0.0.1:${metricsPort}`,
      },
    });
    const url = `http://127.0.0.1:${consolePort}`;
    let browser: Browser | undefined;
    try {
      assert.match(broker.log(), new RegExp(`console listening at http://127\\.0\\.0\\.1:${consolePort}/`));
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${url}/`);
      const row = await waitForText(page.locator('[data-test=brokers] tbody tr'), /online/);
      assert.match(row, new RegExp(`127\\.0\\.0\\.1:${broker.port}`));
      assert.match((await page.locator('header .meta').textContent()) ?? '', new RegExp(`:${broker.port}`));
      await screenshot(page, 'in-broker-brokers');

      await page.goto(`${url}/#/topics`);
      await page.locator('details.panel summary', { hasText: 'Create a topic' }).click();
      const form = page.locator('[data-test=create-topic]');
      await form.locator('input[name=name]').fill('served-by-broker');
      await form.locator('input[name=partitions]').fill('2');
      await form.locator('button[type=submit]').click();
      await waitForText(page.locator('h2'), /served-by-broker/);
      const listed = await run(
        process.execPath,
        [BROOK, 'topics', '--bootstrap-server', broker.bootstrap, '--list'],
        { timeoutMs: 30_000 },
      );
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(listed.stdout.split('\n').includes('served-by-broker'), listed.stdout);

      // The charts read the broker's own Prometheus endpoint without being told where it is.
      await page.goto(`${url}/#/charts`);
      await waitForText(page.locator('[data-test=charts-source]'), /Prometheus/, 30_000);
      await screenshot(page, 'in-broker-charts');
    } finally {
      await browser?.close();
      await broker.stop();
    }
    // Stopped with the broker: nothing listens on the console's address any more.
    await assert.rejects(fetch(`${url}/api/info`, { signal: AbortSignal.timeout(5_000) }));
  });
});
