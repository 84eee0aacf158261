// Chaos finding F4's shape: the leader (also the controller) and its only in-sync follower are cut off ZooKeeper
// together while the third broker, already out of the ISR, keeps its session and becomes controller. The
// partition goes offline (unclean election off). Then ZooKeeper is reachable again: both register again, the
// new controller elects one of them, and the other must follow it. The old leader must not go on leading.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, controllerOf, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { useZooKeeperProxiedCluster } from '../helpers/proxied-cluster.js';
import { createTopicOn } from '../helpers/test-cluster.js';

const TOPIC = 'zombie-pair';

describe('a leader and its in-sync follower cut off ZooKeeper together, then back', () => {
  const cluster = useZooKeeperProxiedCluster({
    'zookeeper.session.timeout.ms': 4000,
    'replica.lag.time.max.ms': 1000,
    'unclean.leader.election.enable': 'false',
    'min.insync.replicas': 1,
  });

  it('the old leader follows the new one and refuses writes', async () => {
    const brokers = cluster.brokers();
    const controllerId = await agreedController(brokers);
    const old = brokers.find((b) => b.brokerId === controllerId)!;
    const [pal, third] = brokers.filter((b) => b !== old) as [BrokerProcess, BrokerProcess];
    await createTopicOn(old, TOPIC, { assignments: { 0: [controllerId, pal.brokerId, third.brokerId] } });
    await waitFor('a full ISR led by the controller', async () => {
      const v = await partitionView(old, TOPIC);
      return v?.leaderId === controllerId && v.isrNodes.length === 3 ? v : undefined;
    });
    // The third broker leaves the ISR (stopped past the lag time, not past its session).
    process.kill(third.pid, 'SIGSTOP');
    try {
      assert.deepEqual(await produceValues(old, TOPIC, ['a']), [ErrorCode.NONE]);
      await waitFor(
        'the ISR without the third broker',
        async () => {
          const v = await partitionView(old, TOPIC);
          return v !== undefined && !v.isrNodes.includes(third.brokerId) ? v : undefined;
        },
        3000,
      );
      cluster.proxy(old.brokerId).cut();
      cluster.proxy(pal.brokerId).cut();
    } finally {
      process.kill(third.pid, 'SIGCONT');
    }
    try {
      await waitFor(
        'the third broker controller',
        async () => ((await controllerOf(third)) === third.brokerId ? true : undefined),
        20_000,
      );
      // The zombie window: the old leader and its follower go on (as in Kafka's ZooKeeper mode).
      await produceValues(old, TOPIC, ['zombie']);
    } finally {
      cluster.proxy(old.brokerId).restore();
      cluster.proxy(pal.brokerId).restore();
    }
    await waitFor(
      'both registered again',
      async () =>
        /registered again/.test(old.log()) && /registered again/.test(pal.log()) ? true : undefined,
      20_000,
    );
    const agreed = await waitFor(
      'the three brokers to agree on the controller and a leader',
      async () => {
        const views = await Promise.all(brokers.map((b) => partitionView(b, TOPIC)));
        const controllers = await Promise.all(brokers.map((b) => controllerOf(b)));
        const [v] = views;
        if (v === undefined || v.leaderId < 0) return undefined;
        const same = views.every((x) => x?.leaderId === v.leaderId && x.leaderEpoch === v.leaderEpoch);
        return same && controllers.every((c) => c === third.brokerId) ? v : undefined;
      },
      20_000,
    ).catch(async (e: Error) => {
      const views = await Promise.all(brokers.map((b) => partitionView(b, TOPIC).catch(() => undefined)));
      const controllers = await Promise.all(brokers.map((b) => controllerOf(b).catch(() => -9)));
      throw new Error(
        `${e.message}: views ${JSON.stringify(views)} controllers ${controllers}\n--- old\n${old.log().slice(-5000)}\n--- pal\n${pal.log().slice(-3000)}\n--- third\n${third.log().slice(-4000)}`,
      );
    });
    const notLeaders = brokers.filter((b) => b.brokerId !== agreed.leaderId);
    for (const b of notLeaders) {
      const [code] = await produceValues(b, TOPIC, ['stale']);
      assert.equal(code, ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${b.brokerId} answered ${code}`);
    }
  });
});
