// Certificates reload without a restart: replacing the PEM key store file of an SSL listener makes new
// connections handshake with the new certificate (kcat trusting only the new CA gets in, one trusting only the old
// CA does not), while a connection opened before keeps working; a file that does not load is logged and the
// certificate in use stays. Kafka's dynamic route (KIP-226): altering listener.name.ssl.ssl.keystore.location with
// IncrementalAlterConfigs on the broker resource switches the listener to the named key store, and altering its
// ssl.client.auth makes new connections show a client certificate (or not) without a restart.

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Connection } from '../../src/client/connection.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort } from '../helpers/zookeeper.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-cert-reload-'));
const live = join(dir, 'live', 'broker.pem');
let oldCerts: DevCertFiles;
let newCerts: DevCertFiles;
let broker: BrokerProcess;
let sslPort: number;

function kcatList(ca: string, client?: DevCertFiles) {
  const certificate =
    client === undefined
      ? []
      : ['-X', `ssl.certificate.location=${client.clientCert}`, '-X', `ssl.key.location=${client.clientKey}`];
  return run(
    'kcat',
    [
      '-b',
      `127.0.0.1:${sslPort}`,
      '-X',
      'security.protocol=ssl',
      '-X',
      `ssl.ca.location=${ca}`,
      ...certificate,
      '-L',
      '-m',
      '5',
    ],
    { timeoutMs: 20_000 },
  );
}

async function alterBroker(ops: { name: string; op: 'set' | 'delete'; value?: string }[]): Promise<void> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const [result] = await admin.incrementalAlterConfigs([{ type: 'broker', name: '0', ops }]);
    assert.equal(result?.error, null);
  } finally {
    await admin.close();
  }
}

before(async () => {
  oldCerts = writeDevCertificates({ dir: join(dir, 'old') });
  newCerts = writeDevCertificates({ dir: join(dir, 'new') });
  mkdirSync(join(dir, 'live'));
  copyFileSync(oldCerts.brokerKeystorePem, live);
  const plainPort = await freePort();
  sslPort = await freePort();
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SSL://127.0.0.1:${sslPort}`,
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': live,
    },
  });
});

after(async () => {
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('a replaced key store file is used for new connections, open ones keep working, a broken one is refused', async () => {
  const before = await kcatList(oldCerts.caCert);
  assert.equal(before.code, 0, before.stderr);
  const options = resolveClientOptions({
    bootstrapServers: `127.0.0.1:${sslPort}`,
    tls: { ca: readFileSync(oldCerts.caCert, 'utf8') },
  });
  const open = await Connection.connect('127.0.0.1', sslPort, options);
  try {
    copyFileSync(newCerts.brokerKeystorePem, live);
    await waitUntil(
      () => /TLS certificates reloaded/.test(broker.log()),
      15_000,
      () => broker.log(),
    );
    const withNew = await kcatList(newCerts.caCert);
    assert.equal(withNew.code, 0, withNew.stderr);
    const withOld = await kcatList(oldCerts.caCert);
    assert.notEqual(withOld.code, 0);
    const metadata = await open.request<{ brokers: unknown[] }>(
      ApiKey.METADATA,
      { topics: [] },
      { version: 1 },
    );
    assert.equal(metadata.brokers.length, 1);

    writeFileSync(live, 'not a key store\n');
    await waitUntil(
      () => /TLS certificates not reloaded/.test(broker.log()),
      15_000,
      () => broker.log(),
    );
    const stillNew = await kcatList(newCerts.caCert);
    assert.equal(stillNew.code, 0, stillNew.stderr);
  } finally {
    open.close();
  }
});

it('IncrementalAlterConfigs of listener.name.ssl.ssl.keystore.location reloads the listener (KIP-226)', async () => {
  const reloadsBefore = broker.log().match(/TLS certificates reloaded/g)?.length ?? 0;
  await alterBroker([
    { name: 'listener.name.ssl.ssl.keystore.location', op: 'set', value: oldCerts.brokerKeystorePem },
  ]);
  await waitUntil(
    () => (broker.log().match(/TLS certificates reloaded/g)?.length ?? 0) > reloadsBefore,
    15_000,
    () => broker.log(),
  );
  const withOld = await kcatList(oldCerts.caCert);
  assert.equal(withOld.code, 0, withOld.stderr);
  const withNew = await kcatList(newCerts.caCert);
  assert.notEqual(withNew.code, 0);
});

it('ssl.client.auth altered on a running listener: required refuses a client without a certificate, none lets it in again', async () => {
  const reloads = () => broker.log().match(/TLS certificates reloaded/g)?.length ?? 0;
  let before = reloads();
  await alterBroker([
    { name: 'listener.name.ssl.ssl.truststore.type', op: 'set', value: 'PEM' },
    { name: 'listener.name.ssl.ssl.truststore.location', op: 'set', value: oldCerts.caCert },
    { name: 'listener.name.ssl.ssl.client.auth', op: 'set', value: 'required' },
  ]);
  await waitUntil(
    () => reloads() > before,
    15_000,
    () => broker.log(),
  );
  const without = await kcatList(oldCerts.caCert);
  assert.notEqual(without.code, 0, 'a client without a certificate is refused once one is required');
  const withCertificate = await kcatList(oldCerts.caCert, oldCerts);
  assert.equal(withCertificate.code, 0, withCertificate.stderr);

  before = reloads();
  await alterBroker([{ name: 'listener.name.ssl.ssl.client.auth', op: 'delete' }]);
  await waitUntil(
    () => reloads() > before,
    15_000,
    () => broker.log(),
  );
  const again = await kcatList(oldCerts.caCert);
  assert.equal(again.code, 0, again.stderr);
});
