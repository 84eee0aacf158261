// A follower asked for a partition with a leader epoch that is not its own answers FENCED_LEADER_EPOCH (the
// client's epoch is older) or UNKNOWN_LEADER_EPOCH (newer), and NOT_LEADER_OR_FOLLOWER only at its own epoch: Kafka's
// Partition.getLocalLog checks the client's epoch before leadership, for leader-only fetches (consumers before
// Fetch v11), ListOffsets and OffsetForLeaderEpoch alike. The Java consumer refreshes its metadata on the first and
// only retries on the second; a consumer whose metadata is ahead of a broker that has not yet been told it leads
// gets UNKNOWN_LEADER_EPOCH there, not a pointless metadata refresh.
//
// Two brokers: 1 runs the controller; the partition is led by 0, which is then stopped and started again, so that
// broker 1 leads at leader epoch 1 and broker 0 follows at it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedLeader, controllerOf } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { consumerFetchBody, fetchPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'follower-epochs';

function listOffsets(currentLeaderEpoch: number) {
  return {
    replicaId: -1,
    isolationLevel: 0,
    topics: [
      {
        name: TOPIC,
        partitions: [{ partitionIndex: 0, currentLeaderEpoch, timestamp: -1n, maxNumOffsets: 1 }],
      },
    ],
    timeoutMs: 5000,
  };
}

/** A consumer's Fetch v10: it may read from the leader only (follower fetching came with v11). */
function leaderOnlyFetch(currentLeaderEpoch: number) {
  return consumerFetchBody([{ topic: TOPIC, partitions: [fetchPartition(0, 0, currentLeaderEpoch)] }], {
    minBytes: 0,
  });
}

function offsetForLeaderEpoch(currentLeaderEpoch: number) {
  return {
    replicaId: -1,
    topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch: 0 }] }],
  };
}

describe("a follower checks the client's leader epoch before its leadership", () => {
  let cluster: TestCluster | undefined;
  let follower: BrokerProcess | undefined;
  let epoch = -1;

  before(async () => {
    cluster = await startCluster({
      brokers: 2,
      order: [1, 0],
      // Broker 0 must stay a follower once it is back.
      overrides: { 'auto.leader.rebalance.enable': false },
    });
    const [zero, one] = cluster.brokers;
    assert.equal(await controllerOf(one!), 1, 'broker 1 runs the controller');
    await createTopicOn(one!, TOPIC, { assignments: { 0: [0, 1] } });
    await agreedLeader(cluster.brokers, TOPIC, (v) => v.leaderId === 0 && v.isrNodes.length === 2);
    // A controlled shutdown moves the leadership to broker 1, at leader epoch 1.
    await zero!.stop();
    follower = await cluster.start(0);
    const view = await agreedLeader(
      cluster.brokers,
      TOPIC,
      (v) => v.leaderId === 1 && v.leaderEpoch >= 1 && v.isrNodes.length === 2,
    );
    epoch = view.leaderEpoch;
  });
  after(() => cluster?.stop());

  async function ask(apiKey: number, version: number, body: unknown): Promise<number> {
    const client = await WireClient.connect(follower!.host, follower!.port);
    try {
      const response = await client.call(apiKey, version, body);
      if (apiKey === ApiKey.FETCH) return response.responses[0].partitions[0].errorCode;
      if (apiKey === ApiKey.LIST_OFFSETS) return response.topics[0].partitions[0].errorCode;
      return response.topics[0].partitions[0].errorCode;
    } finally {
      client.close();
    }
  }

  it('answers ListOffsets with the epoch error first', async () => {
    assert.equal(await ask(ApiKey.LIST_OFFSETS, 7, listOffsets(epoch - 1)), ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(await ask(ApiKey.LIST_OFFSETS, 7, listOffsets(epoch + 1)), ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(await ask(ApiKey.LIST_OFFSETS, 7, listOffsets(epoch)), ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(await ask(ApiKey.LIST_OFFSETS, 7, listOffsets(-1)), ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('answers a leader-only consumer fetch (v10) with the epoch error first', async () => {
    assert.equal(await ask(ApiKey.FETCH, 10, leaderOnlyFetch(epoch - 1)), ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(await ask(ApiKey.FETCH, 10, leaderOnlyFetch(epoch + 1)), ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(await ask(ApiKey.FETCH, 10, leaderOnlyFetch(epoch)), ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('answers OffsetForLeaderEpoch with the epoch error first', async () => {
    assert.equal(
      await ask(ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, offsetForLeaderEpoch(epoch - 1)),
      ErrorCode.FENCED_LEADER_EPOCH,
    );
    assert.equal(
      await ask(ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, offsetForLeaderEpoch(epoch + 1)),
      ErrorCode.UNKNOWN_LEADER_EPOCH,
    );
    assert.equal(
      await ask(ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, offsetForLeaderEpoch(epoch)),
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
    );
  });
});
