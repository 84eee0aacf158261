// TLS to ZooKeeper with Kafka's zookeeper.ssl.* keys, against Debian's ZooKeeper serving a secureClientPort only
// (Netty connection factory, client certificates required): the coordination store works over TLS with a PEM
// key store; a client without a certificate, with one from another CA, in plain TCP or not trusting the server
// is refused; a broker process whose ZooKeeper is reachable over TLS only (PKCS12 key store) registers, elects
// itself controller and creates a topic; startup errors name the key at fault.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConnectionOptions } from 'node:tls';
import { loadBrokerConfig } from '../../src/broker/config/load-broker-config.js';
import { Admin } from '../../src/client/admin.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import {
  DEV_PKCS12_PASSWORD,
  type DevCertFiles,
  writeDevCertificates,
} from '../../src/security/dev-certs.js';
import { zooKeeperClientTls } from '../../src/security/zookeeper-tls.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-zk-tls-'));
let certs: DevCertFiles;
let stranger: DevCertFiles;
let zk: TestZooKeeper;

async function configOf(keys: Record<string, string>) {
  return (
    await loadBrokerConfig({ configPath: null, overrides: new Map(Object.entries(keys)), warn: () => {} })
  ).config;
}

/** What a broker configured with `keys` uses to reach ZooKeeper. */
async function tlsOf(keys: Record<string, string>): Promise<ConnectionOptions | null> {
  return zooKeeperClientTls((await configOf(keys)).values);
}

function pemClientKeys(files: DevCertFiles, trust: DevCertFiles = certs): Record<string, string> {
  return {
    'zookeeper.ssl.client.enable': 'true',
    'zookeeper.clientCnxnSocket': 'org.apache.zookeeper.ClientCnxnSocketNetty',
    'zookeeper.ssl.keystore.location': files.clientKeystorePem,
    'zookeeper.ssl.keystore.type': 'PEM',
    'zookeeper.ssl.truststore.location': trust.caCert,
    'zookeeper.ssl.truststore.type': 'PEM',
  };
}

