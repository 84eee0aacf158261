// Heartbeats as Kafka's dedicated MirrorMaker emits them for a one-way flow: with only A->B enabled it still runs
// the B->A pair for its MirrorHeartbeatConnector (MirrorMakerConfig.clusterPairs: every pair while
// emit.heartbeats.enabled is true), which writes B->A heartbeats into A's `heartbeats` topic; A->B mirrors that
// topic to B as `A.heartbeats`, which is how Kafka's MirrorClient/RemoteClusterUtils find B's upstream clusters
// and how users watch a flow end to end. The B->A pair replicates nothing (its source and checkpoint connectors
// are disabled: no `B.` topics, offset syncs or checkpoints for it), and `B->A.emit.heartbeats.enabled=false`
// (or the top-level key) leaves it out. A source cluster that refuses the mirror's account the reverse pair's
// internal topics (a read-only migration account) costs the heartbeats only: the mirror starts and copies.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { securityOptions } from '../../../src/cli/client-security.js';
import { Admin, Consumer, type ConsumerRecord, Producer } from '../../../src/client/index.js';
import { setClientSecurity } from '../../../src/connect/mirror/mirror-config.js';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import { decodeHeartbeat, type Heartbeat } from '../../../src/connect/mirror/records.js';
import { ACL_USERS, addAcls, startAclBroker } from '../../helpers/acl-broker.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';

const clusters = useMirrorClusters('brook-mirror-heartbeats-');

function mm2(source: string, target: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    clusters: `${source}, ${target}`,
    [`${source}.bootstrap.servers`]: clusters.a.bootstrap,
    [`${target}.bootstrap.servers`]: clusters.b.bootstrap,
    [`${source}->${target}.enabled`]: 'true',
    'replication.factor': '1',
    'emit.heartbeats.interval.ms': '500',
    'refresh.topics.interval.ms': '1000',
    'offset-syncs.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'config.storage.replication.factor': '1',
    'status.storage.replication.factor': '1',
    ...extra,
  };
}

/** The heartbeats in `topic` of the cluster at `bootstrap`, read until one matches or `timeoutMs` passes. */
async function heartbeatsUntil(
  bootstrap: string,
  topic: string,
  match: (h: Heartbeat) => boolean,
  timeoutMs: number,
): Promise<Heartbeat[]> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  const seen: Heartbeat[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    while (!(await admin.listTopics()).includes(topic)) {
      if (Date.now() > deadline) return seen;
      await sleep(250);
    }
  } finally {
    await admin.close();
  }
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    allowAutoCreateTopics: false,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  try {
    consumer.assign([{ topic, partition: 0 }]);
    while (Date.now() < deadline && !seen.some(match)) {
      const records: ConsumerRecord[] = await consumer.poll(500);
      for (const r of records)
        if (r.key !== null && r.value !== null) seen.push(decodeHeartbeat(r.key, r.value));
    }
  } finally {
    await consumer.close();
  }
  return seen;
}

async function topicsOf(bootstrap: string): Promise<string[]> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    return await admin.listTopics({ listInternal: true });
  } finally {
    await admin.close();
  }
}

const fromTo = (source: string, target: string) => (h: Heartbeat) =>
  h.sourceClusterAlias === source && h.targetClusterAlias === target;

test('a one-way flow A->B emits B->A heartbeats into A, and B receives them as A.heartbeats', async (t) => {
  const mm = await MirrorMaker.start(mm2('A', 'B'), () => {});
  t.after(() => mm.stop());

  const onA = await heartbeatsUntil(clusters.a.bootstrap, 'heartbeats', fromTo('B', 'A'), 30_000);
  assert.ok(onA.some(fromTo('B', 'A')), `no B->A heartbeat in A's heartbeats: ${JSON.stringify(onA)}`);
  const mirrored = await heartbeatsUntil(clusters.b.bootstrap, 'A.heartbeats', fromTo('B', 'A'), 30_000);
  assert.ok(mirrored.some(fromTo('B', 'A')), `no A.heartbeats on B: ${JSON.stringify(mirrored)}`);
  const onB = await heartbeatsUntil(clusters.b.bootstrap, 'heartbeats', fromTo('A', 'B'), 30_000);
  assert.ok(onB.some(fromTo('A', 'B')), JSON.stringify(onB));

  // The B->A pair only emits heartbeats: nothing of B is mirrored to A, no offset syncs nor checkpoints for it.
  const a = await topicsOf(clusters.a.bootstrap);
  assert.deepEqual(
    a.filter((x) => x.startsWith('B.') || x === 'mm2-offset-syncs.A.internal'),
    [],
    a.join(', '),
  );
  const b = await topicsOf(clusters.b.bootstrap);
  assert.ok(
    !b.includes('mm2-offset-syncs.A.internal') && !b.includes('B.checkpoints.internal'),
    b.join(', '),
  );
});

test('B->A.emit.heartbeats.enabled=false leaves it out: no heartbeats topic on A', async (t) => {
  const mm = await MirrorMaker.start(mm2('S', 'T', { 'T->S.emit.heartbeats.enabled': 'false' }), () => {});
  t.after(() => mm.stop());
  assert.deepEqual(
    mm.flows.map((f) => `${f.flow.source}->${f.flow.target}`),
    ['S->T'],
  );
  const onT = await heartbeatsUntil(clusters.b.bootstrap, 'heartbeats', fromTo('S', 'T'), 30_000);
  assert.ok(onT.some(fromTo('S', 'T')), JSON.stringify(onT));
  assert.ok(!(await topicsOf(clusters.a.bootstrap)).includes('mm2-configs.T.internal'));
});

