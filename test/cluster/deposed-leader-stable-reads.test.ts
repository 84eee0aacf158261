// A broker cut off from ZooKeeper keeps leading its partitions in its own view (nothing tells it that the
// controller moved them to other brokers) and clients can still reach it. Two of its answers are what an
// exactly-once reader builds on, and must not come from that stale view once the new leaders have moved on:
// - a stable OffsetFetch (require_stable, KIP-447) at the group coordinator, the offsets a processor resumes
//   from: a processor that resumed from the old offsets processed its input twice (chaos run seed 1, workload
//   txn: duplicate 40);
// - ListOffsets latest under read_committed, the end a Streams task restores its changelog up to: a stale end
//   leaves the restored state short of what the task's committed offsets assume.
// It answers them only after its in-sync followers showed, by fetching from it at its leader epoch, that none of
// them follows another leader; here none does, so it answers NOT_COORDINATOR / NOT_LEADER_OR_FOLLOWER and the
// client looks for the coordinator or leader again.
//
// With every broker well, the same confirmation must not make a stable fetch wait for the followers' long polls
// (replica.fetch.wait.max.ms is 5 s here): parked follower fetches are answered at once while it waits.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, agreedLeader, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createCommitTopic, offsetCommitBody } from '../helpers/offset-commits.js';
import { useZooKeeperProxiedCluster } from '../helpers/proxied-cluster.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const GROUP = 'zombie-coordinator';
const OFFSETS_TOPIC = '__consumer_offsets';
const FOLLOWER_WAIT_MS = 5000;
const TOPIC = 'changelog';

/** Commits `offset` for partitions 0..3 of topic t at `broker`, retrying while it is not (yet) the coordinator. */
async function commit(broker: BrokerProcess, offset: number): Promise<void> {
  await waitFor(`offset ${offset} committed at broker ${broker.brokerId}`, async () => {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const response = await client.call(ApiKey.OFFSET_COMMIT, 8, offsetCommitBody(GROUP, offset));
      return response.topics[0].partitions[0].errorCode === ErrorCode.NONE ? true : undefined;
    } finally {
      client.close();
    }
  });
}

/** OffsetFetch v7 with require_stable for partition 0 of t at `broker`: its error code and offset. */
async function stableOffset(broker: BrokerProcess): Promise<{ errorCode: number; offset: number }> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(
      ApiKey.OFFSET_FETCH,
      7,
      { groupId: GROUP, topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable: true },
      30_000,
    );
    // A group-level error (NOT_COORDINATOR) comes at the top, with no partitions.
    if (response.errorCode !== ErrorCode.NONE) return { errorCode: response.errorCode, offset: -1 };
    const p = response.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: Number(p.committedOffset) };
  } finally {
    client.close();
  }
}

/** ListOffsets v7 latest under read_committed for partition 0 of the topic at `broker`: error code and offset. */
async function committedEnd(broker: BrokerProcess): Promise<{ errorCode: number; offset: number }> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(
      ApiKey.LIST_OFFSETS,
      7,
      {
        replicaId: -1,
        isolationLevel: 1,
        timeoutMs: 0,
        topics: [
          {
            name: TOPIC,
            partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }],
          },
        ],
      },
      30_000,
    );
    const p = response.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: Number(p.offset) };
  } finally {
    client.close();
  }
}

