// Automatic preferred leader election through its broker keys, in a real three-broker cluster:
// auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds (1 s here, 300 s by default, so a
// controller that ignored it would not act within the test's wait) and leader.imbalance.per.broker.percentage
// (30 here, 10 by default). Reassignments that only reorder a partition's replicas change its preferred leader
// without moving leadership: broker 1 then prefers one partition that broker 0 leads (100 % imbalanced, moved
// back), while broker 2 prefers five of which it leads four (20 %: left as it is, where the default 10 % would
// move it).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const TOPIC = 'imbalance';

describe('automatic preferred leader election (auto.leader.rebalance.enable)', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startCluster({
      overrides: {
        'auto.leader.rebalance.enable': true,
        'leader.imbalance.check.interval.seconds': 1,
        'leader.imbalance.per.broker.percentage': 30,
      },
    });
    admin = new Admin({ bootstrapServers: cluster.bootstrap, clientId: 'imbalance-test' });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  /** Partition -> [leader, replicas] once every partition has a leader in the metadata of the broker asked. */
  async function layout(): Promise<Map<number, { leader: number; replicas: number[] }> | undefined> {
    const [t] = await admin!.describeTopics([TOPIC]);
    if (t === undefined || t.partitions.length !== 6 || t.partitions.some((p) => p.leader < 0))
      return undefined;
    return new Map(t.partitions.map((p) => [p.partition, { leader: p.leader, replicas: [...p.replicas] }]));
  }

  async function reorder(partition: number, replicas: number[]): Promise<void> {
    const [r] = await admin!.alterPartitionReassignments([{ topic: TOPIC, partition, replicas }]);
    assert.equal(r?.error, null, `reassigning ${TOPIC}-${partition}`);
    await waitFor(
      `${TOPIC}-${partition} to list replicas ${replicas}`,
      async () => {
        const moving = await admin!.listPartitionReassignments([{ topic: TOPIC, partition }]);
        const now = (await layout())?.get(partition);
        return moving.length === 0 && now?.replicas.join() === replicas.join() ? true : undefined;
      },
      60_000,
    );
  }

  it('moves leadership back to a broker past the percentage, not to one below it', async () => {
    await agreedController(cluster!.brokers, 60_000);
    await createTopicOn(cluster!.brokers[0]!, TOPIC, {
      assignments: {
        0: [0, 1, 2],
        1: [0, 1, 2],
        2: [2, 0, 1],
        3: [2, 0, 1],
        4: [2, 0, 1],
        5: [2, 0, 1],
      },
    });
    const first = await waitFor(
      'every partition led by its preferred replica',
      async () => {
        const l = await layout();
        return l !== undefined && [...l.values()].every((p) => p.leader === p.replicas[0]) ? l : undefined;
      },
      60_000,
    );
    assert.deepEqual(
      [...first.values()].map((p) => p.leader),
      [0, 0, 2, 2, 2, 2],
    );
    // Broker 2 now prefers five partitions and leads four of them: 20 %, under the 30 % set.
    await reorder(1, [2, 0, 1]);
    // Broker 1 now prefers one partition, led by broker 0: 100 %.
    await reorder(0, [1, 0, 2]);
    await waitFor(
      `${TOPIC}-0 led by its preferred replica, broker 1, again`,
      async () => ((await layout())?.get(0)?.leader === 1 ? true : undefined),
      60_000,
    );
    // Every check since the reorder of partition 1 saw broker 2 at 20 %: partition 1 kept its leader.
    const last = await layout();
    assert.equal(last?.get(1)?.leader, 0, 'broker 2 is within leader.imbalance.per.broker.percentage');
    assert.deepEqual(last?.get(1)?.replicas, [2, 0, 1]);
    assert.match(
      cluster!.brokers.map((b) => b.log()).join('\n'),
      /automatic preferred leader election moved 1 partitions/,
      'the controller logs the election',
    );
  });
});
