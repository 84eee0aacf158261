// The controller over a flaky link to its store: a write whose reply is lost (ZooKeeper committed it, the
// connection dropped first, the client answers CONNECTIONLOSS), a write refused while disconnected, a read that
// fails. Kafka's controller retries such calls until the session is connected again (KafkaZkClient's
// retryRequestsUntilConnected), so each election it starts is eventually written and sent to the brokers.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Op } from '../../src/controller/store/store.js';
import {
  decodeTopicAssignment,
  encodeEntityConfig,
  topicConfigPath,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  admin,
  FaultySession,
  isrChange,
  liveEpoch,
  newTopic,
  RecordingChannel,
  settle,
  startController,
  TestCluster,
  writesState,
} from './helpers.js';

/** Brokers 1-3, the controller on broker 1 over a FaultySession, and topic t with partition 0 on [2, 3, 1]. */
async function setup(options: { uncleanLeaderElectionEnable?: boolean } = {}) {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  await cluster.addBroker(3);
  const session = new FaultySession(b1.session);
  const channel = new RecordingChannel();
  const controller = startController(session, 1, channel, options);
  await controller.start();
  const [created] = await admin(b1.session, controller).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [2, 3, 1] }])],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  await settle(controller);
  return { cluster, session, channel, controller };
}

/** The next write of t-0's state is committed but its reply lost; later ones go through. */
function loseNextStateWrite(session: FaultySession): void {
  let armed = true;
  session.multiFault = (ops) => {
    if (!armed || !writesState(ops, 't', 0)) return null;
    armed = false;
    return 'lose';
  };
}

test('a leader elected by a write whose reply was lost is still told it leads', async () => {
  const { cluster, session, channel, controller } = await setup();
  loseNextStateWrite(session);
  cluster.killBroker(2);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 3);
  assert.equal(state?.leaderEpoch, 1);
  for (const b of [3, 1]) {
    const sent = channel.lastLeaderAndIsr(b, 't', 0);
    assert.equal(sent?.leader, 3, `broker ${b} learns the new leader`);
    assert.equal(sent?.leaderEpoch, 1);
    assert.equal(sent?.partitionEpoch, state?.version);
  }
});

test('a controlled shutdown whose write lost its reply still tells the new leader', async () => {
  const { cluster, session, channel, controller } = await setup();
  loseNextStateWrite(session);
  const epoch2 = BigInt(controller.context!.liveBrokers.get(2 as never)!.epoch);
  const answer = await controller.controlledShutdown({ brokerId: 2, brokerEpoch: epoch2 });
  // The controller read the state back: leadership has moved, so broker 2 may stop.
  assert.deepEqual(answer.remainingPartitions, []);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 3);
  const sent = channel.lastLeaderAndIsr(3, 't', 0);
  assert.equal(sent?.leader, 3, 'the new leader learns it leads');
  assert.equal(sent?.leaderEpoch, state?.leaderEpoch);
});

test('an election whose write failed while the store was unreachable is made once the session reconnects', async () => {
  const { cluster, session, channel, controller } = await setup();
  let connected = false;
  session.multiFault = (ops) => (!connected && writesState(ops, 't', 0) ? 'fail' : null);
  cluster.killBroker(2);
  await settle(controller);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 2, 'nothing was written while disconnected');
  connected = true;
  session.emit('reconnected');
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 3);
  assert.deepEqual(state?.isr, [3, 1]);
  assert.equal(channel.lastLeaderAndIsr(3, 't', 0)?.leader, 3);
});

test('a topic whose config cannot be read is not elected uncleanly, whatever the broker default', async () => {
  const { cluster, session, controller } = await setup({ uncleanLeaderElectionEnable: true });
  await cluster.observer.set(
    topicConfigPath('t'),
    encodeEntityConfig({ 'unclean.leader.election.enable': 'false' }),
    -1,
  );
  // Leader 2 shrinks the ISR to itself, then dies: 3 and 1 are alive but out of sync.
  const shrunk = await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2])] }],
    },
    2,
  );
  assert.equal(shrunk.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  session.getFault = (path) => (path === topicConfigPath('t') ? 'fail' : null);
  cluster.killBroker(2);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, -1, 'no out-of-sync replica leads');
  assert.deepEqual(state?.isr, [2]);
});

/** The next write of t's replica assignment (a reassignment starting or finishing) is committed, its reply lost. */
function loseNextAssignmentWrite(session: FaultySession): void {
  let armed = true;
  const writesAssignment = (ops: readonly Op[]) =>
    ops.some((op) => op.op === 'set' && op.path === topicPath('t'));
  session.multiFault = (ops) => {
    if (!armed || !writesAssignment(ops)) return null;
    armed = false;
    return 'lose';
  };
}

