import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { CapturingLogger } from '../../src/common/logger.js';
import { Controller } from '../../src/controller/controller.js';
import { planReplacements } from '../../src/controller/self-healing.js';
import { decodeSelfHealingState, SELF_HEALING_STATE_PATH } from '../../src/controller/self-healing-state.js';
import { brokerConfigPath, topicConfigPath, topicPath } from '../../src/controller/zk-layout/index.js';
import { admin, FaultySession, newTopic, RecordingChannel, settle, TestCluster } from './helpers.js';
import {
  createTopicT,
  entityConfig,
  fourBrokers,
  healingController,
  replicas,
  reportIsr,
  TIMEOUT_MS,
} from './self-healing-setup.js';

/** Brokers 1..4 on racks a, b, c, c; broker 1 runs the controller with self-healing on a manual timer. */
async function setup(assignments: number[][], throttle = 1_000_000, logger?: CapturingLogger) {
  const cluster = await fourBrokers();
  const { controller, timers } = healingController(cluster, 1, { throttle, ...(logger ? { logger } : {}) });
  await controller.start();
  await createTopicT(cluster, controller, assignments);
  return { cluster, controller, timers };
}

test("after the timeout a failed broker's replicas move to live brokers, throttled, and the throttles go when done", async () => {
  const { cluster, controller, timers } = await setup([
    [1, 2, 4],
    [4, 1, 2],
  ]);
  cluster.killBroker(4);
  await settle(controller);
  assert.equal(timers.length, 1, 'a timer waits for the broker');
  assert.equal(timers[0]!.delayMs, TIMEOUT_MS);
  assert.deepEqual(
    controller.selfHealingStatus.failedBrokers.map((b) => [b.brokerId, b.state]),
    [[4, 'waiting']],
  );
  cluster.clock.advance(TIMEOUT_MS);
  timers.shift()!.run();
  await settle(controller);
  // Broker 3 is the only live broker outside both partitions (rack c, as broker 4 was).
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [1, 2, 3, 4],
    addingReplicas: [3],
    removingReplicas: [4],
  });
  assert.deepEqual((await replicas(cluster, 1)).addingReplicas, [3]);
  assert.equal(controller.selfHealingStatus.movesStarted, 2);
  assert.deepEqual(
    controller.selfHealingStatus.partitions.map((p) => [p.tp.partition, p.state, p.action, p.detail]),
    [
      [0, 'under-replicated', 'moving', 'moving to broker 3'],
      [1, 'under-replicated', 'moving', 'moving to broker 3'],
    ],
  );
  const throttled = await entityConfig(cluster, topicConfigPath('t'));
  assert.equal(throttled['follower.replication.throttled.replicas'], '0:3,1:3');
  assert.equal(throttled['leader.replication.throttled.replicas'], '0:1,0:2,1:1,1:2');
  assert.equal(
    (await entityConfig(cluster, brokerConfigPath(3 as BrokerId)))['leader.replication.throttled.rate'],
    '1000000',
  );

  await reportIsr(cluster, controller, 0, [1, 2, 3]);
  await reportIsr(cluster, controller, 1, [1, 2, 3]);
  await settle(controller);
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [1, 2, 3],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual(await replicas(cluster, 1), {
    replicas: [3, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual((await cluster.partitionState('t', 1))?.isr, [1, 2, 3]);
  const status = controller.selfHealingStatus;
  assert.deepEqual(
    status.failedBrokers.map((b) => [b.brokerId, b.state, b.moving]),
    [[4, 'healed', 0]],
  );
  assert.equal(status.movesFinished, 2);
  assert.deepEqual(await entityConfig(cluster, topicConfigPath('t')), {}, 'topic throttles removed');
  assert.deepEqual(await entityConfig(cluster, brokerConfigPath(3 as BrokerId)), {}, 'broker rates removed');
});

test('partitions that lost a replica are reported and logged with the reason and the action taken', async () => {
  const logger = new CapturingLogger();
  const { cluster, controller, timers } = await setup(
    [
      [1, 2, 4],
      [4, 3, 2],
    ],
    1_000_000,
    logger,
  );
  // Brokers 3 and 4 go: partition 0 then has no live broker outside its replicas to move to, and partition 1
  // lost two replicas with only broker 1 to take them.
  cluster.killBroker(4);
  cluster.killBroker(3);
  await settle(controller);
  const failedAtMs = controller.selfHealingStatus.failedBrokers[0]!.failedAtMs;
  const since = new Date(failedAtMs).toISOString();
  const at = new Date(failedAtMs + TIMEOUT_MS).toISOString();
  const waiting = `its replica moves at ${at} unless broker 4 returns`;
  const report = () =>
    controller.selfHealingStatus.partitions.map((p) => [
      p.tp.partition,
      p.state,
      p.action,
      p.reason,
      p.detail,
    ]);
  assert.deepEqual(report(), [
    [0, 'under-replicated', 'waiting', `broker 4 gone since ${since}`, waiting],
    [1, 'under-replicated', 'waiting', `broker 4 gone since ${since}; broker 3 gone since ${since}`, waiting],
  ]);
  const logged = logger.lines.filter((l) => l.message.startsWith('partition t-'));
  assert.ok(logged.length >= 2, 'each partition that lost a replica is logged');
  assert.deepEqual(
    [logged[0]!.level, logged[0]!.message],
    ['info', `partition t-0 is under-replicated: broker 4 gone since ${since}; action: ${waiting}`],
  );
  cluster.clock.advance(TIMEOUT_MS);
  while (timers.length > 0) timers.shift()!.run();
  await settle(controller);
  const now = new Map(controller.selfHealingStatus.partitions.map((p) => [p.tp.partition as number, p]));
  assert.equal(now.get(0)?.action, 'stuck');
  assert.equal(
    now.get(0)?.detail,
    'not moved: no live broker outside the partition to take the replica; retrying',
  );
  // Both its gone replicas move at once, and only broker 1 is there to take them.
  assert.equal(now.get(1)?.action, 'stuck');
  assert.equal(
    now.get(1)?.detail,
    'not moved: no live broker outside the partition to take the replica; retrying',
  );
});

test('a partition on two gone brokers waits for the later timeout, then moves off both at once', async () => {
  const { cluster, controller, timers } = await setup([[4, 3, 2]]);
  await cluster.addBroker(5, 'a');
  cluster.killBroker(4);
  await settle(controller);
  cluster.clock.advance(TIMEOUT_MS / 2);
  cluster.killBroker(3);
  await settle(controller);
  assert.equal(timers.length, 2);
  // Broker 4's timeout ends while broker 3's still runs: a move naming broker 3 could not start, so it waits.
  cluster.clock.advance(TIMEOUT_MS / 2);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, []);
  const waiting = controller.selfHealingStatus.partitions[0]!;
  assert.equal(waiting.action, 'stuck');
  assert.match(waiting.detail, /broker 3 is gone too and still within its timeout/);
  cluster.clock.advance(TIMEOUT_MS / 2);
  // Broker 3's timer, and broker 4's retry: whichever runs first moves the partition off both.
  while (timers.length > 0) timers.shift()!.run();
  await settle(controller);
  const moving = await replicas(cluster, 0);
  assert.deepEqual([...moving.addingReplicas].sort(), [1, 5]);
  assert.deepEqual([...moving.removingReplicas].sort(), [3, 4]);
  assert.equal(controller.selfHealingStatus.partitions[0]?.action, 'moving');
});

