// The web console's live views in headless Chromium: the charts, fed from a broker's Prometheus endpoint while a
// producer writes, draw throughput, latency and lag; the ACL and quota views render (adding an ACL
// without an authorizer shows the broker's error); and a broker that stops
// answering (SIGSTOP: its connections stay open and nothing comes back, so only a deadline ends the calls) gives
// the page an error within the console's --timeout-ms instead of a page that hangs; so does a broker that is
// gone (SIGKILL: connections refused). Screenshots in test-artifacts/console/.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { freePort } from '../helpers/zookeeper.js';
import { launchChromium, screenshot, waitForText } from './browser.js';
import { type ConsoleProcess, startConsole } from './console-process.js';

describe('web console charts, ACLs and quotas in Chromium', () => {
  let broker: BrokerProcess | undefined;
  let web: ConsoleProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let admin: Admin | undefined;

  before(async () => {
    const metricsPort = await freePort();
    broker = await startBroker({
      overrides: { 'num.partitions': 1, 'brook.metrics.listener': `http://127.0.0.1:${metricsPort}` },
    });
    web = await startConsole([
      '--bootstrap-server',
      broker.bootstrap,
      '--metrics-url',
      `http://127.0.0.1:${metricsPort}/metrics`,
    ]);
    admin = new Admin({ bootstrapServers: broker.bootstrap });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await admin?.close();
    await web?.stop();
    await broker?.stop();
  });

  test('the live charts under load and the ACL and quota views render', async () => {
    await admin!.createTopics([{ topic: 'lagging', numPartitions: 2 }]);
    await admin!.alterConsumerGroupOffsets('lag-watchers', [
      { topic: 'lagging', partition: 0, offset: 0 },
      { topic: 'lagging', partition: 1, offset: 0 },
    ]);
    // Some traffic while the charts fill, so that they draw more than flat lines.
    const producer = new Producer({ bootstrapServers: broker!.bootstrap, lingerMs: 5 });
    let producing = true;
    const load = (async () => {
      while (producing) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            producer.send({ topic: 'lagging', partition: i % 2, value: Buffer.alloc(200) }),
          ),
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await page!.goto(`${web!.url}/#/charts`);
      await waitForText(
        page!.locator('[data-test=charts-source]'),
        /Prometheus.* ([4-9]|\d{2,}) so far/,
        30_000,
      );
      const captions = page!.locator('[data-test=chart] figcaption');
      await waitForText(captions.nth(0), /Messages in \(max [1-9]/, 45_000);
      await waitForText(captions.nth(1), /Bytes in and out \(max [1-9]/, 45_000);
    } finally {
      producing = false;
      await load;
      await producer.close();
    }
    assert.ok((await page!.locator('[data-test=chart] polyline').count()) >= 4, 'lines drawn');
    await screenshot(page!, 'charts');
    await admin!.alterClientQuotas([
      { entity: { clientId: 'loader' }, ops: [{ key: 'consumer_byte_rate', value: 2048 }] },
    ]);
    await page!.goto(`${web!.url}/#/security`);
    await waitForText(page!.locator('[data-test=acls-disabled]'), /no authorizer/);
    // Adding an ACL to a cluster without an authorizer: the broker's SECURITY_DISABLED, shown in the page.
    await page!.locator('details.panel summary', { hasText: 'Add an ACL' }).click();
    const form = page!.locator('[data-test=add-acl]');
    await form.locator('input[name=principal]').fill('User:alice');
    await form.locator('input[name=resourceName]').fill('orders');
    await form.locator('button[type=submit]').click();
    await waitForText(form.locator('[data-test=error]'), /SECURITY_DISABLED/);
    assert.match(await waitForText(page!.locator('[data-test=quotas]'), /loader/), /consumer_byte_rate=2048/);
    await screenshot(page!, 'security');
  });
});

describe('web console with a broker that stops answering', () => {
  test('the page shows an error within the deadline, not a spinner', async () => {
    const broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    let web: ConsoleProcess | undefined;
    let browser: Browser | undefined;
    let stopped = false;
    try {
      web = await startConsole(['--bootstrap-server', broker.bootstrap, '--timeout-ms', '3000']);
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
      await page.goto(`${web.url}/#/topics`);
      await page.locator('[data-test=topics]').waitFor({ timeout: 45_000 });
      process.kill(broker.pid, 'SIGSTOP');
      stopped = true;
      const started = Date.now();
      await page.goto(`${web.url}/#/brokers`);
      const error = (await page.locator('[data-test=error]').textContent({ timeout: 20_000 })) ?? '';
      const elapsedMs = Date.now() - started;
      assert.ok(elapsedMs < 12_000, `error shown after ${elapsedMs} ms`);
      assert.match(error, /3000 ms|timed out|timeout/i);
      await screenshot(page, 'broker-stopped');
    } finally {
      if (stopped) process.kill(broker.pid, 'SIGCONT');
      await browser?.close();
      await web?.stop();
      await broker.stop();
    }
  });
});

describe('web console with a broker that is gone', () => {
  test('the page shows an error, not a spinner, and the console keeps serving', async () => {
    const broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    let web: ConsoleProcess | undefined;
    let browser: Browser | undefined;
    try {
      web = await startConsole(['--bootstrap-server', broker.bootstrap, '--timeout-ms', '3000']);
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
      await page.goto(`${web.url}/#/brokers`);
      await page.locator('[data-test=brokers]').waitFor({ timeout: 45_000 });
      await broker.kill();
      const started = Date.now();
      await page.goto(`${web.url}/#/topics`);
      const error = (await page.locator('[data-test=error]').textContent({ timeout: 20_000 })) ?? '';
      const elapsedMs = Date.now() - started;
      assert.ok(elapsedMs < 12_000, `error shown after ${elapsedMs} ms`);
      assert.match(error, /no bootstrap server reachable.*ECONNREFUSED/);
      await screenshot(page, 'broker-gone');
      // The console itself still answers: the next page shows the same error rather than nothing.
      await page.goto(`${web.url}/#/groups`);
      assert.ok(
        ((await page.locator('[data-test=error]').textContent({ timeout: 20_000 })) ?? '').length > 0,
      );
    } finally {
      await browser?.close();
      await web?.stop();
      await broker.stop();
    }
  });
});
