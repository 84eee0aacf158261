// `emit.offset-syncs.enabled=false` (KIP-1031, Kafka 3.9): the mirror copies records but writes no offset syncs
// and does not create their topic; MirrorCheckpointConnector, which translates through them, is refused with
// Kafka's message while checkpoints or group offset syncing are on, so no checkpoint topic appears either, and the
// process runs its other connectors.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { waitUntil } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';
import { startMirrorMaker, writeTwoClusterMm2 } from './mirror-process.js';

const clusters = useMirrorClusters('brook-mirror-nosyncs-');

async function topicsOf(bootstrap: string): Promise<string[]> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    return await admin.listTopics({ listInternal: true });
  } finally {
    await admin.close();
  }
}

test('emit.offset-syncs.enabled=false: records copied, no offset syncs, no checkpoints', async () => {
  const admin = new Admin({ bootstrapServers: clusters.a.bootstrap });
  try {
    await admin.createTopics([{ topic: 'events', numPartitions: 2, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  const producer = new Producer({ bootstrapServers: clusters.a.bootstrap, lingerMs: 5 });
  try {
    await producer.sendBatch(
      Array.from({ length: 200 }, (_, i) => ({
        topic: 'events',
        partition: i % 2,
        value: Buffer.from(`e${i}`),
      })),
    );
  } finally {
    await producer.close();
  }
  // A group with committed offsets on the source: what a checkpoint would translate.
  const group = new Consumer({
    bootstrapServers: clusters.a.bootstrap,
    groupId: 'billing',
    autoOffsetReset: 'earliest',
  });
  try {
    await group.commit([
      { topic: 'events', partition: 0, offset: 50 },
      { topic: 'events', partition: 1, offset: 50 },
    ]);
  } finally {
    await group.close();
  }

  const flow = {
    sourceBootstrap: clusters.a.bootstrap,
    targetBootstrap: clusters.b.bootstrap,
    topics: 'events',
  };
  const file = writeTwoClusterMm2(clusters.dir, flow, {
    'emit.offset-syncs.enabled': false,
    'emit.checkpoints.interval.ms': 500,
    'refresh.groups.interval.ms': 1000,
    'offset.flush.interval.ms': 1000,
  });
  const mirror = await startMirrorMaker(file);
  clusters.mirrors.push(mirror);

  const consumer = new Consumer({
    bootstrapServers: clusters.b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const seen = new Set<string>();
  try {
    let present: string[] = [];
    const deadline = Date.now() + 120_000;
    while (!present.includes('A.events') && Date.now() < deadline) {
      present = await topicsOf(clusters.b.bootstrap);
      if (!present.includes('A.events')) await new Promise((r) => setTimeout(r, 250));
    }
    consumer.assign([0, 1].map((partition) => ({ topic: 'A.events', partition })));
    while (seen.size < 200 && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
    }
  } finally {
    await consumer.close();
  }
  assert.equal(seen.size, 200, `records on the target:\n${mirror.output()}`);

  // The checkpoint connector's config is refused with Kafka's message; the heartbeats still flow.
  await waitUntil(
    () =>
      /Not running MirrorCheckpointConnector for A->B: [\s\S]*can't run without offset syncs/.test(
        mirror.output(),
      ),
    60_000,
    () => `no refusal logged:\n${mirror.output()}`,
  );
  let targetTopics: string[] = [];
  const deadline = Date.now() + 60_000;
  while (!targetTopics.includes('heartbeats') && Date.now() < deadline) {
    targetTopics = await topicsOf(clusters.b.bootstrap);
    if (!targetTopics.includes('heartbeats')) await new Promise((r) => setTimeout(r, 250));
  }
  assert.ok(targetTopics.includes('heartbeats'), targetTopics.join(', '));
  // Several checkpoint intervals have passed since the records arrived: had the connector run, its topic
  // would exist (it is created at start), and the syncs topic when the source connector started.
  assert.ok(!targetTopics.includes('A.checkpoints.internal'), targetTopics.join(', '));
  assert.ok(!(await topicsOf(clusters.a.bootstrap)).includes('mm2-offset-syncs.B.internal'));
});
