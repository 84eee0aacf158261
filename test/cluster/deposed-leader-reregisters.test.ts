// Chaos finding F4: a broker that led a partition and was the controller loses its ZooKeeper session (here a
// SIGSTOP past the session timeout); the other brokers elect a new controller and a new leader. When the old
// broker comes back it registers again, and the new controller sends it UpdateMetadata and LeaderAndIsr: it must
// learn the new controller and become a follower, so that a producer with stale metadata is refused
// (NOT_LEADER_OR_FOLLOWER) instead of acknowledged by a deposed leader whose writes the cluster will discard.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, controllerOf, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { useZooKeeperProxiedCluster } from '../helpers/proxied-cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const TOPIC = 'deposed-topic';

describe('a deposed leader and controller that registers again after its session expired', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];

  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 4000,
        // Long enough that a follower of a loaded machine (test files run in parallel) stays in the ISR before the
        // stop: with the controller's replica the only one left in it, no other could lead (unclean election off).
        // Nothing here needs the ISR to shrink: the stopped leader is deposed through the end of its session.
        'replica.lag.time.max.ms': 10_000,
        'unclean.leader.election.enable': 'false',
        'min.insync.replicas': 1,
      },
    });
    brokers = cluster.brokers;
  });
  after(() => cluster?.stop());

  it('becomes a follower, learns the new controller and refuses writes', async () => {
    const controllerId = await agreedController(brokers);
    const old = brokers.find((b) => b.brokerId === controllerId)!;
    const others = brokers.filter((b) => b !== old);
    // The controller leads the partition: both roles move when its session ends.
    await createTopicOn(old, TOPIC, {
      assignments: { 0: [controllerId, ...others.map((b) => b.brokerId)] },
    });
    const first = await waitFor('a full ISR led by the controller', async () => {
      const v = await partitionView(old, TOPIC);
      return v?.leaderId === controllerId && v.isrNodes.length === 3 ? v : undefined;
    });
    assert.deepEqual(await produceValues(old, TOPIC, ['a']), [ErrorCode.NONE]);

    process.kill(old.pid, 'SIGSTOP');
    let moved: { controller: number; leader: number; leaderEpoch: number };
    let seen = '';
    try {
      moved = await waitFor(
        'a new controller and a new leader among the others',
        async () => {
          const controller = await controllerOf(others[0]!);
          const v = await partitionView(others[0]!, TOPIC);
          seen = `controller ${controller}, partition ${JSON.stringify(v)}`;
          if (controller < 0 || controller === controllerId) return undefined;
          if (v === undefined || v.leaderId < 0 || v.leaderId === controllerId) return undefined;
          return { controller, leader: v.leaderId, leaderEpoch: v.leaderEpoch };
        },
        // Long: the session ends after 4 s, but a loaded machine (test files run in parallel) slows the elections.
        60_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last seen: ${seen}`);
      });
    } finally {
      process.kill(old.pid, 'SIGCONT');
    }
    assert.ok(moved.leaderEpoch > first.leaderEpoch);
    await waitFor('the old broker registered again', async () =>
      /registered again with broker epoch/.test(old.log()) ? true : undefined,
    );
    const view = await waitFor(
      'the old broker to know the new controller and leader',
      async () => {
        const controller = await controllerOf(old);
        const v = await partitionView(old, TOPIC);
        return controller === moved.controller && v !== undefined && v.leaderId !== controllerId
          ? { controller, leader: v.leaderId }
          : undefined;
      },
      15_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- old broker's log\n${old.log().slice(-6000)}`);
    });
    assert.notEqual(view.leader, controllerId);
    // A producer with stale metadata still writes to the old broker: it must not acknowledge.
    const [code] = await produceValues(old, TOPIC, ['stale']);
    assert.equal(code, ErrorCode.NOT_LEADER_OR_FOLLOWER, `the deposed leader answered ${code}`);
  });
});

// The chaos run's shape: the old controller and leader keeps running, cut off ZooKeeper alone (its own proxy),
// while the others elect a new controller and leader; then ZooKeeper is reachable again and it registers again.
describe('a deposed leader and controller cut off ZooKeeper, then back', () => {
  const cluster = useZooKeeperProxiedCluster({
    'zookeeper.session.timeout.ms': 4000,
    // Not 1 s: a follower of a loaded machine (test files run in parallel) that falls that far behind before
    // the cut leaves the controller's replica alone in the ISR, and then no other can lead. A write to the
    // zombie leader still waits for followers that left it, and its ISR shrink fails without ZooKeeper.
    'replica.lag.time.max.ms': 3000,
    'unclean.leader.election.enable': 'false',
    'min.insync.replicas': 1,
  });

  it('stops acknowledging, becomes a follower and learns the new controller', async () => {
    const brokers = cluster.brokers();
    const controllerId = await agreedController(brokers);
    const old = brokers.find((b) => b.brokerId === controllerId)!;
    const others = brokers.filter((b) => b !== old);
    await createTopicOn(old, TOPIC, {
      assignments: { 0: [controllerId, ...others.map((b) => b.brokerId)] },
    });
    const first = await waitFor('a full ISR led by the controller', async () => {
      const v = await partitionView(old, TOPIC);
      return v?.leaderId === controllerId && v.isrNodes.length === 3 ? v : undefined;
    });
    assert.deepEqual(await produceValues(old, TOPIC, ['a']), [ErrorCode.NONE]);

    cluster.proxy(controllerId).cut();
    let zombieCodes: number[] = [];
    let seen = '';
    try {
      const moved = await waitFor(
        'a new controller and a new leader among the others',
        async () => {
          const controller = await controllerOf(others[0]!);
          const v = await partitionView(others[0]!, TOPIC);
          seen = `controller ${controller}, partition ${JSON.stringify(v)}`;
          if (controller < 0 || controller === controllerId) return undefined;
          if (v === undefined || v.leaderId < 0 || v.leaderId === controllerId) return undefined;
          return { controller, leader: v.leaderId, leaderEpoch: v.leaderEpoch };
        },
        60_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last seen: ${seen}`);
      });
      assert.ok(moved.leaderEpoch > first.leaderEpoch);
      // The zombie window: the old leader cannot know yet. Its followers left it, so an acks=all write to it
      // must not be acknowledged (it would be lost: the new leader never had it).
      zombieCodes = await produceValues(old, TOPIC, ['zombie']);
    } finally {
      cluster.proxy(controllerId).restore();
    }
    assert.notEqual(zombieCodes[0], ErrorCode.NONE, 'the zombie leader acknowledged a write');
    await waitFor(
      'the old broker registered again',
      async () => (/registered again with broker epoch/.test(old.log()) ? true : undefined),
      20_000,
    );
    const view = await waitFor(
      'the old broker to know the new controller and leader',
      async () => {
        const controller = await controllerOf(old);
        const v = await partitionView(old, TOPIC);
        return controller >= 0 &&
          controller !== controllerId &&
          v !== undefined &&
          v.leaderId !== controllerId
          ? { controller, leader: v.leaderId }
          : undefined;
      },
      15_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- old broker's log\n${old.log().slice(-8000)}`);
    });
    assert.notEqual(view.leader, controllerId);
    const [code] = await produceValues(old, TOPIC, ['stale']);
    assert.equal(code, ErrorCode.NOT_LEADER_OR_FOLLOWER, `the deposed leader answered ${code}`);
  });
});