test('a broker that comes back before its replicas have moved cancels the moves not finished', async () => {
  const { cluster, controller, timers } = await setup([
    [1, 2, 4],
    [4, 1, 2],
  ]);
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  // Partition 0's move finishes; partition 1's is still copying when broker 4 returns.
  await reportIsr(cluster, controller, 0, [1, 2, 3]);
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).replicas, [1, 2, 3]);
  assert.deepEqual((await replicas(cluster, 1)).addingReplicas, [3]);
  await cluster.addBroker(4, 'c');
  await settle(controller);
  assert.deepEqual(await replicas(cluster, 1), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual((await replicas(cluster, 0)).replicas, [1, 2, 3], 'a finished move stays');
  const status = controller.selfHealingStatus;
  assert.equal(status.movesCancelled, 1);
  assert.deepEqual(status.failedBrokers, []);
  assert.deepEqual(
    await entityConfig(cluster, topicConfigPath('t')),
    {},
    'throttles removed after the cancel',
  );
  assert.equal(timers.length, 0);
});

test('a broker back within the timeout moves nothing, and -1 turns self-healing off', async () => {
  const { cluster, controller, timers } = await setup([[1, 2, 4]]);
  cluster.killBroker(4);
  await settle(controller);
  assert.equal(timers.length, 1);
  await cluster.addBroker(4, 'c');
  await settle(controller);
  assert.equal(timers.length, 0, 'the timer was cancelled');
  assert.deepEqual((await replicas(cluster, 0)).replicas, [1, 2, 4]);

  const off = new TestCluster();
  after(() => off.close());
  const b1 = await off.addBroker(1);
  const scheduled: number[] = [];
  const controllerOff = new Controller({
    brokerId: 1 as BrokerId,
    store: b1.session,
    channel: new RecordingChannel(),
    selfHealing: {
      brokerFailureTimeoutMs: -1,
      throttledRateBytesPerSecond: -1,
      schedule: (_run, delayMs) => {
        scheduled.push(delayMs);
        return () => {};
      },
    },
  });
  after(() => controllerOff.stop());
  await controllerOff.start();
  await off.addBroker(2);
  await admin(b1.session, controllerOff).createTopics([newTopic('t', 1, 2)], false);
  off.killBroker(2);
  await settle(controllerOff);
  assert.deepEqual(scheduled, []);
  assert.equal(controllerOff.selfHealingStatus.enabled, false);
});

