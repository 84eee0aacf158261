// Which topics MirrorCheckpointTask checkpoints, as Kafka's shouldCheckpointTopic decides: only those the
// connector's own topic filter (`topics`, `topics.exclude`) lets through. A heartbeats topic is mirrored although
// `topics` leaves it out (heartbeats.replication.enabled, the source connector's rule), so it has offset syncs;
// a group reading it still gets no checkpoint for it, while its offsets on a listed topic are checkpointed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import { type Checkpoint, decodeCheckpoint } from '../../../src/connect/mirror/records.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';

const clusters = useMirrorClusters('brook-mirror-cp-topics-');
const RECORDS = 5;

/** Every checkpoint in B's `A.checkpoints.internal` so far (none while the topic does not exist). */
async function checkpoints(): Promise<Checkpoint[]> {
  const consumer = new Consumer({
    allowAutoCreateTopics: false,
    bootstrapServers: clusters.b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const tp = { topic: 'A.checkpoints.internal', partition: 0 };
  const out: Checkpoint[] = [];
  try {
    consumer.assign([tp]);
    const [end] = await consumer.endOffsets([tp]).catch(() => [{ offset: 0 }]);
    while ((await consumer.position(tp)) < (end?.offset ?? 0))
      for (const r of await consumer.poll(300)) out.push(decodeCheckpoint(r.key!, r.value!));
  } finally {
    await consumer.close();
  }
  return out;
}

test('a heartbeats topic left out by topics is mirrored but never checkpointed, as in Kafka', async (t) => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  t.after(() => source.close());
  await source.createTopics([
    { topic: 'stock', numPartitions: 1, replicationFactor: 1 },
    { topic: 'heartbeats', numPartitions: 1, replicationFactor: 1 },
  ]);
  const producer = new Producer({ bootstrapServers: clusters.a.bootstrap });
  for (const topic of ['stock', 'heartbeats'])
    await producer.sendBatch(
      Array.from({ length: RECORDS }, (_, i) => ({ topic, partition: 0, value: Buffer.from(String(i)) })),
    );
  await producer.close();
  const results = await source.alterConsumerGroupOffsets('readers', [
    { topic: 'stock', partition: 0, offset: RECORDS },
    { topic: 'heartbeats', partition: 0, offset: RECORDS },
  ]);
  assert.deepEqual(
    results.map((r) => r.error),
    [null, null],
  );

  const mm = await MirrorMaker.start(
    {
      clusters: 'A, B',
      'A.bootstrap.servers': clusters.a.bootstrap,
      'B.bootstrap.servers': clusters.b.bootstrap,
      'A->B.enabled': 'true',
      'A->B.topics': 'stock',
      'B->A.emit.heartbeats.enabled': 'false',
      'replication.factor': '1',
      'refresh.groups.interval.ms': '1000',
      'emit.checkpoints.interval.ms': '500',
      'offset.flush.interval.ms': '500',
      'offset-syncs.topic.replication.factor': '1',
      'heartbeats.topic.replication.factor': '1',
      'checkpoints.topic.replication.factor': '1',
      'offset.storage.replication.factor': '1',
      'config.storage.replication.factor': '1',
      'status.storage.replication.factor': '1',
    },
    () => {},
  );
  t.after(() => mm.stop());

  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  t.after(() => target.close());
  const deadline = Date.now() + 60_000;
  let seen: Checkpoint[] = [];
  for (;;) {
    seen = await checkpoints();
    const stock = seen.find((c) => c.topic === 'A.stock' && c.downstreamOffset === RECORDS);
    const [copied] = await target
      .listOffsets([{ topic: 'A.heartbeats', partition: 0, spec: 'latest' }])
      .catch(() => [{ offset: -1 }]);
    if (stock !== undefined && copied?.offset === RECORDS) break;
    assert.ok(Date.now() < deadline, `no full checkpoint of A.stock yet: ${JSON.stringify(seen)}`);
    await sleep(300);
  }
  // A few more checkpoint rounds, each of which would checkpoint the heartbeats offsets if it were eligible.
  await sleep(2000);
  seen = await checkpoints();
  assert.deepEqual(
    seen.filter((c) => c.topic !== 'A.stock').map((c) => `${c.group} ${c.topic} ${c.upstreamOffset}`),
    [],
  );
  assert.ok(seen.some((c) => c.group === 'readers' && c.upstreamOffset === RECORDS));
});
