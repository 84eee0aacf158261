// zookeeper.set.acl=true with a TLS client certificate as the broker's ZooKeeper identity (no SASL), as a Kafka
// broker configured with the zookeeper.ssl.* keys: Debian's ZooKeeper serves a secureClientPort (Netty) whose
// X509AuthenticationProvider, the default for TLS connections, makes the certificate's subject DN the session's
// x509 identity. The znodes the broker creates get all permissions for that identity (scheme x509, the RFC 2253
// DN) and read for everyone; a TLS client without a certificate (ssl.clientAuth=want lets it in unauthenticated)
// and one with another certificate of the same CA read what is world-readable but write nothing.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConnectionOptions } from 'node:tls';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import type { ZooKeeperAcl } from '../../src/controller/store/zookeeper-acls.js';
import { connectZooKeeper, readZooKeeperAcl } from '../../src/controller/store/zookeeper-store.js';
import {
  DEV_PKCS12_PASSWORD,
  type DevCertFiles,
  writeDevCertificates,
} from '../../src/security/dev-certs.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { assertKafkaNodeAcls, codeOf, WORLD_READ } from './zookeeper-acl-checks.js';

const CHROOT = '/kafka-x509';
// The broker's certificate subject, and the id ZooKeeper gives it: X500Principal.getName(), RFC 2253 order.
const BROKER_SUBJECT = '/C=US/O=Brook dev/OU=Brokers/CN=zk-broker';
const BROKER_ID = 'CN=zk-broker,OU=Brokers,O=Brook dev,C=US';
const OWNER_ALL: ZooKeeperAcl = { perms: 31, scheme: 'x509', id: BROKER_ID };

/** A second client certificate signed by the same CA: another x509 identity ZooKeeper trusts. */
function otherClient(certs: DevCertFiles, dir: string): { key: Buffer; cert: Buffer } {
  const key = join(dir, 'other-key.pem');
  const csr = join(dir, 'other.csr');
  const cert = join(dir, 'other-cert.pem');
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    '/O=Brook dev/CN=other',
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    certs.caCert,
    '-CAkey',
    join(dir, 'ca-key.pem'),
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
    '-sha256',
  ]);
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

describe('zookeeper.set.acl with a TLS client certificate identity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-zk-x509-'));
  let certs: DevCertFiles;
  let zk: TestZooKeeper;
  let broker: BrokerProcess | undefined;
  const sessions: CoordinationStore[] = [];

  /** A TLS session under the chroot: with the broker's certificate, another one, or none. */
  async function session(identity: 'broker' | 'other' | 'none'): Promise<CoordinationStore> {
    const tls: ConnectionOptions = { ca: readFileSync(certs.caCert) };
    if (identity === 'broker') {
      tls.key = readFileSync(certs.clientKey);
      tls.cert = readFileSync(certs.clientCert);
    } else if (identity === 'other') {
      Object.assign(tls, otherClient(certs, dir));
    }
    const opened = await connectZooKeeper({
      connect: `${zk.connect}${CHROOT}`,
      sessionTimeoutMs: 10_000,
      connectionTimeoutMs: 10_000,
      tls,
    });
    assert.ok(opened.ok, `no ZooKeeper session as ${identity}: ${opened.ok ? '' : opened.code}`);
    sessions.push(opened.value);
    return opened.value;
  }

  before(async () => {
    certs = writeDevCertificates({ dir, clientSubject: BROKER_SUBJECT });
    zk = await startTestZooKeeper({
      tls: {
        keyStorePem: certs.brokerKeystorePem,
        trustStorePem: certs.caCert,
        // A client certificate is checked when offered; a client without one is served unauthenticated.
        clientAuth: 'want',
        probe: { ca: readFileSync(certs.caCert) },
      },
    });
    broker = await startBroker({
      overrides: {
        'zookeeper.connect': `${zk.connect}${CHROOT}`,
        'zookeeper.set.acl': true,
        'zookeeper.ssl.client.enable': 'true',
        'zookeeper.clientCnxnSocket': 'org.apache.zookeeper.ClientCnxnSocketNetty',
        'zookeeper.ssl.keystore.location': certs.clientKeystoreP12,
        'zookeeper.ssl.keystore.type': 'PKCS12',
        'zookeeper.ssl.keystore.password': DEV_PKCS12_PASSWORD,
        'zookeeper.ssl.truststore.location': certs.caCert,
        'zookeeper.ssl.truststore.type': 'PEM',
      },
      // No JAAS Client section: the certificate is the broker's only ZooKeeper identity.
      env: { KAFKA_OPTS: '' },
    });
    await createTopicOn(broker, 'secured', { numPartitions: 1, replicationFactor: 1 });
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await broker?.stop();
    await zk?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the nodes it creates Kafka's ACLs for the certificate's x509 identity", async () => {
    const owner = await session('broker');
    await assertKafkaNodeAcls(owner, OWNER_ALL);
    // The same certificate reads the creator-only nodes and writes under the broker's (it is the same identity).
    assert.equal(codeOf(await owner.get('/config/users')), 'ok');
    assert.equal(codeOf(await owner.create('/admin/x509-check', Buffer.alloc(0))), 'ok');
    assert.equal(codeOf(await owner.delete('/admin/x509-check', -1)), 'ok');
  });

  it('a TLS client without a certificate reads what is world-readable and writes nothing', async () => {
    const anonymous = await session('none');
    assert.equal(codeOf(await anonymous.get('/brokers/topics/secured')), 'ok');
    assert.equal(codeOf(await anonymous.set('/brokers/topics/secured', Buffer.from('{}'), -1)), 'NOAUTH');
    assert.equal(codeOf(await anonymous.set('/controller', Buffer.from('{}'), -1)), 'NOAUTH');
    assert.equal(codeOf(await anonymous.delete('/brokers/topics/secured/partitions/0/state', -1)), 'NOAUTH');
    assert.equal(codeOf(await anonymous.create('/admin/delete_topics/secured', Buffer.alloc(0))), 'NOAUTH');
    assert.equal(codeOf(await anonymous.get('/config/users')), 'NOAUTH');
    const topic = await anonymous.get('/brokers/topics/secured');
    assert.ok(topic.ok);
    assert.equal(topic.value.stat.version, 0, 'nothing the broker wrote was changed');
  });

  it('another certificate of the same CA cannot write either', async () => {
    const other = await session('other');
    assert.equal(codeOf(await other.get('/brokers/ids/0')), 'ok');
    assert.equal(codeOf(await other.set('/brokers/topics/secured', Buffer.from('{}'), -1)), 'NOAUTH');
    assert.equal(codeOf(await other.get('/config/users')), 'NOAUTH');
  });

  it('the broker keeps working under its ACLs', async () => {
    assert.ok(broker);
    await createTopicOn(broker, 'secured-later', { numPartitions: 1, replicationFactor: 1 });
    const owner = await session('broker');
    const read = await readZooKeeperAcl(owner, '/brokers/topics/secured-later');
    assert.ok(read.ok);
    assert.deepEqual(read.value, [OWNER_ALL, WORLD_READ]);
  });
});
