// Deleting a topic while one of its replicas is in a failed log directory (JBOD), as Kafka's TopicDeletionManager:
// a replica that is not online (its broker dead, or its directory offline) cannot be deleted, so its deletion waits
// (ReplicaDeletionIneligible) and the topic's znodes stay; the other replicas, the same broker's healthy ones
// included, are deleted at once. Once the broker restarts with the directory readable again, the replica is
// deleted and the znodes go: the log does not outlive its topic (a topic created again under the name would
// otherwise find it). Needs root (the tmpfs mount); skipped otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { canMount, jbodCluster, topicOps } from '../helpers/jbod.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'doomed-jbod';
const FILLER = 'filler';

const { agreed, produce } = topicOps(TOPIC);

/** The live (not renamed for deletion) directories of partition `p` of TOPIC (any partition when omitted). */
function liveDirs(dir: string, p?: number): string[] {
  const pattern = new RegExp(`^${TOPIC}-${p ?? '\\d+'}$`);
  return readdirSync(dir).filter((name) => pattern.test(name));
}

describe('deleting a topic with a replica in a failed log directory', {
  skip: canMount() ? false : 'needs root',
}, () => {
  const jbod = jbodCluster(0, 'brook-jbod-delete');

  it('waits for that replica until its broker restarts, and deletes the others at once', async () => {
    const c = jbod.cluster!;
    const brokers = c.brokers;
    const opened = await connectZooKeeper({ connect: c.zk.connect, sessionTimeoutMs: 4000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    const store: CoordinationStore = opened.value;
    const znodes = async (): Promise<{ marker: boolean; topic: boolean }> => {
      const marker = await store.exists(`/admin/delete_topics/${TOPIC}`);
      const topic = await store.exists(`/brokers/topics/${TOPIC}`);
      assert.ok(marker.ok && topic.ok);
      return { marker: marker.value !== null, topic: topic.value !== null };
    };
    try {
      await createTopicOn(brokers[0]!, TOPIC, { assignments: { 0: [0, 1, 2], 1: [0, 1, 2] } });
      for (const p of [0, 1]) await agreed(brokers, p, (v) => v.leaderId === 0 && v.isrNodes.length === 3);
      // One partition per directory of broker 0 (fewest partitions first).
      const failing = liveDirs(jbod.mount!, 0).length === 1 ? 0 : 1;
      const good = 1 - failing;
      assert.equal(liveDirs(jbod.mount!, failing).length, 1, 'a partition on the failing directory');
      assert.equal(liveDirs(jbod.healthy!, good).length, 1, 'a partition on the healthy directory');
      for (const p of [0, 1]) assert.equal(await produce(brokers[0]!, p, 'a'), 0);

      // Fill the tmpfs but a few KiB, then write more than that: the directory goes offline.
      let filled = false;
      for (let attempt = 0; attempt < 8 && !filled; attempt++) {
        const stats = statfsSync(jbod.mount!);
        const bytes = stats.bavail * stats.bsize - 4096 - attempt * 256 * 1024;
        filled = spawnSync('fallocate', ['-l', String(bytes), join(jbod.mount!, FILLER)]).status === 0;
        if (!filled) rmSync(join(jbod.mount!, FILLER), { force: true });
      }
      assert.ok(filled, 'fallocate could not fill the log directory');
      const code = await produce(brokers[0]!, failing, 'x'.repeat(64 * 1024)).catch(() => -1);
      assert.notEqual(code, 0, 'a write to the full log directory was acknowledged');
      rmSync(join(jbod.mount!, FILLER));
      await agreed(brokers, failing, (v) => v.offlineReplicas.includes(0));

      // Over the wire with timeout_ms 0, answered once the deletion is marked: an admin client's call with that
      // timeout would end at its own deadline of 0 ms, as Kafka's does.
      const client = await WireClient.connect(brokers[1]!.host, brokers[1]!.port);
      try {
        const deleted = await client.call(ApiKey.DELETE_TOPICS, 4, {
          topics: [],
          topicNames: [TOPIC],
          timeoutMs: 0,
        });
        assert.ok(
          [ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT].includes(deleted.responses[0].errorCode),
          `DeleteTopics: ${deleted.responses[0].errorCode}`,
        );
      } finally {
        client.close();
      }
      // Every online replica is deleted: the other brokers' and broker 0's healthy one.
      await waitFor(
        'the online replicas deleted',
        async () =>
          liveDirs(brokers[1]!.dataDir).length === 0 &&
          liveDirs(brokers[2]!.dataDir).length === 0 &&
          liveDirs(jbod.healthy!).length === 0
            ? true
            : undefined,
        15_000,
      );
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(await znodes(), { marker: true, topic: true }, 'pending while a replica is offline');
      assert.equal(liveDirs(jbod.mount!, failing).length, 1, 'the offline replica is still there');

      // Broker 0 (the controller) restarts with the directory readable: another controller deletes the replica.
      await brokers[0]!.stop();
      await c.start(0);
      await agreedController(c.brokers);
      await waitFor(
        `the znodes of ${TOPIC} removed`,
        async () => {
          const z = await znodes();
          return !z.marker && !z.topic ? true : undefined;
        },
        30_000,
      );
      assert.deepEqual(liveDirs(jbod.mount!), [], 'the once offline replica deleted');
    } finally {
      await store.close();
    }
  });
});
