// Self-healing across a controller failover in the middle of its moves, in a real cluster: a ZooKeeper server and
// four broker processes. The partitions (replication factor 2) are on broker V and broker O; the controller's
// broker holds many replicas of another topic, so self-healing moves V's replicas to the fourth broker T. The
// controller is killed while T copies (held back by the replication throttle): the new controller takes the moves
// over from /brook_self_healing, they finish, every partition is on two in-sync live replicas and the throttle
// rates self-healing set are taken off again.

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
const RATE_KEY = 'leader.replication.throttled.rate';

describe('self-healing across a controller failover mid-move (four brokers, ZooKeeper)', () => {
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

  it('the new controller finishes the moves and takes the throttles off', async () => {
    const c = await agreedController(cluster.brokers);
    admin = new Admin({ bootstrapServers: cluster.brokers[c]!.bootstrap, clientId: 'failover-move-test' });
    const [v, o, t] = [0, 1, 2, 3].filter((id) => id !== c) as [number, number, number];
    const topic = 'handed-over';
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
    await cluster.brokers[c]!.kill();
    await admin.close();
    admin = new Admin({ bootstrapServers: cluster.brokers[o]!.bootstrap, clientId: 'failover-move-test' });
    await waitFor(
      'every partition on two in-sync replicas on live brokers',
      async () => {
        const [d] = await admin!.describeTopics([topic]);
        const ps = d!.partitions;
        return ps.length === PARTITIONS &&
          ps.every(
            (p) =>
              p.replicas.length === 2 && p.isr.length === 2 && p.replicas.every((r) => r === t || r === o),
          )
          ? true
          : undefined;
      },
      90_000,
    );
    await waitFor(
      'the throttle rates off the live brokers',
      async () => {
        for (const id of [o, t]) {
          const [r] = await admin!.describeConfigs([{ type: 'broker', name: String(id), keys: [RATE_KEY] }]);
          if (r!.configs.find((x) => x.name === RATE_KEY)?.source === 'DYNAMIC_BROKER_CONFIG')
            return undefined;
        }
        return true;
      },
      60_000,
    );
  });
});
