// The controller over a flaky link to its store: a write whose reply is lost (ZooKeeper committed it, the
// connection dropped first, the client answers CONNECTIONLOSS), a write refused while disconnected, a read that
// fails. Kafka's controller retries such calls until the session is connected again (KafkaZkClient's
// retryRequestsUntilConnected), so each election it starts is eventually written and sent to the brokers.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { encodeEntityConfig, topicConfigPath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  admin,
  FaultySession,
  isrChange,
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
      brokerEpoch: -1n,
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
