// A follower's fetch from beyond the leader's log end (its log diverged: it holds records the leader never had)
// is answered OFFSET_OUT_OF_RANGE and says nothing about how far the follower has caught up, as in Kafka, where
// Partition.fetchRecords updates a follower's state only after a read of the log succeeded. Counting such an
// offset as the follower's progress put a replica that had not fetched the leader's records back into the ISR
// (the chaos harness's F4 looks at this path). Two brokers, broker 1 stopped (SIGSTOP, its session outlives the
// test) until broker 0 drops it from the ISR; a fetch sent as broker 1 from past the log end must leave it out.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedLeader, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'follower-out-of-range';

describe('a follower fetch from past the leader log end', () => {
  let cluster: TestCluster | undefined;
  let paused: number | undefined;

  before(async () => {
    cluster = await startCluster({
      brokers: 2,
      order: [0, 1],
      overrides: {
        'zookeeper.session.timeout.ms': 30_000,
        'replica.lag.time.max.ms': 1000,
        'min.insync.replicas': 1,
        // Kafka's floor, far below replica.fetch.response.max.bytes: the last test's follower fetch is held to it.
        'fetch.max.bytes': 1024,
      },
    });
  });
  after(async () => {
    if (paused !== undefined) process.kill(paused, 'SIGCONT');
    await cluster?.stop();
  });

  it('is out of range and does not bring the follower back into the ISR', async () => {
    const [leader, follower] = cluster!.brokers as [
      NonNullable<TestCluster['brokers'][0]>,
      NonNullable<TestCluster['brokers'][1]>,
    ];
    await createTopicOn(leader, TOPIC, { assignments: { 0: [0, 1] } });
    const view = await agreedLeader(
      cluster!.brokers,
      TOPIC,
      (v) => v.leaderId === 0 && v.isrNodes.length === 2,
    );
    process.kill(follower.pid, 'SIGSTOP');
    paused = follower.pid;
    await waitFor(
      'broker 1 to leave the ISR',
      async () => {
        const v = await partitionView(leader, TOPIC);
        return v !== undefined && v.isrNodes.length === 1 ? true : undefined;
      },
      15_000,
    );
    assert.deepEqual(await produceValues(leader, TOPIC, ['a', 'b', 'c']), [0, 0, 0]);

    const client = await WireClient.connect(leader.host, leader.port);
    try {
      const body = fetchBody(TOPIC, 0, 1000);
      body.replicaId = 1;
      body.replicaState = { replicaId: 1, replicaEpoch: -1n };
      body.topics[0]!.partitions[0]!.currentLeaderEpoch = view.leaderEpoch;
      const response = await client.call(ApiKey.FETCH, 12, body);
      assert.equal(response.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    } finally {
      client.close();
    }
    // The leader looks at its ISR every half replica.lag.time.max.ms, and would drop broker 1 again a second
    // after taking it back: watch the ISR all along.
    const seen = new Set<string>();
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      const v = await partitionView(leader, TOPIC);
      if (v !== undefined) seen.add(JSON.stringify(v.isrNodes));
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(
      [...seen],
      ['[0]'],
      'broker 1 was taken back into the ISR without having fetched the log',
    );
  });

  // KIP-320: a follower that names the epoch of its last batch (Fetch v12 lastFetchedEpoch) and fetches from
  // past where this leader ends that epoch holds records the leader never had: the leader answers the end of the
  // epoch both logs share (divergingEpoch), no records, and does not count the fetch as progress. Before, such a
  // fetch was answered OFFSET_OUT_OF_RANGE and the follower only learnt where to truncate from a separate
  // OffsetForLeaderEpoch, which a follower whose log diverged below the leader's end never sent.
  it('is answered a diverging epoch when the follower names the epoch of its last batch', async () => {
    const leader = cluster!.brokers[0]!;
    const view = (await partitionView(leader, TOPIC))!;
    assert.deepEqual(view.isrNodes, [0]);
    const client = await WireClient.connect(leader.host, leader.port);
    const fetchAsFollower = async (offset: number, lastFetchedEpoch: number) => {
      const body = fetchBody(TOPIC, 0, offset);
      body.replicaId = 1;
      body.replicaState = { replicaId: 1, replicaEpoch: -1n };
      const p = body.topics[0]!.partitions[0]!;
      p.currentLeaderEpoch = view.leaderEpoch;
      p.lastFetchedEpoch = lastFetchedEpoch;
      const response = await client.call(ApiKey.FETCH, 12, body);
      return response.responses[0].partitions[0];
    };
    try {
      // The three records are all of the current epoch: the leader's log ends it at 3.
      const diverged = await fetchAsFollower(5, view.leaderEpoch);
      assert.equal(diverged.errorCode, ErrorCode.NONE);
      assert.deepEqual(diverged.divergingEpoch, { epoch: view.leaderEpoch, endOffset: 3n });
      assert.equal(diverged.records?.length ?? 0, 0, 'no records with a diverging epoch');
      // An epoch the leader cannot place: out of range, as in Kafka.
      const unknown = await fetchAsFollower(2, view.leaderEpoch + 5);
      assert.equal(unknown.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
      // Where the logs agree the fetch reads as before.
      const agreed = await fetchAsFollower(1, view.leaderEpoch);
      assert.equal(agreed.errorCode, ErrorCode.NONE);
      assert.deepEqual(agreed.divergingEpoch, { epoch: -1, endOffset: -1n });
      assert.ok((agreed.records?.length ?? 0) > 0, 'the records from offset 1');
    } finally {
      client.close();
    }
    // The diverged fetch (offset 5 at the end of the log's epoch) did not count; the one from offset 1 is behind
    // the log end. Broker 1 stays out of the ISR.
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual((await partitionView(leader, TOPIC))?.isrNodes, [0]);
  });

  // Kafka's KafkaApis caps every fetch's response at the broker's fetch.max.bytes, a follower's too
  // (replica.fetch.response.max.bytes is what a follower asks for, not a cap its leader puts on others).
  it('caps a follower fetch at fetch.max.bytes, as any other', async () => {
    const leader = cluster!.brokers[0]!;
    const view = (await partitionView(leader, TOPIC))!;
    const client = await WireClient.connect(leader.host, leader.port);
    try {
      const batch = buildBatch([{ value: Buffer.alloc(400, 120) }]);
      for (let i = 0; i < 4; i++) {
        assert.equal((await produceBatch(client, TOPIC, batch, 1)).errorCode, ErrorCode.NONE);
      }
      const body = fetchBody(TOPIC, 0, 3);
      body.replicaId = 1;
      body.replicaState = { replicaId: 1, replicaEpoch: -1n };
      body.topics[0]!.partitions[0]!.currentLeaderEpoch = view.leaderEpoch;
      const response = await client.call(ApiKey.FETCH, 12, body);
      const data = response.responses[0].partitions[0];
      assert.equal(data.errorCode, ErrorCode.NONE);
      // Two of the four batches fit in 1024 bytes; the request's 1 MiB would take all four.
      assert.equal(data.records?.length ?? 0, 2 * batch.length, 'the batches that fit in fetch.max.bytes');
    } finally {
      client.close();
    }
  });
});
