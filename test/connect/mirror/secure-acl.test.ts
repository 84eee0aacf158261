// Mirroring between two clusters whose clients must use SASL_SSL with SCRAM-SHA-512, configured with the keys a
// Kafka mm2.properties uses (`A.security.protocol`, `A.sasl.mechanism`, `A.sasl.jaas.config`,
// `A.ssl.truststore.*`), with the ACL authorizer on both clusters: records are copied, and the source topic's
// ALLOW ACLs reach the remote topic as Kafka's MirrorSourceConnector copies them (ALLOW WRITE left out, ALLOW ALL
// downgraded to READ, DENY kept), within sync.topic.acls.interval.seconds. Each broker also has a PLAINTEXT
// listener whose User:ANONYMOUS is a super user: the test administers through it, the mirror never uses it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { type DevCertFiles, writeDevCertificates } from '../../../src/security/dev-certs.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { sleep } from '../../helpers/wait.js';
import { freePort } from '../../helpers/zookeeper.js';
import { type MirrorProcess, startMirrorMaker, writeMm2 } from './mirror-process.js';

// Kafka's ACL codes: resource TOPIC, pattern LITERAL, operations ALL/READ/WRITE, permissions DENY/ALLOW.
const TOPIC = 2;
const LITERAL = 3;
const ANY = 1;
const ALL = 2;
const READ = 3;
const WRITE = 4;
const DENY = 2;
const ALLOW = 3;
const MIRROR_PASSWORD = 'mirror-scram-secret';

interface SecureBroker {
  broker: BrokerProcess;
  plain: string;
  saslSsl: string;
}

let dir: string;
let certs: DevCertFiles;
let a: SecureBroker;
let b: SecureBroker;
const mirrors: MirrorProcess[] = [];

async function startSecureBroker(): Promise<SecureBroker> {
  const [plainPort, saslSslPort] = [await freePort(), await freePort()];
  const broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_SSL://127.0.0.1:${saslSslPort}`,
      'inter.broker.listener.name': 'PLAINTEXT',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
      'super.users': 'User:ANONYMOUS;User:mirror',
    },
  });
  const plain = `127.0.0.1:${plainPort}`;
  const admin = new Admin({ bootstrapServers: plain });
  try {
    const results = await admin.alterUserScramCredentials([
      { user: 'mirror', mechanism: 'SCRAM-SHA-512', password: MIRROR_PASSWORD },
    ]);
    assert.deepEqual(
      results.map((r) => r.error),
      [null],
    );
  } finally {
    await admin.close();
  }
  return { broker, plain, saslSsl: `127.0.0.1:${saslSslPort}` };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-secure-'));
  certs = writeDevCertificates({ dir });
  [a, b] = await Promise.all([startSecureBroker(), startSecureBroker()]);
});

after(async () => {
  for (const m of mirrors) await m.stop();
  await Promise.all([a?.broker.stop(), b?.broker.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function clusterKeys(alias: string, bootstrap: string): Record<string, string> {
  return {
    [`${alias}.bootstrap.servers`]: bootstrap,
    [`${alias}.security.protocol`]: 'SASL_SSL',
    [`${alias}.sasl.mechanism`]: 'SCRAM-SHA-512',
    [`${alias}.sasl.jaas.config`]: `org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="${MIRROR_PASSWORD}";`,
    [`${alias}.ssl.truststore.type`]: 'PEM',
    [`${alias}.ssl.truststore.location`]: certs.caCert,
  };
}

function acl(topic: string, principal: string, operation: number, permissionType: number) {
  return {
    pattern: { resourceType: TOPIC, name: topic, patternType: LITERAL },
    entry: { principal, host: '*', operation, permissionType },
  };
}

test('SASL_SSL/SCRAM clusters with authorizers: records mirrored, topic ACLs copied as Kafka does', async () => {
  const source = new Admin({ bootstrapServers: a.plain });
  try {
    await source.createTopics([{ topic: 'payments', numPartitions: 2, replicationFactor: 1 }]);
    const errors = await source.createAcls([
      acl('payments', 'User:alice', ALL, ALLOW),
      acl('payments', 'User:bob', WRITE, ALLOW),
      acl('payments', 'User:carol', READ, DENY),
      acl('unmirrored', 'User:dave', READ, ALLOW),
    ]);
    assert.deepEqual(errors, [null, null, null, null]);
  } finally {
    await source.close();
  }
  const producer = new Producer({ bootstrapServers: a.plain });
  await producer.sendBatch(
    Array.from({ length: 100 }, (_, i) => ({
      topic: 'payments',
      partition: i % 2,
      value: Buffer.from(String(i)),
    })),
  );
  await producer.close();

  const file = writeMm2(dir, {
    clusters: 'A, B',
    ...clusterKeys('A', a.saslSsl),
    ...clusterKeys('B', b.saslSsl),
    'A->B.enabled': true,
    'A->B.topics': 'payments, unmirrored',
    'replication.factor': 1,
    'sync.topic.acls.enabled': true,
    'sync.topic.acls.interval.seconds': 1,
    'refresh.topics.interval.seconds': 1,
    'emit.checkpoints.enabled': false,
    'offset.flush.interval.ms': 1000,
    'offset-syncs.topic.replication.factor': 1,
    'heartbeats.topic.replication.factor': 1,
    'checkpoints.topic.replication.factor': 1,
    'offset.storage.replication.factor': 1,
  });
  mirrors.push(await startMirrorMaker(file));

  // The records, read from B through its PLAINTEXT listener.
  const consumer = new Consumer({
    // The mirror creates the topic with its own partition count and configs: the reader waits for it.
    allowAutoCreateTopics: false,
    bootstrapServers: b.plain,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const seen = new Set<string>();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        consumer.assign([
          { topic: 'A.payments', partition: 0 },
          { topic: 'A.payments', partition: 1 },
        ]);
        break;
      } catch {
        assert.ok(Date.now() < deadline, 'A.payments never appeared');
        await sleep(500);
      }
    }
    while (seen.size < 100 && Date.now() < deadline)
      for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
  } finally {
    await consumer.close();
  }
  assert.equal(seen.size, 100, `${seen.size} of 100 records mirrored over SASL_SSL`);

  const target = new Admin({ bootstrapServers: b.plain });
  try {
    const describe = async () =>
      (
        await target.describeAcls({
          resourceType: TOPIC,
          name: null,
          patternType: ANY,
          principal: null,
          host: null,
          operation: ANY,
          permissionType: ANY,
        })
      )
        .map((x) => `${x.pattern.name} ${x.entry.principal} ${x.entry.operation} ${x.entry.permissionType}`)
        .sort();
    const expected = [`A.payments User:alice ${READ} ${ALLOW}`, `A.payments User:carol ${READ} ${DENY}`];
    const deadline = Date.now() + 30_000;
    let got = await describe();
    while (JSON.stringify(got) !== JSON.stringify(expected)) {
      assert.ok(
        Date.now() < deadline,
        `target ACLs ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`,
      );
      await sleep(500);
      got = await describe();
    }
  } finally {
    await target.close();
  }
});
