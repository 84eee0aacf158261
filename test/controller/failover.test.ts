import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  CONTROLLER_EPOCH_PATH,
  CONTROLLER_PATH,
  decodeControllerEpoch,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  admin,
  DeafSession,
  isrChange,
  liveEpoch,
  newTopic,
  RecordingChannel,
  settle,
  startController,
  TestCluster,
} from './helpers.js';

async function controllerEpochInStore(cluster: TestCluster): Promise<number> {
  const node = await cluster.observer.get(CONTROLLER_EPOCH_PATH);
  assert.ok(node.ok);
  const decoded = decodeControllerEpoch(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value;
}

test('when the controller session ends, the other broker takes over with a higher epoch and re-elects leaders', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const b2 = await cluster.addBroker(2);
  const channelA = new RecordingChannel();
  const channelB = new RecordingChannel();
  const a = startController(b1.session, 1, channelA);
  const b = startController(b2.session, 2, channelB);
  await a.start();
  await b.start();
  assert.equal(a.isActive, true);
  assert.equal(b.isActive, false);
  assert.equal(b.activeControllerId, 1);
  assert.equal(await controllerEpochInStore(cluster), 1);
  await admin(b1.session, a).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [1, 2] }])],
    false,
  );
  assert.equal((await cluster.partitionState('t', 0))?.leader, 1);

  cluster.killBroker(1);
  await settle(b);
  await settle(a);
  assert.equal(a.isActive, false, 'the old controller resigned when its session ended');
  assert.equal(b.isActive, true);
  assert.equal(b.epoch, 2);
  assert.equal(b.activeControllerId, 2);
  assert.equal(await controllerEpochInStore(cluster), 2);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 2);
  assert.equal(state?.controllerEpoch, 2);
  const sent = channelB.lastLeaderAndIsr(2, 't', 0);
  assert.equal(sent?.leader, 2);
  const request = channelB.of('leaderAndIsr', 2).at(-1)!.request;
  assert.equal(request.controllerEpoch, 2);
  assert.equal(request.controllerId, 2);
});

test('a controller replaced without noticing is fenced: its first write fails on the epoch check and it resigns', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const b2 = await cluster.addBroker(2);
  const zombie = startController(new DeafSession(b1.session), 1, new RecordingChannel());
  const successor = startController(b2.session, 2, new RecordingChannel());
  await zombie.start();
  await successor.start();
  await admin(b2.session).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [1, 2] }])],
    false,
  );
  await zombie.sync(['t']);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 1);

  // The controller node goes (as when a session expires) and the other broker wins the next election.
  const node = await cluster.observer.exists(CONTROLLER_PATH);
  assert.ok(node.ok && node.value !== null);
  await cluster.observer.delete(CONTROLLER_PATH, -1);
  await settle(successor);
  assert.equal(successor.isActive, true);
  assert.equal(successor.epoch, 2);
  assert.equal(zombie.isActive, true, 'the deaf controller still believes it leads');

  const before = await cluster.partitionState('t', 0);
  const answer = await zombie.alterPartition(
    {
      brokerId: 1,
      brokerEpoch: liveEpoch(zombie, 1),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [1])] }],
    },
    2,
  );
  assert.equal(answer.errorCode, ErrorCode.NOT_CONTROLLER);
  assert.deepEqual(await cluster.partitionState('t', 0), before, 'the fenced write changed nothing');
  await settle(zombie);
  assert.equal(zombie.isActive, false);
  assert.equal(zombie.activeControllerId, 2);

  // The same request to the real controller succeeds.
  const real = await successor.alterPartition(
    {
      brokerId: 1,
      brokerEpoch: liveEpoch(successor, 1),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [1])] }],
    },
    2,
  );
  assert.equal(real.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual((await cluster.partitionState('t', 0))?.isr, [1]);
});

test('a controller that stops deletes /controller so that another broker takes over at once', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const b2 = await cluster.addBroker(2);
  const a = startController(b1.session, 1, new RecordingChannel());
  const b = startController(b2.session, 2, new RecordingChannel());
  await a.start();
  await b.start();
  await a.stop();
  await settle(b);
  assert.equal(b.isActive, true);
  assert.equal(b.epoch, 2);
});

test('after its session expired, restart() with a new session runs for election again', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const channel = new RecordingChannel();
  const a = startController(b1.session, 1, channel);
  await a.start();
  cluster.killBroker(1);
  await settle(a);
  assert.equal(a.isActive, false);
  const again = await cluster.addBroker(1);
  a.restart(again.session);
  await settle(a);
  assert.equal(a.isActive, true);
  assert.equal(a.epoch, 2);
});
