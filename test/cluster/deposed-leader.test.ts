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

/**
 * A three-broker cluster whose stopped followers stay in the ISR (replica.lag.time.max.ms 60 s) and whose dead ones
 * are seen gone after 6 s, with `topic` (one partition, three replicas, min.insync.replicas 2); always stopped.
 */
function useCluster(topic: string): { brokers(): BrokerProcess[] } {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'replica.lag.time.max.ms': 60_000,
        'min.insync.replicas': 2,
      },
    });
    await createTopicOn(cluster.brokers[0]!, topic, { numPartitions: 1, replicationFactor: 3 });
  });
  after(() => cluster?.stop());
  return { brokers: () => cluster!.brokers };
}

/**
 * Waits for a full ISR, stops (SIGSTOP) a follower that is not the controller (so the controller can still act),
 * sends an acks=all write to the leader and lets it park there, waiting for the stopped follower. The caller
 * closes `client` and deals with `follower`.
 */
async function parkWriteAtLeader(brokers: BrokerProcess[], topic: string) {
  const view = await waitFor('a full ISR', async () => {
    const v = await partitionView(brokers[0]!, topic);
    return v !== undefined && v.leaderId >= 0 && v.isrNodes.length === 3 ? v : undefined;
  });
  const leader = brokers[view.leaderId]!;
  const controller = await controllerOf(leader);
  const followerId = view.replicaNodes.find((id) => id !== view.leaderId && id !== controller)!;
  const follower = brokers[followerId]!;
  const client = await WireClient.connect(leader.host, leader.port);
  process.kill(follower.pid, 'SIGSTOP');
  const sentAt = Date.now();
  client.send(ApiKey.PRODUCE, 9, {
    transactionalId: null,
    acks: -1,
    timeoutMs: REQUEST_TIMEOUT_MS,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ value: 'parked' }]) }] }],
  });
  const answer = client.receive(REQUEST_TIMEOUT_MS + 5000);
  await sleep(500);
  return { view, leader, followerId, follower, client, sentAt, answer };
}

describe('a leader that stops leading answers its parked acks=all writes', () => {
  const cluster = useCluster(TOPIC);

  it('answers NOT_LEADER_OR_FOLLOWER when a controlled shutdown moves leadership', {
    timeout: 90_000,
  }, async () => {
    const { leader, follower, client, sentAt, answer } = await parkWriteAtLeader(cluster.brokers(), TOPIC);
    try {
      const exit = leader.stop();
      const response = await answer;
      const elapsedMs = Date.now() - sentAt;
      const partition = response.responses[0].partitionResponses[0];
      assert.equal(partition.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      assert.ok(elapsedMs < REQUEST_TIMEOUT_MS / 2, `answered after ${elapsedMs} ms`);
      assert.equal(await exit, 0, `clean exit after controlled shutdown:\n${leader.log()}`);
    } finally {
      client.close();
      process.kill(follower.pid, 'SIGCONT');
    }
  });
});

describe('a leader that keeps leading at a new epoch keeps its parked acks=all writes', () => {
  const topic = 'kept';
  const cluster = useCluster(topic);

  it('acknowledges, once, a write parked when the controller takes a dead follower out of the ISR', {
    timeout: 90_000,
  }, async () => {
    // The follower that dies is not the controller, so the controller shrinks the ISR as soon as its session ends.
    const parked = await parkWriteAtLeader(cluster.brokers(), topic);
    const { view, leader, followerId: victimId, client, sentAt, answer } = parked;
    try {
      await parked.follower.kill();
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