test('replacements go to a rack the partition does not use, then to the least loaded broker', () => {
  const live = new Map(
    (
      [
        [1, 'a'],
        [2, 'a'],
        [3, 'b'],
        [4, 'b'],
        [5, 'c'],
        [6, 'c'],
      ] as const
    ).map(([id, rack]) => [id as BrokerId, { registration: { rack } }]),
  );
  const partitions = Array.from({ length: 12 }, (_, p) => ({
    topic: 't',
    partition: p as never,
    entry: {
      assignment: {
        // Every partition on failed broker 9 and on racks a and b: the replacement must be on rack c.
        replicas: [9, (1 + (p % 2)) as BrokerId, (3 + (p % 2)) as BrokerId] as BrokerId[],
        addingReplicas: [],
        removingReplicas: [],
      },
    },
  }));
  const { moves, skipped } = planReplacements(
    { liveBrokers: live, allPartitions: () => partitions, isDeleting: () => false },
    9 as BrokerId,
  );
  assert.deepEqual(skipped, []);
  assert.equal(moves.length, 12);
  const counts = new Map<number, number>();
  for (const m of moves) {
    const added = m.target.find((b) => !m.from.includes(b))!;
    assert.ok(added === 5 || added === 6, `partition ${m.tp.partition} got broker ${added}, not on rack c`);
    assert.equal(m.target[0], added, 'the replacement takes the failed replica’s place');
    counts.set(added, (counts.get(added) ?? 0) + 1);
  }
  assert.deepEqual([...counts.values()], [6, 6], 'the two rack-c brokers share the load');
});

test('a move whose new replica dies too is moved again once that broker has been gone the timeout', async () => {
  const { cluster, controller, timers } = await setup([[4, 1, 2]]);
  await cluster.addBroker(5, 'a');
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3]);
  // The broker taking the replica dies before it caught up: the move cannot finish while it is gone.
  cluster.killBroker(3);
  await settle(controller);
  cluster.clock.advance(TIMEOUT_MS);
  while (timers.length > 0) timers.shift()!.run();
  await settle(controller);
  const moved = await replicas(cluster, 0);
  assert.deepEqual(moved.addingReplicas, [5], 'the replica goes to a live broker instead');
  assert.deepEqual(moved.replicas.slice(0, 3), [5, 1, 2]);
  // The move is still the first failed broker's: its return cancels it back to the replicas from before.
  await cluster.addBroker(4, 'c');
  await settle(controller);
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
});

