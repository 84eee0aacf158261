// Self-healing across a controller change: the failure time, the moves in progress and the throttles survive in
// the store (/brook_self_healing), so a new controller neither restarts the timeout from zero nor forgets a move.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import type { Controller } from '../../src/controller/controller.js';
import { decodeSelfHealingState, SELF_HEALING_STATE_PATH } from '../../src/controller/self-healing-state.js';
import { topicConfigPath } from '../../src/controller/zk-layout/index.js';
import { settle, type TestCluster } from './helpers.js';
import {
  createTopicT,
  entityConfig,
  fourBrokers,
  healingController,
  replicas,
  reportIsr,
  TIMEOUT_MS,
} from './self-healing-setup.js';

/** Brokers 1..4 (racks a, b, c, c); broker 1's controller is active, broker 2's waits; topic t on the given replicas. */
async function setup(assignments: number[][]) {
  const cluster = await fourBrokers();
  const first = healingController(cluster, 1);
  await first.controller.start();
  const second = healingController(cluster, 2);
  await second.controller.start();
  assert.ok(first.controller.isActive && !second.controller.isActive);
  await createTopicT(cluster, first.controller, assignments);
  return { cluster, first, second };
}

/** As setup, with no second controller: one started later finds no controller ran in between. */
async function setupOne(assignments: number[][]) {
  const cluster = await fourBrokers();
  const first = healingController(cluster, 1);
  await first.controller.start();
  await createTopicT(cluster, first.controller, assignments);
  return { cluster, first };
}

/** The first controller stops (resigns, deletes /controller); the second takes over. */
async function failOver(first: Controller, second: Controller): Promise<void> {
  await first.stop();
  for (let i = 0; i < 50 && !second.isActive; i++) await settle(second);
  assert.ok(second.isActive, 'the second controller took over');
  await settle(second);
}

const topicConfig = (cluster: TestCluster) => entityConfig(cluster, topicConfigPath('t'));

async function persisted(cluster: TestCluster) {
  const node = await cluster.observer.get(SELF_HEALING_STATE_PATH);
  assert.ok(node.ok, 'the state znode exists');
  const decoded = decodeSelfHealingState(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value;
}

test('a new controller waits only for what is left of the timeout of a broker an earlier one saw go', async () => {
  const { cluster, first, second } = await setup([[1, 2, 4]]);
  cluster.killBroker(4);
  await settle(first.controller);
  assert.equal(first.timers.length, 1);
  const failedAtMs = cluster.clock.nowMs();
  assert.equal((await persisted(cluster)).brokers.get(4 as BrokerId)?.failedAtMs, failedAtMs);

  cluster.clock.advance(40_000);
  await failOver(first.controller, second.controller);
  assert.deepEqual(
    second.timers.map((t) => t.delayMs),
    [TIMEOUT_MS - 40_000],
    'the timeout runs on from where the first controller was, not from zero',
  );
  const [status] = second.controller.selfHealingStatus.failedBrokers;
  assert.equal(status?.brokerId, 4);
  assert.equal(status?.failedAtMs, failedAtMs);
  assert.equal(status?.state, 'waiting');

  // The rest of the timeout passes: the replica moves.
  second.timers.shift()!.run();
  await settle(second.controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3], 'the replica moves');
});

test('moves started by an earlier controller are cancelled by the new one when the broker returns, and its throttles go', async () => {
  const { cluster, first, second } = await setup([
    [1, 2, 4],
    [4, 1, 2],
  ]);
  cluster.killBroker(4);
  await settle(first.controller);
  cluster.clock.advance(TIMEOUT_MS);
  first.timers.shift()!.run();
  await settle(first.controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3]);
  assert.deepEqual((await replicas(cluster, 1)).addingReplicas, [3]);
  assert.equal((await topicConfig(cluster))['follower.replication.throttled.replicas'], '0:3,1:3');
  const state = await persisted(cluster);
  assert.deepEqual(
    state.brokers.get(4 as BrokerId)?.moving.map((m) => [m.tp.partition, m.from, m.to]),
    [
      [0, [1, 2, 4], [1, 2, 3]],
      [1, [4, 1, 2], [3, 1, 2]],
    ],
  );

  await failOver(first.controller, second.controller);
  assert.deepEqual(
    second.controller.selfHealingStatus.failedBrokers.map((b) => [b.brokerId, b.state, b.moving]),
    [[4, 'healing', 2]],
    'the new controller knows the moves as self-healing’s',
  );
  assert.equal(second.timers.length, 0, 'no second round of moves is planned');

  await cluster.addBroker(4, 'c');
  await settle(second.controller);
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [1, 2, 4],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual(await replicas(cluster, 1), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.equal(second.controller.selfHealingStatus.movesCancelled, 2);
  assert.deepEqual(await topicConfig(cluster), {}, 'the first controller’s throttle entries are removed');
  const after = await persisted(cluster);
  assert.equal(after.brokers.size, 0);
  assert.equal(after.throttledTopics.size, 0);
  assert.deepEqual(after.ratedBrokers, []);
});

