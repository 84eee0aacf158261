// Client quota editing in the web console, in headless Chromium: quotas set in the page for a user, the default
// client id, a user with a client id and an IP are what `brook configs --describe` reads back; one set by `brook
// configs --alter` shows in the page, is edited through its row and removed after a second click; a value the
// broker refuses shows its error in the page. Screenshots in test-artifacts/console/.

import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { launchChromium, screenshot, waitForText } from './browser.js';
import { type ConsoleProcess, startConsole } from './console-process.js';

const BROOK = join(resolve(import.meta.dirname, '../../..'), 'bin/brook');

describe('client quota editing in the web console', () => {
  let broker: BrokerProcess | undefined;
  let web: ConsoleProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;

  before(async () => {
    broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    web = await startConsole(['--bootstrap-server', broker.bootstrap]);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await broker?.stop();
  });

  async function configs(args: string[]): Promise<string> {
    const result = await run(
      process.execPath,
      [BROOK, 'configs', '--bootstrap-server', broker!.bootstrap, ...args],
      { timeoutMs: 30_000 },
    );
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  }

  /** Fills the page's "Set a quota" form: each entity part a name, 'default', or left out. */
  async function setQuota(
    parts: { user?: string; clientId?: string; ip?: string },
    key: string,
    value: string,
  ): Promise<void> {
    const form = page!.locator('[data-test=set-quota]');
    for (const part of ['user', 'clientId', 'ip'] as const) {
      const wanted = parts[part];
      const mode = wanted === undefined ? 'none' : wanted === 'default' ? 'default' : 'name';
      await form.locator(`select[name=${part}-mode]`).selectOption(mode);
      if (mode === 'name') await form.locator(`input[name=${part}]`).fill(wanted!);
    }
    await form.locator('select[name=key]').selectOption(key);
    await form.locator('input[name=value]').fill(value);
    await form.locator('button[type=submit]').click();
  }

  test('quotas set in the page are what brook configs --describe reads', async () => {
    await page!.goto(`${web!.url}/#/security`);
    await page!.locator('details.panel summary', { hasText: 'Set a quota' }).click();
    const form = page!.locator('[data-test=set-quota]');
    await setQuota({ clientId: 'default' }, 'consumer_byte_rate', '2048');
    await waitForText(form.locator('.ok'), /set consumer_byte_rate=2048 for client id \(default\)/);
    await setQuota({ user: 'bob', clientId: 'reporting' }, 'request_percentage', '50');
    await waitForText(form.locator('.ok'), /set request_percentage=50 for user bob, client id reporting/);
    await setQuota({ ip: '127.0.0.1' }, 'connection_creation_rate', '25');
    await waitForText(form.locator('.ok'), /set connection_creation_rate=25 for ip 127.0.0.1/);

    assert.match(
      await configs(['--describe', '--entity-type', 'clients', '--entity-default']),
      /Quota configs for the default client-id are consumer_byte_rate=2048.0/,
    );
    assert.match(
      await configs([
        '--describe',
        '--entity-type',
        'users',
        '--entity-name',
        'bob',
        '--entity-type',
        'clients',
        '--entity-name',
        'reporting',
      ]),
      /Quota configs for user-principal 'bob', client-id 'reporting' are request_percentage=50.0/,
    );
    assert.match(
      await configs(['--describe', '--entity-type', 'ips', '--entity-name', '127.0.0.1']),
      /Quota configs for ip '127.0.0.1' are connection_creation_rate=25.0/,
    );
    const rows = page!.locator('[data-test=quotas] tbody tr');
    await waitForText(page!.locator('tr[data-entity="ip 127.0.0.1"]'), /connection_creation_rate=25/);
    assert.equal(await rows.count(), 3);
    await screenshot(page!, 'quotas');
  });

  test('a quota set by brook configs --alter shows, is edited in its row and removed after a confirmation', async () => {
    await configs([
      '--alter',
      '--entity-type',
      'users',
      '--entity-name',
      'alice',
      '--add-config',
      'producer_byte_rate=1048576,consumer_byte_rate=4096',
    ]);
    await page!.goto(`${web!.url}/#/brokers`);
    await page!.goto(`${web!.url}/#/security`);
    const alice = page!.locator('tr[data-entity="user alice"]');
    await waitForText(
      alice,
      /consumer_byte_rate=4096.*producer_byte_rate=1048576|producer_byte_rate=1048576.*consumer_byte_rate=4096/,
    );

    // Edit fills the form with alice; a new producer rate replaces the old one.
    await alice.locator('button', { hasText: 'Edit' }).click();
    const form = page!.locator('[data-test=set-quota]');
    assert.equal(await form.locator('input[name=user]').inputValue(), 'alice');
    assert.equal(await form.locator('select[name=clientId-mode]').inputValue(), 'none');
    await form.locator('select[name=key]').selectOption('producer_byte_rate');
    await form.locator('input[name=value]').fill('2097152');
    await form.locator('button[type=submit]').click();
    await waitForText(alice, /producer_byte_rate=2097152/);
    assert.match(
      await configs(['--describe', '--entity-type', 'users', '--entity-name', 'alice']),
      /user-principal 'alice' are (consumer_byte_rate=4096.0, producer_byte_rate=2097152.0|producer_byte_rate=2097152.0, consumer_byte_rate=4096.0)/,
    );

    // A value the broker refuses (quotas must be greater than 0): its error in the page, nothing changed.
    await form.locator('input[name=value]').fill('0');
    await form.locator('button[type=submit]').click();
    await waitForText(form.locator('[data-test=error]'), /must be greater than 0/);

    // Remove asks first; the second click removes that key only.
    const producerRate = alice.locator('[data-quota=producer_byte_rate]');
    await producerRate.locator('button', { hasText: 'Remove' }).click();
    await producerRate.locator('[data-test=confirm-yes]').click();
    await producerRate.waitFor({ state: 'detached', timeout: 45_000 });
    const described = await configs(['--describe', '--entity-type', 'users', '--entity-name', 'alice']);
    assert.match(described, /user-principal 'alice' are consumer_byte_rate=4096.0/);
    assert.doesNotMatch(described, /producer_byte_rate/);
  });
});