test("a topic deleted during its moves counts them in the moves' outcome topic_deleted", async () => {
  const { cluster, controller, timers } = await setup([
    [1, 2, 4],
    [4, 1, 2],
  ]);
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  assert.equal(controller.selfHealingStatus.movesStarted, 2);
  const [deleted] = await admin(cluster.brokers.get(1)!.session, controller).deleteTopics(['t']);
  assert.equal(deleted!.errorCode, 0);
  await settle(controller);
  const status = controller.selfHealingStatus;
  assert.deepEqual(
    [status.movesFinished, status.movesCancelled, status.movesTopicDeleted, status.movesReplaced],
    [0, 0, 2, 0],
  );
});

test("an operator's reassignment over a self-healing move makes it theirs: replaced, throttles off", async () => {
  const { cluster, controller, timers } = await setup([
    [4, 1, 2],
    [1, 4, 2],
  ]);
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3]);
  assert.deepEqual(await entityConfig(cluster, topicConfigPath('t')), {
    'leader.replication.throttled.replicas': '0:1,0:2,1:1,1:2',
    'follower.replication.throttled.replicas': '0:3,1:3',
  });
  // The operator moves partition 0 to [1, 2, 3] in another order (another target): their move now.
  const started = await controller.alterPartitionReassignments({
    timeoutMs: 1000,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [3, 2, 1] }] }],
  });
  assert.equal(started.responses[0]?.partitions[0]?.errorCode, 0);
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3], 'still moving, as the operator asked');
  const status = controller.selfHealingStatus;
  assert.deepEqual([status.movesReplaced, status.movesFinished], [1, 0]);
  assert.deepEqual(
    status.failedBrokers.map((b) => [b.brokerId, b.moving]),
    [[4, 1]],
  );
  // Partition 1's move is still self-healing's, and keeps its throttle entries; partition 0's are off.
  assert.deepEqual(await entityConfig(cluster, topicConfigPath('t')), {
    'leader.replication.throttled.replicas': '1:1,1:2',
    'follower.replication.throttled.replicas': '1:3',
  });
  await reportIsr(cluster, controller, 1, [1, 2, 3]);
  await settle(controller);
  assert.deepEqual(await entityConfig(cluster, topicConfigPath('t')), {}, "self-healing's throttles removed");
  assert.deepEqual(
    await entityConfig(cluster, brokerConfigPath(3 as BrokerId)),
    {},
    'its broker rates removed',
  );
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3], "the operator's move runs on");
});

test("an operator's cancel of a move is operator_cancelled, and a retry round leaves the partition", async () => {
  const { cluster, controller, timers } = await setup([
    [4, 1, 2],
    [1, 4, 2],
    [2, 4, 1],
  ]);
  cluster.killBroker(4);
  await settle(controller);
  // The operator moves partition 2 first: self-healing skips it, and sets a retry round for it.
  const theirs = await controller.alterPartitionReassignments({
    timeoutMs: 1000,
    topics: [{ name: 't', partitions: [{ partitionIndex: 2, replicas: [2, 4, 3] }] }],
  });
  assert.equal(theirs.responses[0]?.partitions[0]?.errorCode, 0);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3]);
  assert.equal(timers.length, 1, 'a retry round for partition 2');

  const cancelled = await controller.alterPartitionReassignments({
    timeoutMs: 1000,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: null }] }],
  });
  assert.equal(cancelled.responses[0]?.partitions[0]?.errorCode, 0);
  await settle(controller);
  const status = controller.selfHealingStatus;
  assert.deepEqual(
    [status.movesOperatorCancelled, status.movesFinished, status.movesCancelled],
    [1, 0, 0],
    'operator_cancelled, finished, cancelled',
  );
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [1, 2, 4],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.equal(
    (await entityConfig(cluster, topicConfigPath('t')))['follower.replication.throttled.replicas'],
    '1:3',
    "the cancelled move's throttle entries are off",
  );

  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual(
    await replicas(cluster, 0),
    { replicas: [1, 2, 4], addingReplicas: [], removingReplicas: [] },
    'the retry round leaves the cancelled partition where the operator put it',
  );
  assert.deepEqual((await replicas(cluster, 1)).addingReplicas, [3], 'partition 1 still moves');
});