async function assignmentOfT(cluster: TestCluster) {
  const node = await cluster.observer.get(topicPath('t'));
  assert.ok(node.ok);
  const decoded = decodeTopicAssignment(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value.partitions.get(0 as never);
}

const moveT = (replicas: number[]) => ({
  timeoutMs: 1000,
  topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas }] }],
});

test('a reassignment whose write lost its reply goes on as started: the new replica is sent its LeaderAndIsr', async () => {
  const { cluster, session, channel, controller } = await setup();
  await cluster.addBroker(4);
  await settle(controller);
  loseNextAssignmentWrite(session);
  const started = await controller.alterPartitionReassignments(moveT([4, 3, 2]));
  // ZooKeeper committed the reassignment: the controller read it back and answers as Kafka's would.
  assert.equal(started.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const moving = { replicas: [4, 3, 2, 1], addingReplicas: [4], removingReplicas: [1] };
  assert.deepEqual(await assignmentOfT(cluster), moving);
  const listed = await controller.listPartitionReassignments({ timeoutMs: 1000, topics: null });
  assert.deepEqual(
    listed.topics[0]?.partitions[0]?.replicas,
    moving.replicas,
    'the controller knows the move',
  );
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leaderEpoch, 1);
  for (const b of [4, 2]) {
    const sent = channel.lastLeaderAndIsr(b, 't', 0);
    assert.equal(sent?.leaderEpoch, 1, `broker ${b} learns the reassignment`);
    assert.equal(sent?.partitionEpoch, state?.version);
    assert.deepEqual(sent?.addingReplicas, [4]);
  }
  // The leader, told the new leader epoch, can report broker 4 in sync, and the move finishes.
  const caughtUp = await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 1, state!.version, [2, 3, 1, 4])] }],
    },
    2,
  );
  assert.equal(caughtUp.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(controller);
  assert.deepEqual(await assignmentOfT(cluster), {
    replicas: [4, 3, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
});

test('a reassignment whose finishing write lost its reply still stops the removed replica and tells the new leader', async () => {
  const { cluster, session, channel, controller } = await setup();
  await cluster.addBroker(4);
  await settle(controller);
  const started = await controller.alterPartitionReassignments(moveT([4, 3]));
  assert.equal(started.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const moving = await cluster.partitionState('t', 0);
  loseNextAssignmentWrite(session);
  channel.clear();
  const caughtUp = await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [
        {
          topicName: 't',
          topicId: '',
          partitions: [isrChange(0, moving!.leaderEpoch, moving!.version, [2, 3, 1, 4])],
        },
      ],
    },
    2,
  );
  assert.equal(caughtUp.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(controller);
  assert.deepEqual(await assignmentOfT(cluster), {
    replicas: [4, 3],
    addingReplicas: [],
    removingReplicas: [],
  });
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 4);
  const sent = channel.lastLeaderAndIsr(4, 't', 0);
  assert.equal(sent?.leader, 4, 'the new leader learns it leads');
  assert.equal(sent?.partitionEpoch, state?.version);
  assert.deepEqual(
    channel
      .of('stopReplica')
      .filter((s) => s.request.deletePartitions)
      .map((s) => s.broker)
      .sort(),
    [1, 2],
    'the removed replicas are stopped and deleted',
  );
  const listed = await controller.listPartitionReassignments({ timeoutMs: 1000, topics: null });
  assert.deepEqual(listed.topics, [], 'the controller knows the move finished');
});

test('a broker in controlled shutdown left in an ISR (its write failed) is not kept in the ISR of an election', async () => {
  const { cluster, session, controller } = await setup();
  // Broker 3 follows t-0; the write taking it out of the ISR fails, so it is still in ZooKeeper's ISR.
  session.multiFault = (ops) => (writesState(ops, 't', 0) ? 'fail' : null);
  const epoch3 = BigInt(controller.context!.liveBrokers.get(3 as never)!.epoch);
  const answer = await controller.controlledShutdown({ brokerId: 3, brokerEpoch: epoch3 });
  assert.equal(answer.errorCode, ErrorCode.NONE);
  session.multiFault = () => null;
  assert.deepEqual((await cluster.partitionState('t', 0))?.isr, [2, 3, 1]);
  // The leader dies before broker 3 is gone: Kafka's offline election keeps only online replicas in the ISR, and a
  // broker shutting down is not online (ControllerContext.isReplicaOnline).
  cluster.killBroker(2);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 1, 'the broker shutting down is not elected');
  assert.deepEqual(state?.isr, [1]);
});
