// What the self-healing controller tests share: four brokers (1..4 on racks a, b, c, c) in an in-process store,
// controllers with self-healing on a manual timer list, topic t created on given replicas, and readers of what
// the controller wrote (replicas, configs) and an ISR change as a leader reports it. Everything started here is
// stopped after the test that started it.

import assert from 'node:assert/strict';
import { after } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import type { CapturingLogger } from '../../src/common/logger.js';
import { Controller } from '../../src/controller/controller.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import {
  decodeEntityConfig,
  decodeTopicAssignment,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { admin, isrChange, liveEpoch, newTopic, RecordingChannel, TestCluster } from './helpers.js';

/** brook.self.healing.broker.failure.timeout.ms of every controller here. */
export const TIMEOUT_MS = 60_000;

/** A timer the controller set: the test runs it when the time has come. */
export interface Timer {
  run: () => void;
  delayMs: number;
}

/**
 * A controller on broker `id` with self-healing on a manual timer list of its own (not started), on the broker's
 * session or on `options.store` (a wrapper of it).
 */
export function healingController(
  cluster: TestCluster,
  id: number,
  options: { throttle?: number; logger?: CapturingLogger; store?: CoordinationStore } = {},
): { controller: Controller; timers: Timer[] } {
  const timers: Timer[] = [];
  const controller = new Controller({
    brokerId: id as BrokerId,
    store: options.store ?? cluster.brokers.get(id)!.session,
    channel: new RecordingChannel(),
    clock: cluster.clock,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    selfHealing: {
      brokerFailureTimeoutMs: TIMEOUT_MS,
      throttledRateBytesPerSecond: options.throttle ?? 1_000_000,
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

/** Brokers 1..4 on racks a, b, c, c. */
export async function fourBrokers(): Promise<TestCluster> {
  const cluster = new TestCluster();
  after(() => cluster.close());
  await cluster.addBroker(1, 'a');
  await cluster.addBroker(2, 'b');
  await cluster.addBroker(3, 'c');
  await cluster.addBroker(4, 'c');
  return cluster;
}

/** Topic t with partition i on assignments[i], created through the active controller with broker 1's session. */
export async function createTopicT(cluster: TestCluster, controller: Controller, assignments: number[][]) {
  const [created] = await admin(cluster.brokers.get(1)!.session, controller).createTopics(
    [
      newTopic(
        't',
        -1,
        -1,
        assignments.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
      ),
    ],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
}

/** Partition `partition` of t as the topic znode holds it (replicas, adding, removing). */
export async function replicas(cluster: TestCluster, partition: number) {
  const node = await cluster.observer.get(topicPath('t'));
  assert.ok(node.ok);
  const decoded = decodeTopicAssignment(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value.partitions.get(partition as never)!;
}

/** The config overrides stored at `path` (a topic's or a broker's); {} when there are none. */
export async function entityConfig(cluster: TestCluster, path: string): Promise<Record<string, string>> {
  const node = await cluster.observer.get(path);
  if (!node.ok || node.value.data.length === 0) return {};
  const decoded = decodeEntityConfig(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value;
}

/** The leader reports `isr` for a partition of t, as a follower that caught up makes it do. */
export async function reportIsr(
  cluster: TestCluster,
  controller: Controller,
  partition: number,
  isr: number[],
) {
  const state = await cluster.partitionState('t', partition);
  assert.ok(state !== null);
  const answer = await controller.alterPartition(
    {
      brokerId: state.leader,
      brokerEpoch: liveEpoch(controller, state.leader),
      topics: [
        {
          topicName: 't',
          topicId: '',
          partitions: [isrChange(partition, state.leaderEpoch, state.version, isr)],
        },
      ],
    },
    2,
  );
  assert.equal(answer.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
}
