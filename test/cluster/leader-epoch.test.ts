// The data-loss scenario that leader epochs fixed (KIP-101), reproduced with real brokers: a follower that has
// every record, but a high watermark that lags (its checkpoint is old), restarts and becomes a follower again
// while the leader cannot answer; then the leader dies and the follower is elected. A follower that truncated
// to its high watermark on becoming a follower would have thrown the records away and would lead without them.
// Brook's follower truncates only to the end offset the leader gives for its epoch (OffsetForLeaderEpoch), so
// nothing is thrown away while the leader is silent, and every record survives.
//
// Brokers: 0 leads, 1 follows, 2 only runs the controller (started first), so the controller stays reachable
// while broker 0 is frozen.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { controllerOf, liveBrokers, partitionView, readWhenLeading, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'kip101';

describe('leader epochs keep acknowledged records through a follower restart and a leader death (KIP-101)', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];

  before(async () => {
    cluster = await startCluster({
      order: [2, 0, 1],
      overrides: {
        'zookeeper.session.timeout.ms': 4000,
        'replica.lag.time.max.ms': 60_000,
        'min.insync.replicas': 1,
        'unclean.leader.election.enable': true,
        // The high watermark checkpoint stays behind the log, as it does between Kafka's periodic checkpoints.
        'log.flush.offset.checkpoint.interval.ms': 3_600_000,
      },
      // Broker 0's long session keeps it registered while it is frozen, so broker 1 is told to follow it: long
      // enough for broker 1 to restart and be told even on a loaded machine (10 s was not, at a load of 20).
      brokerOverrides: { 0: { 'zookeeper.session.timeout.ms': 20_000 } },
    });
    brokers = cluster.brokers;
  });
  after(() => cluster?.stop());

  it('the restarted follower keeps every record and leads with all of them', async () => {
    const controller = brokers[2]!;
    assert.equal(await controllerOf(controller), 2, 'broker 2 runs the controller');
    await createTopicOn(controller, TOPIC, { assignments: { 0: [0, 1] } });
    await waitFor('broker 0 leading with both in sync', async () => {
      const v = await partitionView(controller, TOPIC);
      return v?.leaderId === 0 && v.isrNodes.length === 2 ? v : undefined;
    });
    const leader = brokers[0]!;
    const client = await WireClient.connect(leader.host, leader.port);
    try {
      for (let i = 0; i < 10; i++) {
        const r = await client.call(ApiKey.PRODUCE, 9, {
          transactionalId: null,
          acks: -1,
          timeoutMs: 10_000,
          topicData: [
            { name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: `m${i}` }]) }] },
          ],
        });
        assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    // Follower 1 has all ten records (acks=all); its high watermark checkpoint does not. It dies.
    await brokers[1]!.kill();
    await waitFor('broker 1 gone', async () =>
      (await liveBrokers(controller)).includes(1) ? undefined : true,
    );
    // The leader freezes: still registered, but it answers nobody.
    process.kill(leader.pid, 'SIGSTOP');
    const frozenAt = Date.now();
    const restarted = await cluster!.start(1);
    await waitFor('broker 1 told to follow broker 0', async () => {
      const v = await partitionView(restarted, TOPIC);
      return v?.leaderId === 0 ? v : undefined;
    }).catch((e: Error) => {
      const since = Date.now() - frozenAt;
      const logs = [controller, restarted].map((b) => `--- broker ${b.brokerId}\n${b.log().slice(-4000)}`);
      throw new Error(`${e.message} (${since} ms after broker 0 froze)\n${logs.join('\n')}`);
    });
    // The frozen leader's session ends; the controller elects broker 1 (uncleanly: it left the ISR when it died).
    await waitFor(
      'broker 1 leading',
      async () => {
        const v = await partitionView(controller, TOPIC);
        return v?.leaderId === 1 ? v : undefined;
      },
      45_000,
    );
    // Named leader by the controller, broker 1 may not have been told yet: its read is retried until it has. In
    // the moment it takes over its high watermark may still be behind its records; the read waits (up to 10 s) for
    // it to reach the ten acknowledged ones. Records really lost stay lost and fail the assertion.
    const values = (
      await readWhenLeading(restarted, TOPIC, 20_000, { untilOffset: 10, timeoutMs: 10_000 })
    ).map((r) => r.value!.toString());
    assert.deepEqual(
      values,
      Array.from({ length: 10 }, (_, i) => `m${i}`),
    );
  });
});
