// Checkpoints across a restart of the mirror (Kafka's CheckpointStore, KAFKA-15905): the restarted checkpoint
// task reads the checkpoints it emitted before from `A.checkpoints.internal` and every offset sync from the
// offset-syncs topic. A group that barely moved while the mirror was down translates coarsely through the old
// syncs the store keeps sparsely; without the loaded checkpoints that coarser checkpoint would be emitted and
// move the group back on the target. With them, no checkpoint of the group ever goes back, and a group far
// ahead still gets its checkpoint.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { type Checkpoint, decodeCheckpoint } from '../../../src/connect/mirror/records.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';
import { startMirrorMaker, writeMm2 } from './mirror-process.js';

const clusters = useMirrorClusters('brook-mirror-cp-');

/** Writes values from..from+count-1 in batches of `batch` (small batches with a pause: many offset syncs). */
async function produce(from: number, count: number, batch = 500, pauseMs = 0): Promise<void> {
  const producer = new Producer({ bootstrapServers: clusters.a.bootstrap, lingerMs: 5 });
  try {
    for (let i = from; i < from + count; i += batch) {
      if (pauseMs > 0) await sleep(pauseMs);
      const n = Math.min(batch, from + count - i);
      await producer.sendBatch(
        Array.from({ length: n }, (_, k) => ({
          topic: 'orders',
          partition: 0,
          value: Buffer.from(String(i + k)),
        })),
      );
    }
  } finally {
    await producer.close();
  }
}

async function waitForTargetEnd(end: number): Promise<void> {
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const [o] = await target
        .listOffsets([{ topic: 'orders', partition: 0, spec: 'latest' }])
        .catch(() => [{ offset: -1 }]);
      if (o?.offset === end) return;
      assert.ok(Date.now() < deadline, `the target has ${o?.offset} of ${end} records`);
      await sleep(300);
    }
  } finally {
    await target.close();
  }
}

async function commit(group: string, offset: number): Promise<void> {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  try {
    const results = await source.alterConsumerGroupOffsets(group, [
      { topic: 'orders', partition: 0, offset },
    ]);
    assert.deepEqual(
      results.map((r) => r.error),
      [null],
    );
  } finally {
    await source.close();
  }
}

/** Every checkpoint in the topic so far, in order. */
async function checkpoints(): Promise<Checkpoint[]> {
  const consumer = new Consumer({
    // The mirror creates the topic with its own partition count and configs: the reader waits for it.
    allowAutoCreateTopics: false,
    bootstrapServers: clusters.b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const tp = { topic: 'A.checkpoints.internal', partition: 0 };
  const out: Checkpoint[] = [];
  try {
    consumer.assign([tp]);
    const [end] = await consumer.endOffsets([tp]);
    while ((await consumer.position(tp)) < (end?.offset ?? 0))
      for (const r of await consumer.poll(300)) out.push(decodeCheckpoint(r.key!, r.value!));
  } finally {
    await consumer.close();
  }
  return out;
}

async function waitForCheckpoint(group: string, upstream: number): Promise<Checkpoint> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const cp = (await checkpoints()).find((c) => c.group === group && c.upstreamOffset === upstream);
    if (cp !== undefined) return cp;
    assert.ok(Date.now() < deadline, `no checkpoint of ${group} at ${upstream}`);
    await sleep(500);
  }
}

test('a restarted mirror never emits a checkpoint behind one it emitted before', async () => {
  const admin = new Admin({ bootstrapServers: clusters.a.bootstrap });
  await admin.createTopics([{ topic: 'orders', numPartitions: 1, replicationFactor: 1 }]);
  await admin.close();
  const file = writeMm2(clusters.dir, {
    clusters: 'A, B',
    'A.bootstrap.servers': clusters.a.bootstrap,
    'B.bootstrap.servers': clusters.b.bootstrap,
    'A->B.enabled': true,
    'A->B.topics': 'orders',
    'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
    'replication.factor': 1,
    'refresh.topics.interval.ms': 1000,
    'refresh.groups.interval.ms': 1000,
    'emit.checkpoints.interval.ms': 500,
    'offset.lag.max': 10,
    'offset.flush.interval.ms': 1000,
    'offset-syncs.topic.replication.factor': 1,
    'heartbeats.topic.replication.factor': 1,
    'checkpoints.topic.replication.factor': 1,
    'offset.storage.replication.factor': 1,
  });

  await produce(0, 1000);
  let mirror = await startMirrorMaker(file);
  clusters.mirrors.push(mirror);
  await waitForTargetEnd(1000);
  await commit('app', 990);
  const before = await waitForCheckpoint('app', 990);
  // Recent syncs (every ~11 records with offset.lag.max=10) translate a group near the head precisely.
  assert.ok(before.downstreamOffset >= 970, `checkpoint before the restart ${JSON.stringify(before)}`);

  await mirror.stop();
  clusters.mirrors.pop();
  mirror = await startMirrorMaker(file);
  clusters.mirrors.push(mirror);
  // Written slowly, so the mirror keeps up and sends a sync every ~11 records: far more than the store keeps
  // as they came, so syncs near 990 are left only in its sparse slots.
  await produce(1000, 3000, 25, 20);
  await waitForTargetEnd(4000);

  // 'app' moves on by one record; its only syncs at or before 991 are now old ones, kept sparsely.
  await commit('app', 991);
  await commit('late', 3990);
  const late = await waitForCheckpoint('late', 3990);
  assert.ok(
    late.downstreamOffset >= 3970,
    `a group near the head translates precisely: ${JSON.stringify(late)}`,
  );
  await sleep(2000); // a few more checkpoint intervals for 'app'

  const all = (await checkpoints()).filter((c) => c.group === 'app');
  process.stdout.write(
    `# checkpoints of app: ${all.map((c) => `${c.upstreamOffset}->${c.downstreamOffset}`).join(', ')}\n`,
  );
  for (let i = 1; i < all.length; i++) {
    assert.ok(
      all[i]!.upstreamOffset < all[i - 1]!.upstreamOffset ||
        all[i]!.downstreamOffset >= all[i - 1]!.downstreamOffset,
      `checkpoint ${i} moved the group back: ${JSON.stringify(all)}`,
    );
  }
  assert.ok(all.at(-1)!.downstreamOffset >= before.downstreamOffset);
  // The loaded checkpoint also keeps the restarted task from writing the same one again.
  assert.equal(all.filter((c) => c.upstreamOffset === 990).length, 1, JSON.stringify(all));
  assert.match(mirror.output(), /MirrorMaker started/);
});
