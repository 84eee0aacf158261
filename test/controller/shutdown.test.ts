// A controller whose broker has begun to stop: it never wins an election (a broker that took over while going
// away would fail over and send LeaderAndIsr to brokers that are stopping too), while an active one goes on
// serving until stop().

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { RecordingChannel, settle, startController, TestCluster } from './helpers.js';

test('a broker that began to stop does not take over when the controller goes', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const b2 = await cluster.addBroker(2);
  const channelB = new RecordingChannel();
  const a = startController(b1.session, 1, new RecordingChannel());
  const b = startController(b2.session, 2, channelB);
  await a.start();
  await b.start();
  assert.equal(b.activeControllerId, 1);

  b.beginShutdown();
  await a.stop();
  await settle(b);
  assert.equal(b.isActive, false, 'the stopping broker did not become the controller');
  assert.equal(b.activeControllerId, -1);
  assert.deepEqual(channelB.sent, [], 'and sent nothing');
  const node = await cluster.observer.exists('/controller');
  assert.ok(node.ok && node.value === null, 'nobody holds /controller: a broker that stays takes it');
  await b.stop();
});

test('a session renewed while stopping does not make the broker controller again', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const a = startController(b1.session, 1, new RecordingChannel());
  await a.start();
  assert.equal(a.isActive, true);
  a.beginShutdown();
  cluster.killBroker(1);
  await settle(a);
  const again = await cluster.addBroker(1);
  a.restart(again.session);
  await settle(a);
  assert.equal(a.isActive, false);
  await a.stop();
});

test('an active controller that began to stop still answers controlled shutdowns until stop()', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  const a = startController(b1.session, 1, new RecordingChannel());
  await a.start();
  a.beginShutdown();
  const answer = await a.controlledShutdown({ brokerId: 2, brokerEpoch: -1n });
  assert.equal(answer.errorCode, ErrorCode.NONE);
  assert.equal(a.isActive, true);
  await a.stop();
  assert.equal(a.isActive, false);
});
