import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Controller } from '../../src/controller/controller.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { AlterPartitionRequestPartitionData } from '../../src/protocol/messages/56-alter-partition.js';
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

/** Brokers 1-4, the controller on broker 4, and the given topics with explicit assignments. */
async function setup(topics: Record<string, number[][]>) {
  const cluster = new TestCluster();
  after(() => cluster.close());
  for (const id of [1, 2, 3]) await cluster.addBroker(id);
  const b4 = await cluster.addBroker(4);
  const channel = new RecordingChannel();
  const controller = startController(b4.session, 4, channel);
  await controller.start();
  current = controller;
  const topicAdmin = admin(b4.session, controller);
  const results = await topicAdmin.createTopics(
    Object.entries(topics).map(([name, parts]) =>
      newTopic(
        name,
        -1,
        -1,
        parts.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
      ),
    ),
    false,
  );
  for (const r of results) assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
  return { cluster, channel, controller };
}

/** The controller the test's setup started: alter() defaults to its view of the broker's epoch. */
let current: Controller | null = null;

function alter(
  brokerId: number,
  partition: AlterPartitionRequestPartitionData,
  brokerEpoch: bigint | null = null,
  topic = 't',
) {
  const epoch = brokerEpoch ?? (current === null ? -1n : liveEpoch(current, brokerId));
  return {
    brokerId,
    brokerEpoch: epoch,
    topics: [{ topicName: topic, topicId: '', partitions: [partition] }],
  };
}

