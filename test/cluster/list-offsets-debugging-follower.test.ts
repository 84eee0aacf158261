// ListOffsets sent to a follower, in a real two-broker cluster. As Kafka 3.9's ReplicaManager.fetchOffsets
// (fetchOnlyFromLeader is false only for replica id -2, DEBUGGING_REPLICA_ID), a debugging client is answered by
// a follower of the partition from its own log, up to its log end offset; a consumer (-1) still gets
// NOT_LEADER_OR_FOLLOWER there.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedLeader, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'debugging-follower';
const RECORDS = 3;

describe('ListOffsets of a debugging client at a follower', () => {
  let cluster: TestCluster | undefined;

  before(async () => {
    cluster = await startCluster({ brokers: 2, order: [0, 1] });
    await createTopicOn(cluster.brokers[0]!, TOPIC, { assignments: { 0: [0, 1] } });
    await agreedLeader(cluster.brokers, TOPIC, (v) => v.leaderId === 0 && v.isrNodes.length === 2);
    const codes = await produceValues(cluster.brokers[0]!, TOPIC, ['a', 'b', 'c']);
    assert.deepEqual(codes, [ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE]);
  });
  after(() => cluster?.stop());

  /** ListOffsets v7 latest of partition 0, asked of broker 1 (the follower) as `replicaId`: [error, offset]. */
  const latestAtFollower = async (replicaId: number): Promise<[number, bigint]> => {
    const b = cluster!.brokers[1]!;
    const client = await WireClient.connect(b.host, b.port);
    try {
      const response = await client.call(ApiKey.LIST_OFFSETS, 7, {
        replicaId,
        isolationLevel: 0,
        topics: [
          {
            name: TOPIC,
            partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }],
          },
        ],
        timeoutMs: 5000,
      });
      const p = response.topics[0].partitions[0];
      return [p.errorCode, p.offset];
    } finally {
      client.close();
    }
  };

  it('answers a debugging client (-2) from the follower, a consumer (-1) NOT_LEADER_OR_FOLLOWER', async () => {
    const answer = await waitFor('the follower to hold every record', async () => {
      const a = await latestAtFollower(-2);
      return a[0] === ErrorCode.NONE && a[1] === BigInt(RECORDS) ? a : undefined;
    }).catch(async () => latestAtFollower(-2));
    assert.deepEqual(answer, [ErrorCode.NONE, BigInt(RECORDS)]);
    assert.deepEqual(await latestAtFollower(-1), [ErrorCode.NOT_LEADER_OR_FOLLOWER, -1n]);
  });
});
