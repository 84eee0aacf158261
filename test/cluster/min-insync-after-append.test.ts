// acks=all with min.insync.replicas: a write appended while the ISR was large enough, whose ISR then shrinks below
// min.insync.replicas before every in-sync replica had it, is not acknowledged as durable with the leader alone.
// Since Kafka 3.7 (KAFKA-15583) the leader's high watermark does not move while the ISR is below
// min.insync.replicas, so the write waits (Kafka's DelayedProduce) and is answered REQUEST_TIMED_OUT at its
// timeout, not NOT_ENOUGH_REPLICAS_AFTER_APPEND as before; the next write is refused before the append
// (NOT_ENOUGH_REPLICAS). The records stay in the leader's log, unseen by consumers, until the follower is back in
// the ISR: then they are committed and read.
//
// The follower is stopped (SIGSTOP) so that the write parks at the leader, then killed: the controller takes it out
// of the ISR when its ZooKeeper session ends, which leaves the leader alone in it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'min-isr';
/** The parked write's timeout: after the ISR has shrunk (at most the 6 s session). */
const REQUEST_TIMEOUT_MS = 12_000;

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

  it('times the write out without acknowledging it, refuses new writes, and commits it once the ISR grows', {
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
      await waitFor('the ISR to be the leader alone', async () => {
        const v = await partitionView(leader, TOPIC);
        return v?.isrNodes.length === 1 ? v : undefined;
      });
      assert.ok(Date.now() - sentAt < REQUEST_TIMEOUT_MS, 'the ISR shrank while the write waited');
      const response = await answer;
      const elapsedMs = Date.now() - sentAt;
      const partition = response.responses[0].partitionResponses[0];
      assert.equal(partition.errorCode, ErrorCode.REQUEST_TIMED_OUT);
      assert.ok(elapsedMs >= REQUEST_TIMEOUT_MS - 1000, `answered after ${elapsedMs} ms, before the timeout`);
    } finally {
      client.close();
    }

    const shrunk = await partitionView(leader, TOPIC);
    assert.deepEqual(shrunk?.isrNodes, [leaderId], 'the ISR is the leader alone');
    assert.deepEqual(await readValues(leader), ['before'], 'the parked write is above the high watermark');
    assert.deepEqual(await produceValues(leader, TOPIC, ['after']), [ErrorCode.NOT_ENOUGH_REPLICAS]);

    await cluster!.start(followerId);
    await waitFor('the follower back in the ISR', async () => {
      const v = await partitionView(leader, TOPIC);
      return v?.isrNodes.length === 2 ? v : undefined;
    });
    assert.deepEqual(await readValues(leader, 2), ['before', 'parked'], 'the parked write is committed');
  });
});

/** The values of partition 0 up to the high watermark, or to `untilOffset` once the high watermark gets there. */
async function readValues(broker: BrokerProcess, untilOffset = 0): Promise<string[]> {
  const reader = await WireClient.connect(broker.host, broker.port);
  try {
    const records = await readPartition(reader, TOPIC, 0, 0, { untilOffset, timeoutMs: 10_000 });
    return records.map((r) => r.value!.toString());
  } finally {
    reader.close();
  }
}
