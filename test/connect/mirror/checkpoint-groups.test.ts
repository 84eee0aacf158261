// Which consumer groups MirrorCheckpointConnector gives its tasks, as Kafka's findConsumerGroups picks them: the
// groups that pass the group filter and have a committed offset on at least one topic the topic filter lets
// through. A group that only reads topics this flow does not mirror gets no task and no checkpoints; once it
// commits an offset on a mirrored topic, the next group refresh assigns it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../../src/client/index.js';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';

const clusters = useMirrorClusters('brook-mirror-groups-');
const CHECKPOINT_CONNECTOR = 'MirrorCheckpointConnector';

/** The groups of every MirrorCheckpointConnector task of the mirror's only flow, sorted; null before it has any. */
function assignedGroups(mm: MirrorMaker): string[] | null {
  const herder = mm.flows[0]!.herder;
  let tasks: ReturnType<typeof herder.taskConfigs>;
  try {
    tasks = herder.taskConfigs(CHECKPOINT_CONNECTOR);
  } catch {
    return null; // the connector's config is not written yet
  }
  if (tasks.length === 0) return null;
  return tasks
    .flatMap((t) => (t.config['task.assigned.groups'] ?? '').split(','))
    .filter((g) => g !== '')
    .sort();
}

/** Polls every 250 ms until the assignment is `want`; the last one seen either way. */
async function untilAssigned(mm: MirrorMaker, want: string[], timeoutMs: number): Promise<string[] | null> {
  const deadline = Date.now() + timeoutMs;
  let last = assignedGroups(mm);
  while (JSON.stringify(last) !== JSON.stringify(want) && Date.now() < deadline) {
    await sleep(250);
    last = assignedGroups(mm);
  }
  return last;
}

test('only groups with offsets on mirrored topics get checkpoint tasks, as Kafka finds consumer groups', async (t) => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  t.after(() => source.close());
  await source.createTopics([
    { topic: 'stock', numPartitions: 1, replicationFactor: 1 },
    { topic: 'audit', numPartitions: 1, replicationFactor: 1 },
  ]);
  // One group reads the mirrored topic, another only a topic this flow leaves out.
  const commit = async (group: string, topic: string) => {
    const results = await source.alterConsumerGroupOffsets(group, [{ topic, partition: 0, offset: 0 }]);
    assert.deepEqual(
      results.map((r) => r.error),
      [null],
    );
  };
  await commit('stock-readers', 'stock');
  await commit('auditors', 'audit');

  const mm = await MirrorMaker.start(
    {
      clusters: 'G, H',
      'G.bootstrap.servers': clusters.a.bootstrap,
      'H.bootstrap.servers': clusters.b.bootstrap,
      'G->H.enabled': 'true',
      'G->H.topics': 'stock',
      'H->G.emit.heartbeats.enabled': 'false',
      'tasks.max': '4',
      'replication.factor': '1',
      'refresh.groups.interval.ms': '1000',
      'emit.checkpoints.interval.ms': '1000',
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

  const first = await untilAssigned(mm, ['stock-readers'], 30_000);
  assert.deepEqual(first, ['stock-readers'], 'a group without offsets on mirrored topics was assigned');
  // The auditors start reading the mirrored topic too: the next refresh of the groups picks them up.
  await commit('auditors', 'stock');
  const later = await untilAssigned(mm, ['auditors', 'stock-readers'], 15_000);
  assert.deepEqual(later, ['auditors', 'stock-readers']);
});
