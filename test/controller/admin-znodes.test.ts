import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  decodeReassignPartitions,
  decodeTopicAssignment,
  encodePreferredReplicaElection,
  encodeReassignPartitions,
  PREFERRED_REPLICA_ELECTION_PATH,
  REASSIGN_PARTITIONS_PATH,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
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
  const controller = startController(b4.session, 4, new RecordingChannel());
  await controller.start();
  await admin(b4.session, controller).createTopics(
    [
      newTopic('t', -1, -1, [
        { partitionIndex: 0, brokerIds: [1, 2] },
        { partitionIndex: 1, brokerIds: [1, 2] },
      ]),
    ],
    false,
  );
  return { cluster, controller };
}

test('/admin/reassign_partitions starts reassignments and lists each partition until it has moved', async () => {
  const { cluster, controller } = await setup();
  const t0 = { topic: 't', partition: 0 as never, replicas: [3, 2] as never[] };
  const t1 = { topic: 't', partition: 1 as never, replicas: [1, 9] as never[] };
  assert.ok((await cluster.observer.create(REASSIGN_PARTITIONS_PATH, encodeReassignPartitions([t0, t1]))).ok);
  await settle(controller);
  const node = await cluster.observer.get(topicPath('t'));
  assert.ok(node.ok);
  const assignment = decodeTopicAssignment(node.value.data);
  assert.ok(assignment.ok);
  assert.deepEqual(assignment.value.partitions.get(0 as never)?.addingReplicas, [3]);
  const listed = await cluster.observer.get(REASSIGN_PARTITIONS_PATH);
  assert.ok(listed.ok);
  const remaining = decodeReassignPartitions(listed.value.data);
  assert.ok(remaining.ok);
  assert.deepEqual(
    remaining.value.map((r) => `${r.topic}-${r.partition}`),
    ['t-0'],
    'the partition with a dead target broker was refused and left the node',
  );
  const state = await cluster.partitionState('t', 0);
  const grown = await controller.alterPartition(
    {
      brokerId: 1,
      brokerEpoch: liveEpoch(controller, 1),
      topics: [
        {
          topicName: 't',
          topicId: '',
          partitions: [isrChange(0, state!.leaderEpoch, state!.version, [1, 2, 3])],
        },
      ],
    },
    2,
  );
  assert.equal(grown.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(controller);
  const gone = await cluster.observer.exists(REASSIGN_PARTITIONS_PATH);
  assert.ok(gone.ok && gone.value === null, 'the node goes once every listed partition has moved');
  assert.equal((await cluster.partitionState('t', 0))?.leader, 3);
});

test('/admin/preferred_replica_election moves leadership to the preferred replicas and is removed', async () => {
  const { cluster, controller } = await setup();
  cluster.killBroker(1);
  await settle(controller);
  await cluster.addBroker(1);
  await settle(controller);
  for (const p of [0, 1]) {
    const state = await cluster.partitionState('t', p);
    assert.equal(state?.leader, 2);
    await controller.alterPartition(
      {
        brokerId: 2,
        brokerEpoch: liveEpoch(controller, 2),
        topics: [
          {
            topicName: 't',
            topicId: '',
            partitions: [isrChange(p, state!.leaderEpoch, state!.version, [2, 1])],
          },
        ],
      },
      2,
    );
  }
  const asked = encodePreferredReplicaElection([{ topic: 't', partition: 0 as never }]);
  assert.ok((await cluster.observer.create(PREFERRED_REPLICA_ELECTION_PATH, asked)).ok);
  await settle(controller);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 1);
  assert.equal((await cluster.partitionState('t', 1))?.leader, 2, 'only the listed partition');
  const node = await cluster.observer.exists(PREFERRED_REPLICA_ELECTION_PATH);
  assert.ok(node.ok && node.value === null);
});