test('a source refusing the reverse pair its topics (read-only account) costs heartbeats only', async (t) => {
  const ro = await startAclBroker();
  // The mirror stops before its source broker: a refresh running when the broker went would otherwise retry
  // (Admin.close() waits for it, as Kafka's) until default.api.timeout.ms, past the file's end.
  let mm: MirrorMaker | undefined;
  t.after(async () => {
    await mm?.stop();
    await ro.broker.stop();
  });
  // alice may read and describe `orders` on the source, nothing else: no topic creation, no group.
  const superUser = new Admin({ bootstrapServers: `127.0.0.1:${ro.plainPort}` });
  try {
    await superUser.createTopics([{ topic: 'orders', numPartitions: 1, replicationFactor: 1 }]);
  } finally {
    await superUser.close();
  }
  const wire = await ro.admin();
  try {
    // Resource TOPIC (2), operation READ (3), which implies DESCRIBE.
    await addAcls(wire, [{ resourceType: 2, resourceName: 'orders', principal: 'User:alice', operation: 3 }]);
  } finally {
    wire.close();
  }
  const producer = new Producer({ bootstrapServers: `127.0.0.1:${ro.plainPort}` });
  try {
    await producer.sendBatch(
      Array.from({ length: 10 }, (_, i) => ({ topic: 'orders', value: Buffer.from(`o${i}`) })),
    );
  } finally {
    await producer.close();
  }
  setClientSecurity(securityOptions);
  t.after(() => setClientSecurity(null));
  const lines: string[] = [];
  mm = await MirrorMaker.start(
    {
      ...mm2('R', 'T'),
      'R.bootstrap.servers': `127.0.0.1:${ro.saslPort}`,
      'R.security.protocol': 'SASL_PLAINTEXT',
      'R.sasl.mechanism': 'PLAIN',
      'R.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${ACL_USERS.alice}";`,
      'R->T.topics': 'orders',
      'offset-syncs.topic.location': 'target',
    },
    (line) => lines.push(line),
  );
  assert.deepEqual(
    mm.flows.map((f) => `${f.flow.source}->${f.flow.target}`),
    ['R->T'],
    'the refused reverse pair is left out',
  );
  assert.ok(
    lines.some((l) => l.includes('Not emitting T->R heartbeats into R')),
    lines.join('\n'),
  );
  const consumer = new Consumer({
    bootstrapServers: clusters.b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const copied: ConsumerRecord[] = [];
  try {
    consumer.assign([{ topic: 'R.orders', partition: 0 }]);
    const deadline = Date.now() + 30_000;
    while (copied.length < 10 && Date.now() < deadline) copied.push(...(await consumer.poll(500)));
  } finally {
    await consumer.close();
  }
  assert.equal(copied.length, 10);
});

/** Creates `orders` on cluster A when missing (several tests mirror it). */
async function ensureOrders(): Promise<void> {
  const admin = new Admin({ bootstrapServers: clusters.a.bootstrap });
  try {
    if (!(await admin.listTopics()).includes('orders'))
      await admin.createTopics([{ topic: 'orders', numPartitions: 1, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
}

/** Polls the topics of the cluster at `bootstrap` until `topic` is there; whether it appeared in `timeoutMs`. */
async function appears(bootstrap: string, topic: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await topicsOf(bootstrap)).includes(topic)) return true;
    await sleep(250);
  }
  return false;
}

test('heartbeats are mirrored though `topics` leaves them out (heartbeats.replication.enabled=true)', async (t) => {
  await ensureOrders();
  const mm = await MirrorMaker.start(mm2('K', 'L', { 'K->L.topics': 'orders' }), () => {});
  t.after(() => mm.stop());
  assert.ok(await appears(clusters.b.bootstrap, 'K.orders', 30_000), 'K.orders was not created');
  assert.ok(await appears(clusters.b.bootstrap, 'K.heartbeats', 30_000), 'K.heartbeats was not created');
});

test('heartbeats.replication.enabled=false: a heartbeats topic the filter leaves out is not mirrored', async (t) => {
  await ensureOrders();
  const mm = await MirrorMaker.start(
    mm2('H', 'J', { 'H->J.topics': 'orders', 'heartbeats.replication.enabled': 'false' }),
    () => {},
  );
  t.after(() => mm.stop());
  // The reverse pair J->H writes into A's `heartbeats`, so the topic is there for H->J's refreshes to see.
  const onA = await heartbeatsUntil(clusters.a.bootstrap, 'heartbeats', fromTo('J', 'H'), 30_000);
  assert.ok(onA.some(fromTo('J', 'H')), JSON.stringify(onA));
  assert.ok(await appears(clusters.b.bootstrap, 'H.orders', 30_000), 'H.orders was not created');
  // Three refreshes (refresh.topics.interval.ms=1000) after the heartbeats topic had records.
  await sleep(3000);
  assert.ok(!(await topicsOf(clusters.b.bootstrap)).includes('H.heartbeats'), 'H.heartbeats was mirrored');
});
