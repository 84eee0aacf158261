// Self-healing over a real ZooKeeper, across a controller change: brokers 1..4 (racks a, b, c, c) are sessions of
// their own, broker 1's and broker 2's controllers run self-healing on manual timers, and topic t has a replica of
// partitions 0 and 1 on broker 4, which dies. Each test runs under a chroot of its own.
//
// - The moves' throttles go into a topic config document without a version, which Kafka reads (and so must
//   self-healing's read-modify-write), keeping its configs.
// - An operator's reassignment replaces one self-healing move; the controller fails to take that partition's
//   throttle entries off (its write is lost with the link) and then resigns. The new controller must take them
//   off, while the other move still runs with its own.
// - An operator cancels one self-healing move: it is counted as operator_cancelled (not finished), its throttle
//   entries come off, and no controller moves it again while the broker stays gone.
// - Broker 4 returns while the controller can no longer write (its link fails): the next controller must still
//   cancel the moves, which the node it finds must therefore still name.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ensureZooKeeperChroot } from '../../src/broker/zookeeper-chroot.js';
import type { BrokerId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import { Controller } from '../../src/controller/controller.js';
import { seededRandom } from '../../src/controller/random.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { TopicAdmin } from '../../src/controller/topic-admin.js';
import {
  decodePartitionState,
  decodeTopicAssignment,
  partitionStatePath,
  topicConfigPath,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { untilValue } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { FaultySession, isrChange, liveEpoch, RecordingChannel, registration, settle } from './helpers.js';
import type { Timer } from './self-healing-setup.js';

const TIMEOUT_MS = 60_000;

let server: TestZooKeeper;
const sessions: CoordinationStore[] = [];
before(async () => {
  server = await startTestZooKeeper();
});
after(async () => {
  for (const s of sessions) await s.close();
  await server?.stop();
});

async function session(chroot: string): Promise<CoordinationStore> {
  const options = {
    connect: `${server.connect}${chroot}`,
    sessionTimeoutMs: 4000,
    connectionTimeoutMs: 10_000,
  };
  assert.ok((await ensureZooKeeperChroot(options, () => false, silentLogger)).ok);
  const opened = await connectZooKeeper(options);
  assert.ok(opened.ok, 'connected to ZooKeeper');
  sessions.push(opened.value);
  return opened.value;
}

function healingController(
  id: number,
  store: CoordinationStore,
): { controller: Controller; timers: Timer[] } {
  const timers: Timer[] = [];
  const controller = new Controller({
    brokerId: id as BrokerId,
    store,
    channel: new RecordingChannel(),
    random: seededRandom(id),
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
  return { controller, timers };
}

/**
 * The cluster of the header under `chroot`, broker 4 dead and its two partitions moving to broker 3. `document`:
 * what t's config node holds before the moves throttle them.
 */
async function moving(chroot: string, document?: string) {
  const stores = new Map<number, CoordinationStore>();
  for (const [id, rack] of [
    [1, 'a'],
    [2, 'b'],
    [3, 'c'],
    [4, 'c'],
  ] as const) {
    const s = await session(chroot);
    assert.ok((await registerBroker(s, registration(id, rack), seededRandom(id))).ok);
    stores.set(id, s);
  }
  const faulty = new FaultySession(stores.get(1)!);
  const first = healingController(1, faulty);
  await first.controller.start();
  const second = healingController(2, stores.get(2)!);
  await second.controller.start();
  assert.ok(first.controller.isActive && !second.controller.isActive);
  const observer = await session(chroot);
  const admin = new TopicAdmin({
    store: observer,
    defaults: { numPartitions: 1, replicationFactor: 3, deleteTopicEnable: true },
    random: seededRandom(9),
  });
  const [created] = await admin.createTopics(
    [
      {
        name: 't',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [
          { partitionIndex: 0, brokerIds: [4, 1, 2] },
          { partitionIndex: 1, brokerIds: [1, 4, 2] },
        ],
        configs: {},
      },
    ],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  await untilValue('leaders for t', async () => ((await state(observer, 1)) === null ? null : true));
  await settle(first.controller);
  let kept: Record<string, string> = {};
  if (document !== undefined) {
    const data = new TextEncoder().encode(document);
    if (!(await observer.set(topicConfigPath('t'), data, -1)).ok)
      assert.ok((await observer.create(topicConfigPath('t'), data)).ok, "wrote t's config");
    kept = await topicConfig(observer);
  }

  // Broker 4 dies; its timeout ends (the test runs the timer): both replicas move to broker 3, throttled.
  await stores.get(4)!.close();
  await untilValue('broker 4 noted gone', async () => (first.timers.length === 1 ? true : null));
  first.timers.shift()!.run();
  await settle(first.controller);
  assert.deepEqual((await assignment(observer, 0)).addingReplicas, [3]);
  assert.deepEqual((await assignment(observer, 1)).addingReplicas, [3]);
  assert.deepEqual(await topicConfig(observer), {
    ...kept,
    'leader.replication.throttled.replicas': '0:1,0:2,1:1,1:2',
    'follower.replication.throttled.replicas': '0:3,1:3',
  });
  return { observer, faulty, first, second };
}

async function state(observer: CoordinationStore, partition: number) {
  const node = await observer.get(partitionStatePath('t', partition as never));
  if (!node.ok) return null;
  const decoded = decodePartitionState(node.value.data);
  assert.ok(decoded.ok);
  return { ...decoded.value, version: node.value.stat.version };
}

async function assignment(observer: CoordinationStore, partition: number) {
  const node = await observer.get(topicPath('t'));
  assert.ok(node.ok);
  const decoded = decodeTopicAssignment(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value.partitions.get(partition as never)!;
}

async function topicConfig(observer: CoordinationStore): Promise<Record<string, string>> {
  const node = await observer.get(topicConfigPath('t'));
  if (!node.ok || node.value.data.length === 0) return {};
  // Read as plain JSON rather than with Brook's decoder, which is under test here too.
  const parsed = JSON.parse(new TextDecoder().decode(node.value.data)) as { config?: Record<string, string> };
  return parsed.config ?? {};
}

/** The first controller resigns; the second takes over. */
async function failOver(first: Controller, second: Controller): Promise<void> {
  await first.stop();
  await untilValue('the second controller', async () => (second.isActive ? true : null));
  await settle(second);
}

/** The leader of a partition of t reports `isr`, as a follower that caught up makes it do. */
async function reportIsr(
  observer: CoordinationStore,
  controller: Controller,
  partition: number,
  isr: number[],
) {
  const s = await state(observer, partition);
  assert.ok(s !== null);
  const answer = await controller.alterPartition(
    {
      brokerId: s.leader,
      brokerEpoch: liveEpoch(controller, s.leader),
      topics: [
        { topicName: 't', topicId: '', partitions: [isrChange(partition, s.leaderEpoch, s.version, isr)] },
      ],
    },
    2,
  );
  assert.equal(answer.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
}

test('a replaced move whose throttles the old controller did not take off loses them under the new one', async () => {
  const { observer, faulty, first, second } = await moving('/replaced');
  // The controller's writes of t's config are lost from now on (its link fails), as if it died right after the
  // operator's reassignment was written and before the throttles of the replaced move came off.
  const configPath = topicConfigPath('t');
  faulty.multiFault = (ops) => (ops.some((op) => op.path === configPath) ? 'fail' : null);
  const replaced = await first.controller.alterPartitionReassignments({
    timeoutMs: 1000,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [3, 2, 1] }] }],
  });
  assert.equal(replaced.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(first.controller);
  assert.equal(first.controller.selfHealingStatus.movesReplaced, 1);
  assert.equal((await topicConfig(observer))['follower.replication.throttled.replicas'], '0:3,1:3');

  await failOver(first.controller, second.controller);
  // Partition 1's move is still self-healing's and keeps its entries; partition 0's are off.
  assert.deepEqual(await topicConfig(observer), {
    'leader.replication.throttled.replicas': '1:1,1:2',
    'follower.replication.throttled.replicas': '1:3',
  });
  assert.deepEqual(
    second.controller.selfHealingStatus.failedBrokers.map((b) => [b.brokerId, b.moving]),
    [[4, 1]],
  );

  // Partition 1's move finishes: every throttle is off.
  await reportIsr(observer, second.controller, 1, [1, 2, 3]);
  await settle(second.controller);
  assert.deepEqual((await assignment(observer, 1)).replicas, [1, 3, 2]);
  assert.deepEqual(await topicConfig(observer), {});
});

test('the throttles go into a topic config document Kafka reads leniently (no version), keeping its configs', async () => {
  // Kafka's AdminZkClient reads the document with ConfigEntityZNode.decode, which ignores the version; before,
  // self-healing refused it and its moves ran unthrottled.
  const { observer } = await moving('/unversioned', '{"config":{"retention.ms":"86400000"}}');
  assert.equal((await topicConfig(observer))['retention.ms'], '86400000');
});

test("an operator's cancel of a move is no finished move, and no controller moves the partition again", async () => {
  const { observer, first, second } = await moving('/cancelled');
  const cancelled = await first.controller.alterPartitionReassignments({
    timeoutMs: 1000,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: null }] }],
  });
  assert.equal(cancelled.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(first.controller);
  // Back to the original replicas in the moving assignment's order, as Kafka's cancel does.
  assert.deepEqual(await assignment(observer, 0), {
    replicas: [1, 2, 4],
    addingReplicas: [],
    removingReplicas: [],
  });
  const status = first.controller.selfHealingStatus;
  assert.deepEqual(
    [status.movesFinished, status.movesOperatorCancelled, status.movesCancelled],
    [0, 1, 0],
    'finished, operator_cancelled, cancelled',
  );
  assert.deepEqual(await topicConfig(observer), {
    'leader.replication.throttled.replicas': '1:1,1:2',
    'follower.replication.throttled.replicas': '1:3',
  });
  const report = status.partitions.find((p) => p.tp.partition === 0);
  assert.equal(report?.action, 'none');
  assert.match(report?.detail ?? '', /an operator cancelled its move/);

  assert.equal(first.timers.length, 0, 'no retry round is set for it');

  // The new controller neither: its timer for broker 4's remaining replica moves nothing.
  await failOver(first.controller, second.controller);
  for (const timer of second.timers.splice(0)) timer.run();
  await settle(second.controller);
  assert.deepEqual(await assignment(observer, 0), {
    replicas: [1, 2, 4],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual((await assignment(observer, 1)).addingReplicas, [3], 'partition 1 still moves');
});

test('a broker back while the controller cannot write has its moves cancelled by the next controller', async () => {
  const { observer, faulty, first, second } = await moving('/returned');
  // The controller's link fails at its first write of t's assignment (a cancel) and stays down for its writes
  // (its reads go through): as a controller that dies while it cancels the moves of the broker back.
  let down = false;
  faulty.multiFault = (ops) => {
    down ||= ops.some((op) => op.path === topicPath('t'));
    return down ? 'fail' : null;
  };
  const back = await session('/returned');
  assert.ok((await registerBroker(back, registration(4, 'c'), seededRandom(4))).ok);
  await untilValue('broker 4 seen back', async () =>
    first.controller.context?.liveBrokers.has(4 as BrokerId) === true ? true : null,
  );
  await settle(first.controller);
  assert.deepEqual((await assignment(observer, 0)).addingReplicas, [3], 'its cancel was not written');

  await failOver(first.controller, second.controller);
  assert.deepEqual(await assignment(observer, 0), {
    replicas: [4, 1, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.deepEqual(await assignment(observer, 1), {
    replicas: [1, 4, 2],
    addingReplicas: [],
    removingReplicas: [],
  });
  assert.equal(second.controller.selfHealingStatus.movesCancelled, 2);
  assert.deepEqual(await topicConfig(observer), {});
});
