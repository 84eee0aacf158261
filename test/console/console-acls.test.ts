// ACL editing in the web console, in headless Chromium, against a broker with Kafka's AclAuthorizer: the console
// connects as the super user (the PLAINTEXT listener's User:ANONYMOUS); an ACL added in the page is listed by
// `brook acls --list`; one added by `brook acls --add` shows in the page, is found by the page's filters and is
// deleted from the page after a second click. A console logged in as a user who may not alter ACLs shows the
// broker's refusal in the page. Screenshots in test-artifacts/console/.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Admin } from '../../src/client/admin.js';
import {
  AclOperation,
  PatternType,
  PermissionType,
  ResourceType,
} from '../../src/security/authorizer/acl-types.js';
import { ACL_USERS, type AclBroker, startAclBroker } from '../helpers/acl-broker.js';
import { run } from '../helpers/broker-process.js';
import { launchChromium, screenshot, waitForText } from './browser.js';
import { type ConsoleProcess, startConsole } from './console-process.js';

const BROOK = join(resolve(import.meta.dirname, '../../..'), 'bin/brook');

function brook(args: string[]) {
  return run(process.execPath, [BROOK, ...args], { timeoutMs: 30_000 });
}

describe('ACL editing in the web console', () => {
  let acl: AclBroker | undefined;
  let web: ConsoleProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let admin: Admin | undefined;
  let dir = '';

  before(async () => {
    acl = await startAclBroker({ extra: { 'num.partitions': 1 } });
    web = await startConsole(['--bootstrap-server', `127.0.0.1:${acl.plainPort}`]);
    admin = new Admin({ bootstrapServers: `127.0.0.1:${acl.plainPort}` });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    dir = mkdtempSync(join(tmpdir(), 'brook-console-acls-'));
  });
  after(async () => {
    await browser?.close();
    await admin?.close();
    await web?.stop();
    await acl?.broker.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('an ACL added in the page is listed by brook acls --list', async () => {
    await page!.goto(`${web!.url}/#/security`);
    await waitForText(page!.locator('[data-test=acls-none]'), /No ACLs/);
    await page!.locator('details.panel summary', { hasText: 'Add an ACL' }).click();
    const form = page!.locator('[data-test=add-acl]');
    await form.locator('input[name=principal]').fill('User:dave');
    await form.locator('select[name=operation]').selectOption('Read');
    await form.locator('select[name=resourceType]').selectOption('Topic');
    await form.locator('input[name=resourceName]').fill('orders-');
    await form.locator('select[name=patternType]').selectOption('PREFIXED');
    await form.locator('button[type=submit]').click();
    await waitForText(form.locator('.ok'), /added Allow Read on Topic:orders- for User:dave/);
    await waitForText(
      page!.locator('[data-test=acls] tbody'),
      /User:dave.*Allow.*Read.*Topic:orders-.*PREFIXED/,
    );

    const listed = await brook([
      'acls',
      '--bootstrap-server',
      `127.0.0.1:${acl!.plainPort}`,
      '--list',
      '--topic',
      'orders-',
      '--resource-pattern-type',
      'prefixed',
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /name=orders-, patternType=PREFIXED/);
    assert.match(listed.stdout, /User:dave.*operation=READ.*permissionType=ALLOW/);
    await screenshot(page!, 'acls');
  });

  test('an ACL added by brook acls --add shows, filters, and is deleted after a confirmation', async () => {
    const added = await brook([
      'acls',
      '--bootstrap-server',
      `127.0.0.1:${acl!.plainPort}`,
      '--add',
      '--allow-principal',
      'User:erin',
      '--operation',
      'Write',
      '--topic',
      'payments',
    ]);
    assert.equal(added.code, 0, added.stderr);
    await page!.goto(`${web!.url}/#/brokers`);
    await page!.goto(`${web!.url}/#/security`);
    const rows = page!.locator('[data-test=acls] tbody tr');
    await waitForText(page!.locator('[data-test=acls] tbody'), /User:erin.*Write.*Topic:payments/);
    assert.equal(await rows.count(), 2);

    // Filters: by principal, by resource name, and a name an ACL's prefix applies to (MATCH).
    const filter = page!.locator('[data-test=acl-filter]');
    await filter.locator('input[name=principal]').fill('User:erin');
    await filter.locator('button[type=submit]').click();
    await waitForText(page!.locator('[data-test=acls] tbody'), /^(?!.*User:dave).*User:erin/);
    assert.equal(await rows.count(), 1);
    await filter.locator('input[name=principal]').fill('');
    await filter.locator('input[name=resourceName]').fill('orders-eu');
    await filter.locator('select[name=patternType]').selectOption('MATCH');
    await filter.locator('button[type=submit]').click();
    await waitForText(page!.locator('[data-test=acls] tbody'), /^(?!.*User:erin).*User:dave/);
    assert.equal(await rows.count(), 1);
    await filter.locator('select[name=resourceType]').selectOption('Group');
    await filter.locator('button[type=submit]').click();
    await waitForText(page!.locator('[data-test=acls-none]'), /match the filter/);
    await filter.locator('button', { hasText: 'Clear' }).click();
    await waitForText(page!.locator('[data-test=acls] tbody'), /User:dave.*User:erin|User:erin.*User:dave/);

    // Delete: the first click asks, Cancel keeps it, the second click deletes that binding only.
    const erin = page!.locator('tr[data-acl="User:erin Write Topic:payments"]');
    await erin.locator('button', { hasText: 'Delete' }).click();
    await erin.locator('button', { hasText: 'Cancel' }).click();
    await erin.locator('button', { hasText: 'Delete' }).click();
    await erin.locator('[data-test=confirm-yes]').click();
    await erin.waitFor({ state: 'detached', timeout: 45_000 });
    const remaining = await admin!.describeAcls({
      resourceType: ResourceType.ANY,
      name: null,
      patternType: PatternType.ANY,
      principal: null,
      host: null,
      operation: AclOperation.ANY,
      permissionType: PermissionType.ANY,
    });
    assert.deepEqual(
      remaining.map((b) => `${b.entry.principal} ${b.pattern.name}`),
      ['User:dave orders-'],
    );
  });

  test("a user who may not alter ACLs sees the broker's refusal in the page", async () => {
    const properties = join(dir, 'alice.properties');
    writeFileSync(
      properties,
      [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=PLAIN',
        `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${ACL_USERS.alice}";`,
      ].join('\n'),
    );
    const alice = await startConsole([
      '--bootstrap-server',
      `127.0.0.1:${acl!.saslPort}`,
      '--command-config',
      properties,
    ]);
    try {
      await page!.goto(`${alice.url}/#/security`);
      // Listing needs Describe on the cluster, which alice lacks: the list is an error, not a hang.
      await waitForText(page!.locator('[data-test=error]'), /CLUSTER_AUTHORIZATION_FAILED|authoriz/i);
      await page!.locator('details.panel summary', { hasText: 'Add an ACL' }).click();
      const form = page!.locator('[data-test=add-acl]');
      await form.locator('input[name=principal]').fill('User:alice');
      await form.locator('input[name=resourceName]').fill('everything');
      await form.locator('button[type=submit]').click();
      await waitForText(form.locator('[data-test=error]'), /CLUSTER_AUTHORIZATION_FAILED/);
      await screenshot(page!, 'acls-refused');
    } finally {
      await alice.stop();
    }
    assert.equal(
      (
        await admin!.describeAcls({
          resourceType: ResourceType.ANY,
          name: null,
          patternType: PatternType.ANY,
          principal: 'User:alice',
          host: null,
          operation: AclOperation.ANY,
          permissionType: PermissionType.ANY,
        })
      ).length,
      0,
    );
  });
});
