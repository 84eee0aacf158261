// Inter-broker TLS and SASL: a 3-broker ZooKeeper cluster whose only listener is SASL_SSL
// (security.inter.broker.protocol=SASL_SSL, sasl.mechanism.inter.broker.protocol=PLAIN, the brokers' own login in
// the listener's JAAS entry). Replica fetchers, controller requests, AlterPartition and transaction markers can then
// only work over TLS with SASL; kafkajs creates a replicated topic, produces with acks=all and in a transaction,
// consumes in a group with read_committed, and the cluster fails over when the partition leader is killed. A
// broker whose inter-broker password is wrong joins the cluster but cannot replicate, and the others log its
// refused logins.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { Admin as BrookAdmin } from '../../src/client/admin.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort, startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const dir = mkdtempSync(join(tmpdir(), 'brook-inter-broker-'));
const jaas = (brokerPassword: string) =>
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" ' +
  `password="${brokerPassword}" user_broker="broker-secret" user_alice="alice-secret";`;
let certs: DevCertFiles;
let zk: TestZooKeeper;
const brokers: BrokerProcess[] = [];
const ports: number[] = [];
let kafka: Kafka;
let admin: Admin;

function startSecuredBroker(id: number, brokerPassword = 'broker-secret'): Promise<BrokerProcess> {
  return startBroker({
    overrides: {
      'broker.id': id,
      'zookeeper.connect': zk.connect,
      listeners: `SASL_SSL://127.0.0.1:${ports[id]}`,
      'security.inter.broker.protocol': 'SASL_SSL',
      'sasl.enabled.mechanisms': 'PLAIN',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'listener.name.sasl_ssl.plain.sasl.jaas.config': jaas(brokerPassword),
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caCert,
      'offsets.topic.replication.factor': 3,
      'transaction.state.log.replication.factor': 3,
      'transaction.state.log.min.isr': 2,
      'replica.fetch.wait.max.ms': 100,
      'controlled.shutdown.retry.backoff.ms': 200,
      // A killed leader's session ends sooner, so that failover does not wait out the default 18 s.
      'zookeeper.session.timeout.ms': 6000,
    },
  });
}

async function partitionState(topic: string) {
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  const partition = metadata.topics[0]?.partitions[0];
  assert.ok(partition !== undefined);
  return partition;
}

before(async () => {
  certs = writeDevCertificates({ dir });
  zk = await startTestZooKeeper();
  for (let i = 0; i < 4; i++) ports.push(await freePort());
  brokers.push(...(await Promise.all([0, 1, 2].map((id) => startSecuredBroker(id)))));
  kafka = new Kafka({
    brokers: ports.slice(0, 3).map((p) => `127.0.0.1:${p}`),
    logLevel: logLevel.NOTHING,
    ssl: { ca: [readFileSync(certs.caCert, 'utf8')] },
    sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    retry: { retries: 10, initialRetryTime: 200 },
  });
  admin = kafka.admin();
  await waitFor(
    'three brokers and a controller',
    async () => {
      await admin.connect();
      const cluster = await admin.describeCluster();
      const settled = cluster.brokers.length === 3 && cluster.controller !== null && cluster.controller >= 0;
      return settled ? true : undefined;
    },
    30_000,
  );
});

