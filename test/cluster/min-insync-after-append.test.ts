// acks=all with min.insync.replicas: a write appended while the ISR was large enough, whose ISR then shrinks below
// min.insync.replicas before every in-sync replica had it, is answered NOT_ENOUGH_REPLICAS_AFTER_APPEND (as Kafka's
// Partition.checkEnoughReplicasReachOffset does), not acknowledged as durable with the leader alone. The records
// stay in the leader's log (the error says so: after append), and the next write is refused before the append
// (NOT_ENOUGH_REPLICAS).
//
// The follower is stopped (SIGSTOP) so that the write parks at the leader, then killed: the controller takes it out
// of the ISR when its ZooKeeper session ends, which moves the leader's high watermark past the parked write.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'min-isr';
const REQUEST_TIMEOUT_MS = 25_000;

describe('acks=all when the ISR shrinks below min.insync.replicas after the append', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        // A stopped follower stays in the ISR until its session ends, not because it lags.
        'replica.lag.time.max.ms': 60_000,
      },
    });
  });
  after(() => cluster?.stop());

  it('answers NOT_ENOUGH_REPLICAS_AFTER_APPEND, keeps the records, then refuses new writes', {
    timeout: 90_000,
  }, async () => {
    const brokers = cluster!.brokers;
    // Both replicas away from the controller, so that it can shrink the ISR while the follower is gone.
    const controllerId = await agreedController(brokers);
    const [leaderId, followerId] = [0, 1, 2].filter((id) => id !== controllerId) as [number, number];
    await createTopicOn(brokers[controllerId]!, TOPIC, {
      assignments: { 0: [leaderId, followerId] },
      configs: { 'min.insync.replicas': '2' },
    });
    const leader = brokers[leaderId]!;
    const follower = brokers[followerId]!;
    await waitFor('the preferred leader with a full ISR', async () => {
      const v = await partitionView(leader, TOPIC);
      return v?.leaderId === leaderId && v.isrNodes.length === 2 ? v : undefined;
    });
    assert.deepEqual(await produceValues(leader, TOPIC, ['before']), [ErrorCode.NONE]);

    const client = await WireClient.connect(leader.host, leader.port);
    try {
      process.kill(follower.pid, 'SIGSTOP');
      const sentAt = Date.now();
      client.send(ApiKey.PRODUCE, 9, {
        transactionalId: null,
        acks: -1,
        timeoutMs: REQUEST_TIMEOUT_MS,
        topicData: [
          { name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: 'parked' }]) }] },
        ],
      });
      const answer = client.receive(REQUEST_TIMEOUT_MS + 5000);
      await sleep(500);
      await follower.kill();
      const response = await answer;
      const elapsedMs = Date.now() - sentAt;
      const partition = response.responses[0].partitionResponses[0];
      assert.equal(partition.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
      assert.ok(elapsedMs < REQUEST_TIMEOUT_MS / 2, `answered after ${elapsedMs} ms, not at the timeout`);
    } finally {
      client.close();
    }

    const shrunk = await partitionView(leader, TOPIC);
    assert.deepEqual(shrunk?.isrNodes, [leaderId], 'the ISR is the leader alone');
    const reader = await WireClient.connect(leader.host, leader.port);
    try {
      const values = (await readPartition(reader, TOPIC, 0)).map((r) => r.value!.toString());
      assert.deepEqual(values, ['before', 'parked'], 'the parked write is in the log');
    } finally {
      reader.close();
    }
    assert.deepEqual(await produceValues(leader, TOPIC, ['after']), [ErrorCode.NOT_ENOUGH_REPLICAS]);
  });
});
