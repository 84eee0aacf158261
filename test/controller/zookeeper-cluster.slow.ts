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
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { RecordingChannel, registration } from './helpers.js';

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

async function until<T>(what: string, read: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
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
  const initial = await until('the partition state', readState);
  assert.equal(initial.leader, firstId);
  assert.equal(initial.isr.length, 3);

  // The controller (also the leader) dies: its session ends and its ephemeral nodes go.
  const dead = brokers.get(firstId)!;
  await dead.controller.stop();
  await dead.session.close();
  brokers.delete(firstId);
  const successor = await until('a new controller', async () => {
    const b = [...brokers.values()].find((x) => x.controller.isActive);
    return b ?? null;
  });
  assert.equal(successor.controller.epoch, 2);
  const moved = await until('a new leader', async () => {
    const s = await readState();
    return s !== null && s.leader !== firstId ? s : null;
  });
  assert.notEqual(moved.leader, -1);
  assert.equal(moved.leaderEpoch, 1);
  assert.deepEqual(moved.isr.includes(firstId as BrokerId), false);
  assert.equal(moved.controllerEpoch, 2);
  await until('LeaderAndIsr to the new leader', async () =>
    successor.channel.lastLeaderAndIsr(moved.leader, 'zk', 0)?.leader === moved.leader ? true : null,
  );
  for (const b of brokers.values()) await b.controller.stop();
});
