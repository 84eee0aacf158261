import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { decodeTopicAssignment, topicPath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  admin,
  isrChange,
  liveEpoch,
  newTopic,
  RecordingChannel,
  settle,
  startController,
  TestCluster,
} from './helpers.js';

async function setup() {
  const cluster = new TestCluster();
  after(() => cluster.close());
  for (const id of [1, 2, 3]) await cluster.addBroker(id);
  const b4 = await cluster.addBroker(4);
  const channel = new RecordingChannel();
  const controller = startController(b4.session, 4, channel);
  await controller.start();
  const [r] = await admin(b4.session, controller).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [1, 2] }])],
    false,
  );
  assert.equal(r!.errorCode, ErrorCode.NONE);
  return { cluster, channel, controller };
}

async function assignment(cluster: TestCluster) {
  const node = await cluster.observer.get(topicPath('t'));
  assert.ok(node.ok);
  const decoded = decodeTopicAssignment(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value.partitions.get(0 as never)!;
}

const move = (replicas: number[] | null) => ({
  timeoutMs: 1000,
  topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas }] }],
});

test('a reassignment adds the new replicas, waits for them to join the ISR, then switches and stops the old ones', async () => {
  const { cluster, channel, controller } = await setup();
  channel.clear();
  const started = await controller.alterPartitionReassignments(move([3, 2]));
  assert.equal(started.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const moving = await assignment(cluster);
  assert.deepEqual(moving, { replicas: [3, 2, 1], addingReplicas: [3], removingReplicas: [1] });
  const listed = await controller.listPartitionReassignments({ timeoutMs: 1000, topics: null });
  assert.deepEqual(listed.topics, [
    {
      name: 't',
      partitions: [{ partitionIndex: 0, replicas: [3, 2, 1], addingReplicas: [3], removingReplicas: [1] }],
    },
  ]);
  const during = await cluster.partitionState('t', 0);
  assert.equal(during?.leader, 1, 'the old leader leads until the move finishes');
  assert.equal(during?.leaderEpoch, 1);
  await settle(controller);
  const toNew = channel.lastLeaderAndIsr(3, 't', 0);
  assert.equal(toNew?.isNew, true);
  assert.deepEqual(toNew?.addingReplicas, [3]);

  // The leader reports that broker 3 caught up.
  const caughtUp = await controller.alterPartition(
    {
      brokerId: 1,
      brokerEpoch: liveEpoch(controller, 1),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 1, during!.version, [1, 2, 3])] }],
    },
    2,
  );
  assert.equal(caughtUp.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(controller);
  assert.deepEqual(await assignment(cluster), { replicas: [3, 2], addingReplicas: [], removingReplicas: [] });
  const done = await cluster.partitionState('t', 0);
  assert.equal(done?.leader, 3, 'leadership moves to the first target replica in the ISR');
  assert.deepEqual(done?.isr, [2, 3]);
  assert.equal(done?.leaderEpoch, 2);
  const stops = channel.of('stopReplica', 1);
  assert.equal(stops.length, 1);
  assert.equal(stops[0]!.request.deletePartitions, true);
  assert.equal(
    (await controller.listPartitionReassignments({ timeoutMs: 1, topics: null })).topics.length,
    0,
  );
});

test('cancelling a reassignment returns to the original replicas and stops the added ones', async () => {
  const { cluster, channel, controller } = await setup();
  const none = await controller.alterPartitionReassignments(move(null));
  assert.equal(none.responses[0]?.partitions[0]?.errorCode, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
  await controller.alterPartitionReassignments(move([3, 4]));
  channel.clear();
  const cancelled = await controller.alterPartitionReassignments(move(null));
  assert.equal(cancelled.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual(await assignment(cluster), { replicas: [1, 2], addingReplicas: [], removingReplicas: [] });
  assert.equal((await cluster.partitionState('t', 0))?.leader, 1);
  await settle(controller);
  assert.deepEqual(
    channel
      .of('stopReplica')
      .map((s) => s.broker)
      .sort(),
    [3, 4],
  );
});

test('reassignment refusals: unknown partition, empty, duplicate or dead replicas', async () => {
  const { cluster, controller } = await setup();
  cluster.killBroker(3);
  await settle(controller);
  const code = async (replicas: number[] | null, partitionIndex = 0) => {
    const r = await controller.alterPartitionReassignments({
      timeoutMs: 1,
      topics: [{ name: 't', partitions: [{ partitionIndex, replicas }] }],
    });
    return r.responses[0]!.partitions[0]!;
  };
  assert.equal((await code([1], 5)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal((await code([])).errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  assert.equal((await code([1, 1])).errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  const dead = await code([1, 3]);
  assert.equal(dead.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  assert.match(dead.errorMessage!, /not alive/);
  // Shrinking to replicas already in sync finishes at once.
  assert.equal((await code([2])).errorCode, ErrorCode.NONE);
  assert.deepEqual((await assignment(cluster)).replicas, [2]);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 2);
});

test('a replacing reassignment drops the replicas the first one was adding from the replicas and the ISR', async () => {
  const { cluster, channel, controller } = await setup();
  await controller.alterPartitionReassignments(move([3, 4]));
  const moving = await cluster.partitionState('t', 0);
  // Broker 3 catches up, broker 4 not yet: the first reassignment cannot finish.
  const joined = await controller.alterPartition(
    {
      brokerId: 1,
      brokerEpoch: liveEpoch(controller, 1),
      topics: [
        {
          topicName: 't',
          topicId: '',
          partitions: [isrChange(0, moving!.leaderEpoch, moving!.version, [1, 2, 3])],
        },
      ],
    },
    2,
  );
  assert.equal(joined.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  channel.clear();
  const replaced = await controller.alterPartitionReassignments(move([4, 2]));
  assert.equal(replaced.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual(await assignment(cluster), {
    replicas: [4, 2, 1],
    addingReplicas: [4],
    removingReplicas: [1],
  });
  const state = await cluster.partitionState('t', 0);
  assert.deepEqual(state?.isr, [1, 2]);
  await settle(controller);
  assert.deepEqual(
    channel.of('stopReplica').map((s) => s.broker),
    [3],
  );
});

test('a reassignment may keep a replica on a dead broker: only the replicas it adds must be alive and not stopping', async () => {
  const { cluster, controller } = await setup();
  cluster.killBroker(2);
  await settle(controller);
  // Kafka's controller checks the replicas being added only (validateReplicas): broker 2 is already a replica.
  const kept = await controller.alterPartitionReassignments(move([3, 2]));
  assert.equal(kept.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual(await assignment(cluster), {
    replicas: [3, 2, 1],
    addingReplicas: [3],
    removingReplicas: [1],
  });
  // A broker in controlled shutdown is not among Kafka's live brokers: it may not be added.
  const epoch4 = BigInt(controller.context!.liveBrokers.get(4 as never)!.epoch);
  assert.equal(
    (await controller.controlledShutdown({ brokerId: 4, brokerEpoch: epoch4 })).errorCode,
    ErrorCode.NONE,
  );
  const stopping = await controller.alterPartitionReassignments(move([4, 2]));
  assert.equal(stopping.responses[0]?.partitions[0]?.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  assert.match(stopping.responses[0]!.partitions[0]!.errorMessage!, /not alive/);
});