test('a cancel of a returning broker’s move whose write fails once is written again, not dropped', async () => {
  const cluster = await fourBrokers();
  const link = new FaultySession(cluster.brokers.get(1)!.session);
  const timers: { run: () => void; delayMs: number }[] = [];
  const controller = new Controller({
    brokerId: 1 as BrokerId,
    store: link,
    channel: new RecordingChannel(),
    clock: cluster.clock,
    selfHealing: {
      brokerFailureTimeoutMs: TIMEOUT_MS,
      throttledRateBytesPerSecond: 1_000_000,
      schedule: (run, delayMs) => {
        timers.push({ run, delayMs });
        return () => undefined;
      },
    },
  });
  after(() => controller.stop());
  await controller.start();
  await createTopicT(cluster, controller, [[4, 1, 2]]);
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3]);

  // The first write of t's assignment from now on fails (the link dropped before ZooKeeper got it).
  let failures = 1;
  link.multiFault = (ops) =>
    failures > 0 && ops.some((op) => op.path === topicPath('t')) && failures-- > 0 ? 'fail' : null;
  await cluster.addBroker(4, 'c');
  await settle(controller);
  assert.equal(failures, 0, 'the write failed once');
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.equal(controller.selfHealingStatus.movesCancelled, 1);
});

test('a cancel of a returning broker’s move that fails every attempt is tried again later, not dropped', async () => {
  const cluster = await fourBrokers();
  const link = new FaultySession(cluster.brokers.get(1)!.session);
  const logger = new CapturingLogger();
  const timers: { run: () => void; delayMs: number }[] = [];
  const controller = new Controller({
    brokerId: 1 as BrokerId,
    store: link,
    channel: new RecordingChannel(),
    clock: cluster.clock,
    logger,
    selfHealing: {
      brokerFailureTimeoutMs: TIMEOUT_MS,
      throttledRateBytesPerSecond: 1_000_000,
      schedule: (run, delayMs) => {
        const timer = { run, delayMs };
        timers.push(timer);
        return () => {
          const i = timers.indexOf(timer);
          if (i >= 0) timers.splice(i, 1);
        };
      },
    },
  });
  after(() => controller.stop());
  await controller.start();
  await createTopicT(cluster, controller, [[4, 1, 2]]);
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3]);

  // Every write of t's assignment fails while broker 4 returns: all three attempts of its cancel.
  let failing = true;
  link.multiFault = (ops) => (failing && ops.some((op) => op.path === topicPath('t')) ? 'fail' : null);
  await cluster.addBroker(4, 'c');
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3], 'the move still runs');
  assert.equal(timers.length, 1, 'the cancel is tried again later');
  assert.ok(
    logger.lines.some((l) => l.level === 'warn' && /1 cancels .* broker 4 .* again in/.test(l.message)),
  );
  assert.deepEqual(
    await persistedBrokers(cluster),
    [4],
    'the state still names broker 4, so a next controller cancels the move',
  );

  // Still failing: tried again, and set once more.
  timers.shift()!.run();
  await settle(controller);
  assert.equal(timers.length, 1);
  failing = false;
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual(await replicas(cluster, 0), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.equal(controller.selfHealingStatus.movesCancelled, 1);
  assert.equal(timers.length, 0);
  assert.deepEqual(await persistedBrokers(cluster), []);
  assert.deepEqual(await entityConfig(cluster, topicConfigPath('t')), {}, 'the throttles are off');
});

/** The brokers /brook_self_healing names. */
async function persistedBrokers(cluster: TestCluster): Promise<number[]> {
  const node = await cluster.observer.get(SELF_HEALING_STATE_PATH);
  assert.ok(node.ok);
  const decoded = decodeSelfHealingState(node.value.data);
  assert.ok(decoded.ok);
  return [...decoded.value.brokers.keys()];
}
