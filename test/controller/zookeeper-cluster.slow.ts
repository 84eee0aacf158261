// The controller over a real ZooKeeper (Debian's package): three brokers with their own sessions, each running
// a controller. Proves that election, failover and leader election work with ZooKeeper's real watch timing.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import { Controller } from '../../src/controller/controller.js';
import { seededRandom } from '../../src/controller/random.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { TopicAdmin } from '../../src/controller/topic-admin.js';
import { decodePartitionState, partitionStatePath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { untilValue } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { DeafSession, liveEpoch, RecordingChannel, registration } from './helpers.js';

let server: TestZooKeeper;
const sessions: CoordinationStore[] = [];
before(async () => {
  server = await startTestZooKeeper();
});
after(async () => {
  for (const s of sessions) await s.close();
  await server?.stop();
});

async function session(): Promise<CoordinationStore> {
  const opened = await connectZooKeeper({
    connect: server.connect,
    sessionTimeoutMs: 4000,
    connectionTimeoutMs: 10_000,
  });
  assert.ok(opened.ok, 'connected to ZooKeeper');
  sessions.push(opened.value);
  return opened.value;
}

test('three brokers on ZooKeeper: one controller, leaders for a new topic, failover when the controller dies', async () => {
  const brokers = new Map<
    number,
    { session: CoordinationStore; controller: Controller; channel: RecordingChannel }
  >();
  for (const id of [1, 2, 3]) {
    const s = await session();
    const registered = await registerBroker(s, registration(id), seededRandom(id));
    assert.ok(registered.ok, registered.ok ? '' : registered.reason);
    const channel = new RecordingChannel();
    const controller = new Controller({
      brokerId: id as BrokerId,
      store: s,
      channel,
      random: seededRandom(id),
    });
    brokers.set(id, { session: s, controller, channel });
  }
  await Promise.all([...brokers.values()].map((b) => b.controller.start()));
  const active = [...brokers.values()].filter((b) => b.controller.isActive);
  assert.equal(active.length, 1, 'exactly one controller');
  const first = active[0]!.controller;
  const firstId = first.activeControllerId;
  for (const b of brokers.values()) assert.equal(b.controller.activeControllerId, firstId);

  const observer = await session();
  const topicAdmin = new TopicAdmin({
    store: observer,
    defaults: { numPartitions: 1, replicationFactor: 3, deleteTopicEnable: true },
    random: seededRandom(9),
  });
  const [created] = await topicAdmin.createTopics(
    [
      {
        name: 'zk',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [{ partitionIndex: 0, brokerIds: [firstId, ...[1, 2, 3].filter((b) => b !== firstId)] }],
        configs: {},
      },
    ],
    false,
  );
  assert.equal(created!.errorCode, 0);
  const readState = async () => {
    const node = await observer.get(partitionStatePath('zk', 0 as never));
    if (!node.ok) return null;
    const decoded = decodePartitionState(node.value.data);
    return decoded.ok ? decoded.value : null;
  };
  const initial = await untilValue('the partition state', readState);
  assert.equal(initial.leader, firstId);
  assert.equal(initial.isr.length, 3);

  // The controller (also the leader) dies: its session ends and its ephemeral nodes go.
  const dead = brokers.get(firstId)!;
  await dead.controller.stop();
  await dead.session.close();
  brokers.delete(firstId);
  const successor = await untilValue('a new controller', async () => {
    const b = [...brokers.values()].find((x) => x.controller.isActive);
    return b ?? null;
  });
  assert.equal(successor.controller.epoch, 2);
  const moved = await untilValue('a new leader', async () => {
    const s = await readState();
    return s !== null && s.leader !== firstId ? s : null;
  });
  assert.notEqual(moved.leader, -1);
  assert.equal(moved.leaderEpoch, 1);
  assert.deepEqual(moved.isr.includes(firstId as BrokerId), false);
  assert.equal(moved.controllerEpoch, 2);
  await untilValue('LeaderAndIsr to the new leader', async () =>
    successor.channel.lastLeaderAndIsr(moved.leader, 'zk', 0)?.leader === moved.leader ? true : null,
  );
  for (const b of brokers.values()) await b.controller.stop();
});

test('on ZooKeeper, a deaf controller is fenced by the epoch check, a dead follower leaves the ISR, and a reassignment completes', async () => {
  const root = await session();
  // A fresh tree for this test: the first test left its topic and controller epoch behind.
  const epochBefore = await root.get('/controller_epoch');
  const s1 = await session();
  const s2 = await session();
  const s3 = await session();
  for (const [id, s] of [
    [4, s1],
    [5, s2],
    [6, s3],
  ] as const) {
    assert.ok((await registerBroker(s, registration(id), seededRandom(id))).ok);
  }
  const zombie = new Controller({
    brokerId: 4 as BrokerId,
    store: new DeafSession(s1),
    channel: new RecordingChannel(),
  });
  await zombie.start();
  const channel = new RecordingChannel();
  const successor = new Controller({ brokerId: 5 as BrokerId, store: s2, channel });
  await successor.start();
  // The first test stopped its controllers (deleting /controller), so the zombie, started first, won.
  assert.equal(zombie.isActive, true);
  assert.equal(successor.activeControllerId, 4);
  assert.ok(epochBefore.ok);
  const topicAdmin = new TopicAdmin({
    store: root,
    defaults: { numPartitions: 1, replicationFactor: 3, deleteTopicEnable: true },
    random: seededRandom(5),
  });
  await topicAdmin.createTopics(
    [
      {
        name: 'fenced',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [{ partitionIndex: 0, brokerIds: [4, 5, 6] }],
        configs: {},
      },
    ],
    false,
  );
  const readState = async () => {
    const node = await root.get(partitionStatePath('fenced', 0 as never));
    if (!node.ok) return null;
    const decoded = decodePartitionState(node.value.data);
    return decoded.ok ? { ...decoded.value, version: node.value.stat.version } : null;
  };
  await zombie.sync(['fenced']);
  await untilValue('the state', readState);
  // Take /controller away from the zombie without it hearing of it; broker 5 wins the next election.
  await root.delete('/controller', -1);
  await untilValue('broker 5 to take over', async () => (successor.isActive ? true : null));
  assert.equal(zombie.isActive, true);
  const state = await untilValue('the state', readState);
  const answer = await zombie.alterPartition(
    {
      brokerId: 4,
      brokerEpoch: liveEpoch(zombie, 4),
      topics: [
        {
          topicName: 'fenced',
          topicId: '',
          partitions: [
            {
              partitionIndex: 0,
              leaderEpoch: state.leaderEpoch,
              newIsr: [4],
              newIsrWithEpochs: [],
              leaderRecoveryState: 0,
              partitionEpoch: state.version,
            },
          ],
        },
      ],
    },
    2,
  );
  assert.equal(answer.errorCode, ErrorCode.NOT_CONTROLLER);
  assert.deepEqual((await readState())?.isr, state.isr, 'the fenced write changed nothing in ZooKeeper');
  await untilValue('the zombie to resign', async () => (zombie.isActive ? null : true));
  assert.equal(successor.isActive, true);

  // Broker 6 dies: it leaves the ISR.
  await s3.close();
  const shrunk = await untilValue('ISR without broker 6', async () => {
    const s = await readState();
    return s !== null && !s.isr.includes(6 as BrokerId) ? s : null;
  });
  assert.ok(shrunk.leader === 4 || shrunk.leader === 5);

  // Move the partition to [5]: already in sync, so the reassignment finishes at once.
  const moved = await successor.alterPartitionReassignments({
    timeoutMs: 5000,
    topics: [{ name: 'fenced', partitions: [{ partitionIndex: 0, replicas: [5] }] }],
  });
  assert.equal(moved.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  const final = await untilValue('leader 5 alone', async () => {
    const s = await readState();
    return s !== null && s.leader === 5 && s.isr.length === 1 ? s : null;
  });
  assert.deepEqual(final.isr, [5]);
  await zombie.stop();
  await successor.stop();
});
