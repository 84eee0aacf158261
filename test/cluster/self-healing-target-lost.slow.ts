// Self-healing when the broker taking a failed broker's replicas fails too, in a real cluster: a ZooKeeper server
// and four broker processes. The partitions (replication factor 2) are on broker V and broker O; the controller's
// broker holds many replicas of another topic, so self-healing moves V's replicas to the fourth broker T. T is
// killed while it copies (held back by the replication throttle): those moves could finish only once T returned.
// Once T has been gone the timeout too, self-healing must move the replicas again, to the controller's broker,
// and every partition must be back to two in-sync replicas on live brokers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { agreedController, waitFor, waitForInSync } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const FAILURE_TIMEOUT_MS = 3000;
const PARTITIONS = 4;
/** Records of 50 kB: 2 MB a partition, which the 100 kB/s throttle takes many seconds to copy. */
const PRELOADED = 160;

describe('self-healing when the broker taking the replicas fails too (four brokers, ZooKeeper)', () => {
  let cluster: TestCluster;
  let admin: Admin | undefined;

  before(async () => {
    cluster = await startCluster({
      brokers: 4,
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'min.insync.replicas': 1,
        'brook.self.healing.broker.failure.timeout.ms': FAILURE_TIMEOUT_MS,
        'brook.self.healing.replication.throttled.rate': 100_000,
        'replication.quota.window.num': 2,
        'auto.leader.rebalance.enable': false,
      },
    });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  it('moves the replicas again once the new broker has been gone the timeout', async () => {
    const c = await agreedController(cluster.brokers);
    admin = new Admin({ bootstrapServers: cluster.brokers[c]!.bootstrap, clientId: 'target-lost-test' });
    const [v, o, t] = [0, 1, 2, 3].filter((id) => id !== c) as [number, number, number];
    const topic = 'twice';
    const spread = (n: number, replicas: number[]) =>
      Object.fromEntries(Array.from({ length: n }, (_, p) => [p, replicas]));
    const created = await admin.createTopics([
      { topic, replicaAssignment: spread(PARTITIONS, [v, o]) },
      { topic: 'ballast', replicaAssignment: spread(8, [c, o]) },
    ]);
    assert.deepEqual(
      created.map((r) => r.error),
      [null, null],
    );
    await waitForInSync(admin, topic, PARTITIONS, 2);
    const loader = new Producer({ bootstrapServers: cluster.bootstrap, acks: -1 });
    try {
      const value = Buffer.alloc(50_000, 1);
      for (let i = 0; i < PRELOADED; i++) await loader.send({ topic, partition: i % PARTITIONS, value });
    } finally {
      await loader.close();
    }
    await cluster.brokers[v]!.kill();
    await waitFor(
      `self-healing moving the replicas to broker ${t}`,
      async () => {
        const list = await admin!.listPartitionReassignments();
        return list.length > 0 && list.every((r) => r.addingReplicas.join(',') === String(t))
          ? true
          : undefined;
      },
      60_000,
    );
    await cluster.brokers[t]!.kill();
    await waitFor(
      'every partition back to two in-sync replicas on live brokers',
      async () => {
        const [d] = await admin!.describeTopics([topic]);
        const ps = d!.partitions;
        return ps.length === PARTITIONS &&
          ps.every(
            (p) =>
              p.replicas.length === 2 && p.isr.length === 2 && p.replicas.every((r) => r === c || r === o),
          )
          ? true
          : undefined;
      },
      90_000,
    );
  });
});