describe('a leader cut off from ZooKeeper', () => {
  const cluster = useZooKeeperProxiedCluster({
    'zookeeper.session.timeout.ms': 4000,
    'offsets.topic.num.partitions': 1,
    'offsets.topic.replication.factor': 3,
    'min.insync.replicas': 2,
    'replica.fetch.wait.max.ms': FOLLOWER_WAIT_MS,
    'offsets.commit.timeout.ms': 3000,
  });

  it('answers neither a stable offset fetch nor a read_committed end from its stale view', async () => {
    const brokers = cluster.brokers();
    await agreedController(brokers);
    const setup = await WireClient.connect(brokers[0]!.host, brokers[0]!.port);
    try {
      await createCommitTopic(setup);
      // Creates __consumer_offsets (one partition, three replicas).
      await setup.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] });
    } finally {
      setup.close();
    }
    const first = await agreedLeader(brokers, OFFSETS_TOPIC, (v) => v.isrNodes.length === 3);
    const zombie = brokers[first.leaderId]!;
    await commit(zombie, 10);
    const replicas = [zombie.brokerId, ...brokers.filter((b) => b !== zombie).map((b) => b.brokerId)];
    await createTopicOn(zombie, TOPIC, {
      assignments: { 0: replicas },
      configs: { 'min.insync.replicas': '2' },
    });
    await agreedLeader(brokers, TOPIC, (v) => v.leaderId === zombie.brokerId && v.isrNodes.length === 3);
    assert.deepEqual(await produceValues(zombie, TOPIC, ['a']), [ErrorCode.NONE]);
    assert.deepEqual(await committedEnd(zombie), { errorCode: ErrorCode.NONE, offset: 1 });

    const started = Date.now();
    assert.deepEqual(await stableOffset(zombie), { errorCode: ErrorCode.NONE, offset: 10 });
    const elapsed = Date.now() - started;
    assert.ok(elapsed < FOLLOWER_WAIT_MS, `a stable fetch took ${elapsed} ms: it waited for a long poll`);

    const others = brokers.filter((b) => b !== zombie);
    cluster.proxy(zombie.brokerId).cut();
    try {
      const moved = await waitFor('a new leader of __consumer_offsets-0', async () => {
        const views = await Promise.all(others.map((b) => partitionView(b, OFFSETS_TOPIC)));
        const [v] = views;
        if (v === undefined || v.leaderId < 0 || v.leaderId === zombie.brokerId) return undefined;
        return views.every((x) => x?.leaderId === v.leaderId && x.leaderEpoch === v.leaderEpoch)
          ? v
          : undefined;
      });
      await commit(brokers[moved.leaderId]!, 20);
      const topicLeader = await waitFor(`a new leader of ${TOPIC}`, async () => {
        const v = await partitionView(brokers[moved.leaderId]!, TOPIC);
        return v !== undefined && v.leaderId >= 0 && v.leaderId !== zombie.brokerId ? v : undefined;
      });
      await waitFor('b written at the new leader', async () => {
        const [code] = await produceValues(brokers[topicLeader.leaderId]!, TOPIC, ['b']);
        return code === ErrorCode.NONE ? true : undefined;
      });

      // Before the fix: { errorCode: NONE, offset: 10 }, the offset the new coordinator has replaced.
      const answer = await stableOffset(zombie);
      assert.equal(
        answer.errorCode,
        ErrorCode.NOT_COORDINATOR,
        `the cut-off coordinator answered ${JSON.stringify(answer)}`,
      );
      // Before: { errorCode: NONE, offset: 1 }, though b at offset 1 is committed at the new leader.
      const end = await committedEnd(zombie);
      assert.equal(
        end.errorCode,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `the cut-off leader answered ${JSON.stringify(end)}`,
      );
    } finally {
      cluster.proxy(zombie.brokerId).restore();
    }

    // Healed: the broker follows the new leader and the group's coordinator answers the newer offset.
    const healed = await agreedLeader(brokers, OFFSETS_TOPIC, (v) => v.isrNodes.length === 3, 30_000);
    const stable = await waitFor('the coordinator to answer a stable fetch', async () => {
      const answer = await stableOffset(brokers[healed.leaderId]!);
      return answer.errorCode === ErrorCode.NONE ? answer : undefined;
    });
    assert.equal(stable.offset, 20);
    const leader = await agreedLeader(brokers, TOPIC, (v) => v.isrNodes.length === 3, 30_000);
    assert.deepEqual(await committedEnd(brokers[leader.leaderId]!), { errorCode: ErrorCode.NONE, offset: 2 });
  });
});
