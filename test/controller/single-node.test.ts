import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { admin, newTopic, RecordingChannel, startController, TestCluster } from './helpers.js';

test('on one node, a created topic gets broker 1 as leader and the broker hears of it before createTopics resolves', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const channel = new RecordingChannel();
  const controller = startController(b1.session, 1, channel);
  await controller.start();
  assert.equal(controller.isActive, true);
  assert.equal(controller.epoch, 1);
  const results = await admin(b1.session, controller).createTopics([newTopic('orders', 3)], false);
  assert.equal(results[0]!.errorCode, ErrorCode.NONE);
  assert.equal(results[0]!.numPartitions, 3);
  for (let p = 0; p < 3; p++) {
    const state = await cluster.partitionState('orders', p);
    assert.deepEqual(state && { leader: state.leader, isr: state.isr, epoch: state.leaderEpoch }, {
      leader: 1,
      isr: [1],
      epoch: 0,
    });
    const sent = channel.lastLeaderAndIsr(1, 'orders', p);
    assert.equal(sent?.leader, 1);
    assert.equal(sent?.isNew, true);
  }
  const metadata = channel.of('updateMetadata', 1);
  const last = metadata.at(-1)!.request;
  assert.equal(last.topicStates[0]?.topicName, 'orders');
  assert.equal(last.topicStates[0]?.topicId, results[0]!.topicId);
  assert.deepEqual(
    last.liveBrokers.map((b) => b.id),
    [1],
  );
  await controller.stop();
});

test('on one node, deleteTopics resolves after the deletion is complete, so the name can be created again at once', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const channel = new RecordingChannel();
  const controller = startController(b1.session, 1, channel);
  await controller.start();
  const topicAdmin = admin(b1.session, controller);
  const [first] = await topicAdmin.createTopics([newTopic('again', 2)], false);
  const [deleted] = await topicAdmin.deleteTopics(['again']);
  assert.equal(deleted!.errorCode, ErrorCode.NONE);
  assert.equal(controller.context?.topics.has('again'), false);
  assert.equal(channel.of('stopReplica', 1).length, 1);
  const [second] = await topicAdmin.createTopics([newTopic('again', 1)], false);
  assert.equal(second!.errorCode, ErrorCode.NONE);
  assert.notEqual(second!.topicId, first!.topicId);
  assert.equal(channel.lastLeaderAndIsr(1, 'again', 0)?.leader, 1);
  await controller.stop();
});

test('a single node that restarts on the same data finds its topics and sends them to the broker again', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const first = startController(b1.session, 1, new RecordingChannel());
  await first.start();
  await admin(b1.session, first).createTopics([newTopic('kept', 2)], false);
  await first.stop();
  cluster.killBroker(1);
  const again = await cluster.addBroker(1);
  const channel = new RecordingChannel();
  const second = startController(again.session, 1, channel);
  await second.start();
  assert.equal(second.epoch, 2);
  const sent = channel.lastLeaderAndIsr(1, 'kept', 1);
  assert.equal(sent?.leader, 1);
  assert.equal(sent?.isNew, false);
  assert.equal(sent?.leaderEpoch, 0, 'the same broker leads again: nothing changed, so no new epoch');
  await second.stop();
});
