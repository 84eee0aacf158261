// The web console end to end in headless Chromium (Debian's chromium, driven by playwright-core) against live
// brokers: the brokers page loads; a topic created in the page is listed by `brook topics --list`; a message
// produced by kcat shows in the message browser as text, JSON and hex; a group's lag shows and falls, step by
// step, as its consumer catches up, and an offset reset in the page; partitions added and a topic deleted. The
// charts, ACL and quota views and a broker that stops answering: console-browser-live.test.ts. Screenshots of the
// views go to test-artifacts/console/ (ignored by git) for a person to look at.

import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { launchChromium, screenshot, waitForText } from './browser.js';
import { type ConsoleProcess, call, startConsole } from './console-process.js';

const BROOK = join(resolve(import.meta.dirname, '../../..'), 'bin/brook');

describe('web console in Chromium', () => {
  let broker: BrokerProcess | undefined;
  let web: ConsoleProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let admin: Admin | undefined;

  before(async () => {
    broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    web = await startConsole(['--bootstrap-server', broker.bootstrap]);
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

  test('the brokers page shows the live broker, online and controller', async () => {
    await page!.goto(`${web!.url}/`);
    const row = await waitForText(page!.locator('[data-test=brokers] tbody tr'), /online/);
    assert.match(row, /controller/);
    assert.match(row, new RegExp(`127\\.0\\.0\\.1:${broker!.port}`));
    await screenshot(page!, 'brokers');
  });

  test('a topic created in the page appears in brook topics --list', async () => {
    await page!.goto(`${web!.url}/#/topics`);
    await page!.locator('details.panel summary', { hasText: 'Create a topic' }).click();
    const form = page!.locator('[data-test=create-topic]');
    await form.locator('input[name=name]').fill('page-made');
    await form.locator('input[name=partitions]').fill('3');
    await form.locator('textarea[name=configs]').fill('retention.ms=3600000');
    await form.locator('button[type=submit]').click();
    // The page goes to the new topic's partitions.
    await waitForText(page!.locator('h2'), /page-made/);
    await page!.locator('[data-test=partitions] tbody tr').nth(2).waitFor({ timeout: 45_000 });
    await screenshot(page!, 'topic');
    const listed = await run(
      process.execPath,
      [BROOK, 'topics', '--bootstrap-server', broker!.bootstrap, '--list'],
      {
        timeoutMs: 30_000,
      },
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.split('\n').includes('page-made'), listed.stdout);
    const [configs] = await admin!.describeConfigs([{ type: 'topic', name: 'page-made' }]);
    assert.equal(configs!.configs.find((c) => c.name === 'retention.ms')!.value, '3600000');

    await page!.goto(`${web!.url}/#/topics/page-made/configs`);
    const row = page!.locator('tr[data-config="cleanup.policy"]');
    await row.locator('button', { hasText: 'Edit' }).click();
    await row.locator('input[name=value]').fill('compact');
    await row.locator('button', { hasText: 'Save' }).click();
    await waitForText(page!.locator('.ok'), /cleanup.policy set to compact/);
    const [altered] = await admin!.describeConfigs([{ type: 'topic', name: 'page-made' }]);
    assert.equal(altered!.configs.find((c) => c.name === 'cleanup.policy')!.value, 'compact');
  });

  test('partitions added and a topic deleted in the page, the delete only once its name is typed', async () => {
    await page!.goto(`${web!.url}/#/topics/page-made/partitions`);
    await page!.locator('input[name=count]').fill('4');
    await page!.locator('button', { hasText: 'Add partitions' }).click();
    await waitForText(page!.locator('.ok'), /page-made now has 4 partitions/);
    await page!.locator('[data-test=partitions] tbody tr').nth(3).waitFor({ timeout: 45_000 });
    const deleteButton = page!.locator('button', { hasText: 'Delete topic' });
    assert.equal(await deleteButton.isDisabled(), true, 'disabled until the name is typed');
    await page!.locator('input[name=confirm-name]').fill('page-made');
    await deleteButton.click();
    await page!.locator('[data-test=confirm-yes]').click();
    await waitForText(page!.locator('h2'), /^Topics$/);
    const listed = await run(
      process.execPath,
      [BROOK, 'topics', '--bootstrap-server', broker!.bootstrap, '--list'],
      {
        timeoutMs: 30_000,
      },
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(!listed.stdout.split('\n').includes('page-made'), listed.stdout);
  });

  test('a message produced by kcat shows in the browser as text, pretty JSON and hex', async () => {
    await admin!.createTopics([{ topic: 'kcat-orders', numPartitions: 1 }]);
    const produced = await run(
      'kcat',
      ['-P', '-b', broker!.bootstrap, '-t', 'kcat-orders', '-k', 'order-17', '-H', 'source=kcat'],
      { input: '{"item":"tea","quantity":2}\n', timeoutMs: 30_000 },
    );
    assert.equal(produced.code, 0, produced.stderr);
    await page!.goto(`${web!.url}/#/topics/kcat-orders/messages`);
    const value = page!.locator('[data-test=records] pre.value');
    assert.equal(await waitForText(value, /tea/), '{"item":"tea","quantity":2}');
    assert.equal(await page!.locator('[data-test=records] pre.key').first().textContent(), 'order-17');
    assert.match((await page!.locator('[data-test=records] tbody tr').first().textContent()) ?? '', /source/);
    await page!.locator('select[name=show-as]').selectOption('json');
    assert.equal(await waitForText(value, /\n {2}"item"/), '{\n  "item": "tea",\n  "quantity": 2\n}');
    await screenshot(page!, 'messages');
    await page!.locator('select[name=show-as]').selectOption('hex');
    assert.match(await waitForText(value, /^00000000/), /^00000000 {2}7b 22 69 74 65 6d/);
  });

  test("a group's lag shows and falls as its consumer catches up", async () => {
    await admin!.createTopics([{ topic: 'lagging', numPartitions: 2 }]);
    const producer = new Producer({ bootstrapServers: broker!.bootstrap, lingerMs: 5 });
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        producer.send({ topic: 'lagging', partition: i % 2, value: Buffer.from(`m${i}`) }),
      ),
    );
    await producer.close();
    await admin!.alterConsumerGroupOffsets('lag-watchers', [
      { topic: 'lagging', partition: 0, offset: 0 },
      { topic: 'lagging', partition: 1, offset: 0 },
    ]);
    await page!.goto(`${web!.url}/#/groups/lag-watchers`);
    const lag = page!.locator('[data-test=total-lag]');
    await waitForText(lag, /^300$/);
    await screenshot(page!, 'group');

    const consumer = new Consumer({
      bootstrapServers: broker!.bootstrap,
      groupId: 'lag-watchers',
      enableAutoCommit: false,
      maxPollRecords: 100,
    });
    try {
      consumer.subscribe(['lagging']);
      // Each poll's records are committed, and the page must show the lag that leaves before the next poll:
      // 300, then lower and lower, then 0.
      const seen = [300];
      let consumed = 0;
      while (consumed < 300) {
        const records = await consumer.poll(1000);
        if (records.length === 0) continue;
        consumed += records.length;
        await consumer.commit();
        seen.push(Number(await waitForText(lag, new RegExp(`^${300 - consumed}$`), 20_000)));
        if (seen.length === 2) {
          await waitForText(page!.locator('[data-test=members]'), /lagging-0, lagging-1/);
          const refused = await call(web!.url, 'POST', '/groups/lag-watchers/reset-offsets', {
            to: 'earliest',
          });
          assert.equal(refused.status, 409, 'no reset while the group has members');
        }
      }
      assert.equal(seen.at(-1), 0);
      assert.ok(seen.length >= 3, `the page followed the consumer: ${seen.join(', ')}`);
    } finally {
      await consumer.close();
    }
    // The consumer has left: the page's reset, confirmed, takes the group back to the start.
    await page!.locator('select[name=to]').selectOption('earliest');
    await page!.locator('button', { hasText: 'Reset offsets' }).click();
    await page!.locator('[data-test=confirm-yes]').click();
    await waitForText(page!.locator('.ok'), /reset 2 partition/);
    await waitForText(lag, /^300$/);
  });
});
