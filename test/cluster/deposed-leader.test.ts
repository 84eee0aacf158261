// An acks=all write parked at a leader that loses its leadership in a controlled shutdown is answered at once with
// NOT_LEADER_OR_FOLLOWER (as Kafka's DelayedProduce does), not when its request timeout runs out: otherwise a
// controlled shutdown stalls every producer for request.timeout.ms and the broker's exit waits for them too.
// A stopped follower (SIGSTOP, in the ISR for replica.lag.time.max.ms) keeps the write from being acknowledged
// while the leader shuts down.
//
// The converse: a leader that stays leader at a new epoch, because the controller took a dead follower out of the
// ISR, keeps the parked write and acknowledges it once the rest of the ISR has it. Answered NOT_LEADER_OR_FOLLOWER,
// a producer without idempotence (kafkajs's, in the group failover test) sent it again and it was written twice.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { controllerOf, partitionView, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'deposed';
const REQUEST_TIMEOUT_MS = 25_000;

describe('a leader that stops leading answers its parked acks=all writes', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];

  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        // Long enough that the stopped follower stays in the ISR for the whole test.
        'replica.lag.time.max.ms': 60_000,
        'min.insync.replicas': 2,
      },
    });
    brokers = cluster.brokers;
    await createTopicOn(brokers[0]!, TOPIC, { numPartitions: 1, replicationFactor: 3 });
  });
  after(() => cluster?.stop());

  it('answers NOT_LEADER_OR_FOLLOWER when a controlled shutdown moves leadership', {
    timeout: 90_000,
  }, async () => {
    const view = await waitFor('a full ISR', async () => {
      const v = await partitionView(brokers[0]!, TOPIC);
      return v !== undefined && v.leaderId >= 0 && v.isrNodes.length === 3 ? v : undefined;
    });
    const leader = brokers[view.leaderId]!;
    const controller = await controllerOf(leader);
    // Stop a follower that is not the controller, so the controller can still move leadership.
    const stoppedId = view.replicaNodes.find((id) => id !== view.leaderId && id !== controller)!;
    const stopped = brokers[stoppedId]!;
    const client = await WireClient.connect(leader.host, leader.port);
    try {
      process.kill(stopped.pid, 'SIGSTOP');
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
      // Let the write reach the leader and park there, waiting for the stopped follower.
      await sleep(500);
      const exit = leader.stop();
      const response = await answer;
      const elapsedMs = Date.now() - sentAt;
      const partition = response.responses[0].partitionResponses[0];
      assert.equal(partition.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      assert.ok(elapsedMs < REQUEST_TIMEOUT_MS / 2, `answered after ${elapsedMs} ms`);
      assert.equal(await exit, 0, `clean exit after controlled shutdown:\n${leader.log()}`);
    } finally {
      client.close();
      process.kill(stopped.pid, 'SIGCONT');
    }
  });
});

describe('a leader that keeps leading at a new epoch keeps its parked acks=all writes', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];
  const topic = 'kept';

  before(async () => {
    cluster = await startCluster({
      overrides: {
        // The killed follower is seen gone after this long.
        'zookeeper.session.timeout.ms': 6000,
        // Long enough that the stopped follower leaves the ISR only through its death.
        'replica.lag.time.max.ms': 60_000,
        'min.insync.replicas': 2,
      },
    });
    brokers = cluster.brokers;
    await createTopicOn(brokers[0]!, topic, { numPartitions: 1, replicationFactor: 3 });
  });
  after(() => cluster?.stop());

  it('acknowledges, once, a write parked when the controller takes a dead follower out of the ISR', {
    timeout: 90_000,
  }, async () => {
    const view = await waitFor('a full ISR', async () => {
      const v = await partitionView(brokers[0]!, topic);
      return v !== undefined && v.leaderId >= 0 && v.isrNodes.length === 3 ? v : undefined;
    });
    const leader = brokers[view.leaderId]!;
    const controller = await controllerOf(leader);
    // The follower that dies is not the controller, so the controller shrinks the ISR as soon as its session ends.
    const victimId = view.replicaNodes.find((id) => id !== view.leaderId && id !== controller)!;
    const victim = brokers[victimId]!;
    const client = await WireClient.connect(leader.host, leader.port);
    try {
      process.kill(victim.pid, 'SIGSTOP');
      const sentAt = Date.now();
      client.send(ApiKey.PRODUCE, 9, {
        transactionalId: null,
        acks: -1,
        timeoutMs: REQUEST_TIMEOUT_MS,
        topicData: [
          { name: topic, partitionData: [{ index: 0, records: buildBatch([{ value: 'parked' }]) }] },
        ],
      });
      const answer = client.receive(REQUEST_TIMEOUT_MS + 5000);
      // Let the write reach the leader and park there, waiting for the stopped follower; then it dies.
      await sleep(500);
      await victim.kill();
      const response = await answer;
      const elapsedMs = Date.now() - sentAt;
      const partition = response.responses[0].partitionResponses[0];
      assert.equal(partition.errorCode, ErrorCode.NONE, 'acknowledged by the leader that kept its partition');
      assert.ok(elapsedMs < REQUEST_TIMEOUT_MS / 2, `answered after ${elapsedMs} ms`);
    } finally {
      client.close();
    }
    const shrunk = await waitFor('the ISR without the dead follower', async () => {
      const v = await partitionView(leader, topic);
      return v !== undefined && !v.isrNodes.includes(victimId) ? v : undefined;
    });
    assert.equal(shrunk.leaderId, view.leaderId, 'the leader stayed');
    assert.ok(shrunk.leaderEpoch > view.leaderEpoch, 'at a new leader epoch');
    const reader = await WireClient.connect(leader.host, leader.port);
    try {
      const values = (await readPartition(reader, topic, 0)).map((r) => r.value!.toString());
      assert.deepEqual(values, ['parked'], 'written once');
    } finally {
      reader.close();
    }
  });
});
