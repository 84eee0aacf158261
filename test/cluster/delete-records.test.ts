// DeleteRecords on a replicated partition, in a real cluster (ZooKeeper and three broker processes): the leader
// answers once every live follower has moved its log start offset too (Kafka's DelayedDeleteRecords), and the
// deleted records stay deleted when a follower becomes the leader: its earliest offset is the deleted-to offset and
// a fetch below it is OFFSET_OUT_OF_RANGE. Before the followers followed the leader's log start, the new leader
// served the deleted records again. A live follower that does not fetch makes the answer REQUEST_TIMED_OUT.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { fetchBody, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'purged';

/** The earliest offset `broker` answers for partition 0 of TOPIC, and whether a fetch of offset 0 is refused. */
async function startOf(broker: BrokerProcess): Promise<{ earliest: number; fetchFromZero: number }> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const listed = await client.call(ApiKey.LIST_OFFSETS, 4, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2n }] }],
    });
    const p = listed.topics[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    const fetched = await client.call(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0));
    return { earliest: Number(p.offset), fetchFromZero: fetched.responses[0].partitions[0].errorCode };
  } finally {
    client.close();
  }
}

describe('DeleteRecords on a replicated partition', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];
  let admin: Admin;

  before(async () => {
    cluster = await startCluster({ order: [0, 1, 2] });
    brokers = cluster.brokers;
    admin = new Admin({ bootstrapServers: brokers.map((b) => b.bootstrap), clientId: 'delete-records-test' });
    await agreedController(brokers);
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  /** Creates `topic` on `replicas` (the first leads), waits for its full ISR, and writes ten records acks=all. */
  async function createFilled(topic: string, replicas: number[]): Promise<void> {
    const created = await admin.createTopics([{ topic, replicaAssignment: { 0: replicas } }]);
    assert.equal(created[0]!.error, null);
    const leader = brokers[replicas[0]!]!;
    await waitFor('a leader with a full ISR', async () => {
      const v = await partitionView(leader, topic);
      return v !== undefined && v.leaderId === replicas[0] && v.isrNodes.length === replicas.length
        ? v
        : undefined;
    });
    const values = Array.from({ length: 10 }, (_, i) => `r${i}`);
    assert.deepEqual(await produceValues(leader, topic, values), new Array(10).fill(ErrorCode.NONE));
  }

  it("moves every replica's log start, so the deleted records stay deleted under a new leader", async () => {
    // Led by broker 1, which is not the controller (broker 0, started first), so stopping it moves only leadership.
    await createFilled(TOPIC, [1, 2, 0]);

    const [deleted] = await admin.deleteRecords([{ topic: TOPIC, partition: 0, offset: 6 }], {
      timeoutMs: 15_000,
    });
    assert.equal(deleted!.error, null);
    assert.equal(deleted!.lowWatermark, 6);
    assert.deepEqual(await startOf(brokers[1]!), {
      earliest: 6,
      fetchFromZero: ErrorCode.OFFSET_OUT_OF_RANGE,
    });

    // The leader goes (a clean shutdown: leadership moves to another replica in the ISR at once).
    await brokers[1]!.stop();
    const moved = await waitFor('a new leader', async () => {
      const v = await partitionView(brokers[0]!, TOPIC);
      return v !== undefined && v.leaderId >= 0 && v.leaderId !== 1 ? v : undefined;
    });
    const leader = brokers[moved.leaderId]!;
    assert.deepEqual(await startOf(leader), { earliest: 6, fetchFromZero: ErrorCode.OFFSET_OUT_OF_RANGE });
  });

  it('answers REQUEST_TIMED_OUT while a live follower does not fetch, and NONE once it has caught up', async () => {
    const topic = 'purged-slow';
    await createFilled(topic, [0, 2]);
    // The follower is paused: still registered (its session outlives the pause), but fetching nothing. The request
    // goes straight to the leader: the admin would retry a REQUEST_TIMED_OUT answer until its own timeout and then
    // report no low watermark, as Kafka's admin does.
    const client = await WireClient.connect(brokers[0]!.host, brokers[0]!.port);
    let timedOut: { errorCode: number; lowWatermark: bigint };
    try {
      process.kill(brokers[2]!.pid, 'SIGSTOP');
      const answer = await client.call(ApiKey.DELETE_RECORDS, 2, {
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset: 4n }] }],
        timeoutMs: 1_000,
      });
      timedOut = answer.topics[0].partitions[0];
    } finally {
      process.kill(brokers[2]!.pid, 'SIGCONT');
      client.close();
    }
    assert.equal(timedOut.errorCode, ErrorCode.REQUEST_TIMED_OUT);
    assert.equal(timedOut.lowWatermark, 0n, "the follower's log start, not yet moved");
    const [done] = await admin.deleteRecords([{ topic, partition: 0, offset: 4 }], { timeoutMs: 15_000 });
    assert.equal(done!.error, null);
    assert.equal(done!.lowWatermark, 4);
  });
});
