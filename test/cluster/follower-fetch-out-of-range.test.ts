// A follower's fetch from beyond the leader's log end (its log diverged: it holds records the leader never had)
// is answered OFFSET_OUT_OF_RANGE and says nothing about how far the follower has caught up, as in Kafka, where
// Partition.fetchRecords updates a follower's state only after a read of the log succeeded. Counting such an
// offset as the follower's progress put a replica that had not fetched the leader's records back into the ISR
// (the chaos harness's F4 looks at this path). Two brokers, broker 1 stopped (SIGSTOP, its session outlives the
// test) until broker 0 drops it from the ISR; a fetch sent as broker 1 from past the log end must leave it out.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedLeader, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { fetchBody, WireClient } from '../helpers/wire-client.js';

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
});
