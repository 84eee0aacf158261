// The broker's own acks=-1 writes end their wait when the leader is deposed, as produce's do (one leader-append
// path, broker/replica/replicated-append.ts): an OffsetCommit waiting for a stopped follower of __consumer_offsets
// is answered NOT_COORDINATOR (Kafka's mapping of NOT_LEADER_OR_FOLLOWER for the coordinator's writes), and a
// WriteTxnMarkers waiting for a stopped follower of a data partition is answered NOT_LEADER_OR_FOLLOWER, both as soon
// as a controlled shutdown moves leadership away, not at offsets.commit.timeout.ms or the marker's timeout.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { controllerOf, partitionView, waitFor } from '../helpers/cluster.js';
import { offsetCommitBody, waitForCoordinator } from '../helpers/offset-commits.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

const OFFSETS_TOPIC = '__consumer_offsets';
/** Long enough that an answer at the timeout cannot pass for an answer at the leadership change. */
const COMMIT_TIMEOUT_MS = 30_000;
const ANSWERED_WITHIN_MS = 12_000;

/** A three-broker cluster whose stopped followers stay in the ISR (replica.lag.time.max.ms 60 s); always stopped. */
function useCluster(): { brokers(): BrokerProcess[] } {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'replica.lag.time.max.ms': 60_000,
        'offsets.topic.replication.factor': 3,
        'offsets.topic.num.partitions': 1,
        'offsets.commit.timeout.ms': COMMIT_TIMEOUT_MS,
      },
    });
  });
  after(() => cluster?.stop());
  return { brokers: () => cluster!.brokers };
}

/** Partition 0 of `topic` with all three replicas in sync, its leader, and a follower that is not the controller. */
async function fullIsr(brokers: BrokerProcess[], topic: string) {
  const view = await waitFor(`a full ISR of ${topic}`, async () => {
    const v = await partitionView(brokers[0]!, topic);
    return v !== undefined && v.leaderId >= 0 && v.isrNodes.length === 3 ? v : undefined;
  });
  const leader = brokers[view.leaderId]!;
  const controller = await controllerOf(leader);
  const follower = brokers[view.replicaNodes.find((id) => id !== view.leaderId && id !== controller)!]!;
  return { leader, follower };
}

/**
 * Stops `follower`, sends the request to `leader` and lets it park, then stops the leader (controlled shutdown
 * moves its leadership away); answers the response, how long it took, and the leader's exit code.
 */
async function sendThenDepose(
  leader: BrokerProcess,
  follower: BrokerProcess,
  apiKey: number,
  version: number,
  body: unknown,
) {
  const client = await WireClient.connect(leader.host, leader.port);
  try {
    process.kill(follower.pid, 'SIGSTOP');
    const sentAt = Date.now();
    client.send(apiKey, version, body);
    const answer = client.receive(COMMIT_TIMEOUT_MS + 10_000);
    await sleep(500);
    const exit = leader.stop();
    const response = await answer;
    return { response, elapsedMs: Date.now() - sentAt, exitCode: await exit };
  } finally {
    client.close();
    process.kill(follower.pid, 'SIGCONT');
  }
}

describe('an OffsetCommit parked at a coordinator whose partition leader is deposed', () => {
  const cluster = useCluster();

  it('answers NOT_COORDINATOR when a controlled shutdown moves leadership', {
    timeout: 120_000,
  }, async () => {
    const brokers = cluster.brokers();
    const group = 'deposed-group';
    await createTopicOn(brokers[0]!, 't', { numPartitions: 4, replicationFactor: 1 });
    const finder = await WireClient.connect(brokers[0]!.host, brokers[0]!.port);
    try {
      await finder.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: [group] });
    } finally {
      finder.close();
    }
    const { leader, follower } = await fullIsr(brokers, OFFSETS_TOPIC);
    const warmup = await WireClient.connect(leader.host, leader.port);
    try {
      await waitForCoordinator(warmup, group);
    } finally {
      warmup.close();
    }
    const { response, elapsedMs, exitCode } = await sendThenDepose(
      leader,
      follower,
      ApiKey.OFFSET_COMMIT,
      8,
      offsetCommitBody(group, 7),
    );
    for (const p of response.topics[0].partitions) assert.equal(p.errorCode, ErrorCode.NOT_COORDINATOR);
    assert.ok(elapsedMs < ANSWERED_WITHIN_MS, `answered after ${elapsedMs} ms`);
    assert.equal(exitCode, 0, `clean exit after controlled shutdown:\n${leader.log()}`);
  });
});

describe('a transaction marker parked at a leader that is deposed', () => {
  const cluster = useCluster();

  it('answers NOT_LEADER_OR_FOLLOWER when a controlled shutdown moves leadership', {
    timeout: 120_000,
  }, async () => {
    const brokers = cluster.brokers();
    const topic = 'marked';
    await createTopicOn(brokers[0]!, topic, { numPartitions: 1, replicationFactor: 3 });
    const { leader, follower } = await fullIsr(brokers, topic);
    const marker = (commit: boolean) => ({
      markers: [
        {
          producerId: 4242n,
          producerEpoch: 0,
          transactionResult: commit,
          coordinatorEpoch: 0,
          topics: [{ name: topic, partitionIndexes: [0] }],
        },
      ],
    });
    const markerError = (response: {
      markers: { topics: { partitions: { errorCode: number }[] }[] }[];
    }): number => response.markers[0]!.topics[0]!.partitions[0]!.errorCode;
    const client = await WireClient.connect(leader.host, leader.port);
    try {
      const written = await client.call(ApiKey.WRITE_TXN_MARKERS, 1, marker(false), 20_000);
      assert.equal(markerError(written), ErrorCode.NONE, 'a marker is written while every replica runs');
    } finally {
      client.close();
    }
    const { response, elapsedMs, exitCode } = await sendThenDepose(
      leader,
      follower,
      ApiKey.WRITE_TXN_MARKERS,
      1,
      marker(true),
    );
    assert.equal(markerError(response), ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.ok(elapsedMs < ANSWERED_WITHIN_MS, `answered after ${elapsedMs} ms`);
    assert.equal(exitCode, 0, `clean exit after controlled shutdown:\n${leader.log()}`);
  });
});
