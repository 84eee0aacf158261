// Deleting a topic while one of its replicas is on a stopped broker, as Kafka's TopicDeletionManager does it: the
// replicas on the live brokers are stopped and deleted at once (StopReplica with deletePartitions), the one on the
// stopped broker waits for it (ReplicaDeletionIneligible), and the topic's znodes stay under /admin/delete_topics
// until every replica is deleted. A controller failover in between does not lose the deletion: the new controller
// takes it up, and it completes once the stopped broker is back.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { writeLogDirFailureEvent } from '../../src/controller/log-dir-events.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import {
  agreedController,
  agreedLeader,
  controllerOf,
  liveBrokers,
  produceValues,
  waitFor,
} from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'doomed';

/** The live (not renamed for deletion) partition directories of TOPIC in a broker's data directory. */
function liveDirs(dataDir: string): string[] {
  return readdirSync(dataDir).filter((name) => new RegExp(`^${TOPIC}-\\d+$`).test(name));
}

describe('deleting a topic with a replica on a stopped broker', () => {
  let cluster: TestCluster | undefined;
  let store: CoordinationStore | null = null;

  const znodes = async (): Promise<{ marker: boolean; topic: boolean }> => {
    const marker = await store!.exists(`/admin/delete_topics/${TOPIC}`);
    const topic = await store!.exists(`/brokers/topics/${TOPIC}`);
    assert.ok(marker.ok && topic.ok);
    return { marker: marker.value !== null, topic: topic.value !== null };
  };

  before(async () => {
    // Broker 0 runs the controller; broker 2 is the one that is stopped.
    cluster = await startCluster({ order: [0, 1, 2], overrides: { 'zookeeper.session.timeout.ms': 4000 } });
    await createTopicOn(cluster.brokers[0]!, TOPIC, { assignments: { 0: [0, 1, 2], 1: [1, 2, 0] } });
    await agreedLeader(cluster.brokers, TOPIC, (v) => v.isrNodes.length === 3, 60_000);
    const opened = await connectZooKeeper({ connect: cluster.zk.connect, sessionTimeoutMs: 4000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    store = opened.value;
  });
  after(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('deletes the live replicas at once and the last one, then the znodes, when its broker is back', async () => {
    const c = cluster!;
    const leader = await agreedLeader(c.brokers, TOPIC);
    const codes = await produceValues(c.brokers[leader.leaderId]!, TOPIC, ['a', 'b', 'c']);
    assert.deepEqual(new Set(codes), new Set([ErrorCode.NONE]));
    for (const id of [0, 1, 2])
      await waitFor(`both partition directories on broker ${id}`, async () =>
        liveDirs(c.brokers[id]!.dataDir).length === 2 ? true : undefined,
      );

    await c.brokers[2]!.stop();
    await waitFor(
      'broker 2 gone from the cluster',
      async () => ((await liveBrokers(c.brokers[0]!)).includes(2) ? undefined : true),
      30_000,
    );
    const client = await WireClient.connect(c.brokers[0]!.host, c.brokers[0]!.port);
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

    // The live brokers delete their replicas without waiting for broker 2; the deletion stays pending.
    for (const id of [0, 1])
      await waitFor(
        `the partition directories of ${TOPIC} deleted on live broker ${id}`,
        async () => (liveDirs(c.brokers[id]!.dataDir).length === 0 ? true : undefined),
        15_000,
      );
    assert.deepEqual(await znodes(), { marker: true, topic: true }, 'pending while broker 2 is down');
    assert.equal(
      liveDirs(c.brokers[2]!.dataDir).length,
      2,
      'the stopped broker keeps its replicas meanwhile',
    );

    // A log directory event of broker 1 makes the controller send it a LeaderAndIsr for every partition it hosts,
    // which may reopen the replicas it deleted: they are deleted again.
    const event = await writeLogDirFailureEvent(store!, 1 as BrokerId);
    assert.ok(event.ok, 'log dir event written');
    await waitFor('the log dir event taken by the controller', async () => {
      const node = await store!.exists(event.value);
      return node.ok && node.value === null ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 2000));
    await waitFor(
      `no partition directory of ${TOPIC} on broker 1 after its LeaderAndIsr`,
      async () => (liveDirs(c.brokers[1]!.dataDir).length === 0 ? true : undefined),
      10_000,
    );

    // Controller failover: broker 0 stops, broker 1 takes over, broker 0 comes back.
    await c.brokers[0]!.stop();
    await waitFor('broker 1 the controller', async () =>
      (await controllerOf(c.brokers[1]!)) === 1 ? true : undefined,
    );
    await c.start(0);
    await agreedController([c.brokers[0]!, c.brokers[1]!]);
    await waitFor(
      `no partition directory of ${TOPIC} on broker 0 after its restart`,
      async () => (liveDirs(c.brokers[0]!.dataDir).length === 0 ? true : undefined),
      15_000,
    );
    assert.deepEqual(await znodes(), { marker: true, topic: true }, 'still pending after the failover');

    await c.start(2);
    await waitFor(
      `the partition directories of ${TOPIC} deleted on broker 2 once back`,
      async () => (liveDirs(c.brokers[2]!.dataDir).length === 0 ? true : undefined),
      30_000,
    );
    await waitFor(
      `the znodes of ${TOPIC} removed`,
      async () => {
        const z = await znodes();
        return !z.marker && !z.topic ? true : undefined;
      },
      30_000,
    );
    for (const id of [0, 1, 2]) assert.deepEqual(liveDirs(c.brokers[id]!.dataDir), [], `broker ${id}`);
  });
});
