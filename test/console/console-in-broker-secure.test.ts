// The console a broker serves (brook.console.listener) when the broker has no PLAINTEXT listener: its only
// listener is SSL with client certificates required, SASL_SSL, or SASL_PLAINTEXT with the ACL authorizer on. The
// console speaks to the inter-broker listener with the broker's own inter-broker settings (its keystore as the
// client certificate, its PLAIN login), so in Chromium its brokers page lists the broker online and a topic made
// in the page exists, as Brook's admin client with a user's credentials then sees. Screenshots in
// test-artifacts/console/.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { Admin } from '../../src/client/admin.js';
import type { ClientOptions } from '../../src/client/options.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { freePort } from '../helpers/zookeeper.js';
import { launchChromium, screenshot, waitForText } from './browser.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-console-secure-'));
let certs: DevCertFiles;
let browser: Browser | undefined;

const PLAIN_JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" ' +
  'password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";';

before(async () => {
  certs = writeDevCertificates({ dir });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

function sslKeys(): Record<string, string> {
  return {
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': certs.brokerKeystorePem,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': certs.caCert,
  };
}

/** A user's TLS options: the CA, and the client certificate when the listener requires one. */
function userTls(withCertificate: boolean) {
  const ca = readFileSync(certs.caCert);
  return withCertificate
    ? { ca, key: readFileSync(certs.clientKey), cert: readFileSync(certs.clientCert) }
    : { ca };
}

/**
 * Starts a broker with `overrides` and the console, checks the console in Chromium (broker online, a topic made
 * in the page), and answers after checking with `user` (Brook's admin client) that the topic exists.
 */
async function consoleWorks(
  name: string,
  overrides: Record<string, string | number | boolean>,
  user: (port: number) => ClientOptions,
  outsider?: (port: number) => ClientOptions,
): Promise<void> {
  const consolePort = await freePort();
  const broker = await startBroker({
    overrides: {
      ...overrides,
      'num.partitions': 1,
      'brook.console.listener': `http://127.0.0.1:${consolePort}`,
    },
  });
  const url = `http://127.0.0.1:${consolePort}`;
  const admin = new Admin(user(broker.port));
  try {
    assert.match(broker.log(), new RegExp(`console listening at http://127\\.0\\.0\\.1:${consolePort}/`));
    const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await page.goto(`${url}/`);
      const row = await waitForText(page.locator('[data-test=brokers] tbody tr'), /online/, 30_000);
      assert.match(row, new RegExp(`127\\.0\\.0\\.1:${broker.port}`));
      await screenshot(page, `in-broker-${name}-brokers`);

      const topic = `made-over-${name}`;
      await page.goto(`${url}/#/topics`);
      await page.locator('details.panel summary', { hasText: 'Create a topic' }).click();
      const form = page.locator('[data-test=create-topic]');
      await form.locator('input[name=name]').fill(topic);
      await form.locator('input[name=partitions]').fill('2');
      await form.locator('button[type=submit]').click();
      await waitForText(page.locator('h2'), new RegExp(topic), 30_000);
      await screenshot(page, `in-broker-${name}-topic`);
      const described = await waitFor(
        `${topic} listed to a user`,
        async () => {
          const [d] = await admin.describeTopics([topic]);
          return d !== undefined && d.partitions.length === 2 ? d : undefined;
        },
        30_000,
      );
      assert.equal(described.partitions.length, 2);
      if (outsider !== undefined) {
        // The authorizer is in force: a user without ACLs is refused the topic the console's principal made.
        const other = new Admin({ ...outsider(broker.port), retries: 0 });
        try {
          const refusal = await other.describeTopics([topic]).then(
            (d) => d[0]?.error ?? null,
            (err: unknown) => err,
          );
          assert.match(
            String(refusal),
            /AUTHORIZATION_FAILED|UNKNOWN_TOPIC/,
            'a user without ACLs described the topic',
          );
        } finally {
          await other.close();
        }
      }
    } finally {
      await page.close();
    }
  } finally {
    await admin.close();
    await broker.stop();
  }
}

describe('the broker-served console without a PLAINTEXT listener', () => {
  test('SSL only, client certificates required: the console presents the broker keystore', async () => {
    await consoleWorks(
      'ssl',
      {
        listeners: 'SSL://127.0.0.1:0',
        'security.inter.broker.protocol': 'SSL',
        'ssl.client.auth': 'required',
        ...sslKeys(),
      },
      (port) => ({ bootstrapServers: `127.0.0.1:${port}`, tls: userTls(true) }),
    );
  });

  test('SASL_SSL only: the console logs in as the broker', async () => {
    await consoleWorks(
      'sasl-ssl',
      {
        listeners: 'SASL_SSL://127.0.0.1:0',
        'security.inter.broker.protocol': 'SASL_SSL',
        'sasl.enabled.mechanisms': 'PLAIN',
        'sasl.mechanism.inter.broker.protocol': 'PLAIN',
        'listener.name.sasl_ssl.plain.sasl.jaas.config': PLAIN_JAAS,
        ...sslKeys(),
      },
      (port) => ({
        bootstrapServers: `127.0.0.1:${port}`,
        tls: userTls(false),
        sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
      }),
    );
  });

  test('SASL_PLAINTEXT only, with the authorizer: the console acts as the broker, a super user', async () => {
    await consoleWorks(
      'sasl-plaintext',
      {
        listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
        'security.inter.broker.protocol': 'SASL_PLAINTEXT',
        'sasl.enabled.mechanisms': 'PLAIN',
        'sasl.mechanism.inter.broker.protocol': 'PLAIN',
        'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
        'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
        'super.users': 'User:broker',
      },
      // alice has no ACLs: she may describe nothing, so the check goes through the broker's own login, and alice's
      // refusal shows the authorizer was in force for the console too.
      (port) => ({
        bootstrapServers: `127.0.0.1:${port}`,
        sasl: { mechanism: 'plain', username: 'broker', password: 'broker-secret' },
      }),
      (port) => ({
        bootstrapServers: `127.0.0.1:${port}`,
        sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
      }),
    );
  });
});