test('moves finishing under the new controller take the throttles off; a broker back while no controller ran cancels at failover', async () => {
  const { cluster, first, second } = await setup([
    [1, 2, 4],
    [4, 1, 2],
  ]);
  cluster.killBroker(4);
  await settle(first.controller);
  first.timers.shift()!.run();
  await settle(first.controller);
  await reportIsr(cluster, first.controller, 0, [1, 2, 3]);
  await settle(first.controller);
  assert.deepEqual((await replicas(cluster, 0)).replicas, [1, 2, 3], 'partition 0 moved under the first');

  // Broker 4 returns in the gap between the two controllers: the second cancels partition 1's move at failover.
  await first.controller.stop();
  await cluster.addBroker(4, 'c');
  await failOver(first.controller, second.controller);
  assert.deepEqual(await replicas(cluster, 1), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual((await replicas(cluster, 0)).replicas, [1, 2, 3], 'a finished move stays');
  assert.deepEqual(second.controller.selfHealingStatus.failedBrokers, []);
  assert.deepEqual(await topicConfig(cluster), {});

  // Another failure, healed across a failover to a fresh controller on broker 1: the move finishes under it,
  // and it removes the throttles the second controller set.
  cluster.killBroker(3);
  await settle(second.controller);
  second.timers.shift()!.run();
  await settle(second.controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [4]);
  assert.notDeepEqual(await topicConfig(cluster), {});
  const third = healingController(cluster, 1);
  await third.controller.start();
  await failOver(second.controller, third.controller);
  await reportIsr(cluster, third.controller, 0, [1, 2, 4]);
  await settle(third.controller);
  assert.deepEqual((await replicas(cluster, 0)).replicas, [1, 2, 4]);
  assert.deepEqual(
    third.controller.selfHealingStatus.failedBrokers.map((b) => [b.brokerId, b.state]),
    [[3, 'healed']],
  );
  assert.deepEqual(await topicConfig(cluster), {}, 'throttles set by the previous controller removed');
  assert.deepEqual((await persisted(cluster)).throttledTopics.size, 0);
});

test('a broker joining while a failed broker’s replicas have nowhere to go retries at once, not 30 s later', async () => {
  const { cluster, first } = await setup([[1, 2, 4]]);
  cluster.killBroker(3);
  cluster.killBroker(4);
  await settle(first.controller);
  const fired = first.timers.splice(0);
  assert.equal(fired.length, 2);
  for (const t of fired) t.run();
  await settle(first.controller);
  assert.deepEqual(
    first.controller.selfHealingStatus.failedBrokers.find((b) => b.brokerId === 4)?.state,
    'stuck',
    'no live broker outside the partition',
  );
  assert.deepEqual(
    first.timers.map((t) => t.delayMs),
    [30_000],
  );
  await cluster.addBroker(5, 'c');
  await settle(first.controller);
  assert.deepEqual(
    first.timers.map((t) => t.delayMs),
    [0],
    'looked at again at once',
  );
  first.timers.shift()!.run();
  await settle(first.controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [5]);
});

test('a broker that came back and failed again while no controller ran starts its timeout again', async () => {
  const { cluster, first } = await setupOne([[1, 2, 4]]);
  cluster.killBroker(4);
  await settle(first.controller);
  const firstFailureMs = cluster.clock.nowMs();
  cluster.clock.advance(40_000);
  await first.controller.stop();
  // With no controller: broker 4 returns, stays 10 s, and fails again.
  await cluster.addBroker(4, 'c');
  cluster.clock.advance(10_000);
  cluster.killBroker(4);
  cluster.clock.advance(5_000);
  const second = healingController(cluster, 2);
  await second.controller.start();
  await settle(second.controller);
  assert.ok(second.controller.isActive);
  assert.deepEqual(
    second.timers.map((t) => t.delayMs),
    [TIMEOUT_MS],
    'not the 5 s left of the first failure’s timeout',
  );
  const [status] = second.controller.selfHealingStatus.failedBrokers;
  assert.ok(status !== undefined && status.failedAtMs > firstFailureMs, 'the failure time restarted');
  assert.equal((await persisted(cluster)).brokers.get(4 as BrokerId)?.failedAtMs, status.failedAtMs);
});

test('a failover after other brokers came and went keeps a gone broker’s failure time', async () => {
  const { cluster, first } = await setupOne([
    [1, 2, 4],
    [3, 1, 2],
  ]);
  cluster.killBroker(4);
  await settle(first.controller);
  cluster.clock.advance(40_000);
  await first.controller.stop();
  // With no controller: broker 3 goes, and a new broker 5 joins; neither is broker 4.
  cluster.killBroker(3);
  await cluster.addBroker(5, 'c');
  const second = healingController(cluster, 2);
  await second.controller.start();
  await settle(second.controller);
  assert.ok(second.controller.isActive);
  assert.deepEqual(
    second.timers.map((t) => t.delayMs).sort((a, b) => a - b),
    [TIMEOUT_MS - 40_000, TIMEOUT_MS],
    'broker 4 waits only for what is left; broker 3 for the whole timeout',
  );
});