test('AlterPartition from the leader changes the ISR, bumps the partition epoch but not the leader epoch', async () => {
  const { cluster, channel, controller } = await setup({ t: [[1, 2, 3]] });
  channel.clear();
  const answer = await controller.alterPartition(alter(1, isrChange(0, 0, 0, [1, 2])), 2);
  assert.equal(answer.errorCode, ErrorCode.NONE);
  assert.deepEqual(answer.topics[0]?.partitions[0], {
    partitionIndex: 0,
    errorCode: ErrorCode.NONE,
    leaderId: 1,
    leaderEpoch: 0,
    isr: [1, 2],
    leaderRecoveryState: 0,
    partitionEpoch: 1,
  });
  const state = await cluster.partitionState('t', 0);
  assert.deepEqual(state?.isr, [1, 2]);
  assert.equal(state?.version, 1);
  await settle(controller);
  const metadata = channel.of('updateMetadata', 3).at(-1)?.request;
  assert.deepEqual(metadata?.topicStates[0]?.partitionStates[0]?.isr, [1, 2]);
  assert.equal(metadata?.topicStates[0]?.partitionStates[0]?.zkVersion, 1);

  // The same request again (a retry) is answered with the current state.
  const retry = await controller.alterPartition(alter(1, isrChange(0, 0, 0, [1, 2])), 2);
  assert.equal(retry.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.equal(retry.topics[0]?.partitions[0]?.partitionEpoch, 1);
  // A different change based on the old partition epoch is refused.
  const stale = await controller.alterPartition(alter(1, isrChange(0, 0, 0, [1])), 2);
  assert.equal(stale.topics[0]?.partitions[0]?.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
  // Growing back on the current epoch works.
  const grow = await controller.alterPartition(alter(1, isrChange(0, 0, 1, [1, 2, 3])), 2);
  assert.equal(grow.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.equal(grow.topics[0]?.partitions[0]?.partitionEpoch, 2);
});

test('AlterPartition refusals: not the leader, old or future leader epoch, ineligible replicas, stale broker epoch', async () => {
  const { cluster, controller } = await setup({ t: [[1, 2, 3]] });
  const code = async (
    brokerId: number,
    p: AlterPartitionRequestPartitionData,
    epoch: bigint | null = null,
  ) => {
    const answer = await controller.alterPartition(alter(brokerId, p, epoch), 2);
    return answer.errorCode !== ErrorCode.NONE
      ? answer.errorCode
      : answer.topics[0]!.partitions[0]!.errorCode;
  };
  assert.equal(await code(2, isrChange(0, 0, 0, [2, 3])), ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(await code(1, isrChange(0, 5, 0, [1])), ErrorCode.NOT_CONTROLLER);
  assert.equal(
    await code(1, isrChange(0, 0, 0, [1, 4])),
    ErrorCode.INELIGIBLE_REPLICA,
    'broker 4 is no replica',
  );
  assert.equal(
    await code(1, isrChange(0, 0, 0, [2, 3])),
    ErrorCode.INVALID_REQUEST,
    'the leader must stay in the ISR',
  );
  assert.equal(await code(1, isrChange(0, 0, 0, [1]), 12345n), ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(
    await code(1, isrChange(0, 0, 0, [1]), -1n),
    ErrorCode.STALE_BROKER_EPOCH,
    'no wildcard epoch',
  );
  assert.equal(
    await code(9, isrChange(0, 0, 0, [1])),
    ErrorCode.STALE_BROKER_EPOCH,
    'an unregistered broker',
  );
  const unknown = await controller.alterPartition(alter(1, isrChange(7, 0, 0, [1])), 2);
  assert.equal(unknown.topics[0]?.partitions[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  // A dead follower cannot be added back.
  cluster.killBroker(3);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.deepEqual(state?.isr, [1, 2]);
  assert.equal(state?.leaderEpoch, 1);
  assert.equal(await code(1, isrChange(0, 1, state!.version, [1, 2, 3])), ErrorCode.INELIGIBLE_REPLICA);
  // The controller bumped the leader epoch when it removed broker 3: requests from epoch 0 are fenced.
  assert.equal(await code(1, isrChange(0, 0, state!.version, [1])), ErrorCode.FENCED_LEADER_EPOCH);
  // With broker epochs (AlterPartition v3), the epoch of each new ISR member must be its current one.
  assert.equal(await code(1, isrChange(0, 1, state!.version, [1])), ErrorCode.NONE);
  const epoch2 = BigInt(controller.context!.liveBrokers.get(2 as never)!.epoch);
  const withEpochs = (e: bigint) => ({
    ...isrChange(0, 1, state!.version + 1, []),
    newIsrWithEpochs: [
      { brokerId: 1, brokerEpoch: -1n },
      { brokerId: 2, brokerEpoch: e },
    ],
  });
  assert.equal(await code(1, withEpochs(epoch2 - 1n)), ErrorCode.INELIGIBLE_REPLICA);
  assert.equal(await code(1, withEpochs(epoch2)), ErrorCode.NONE);
});

test('controlled shutdown moves leadership away, takes the broker out of ISRs, and reports what it still leads', async () => {
  const { cluster, channel, controller } = await setup({
    moved: [[1, 2, 3]],
    follower: [[2, 1]],
    single: [[1]],
    stuck: [[1, 3]],
  });
  // stuck: broker 3 falls out of the ISR, so leadership cannot move.
  await controller.alterPartition(alter(1, isrChange(0, 0, 0, [1]), null, 'stuck'), 2);
  channel.clear();
  const epoch1 = BigInt(controller.context!.liveBrokers.get(1 as never)!.epoch);
  const stale = await controller.controlledShutdown({ brokerId: 1, brokerEpoch: epoch1 - 1n });
  assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
  const answer = await controller.controlledShutdown({ brokerId: 1, brokerEpoch: epoch1 });
  assert.equal(answer.errorCode, ErrorCode.NONE);
  assert.deepEqual(answer.remainingPartitions, [{ topicName: 'stuck', partitionIndex: 0 }]);
  const moved = await cluster.partitionState('moved', 0);
  assert.equal(moved?.leader, 2);
  assert.deepEqual(moved?.isr, [2, 3]);
  assert.equal(moved?.leaderEpoch, 1);
  const follower = await cluster.partitionState('follower', 0);
  assert.equal(follower?.leader, 2);
  assert.deepEqual(follower?.isr, [2]);
  assert.equal((await cluster.partitionState('single', 0))?.leader, 1, 'a single replica stays where it is');
  await settle(controller);
  assert.equal(channel.lastLeaderAndIsr(3, 'moved', 0)?.leader, 2);
  const stops = channel.of('stopReplica', 1);
  assert.equal(stops.length, 1);
  assert.equal(stops[0]!.request.deletePartitions, false);
  assert.deepEqual(
    stops[0]!.request.topicStates.map((t) => t.topicName),
    ['follower'],
  );
  // While shutting down, the broker is not elected anywhere: broker 2 dies and 'moved' goes to 3, not 1.
  cluster.killBroker(2);
  await settle(controller);
  assert.equal((await cluster.partitionState('moved', 0))?.leader, 3);
});

test('ControlledShutdown refuses an older broker epoch only, as Kafka: a newer one is a registration not yet seen', async () => {
  const { cluster, controller } = await setup({ t: [[1, 2]] });
  const epoch1 = BigInt(controller.context!.liveBrokers.get(1 as never)!.epoch);
  const older = await controller.controlledShutdown({ brokerId: 1, brokerEpoch: epoch1 - 1n });
  assert.equal(older.errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 1, 'nothing moved for the stale request');
  // The broker registered again (a new session) and asks before the controller processed the change.
  const newer = await controller.controlledShutdown({ brokerId: 1, brokerEpoch: epoch1 + 7n });
  assert.equal(newer.errorCode, ErrorCode.NONE);
  assert.deepEqual(newer.remainingPartitions, []);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 2);
});

test('preferred leader election moves leadership back to the first replica once it is in the ISR', async () => {
  const { cluster, controller } = await setup({ t: [[1, 2]] });
  cluster.killBroker(1);
  await settle(controller);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 2);
  await cluster.addBroker(1);
  await settle(controller);
  const elect = (electionType = 0, partitions = [0]) =>
    controller.electLeaders({ electionType, topicPartitions: [{ topic: 't', partitions }], timeoutMs: 1000 });
  const notYet = await elect();
  assert.equal(
    notYet.replicaElectionResults[0]?.partitionResult[0]?.errorCode,
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
  );
  const state = await cluster.partitionState('t', 0);
  const grown = await controller.alterPartition(
    alter(2, isrChange(0, state!.leaderEpoch, state!.version, [2, 1])),
    2,
  );
  assert.equal(grown.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const done = await elect();
  assert.equal(done.replicaElectionResults[0]?.partitionResult[0]?.errorCode, ErrorCode.NONE);
  const after1 = await cluster.partitionState('t', 0);
  assert.equal(after1?.leader, 1);
  assert.equal(after1?.leaderEpoch, state!.leaderEpoch + 1);
  const again = await elect();
  assert.equal(again.replicaElectionResults[0]?.partitionResult[0]?.errorCode, ErrorCode.ELECTION_NOT_NEEDED);
  const unclean = await elect(1);
  assert.equal(
    unclean.replicaElectionResults[0]?.partitionResult[0]?.errorCode,
    ErrorCode.ELECTION_NOT_NEEDED,
  );
  const unknown = await elect(0, [3]);
  assert.equal(
    unknown.replicaElectionResults[0]?.partitionResult[0]?.errorCode,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  );
});

test('ElectLeaders for all partitions leaves out those whose election was not needed, as Kafka', async () => {
  const { cluster, controller } = await setup({
    moved: [[1, 2]],
    settled: [
      [2, 1],
      [2, 3],
    ],
    stuck: [[3, 2]],
  });
  // moved: its preferred leader 1 comes back and rejoins the ISR; stuck: its preferred leader 3 stays out of it.
  cluster.killBroker(1);
  cluster.killBroker(3);
  await settle(controller);
  await cluster.addBroker(1);
  await cluster.addBroker(3);
  await settle(controller);
  const state = await cluster.partitionState('moved', 0);
  assert.equal(state?.leader, 2);
  const grown = await controller.alterPartition(
    alter(2, isrChange(0, state!.leaderEpoch, state!.version, [2, 1]), null, 'moved'),
    2,
  );
  assert.equal(grown.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const results = (answer: Awaited<ReturnType<typeof controller.electLeaders>>) =>
    answer.replicaElectionResults.flatMap((t) =>
      t.partitionResult.map((p) => `${t.topic}-${p.partitionId}:${p.errorCode}`),
    );
  const all = await controller.electLeaders({ electionType: 0, topicPartitions: null, timeoutMs: 1000 });
  assert.equal(all.errorCode, ErrorCode.NONE);
  // settled-0 and settled-1 are led by their preferred replica: not listed (admin clients' all() would fail on
  // ELECTION_NOT_NEEDED); a failed election is.
  assert.deepEqual(results(all).sort(), [
    `moved-0:${ErrorCode.NONE}`,
    `stuck-0:${ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE}`,
  ]);
  assert.equal((await cluster.partitionState('moved', 0))?.leader, 1);
  // Every partition has a live leader: an unclean election for all of them lists none.
  const unclean = await controller.electLeaders({ electionType: 1, topicPartitions: null, timeoutMs: 1000 });
  assert.deepEqual(unclean.replicaElectionResults, []);
  // Named partitions are all answered, ELECTION_NOT_NEEDED included.
  const named = await controller.electLeaders({
    electionType: 0,
    topicPartitions: [{ topic: 'settled', partitions: [0] }],
    timeoutMs: 1000,
  });
  assert.deepEqual(results(named), [`settled-0:${ErrorCode.ELECTION_NOT_NEEDED}`]);
});

test('unclean ElectLeaders gives a leaderless partition an out-of-sync leader', async () => {
  const { cluster, controller } = await setup({ t: [[1, 2]] });
  await controller.alterPartition(alter(1, isrChange(0, 0, 0, [1])), 2);
  cluster.killBroker(1);
  await settle(controller);
  assert.equal((await cluster.partitionState('t', 0))?.leader, -1);
  const answer = await controller.electLeaders({
    electionType: 1,
    topicPartitions: [{ topic: 't', partitions: [0] }],
    timeoutMs: 1000,
  });
  assert.equal(answer.replicaElectionResults[0]?.partitionResult[0]?.errorCode, ErrorCode.NONE);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 2);
  assert.deepEqual(state?.isr, [2]);
});

test('requests to a broker that is not the controller answer NOT_CONTROLLER', async () => {
  const { cluster } = await setup({ t: [[1]] });
  const b1 = cluster.brokers.get(1)!;
  const other = startController(b1.session, 1, new RecordingChannel());
  await other.start();
  assert.equal(other.isActive, false);
  assert.equal(other.activeControllerId, 4);
  assert.equal(
    (await other.alterPartition(alter(1, isrChange(0, 0, 0, [1])), 2)).errorCode,
    ErrorCode.NOT_CONTROLLER,
  );
  assert.equal(
    (await other.controlledShutdown({ brokerId: 1, brokerEpoch: -1n })).errorCode,
    ErrorCode.NOT_CONTROLLER,
  );
  const elect = await other.electLeaders({ electionType: 0, topicPartitions: null, timeoutMs: 1 });
  assert.equal(elect.errorCode, ErrorCode.NOT_CONTROLLER);
  await other.stop();
});