async function eventually(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Tries a session; answers the store or the failure code, with the TLS errors heard. */
async function trySession(tls: ConnectionOptions | null) {
  const errors: string[] = [];
  const opened = await connectZooKeeper({
    connect: zk.connect,
    sessionTimeoutMs: 6_000,
    connectionTimeoutMs: 4_000,
    tls,
    onConnectionError: (err) => errors.push(err.message),
  });
  return { opened, errors };
}

before(async () => {
  certs = writeDevCertificates({ dir: join(dir, 'ok') });
  stranger = writeDevCertificates({ dir: join(dir, 'stranger') });
  zk = await startTestZooKeeper({
    tls: {
      keyStorePem: certs.brokerKeystorePem,
      trustStorePem: certs.caCert,
      clientAuth: 'need',
      probe: {
        ca: readFileSync(certs.caCert),
        key: readFileSync(certs.clientKey),
        cert: readFileSync(certs.clientCert),
      },
    },
  });
});

after(async () => {
  await zk?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('ZooKeeper over TLS', () => {
  it('the store works over TLS with a PEM key store and trust store', async () => {
    const { opened } = await trySession(await tlsOf(pemClientKeys(certs)));
    assert.ok(opened.ok, `no session: ${!opened.ok && opened.code}`);
    const store: CoordinationStore = opened.value;
    try {
      const created = await store.create('/tls-check', new TextEncoder().encode('over tls'));
      assert.ok(created.ok);
      const read = await store.get('/tls-check');
      assert.ok(read.ok);
      assert.equal(new TextDecoder().decode(read.value.data), 'over tls');
    } finally {
      await store.close();
    }
  });

  it('a client without a certificate is refused, and the reason is reported', async () => {
    const keys = pemClientKeys(certs);
    delete keys['zookeeper.ssl.keystore.location'];
    delete keys['zookeeper.ssl.keystore.type'];
    const { opened, errors } = await trySession(await tlsOf(keys));
    assert.ok(!opened.ok);
    assert.equal(opened.code, 'CONNECTIONLOSS');
    assert.ok(errors.length > 0, 'the refused handshake was reported');
  });

  it('a client certificate from another CA is refused', async () => {
    const { opened, errors } = await trySession(await tlsOf(pemClientKeys(stranger, certs)));
    assert.ok(!opened.ok);
    assert.ok(errors.length > 0);
  });

  it('a client that does not trust the server certificate refuses it', async () => {
    const { opened, errors } = await trySession(await tlsOf(pemClientKeys(certs, stranger)));
    assert.ok(!opened.ok);
    assert.match(errors.join('\n'), /self[- ]signed|unable to verify|certificate/i);
  });

  it('a plain TCP client gets no session on the TLS port', async () => {
    const { opened } = await trySession(null);
    assert.ok(!opened.ok);
    assert.equal(opened.code, 'CONNECTIONLOSS');
  });
});

describe('a broker whose ZooKeeper is reachable over TLS only', () => {
  let broker: BrokerProcess | undefined;
  after(async () => {
    await broker?.stop();
  });

  it('registers, becomes controller and creates a topic (PKCS12 key store, type from the extension)', async () => {
    broker = await startBroker({
      overrides: {
        'zookeeper.connect': `${zk.connect}/brook-tls`,
        'zookeeper.ssl.client.enable': 'true',
        'zookeeper.clientCnxnSocket': 'org.apache.zookeeper.ClientCnxnSocketNetty',
        'zookeeper.ssl.keystore.location': certs.clientKeystoreP12,
        'zookeeper.ssl.keystore.password': DEV_PKCS12_PASSWORD,
        'zookeeper.ssl.truststore.location': certs.caCert,
        'zookeeper.ssl.protocol': 'TLSv1.3',
        'zookeeper.ssl.enabled.protocols': 'TLSv1.2,TLSv1.3',
      },
    });
    const admin = new Admin({ bootstrapServers: [broker.bootstrap] });
    try {
      const [created] = await admin.createTopics([{ topic: 'over-tls-zk', numPartitions: 2 }]);
      assert.equal(created?.error, null);
      await eventually(async () => (await admin.listTopics()).includes('over-tls-zk'), 'the topic');
    } finally {
      await admin.close();
    }
    // What the broker wrote, read back over TLS: its registration, the controller, the topic.
    const { opened } = await trySession(await tlsOf(pemClientKeys(certs)));
    assert.ok(opened.ok);
    const store = opened.value;
    try {
      assert.ok((await store.get('/brook-tls/brokers/ids/0')).ok, 'broker registered');
      const controller = await store.get('/brook-tls/controller');
      assert.ok(controller.ok, 'a controller was elected');
      assert.equal(JSON.parse(new TextDecoder().decode(controller.value.data)).brokerid, 0);
      assert.ok((await store.get('/brook-tls/brokers/topics/over-tls-zk')).ok, 'topic created');
      // The controller wrote each partition's leader and ISR, over the same TLS session.
      await eventually(
        async () => (await store.get('/brook-tls/brokers/topics/over-tls-zk/partitions/1/state')).ok,
        'partition state',
      );
    } finally {
      await store.close();
    }
  });
});

describe('ZooKeeper TLS settings', () => {
  it('off unless zookeeper.ssl.client.enable', async () => {
    assert.equal(await tlsOf({ 'zookeeper.ssl.keystore.location': certs.clientKeystorePem }), null);
  });

  it('PEM key store, Kafka defaults for protocol and host name check', async () => {
    const options = await tlsOf(pemClientKeys(certs));
    assert.ok(options !== null && typeof options.key === 'string');
    assert.equal(options.maxVersion, 'TLSv1.2', 'zookeeper.ssl.protocol (TLSv1.2) alone when none enabled');
    assert.equal(options.checkServerIdentity, undefined, 'host names checked by default');
    // Kafka's KafkaConfig: ZooKeeper's hostnameVerification is on exactly when the algorithm is HTTPS, in any case.
    const identification = async (algorithm: string) =>
      typeof (
        await tlsOf({ ...pemClientKeys(certs), 'zookeeper.ssl.endpoint.identification.algorithm': algorithm })
      )?.checkServerIdentity;
    assert.equal(await identification('https'), 'undefined', 'checked with https in lower case');
    assert.equal(await identification(''), 'function', 'an empty value turns the check off');
    assert.equal(await identification('none'), 'function', 'so does any value but HTTPS');
  });

  it('startup errors name the key', async () => {
    await assert.rejects(
      tlsOf({ ...pemClientKeys(certs), 'zookeeper.ssl.keystore.type': 'JKS' }),
      /zookeeper\.ssl\.keystore\.type.*keytool/,
    );
    await assert.rejects(
      tlsOf({ ...pemClientKeys(certs), 'zookeeper.ssl.keystore.location': join(dir, 'missing.jks') }),
      /zookeeper\.ssl\.keystore\.location/,
    );
    await assert.rejects(
      tlsOf({
        ...pemClientKeys(certs),
        'zookeeper.clientCnxnSocket': 'org.apache.zookeeper.ClientCnxnSocketNIO',
      }),
      /zookeeper\.clientCnxnSocket/,
    );
    await assert.rejects(
      tlsOf({ ...pemClientKeys(certs), 'zookeeper.ssl.ocsp.enable': 'true' }),
      /zookeeper\.ssl\.ocsp\.enable/,
    );
  });
});
