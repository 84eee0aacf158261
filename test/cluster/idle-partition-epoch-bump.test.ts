// A consumer waiting on an idle partition reads on after the partition's leader epoch rises under the same leader
// (finding N6 of the chaos harness). Three brokers, an rf=3 partition led by broker 1: the consumer reads what is
// there and keeps fetching with nothing new, in an incremental fetch session (KIP-227) that holds the partition at
// its leader epoch. Broker 2, a follower, stops: the controller takes it out of the ISR and raises the leader epoch,
// broker 1 leading still. The consumer's fetch is fenced (FENCED_LEADER_EPOCH), it learns the new epoch from a
// metadata refresh and fetches again at the same offset: the session must be told the new epoch, as Kafka's
// FetchSessionHandler sends a partition whose currentLeaderEpoch changed, or the broker fences it for ever.
// Records produced after the bump must reach the consumer within 20 s.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { agreedLeader, produceToLeader } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const AFTER_BUMP_MS = 20_000;
const TOPIC = 'idle-epoch-bump';

function values(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `v${from + i}`);
}

describe('a consumer on an idle partition whose leader epoch rises under the same leader', () => {
  let cluster: TestCluster | undefined;

  before(async () => {
    // Broker 0 starts first and runs the controller; the test stops broker 2 only.
    cluster = await startCluster({
      order: [0, 1, 2],
      overrides: { 'zookeeper.session.timeout.ms': 6000, 'offsets.topic.replication.factor': 3 },
    });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('reads the records produced after the bump', async () => {
    const c = cluster!;
    await createTopicOn(c.brokers[0]!, TOPIC, { assignments: { 0: [1, 0, 2] } });
    const before = await agreedLeader(c.brokers, TOPIC, (v) => v.leaderId === 1 && v.isrNodes.length === 3);
    const first = values(0, 5);
    assert.deepEqual(new Set(await produceToLeader(c.brokers, TOPIC, first)), new Set([ErrorCode.NONE]));

    const consumer = new Consumer({
      bootstrapServers: c.bootstrap,
      autoOffsetReset: 'earliest',
      fetchMaxWaitMs: 500,
      requestTimeoutMs: 5000,
    });
    consumer.assign([{ topic: TOPIC, partition: 0 }]);
    const got: string[] = [];
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        try {
          for (const r of await consumer.poll(200)) got.push(r.value!.toString());
        } catch {
          // A retriable error reported by poll(): poll again, as an application would.
        }
      }
    })();
    const until = async (count: number, timeoutMs: number): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (got.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    try {
      await until(first.length, 30_000);
      assert.deepEqual(got, first, 'read before the bump');
      // Idle: the consumer's fetches go on at the same offset, with the partition held by the fetch session.
      await new Promise((r) => setTimeout(r, 1500));

      await c.brokers[2]!.stop();
      const survivors = [c.brokers[0]!, c.brokers[1]!];
      const bumped = await agreedLeader(
        survivors,
        TOPIC,
        (v) => v.leaderId === 1 && v.leaderEpoch > before.leaderEpoch && !v.isrNodes.includes(2),
      );
      assert.equal(bumped.leaderId, 1, 'the same leader');

      const later = values(first.length, 5);
      assert.deepEqual(new Set(await produceToLeader(survivors, TOPIC, later)), new Set([ErrorCode.NONE]));
      const producedAt = Date.now();
      await until(first.length + later.length, AFTER_BUMP_MS);
      assert.deepEqual(
        got,
        [...first, ...later],
        `every record after the epoch bump within ${AFTER_BUMP_MS} ms (waited ${Date.now() - producedAt} ms)`,
      );
    } finally {
      stopped = true;
      await loop;
      await consumer.close();
    }
  });
});