after(async () => {
  await admin?.disconnect().catch(() => {});
  for (const b of brokers) await b.stop().catch(() => b.kill());
  await zk?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a cluster whose only listeners are SASL_SSL', () => {
  it('replicates a topic to all three brokers and serves acks=all writes', async () => {
    await admin.createTopics({
      topics: [
        {
          topic: 'secured-replicated',
          numPartitions: 1,
          replicationFactor: 3,
          configEntries: [{ name: 'min.insync.replicas', value: '2' }],
        },
      ],
      waitForLeaders: true,
    });
    const producer = kafka.producer();
    await producer.connect();
    try {
      for (let i = 0; i < 5; i++) {
        const [meta] = await producer.send({
          topic: 'secured-replicated',
          acks: -1,
          messages: [{ value: `v${i}` }],
        });
        assert.equal(meta?.errorCode, 0);
      }
    } finally {
      await producer.disconnect();
    }
    // Followers joined the ISR: they fetched over SASL_SSL, and the leader's AlterPartition went over it too.
    await waitFor('a full ISR', async () =>
      (await partitionState('secured-replicated')).isr.length === 3 ? true : undefined,
    );
  });

  it('commits a transaction (markers between brokers) and serves a read_committed consumer group', async () => {
    const producer = kafka.producer({
      transactionalId: 'secured-tx',
      maxInFlightRequests: 1,
      idempotent: true,
    });
    await producer.connect();
    try {
      const tx = await producer.transaction();
      await tx.send({ topic: 'secured-replicated', messages: [{ value: 'in-tx-1' }, { value: 'in-tx-2' }] });
      await tx.commit();
    } finally {
      await producer.disconnect();
    }
    const consumer = kafka.consumer({ groupId: 'secured-group', readUncommitted: false });
    await consumer.connect();
    const values: string[] = [];
    try {
      await consumer.subscribe({ topic: 'secured-replicated', fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void values.push(String(message.value)) });
      await waitUntil(
        () => values.length >= 7,
        30_000,
        () => values.join(','),
      );
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(values, ['v0', 'v1', 'v2', 'v3', 'v4', 'in-tx-1', 'in-tx-2']);
  });

  it('fails over when the partition leader is killed, and the new leader takes acks=all writes', async () => {
    const before = await partitionState('secured-replicated');
    const leader = brokers[before.leader] as BrokerProcess;
    await leader.kill();
    await waitFor(
      'a new leader',
      async () => {
        const now = await partitionState('secured-replicated');
        return now.leader !== before.leader && now.leader >= 0 ? true : undefined;
      },
      30_000,
    );
    const producer = kafka.producer();
    await producer.connect();
    try {
      const [meta] = await producer.send({
        topic: 'secured-replicated',
        acks: -1,
        messages: [{ value: 'after' }],
      });
      assert.equal(meta?.errorCode, 0);
    } finally {
      await producer.disconnect();
    }
    // Bring it back: it catches up over SASL_SSL and rejoins the ISR.
    brokers[before.leader] = await startSecuredBroker(before.leader);
    await waitFor(
      'the restarted broker back in the ISR',
      async () => ((await partitionState('secured-replicated')).isr.length === 3 ? true : undefined),
      30_000,
    );
  });

  it('a broker with a wrong inter-broker password cannot fetch, and the others log its refused logins', async () => {
    const intruder = await startSecuredBroker(3, 'not-the-secret');
    brokers.push(intruder);
    // Brook's admin client over SASL_SSL asks each broker for its own replicas' sizes.
    const brookAdmin = new BrookAdmin({
      bootstrapServers: `127.0.0.1:${ports[0]}`,
      tls: { ca: readFileSync(certs.caCert, 'utf8') },
      sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    });
    try {
      await admin.createTopics({
        topics: [{ topic: 'secured-assigned', replicaAssignment: [{ partition: 0, replicas: [0, 3] }] }],
      });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'secured-assigned', acks: 1, messages: [{ value: 'x'.repeat(100) }] });
      await producer.disconnect();
      await waitUntil(
        () => /SASL authentication failed/.test(brokers[0]?.log() ?? ''),
        20_000,
        () => intruder.log().slice(-3000),
      );
      const sizeOn = async (broker: number) =>
        (await brookAdmin.describeLogDirs([broker]))
          .flatMap((d) => d.partitions)
          .find((p) => p.topic === 'secured-assigned')?.size;
      assert.ok(((await sizeOn(0)) ?? 0) > 0);
      assert.equal(await sizeOn(3), 0);
    } finally {
      await brookAdmin.close();
      await intruder.stop();
      brokers.pop();
    }
  });
});
