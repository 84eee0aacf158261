import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { Controller } from '../../src/controller/controller.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { admin, isrChange, liveEpoch, newTopic, RecordingChannel, settle, TestCluster } from './helpers.js';

test('automatic preferred leader election moves leaders back once the preferred replica is in sync', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  await cluster.addBroker(1);
  await cluster.addBroker(2);
  const b3 = await cluster.addBroker(3);
  const timers: { run: () => void; delayMs: number }[] = [];
  const controller = new Controller({
    brokerId: 3 as BrokerId,
    store: b3.session,
    channel: new RecordingChannel(),
    autoLeaderRebalance: {
      imbalancePerBrokerPercentage: 10,
      checkIntervalMs: 300_000,
      schedule: (run, delayMs) => {
        const timer = { run, delayMs };
        timers.push(timer);
        return () => timers.splice(timers.indexOf(timer), 1);
      },
    },
  });
  await controller.start();
  assert.equal(timers.length, 1);
  assert.equal(timers[0]!.delayMs, 300_000);
  const assignments = [
    [1, 2],
    [1, 2],
    [2, 1],
    [2, 1],
  ].map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds }));
  await admin(b3.session, controller).createTopics([newTopic('t', -1, -1, assignments)], false);
  cluster.killBroker(1);
  await settle(controller);
  await cluster.addBroker(1);
  await settle(controller);
  for (const p of [0, 1]) assert.equal((await cluster.partitionState('t', p))?.leader, 2);
  assert.deepEqual(await controller.checkLeaderBalance(), [], 'broker 1 is not in sync yet');
  for (const p of [0, 1]) {
    const state = await cluster.partitionState('t', p);
    const answer = await controller.alterPartition(
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
    assert.equal(answer.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  }
  // The timer fires: the check runs in the controller's queue and schedules the next one.
  timers.shift()!.run();
  await settle(controller);
  for (const p of [0, 1]) assert.equal((await cluster.partitionState('t', p))?.leader, 1);
  for (const p of [2, 3]) assert.equal((await cluster.partitionState('t', p))?.leader, 2);
  assert.equal(timers.length, 1, 'the next check is scheduled');
  await controller.stop();
  assert.equal(timers.length, 0, 'stop cancels the timer');
});
