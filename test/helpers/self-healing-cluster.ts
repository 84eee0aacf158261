// The self-healing cluster tests' common parts: four broker processes on ZooKeeper whose controller replaces a gone
// broker's replicas after FAILURE_TIMEOUT_MS, with the moves held back by a 100 kB/s replication throttle so that a
// test can act while they run; partitions filled with 50 kB records; and the waits and reads those tests share.

import assert from 'node:assert/strict';
import type { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { waitFor, waitForInSync } from './cluster.js';
import { startCluster, type TestCluster } from './test-cluster.js';

const FAILURE_TIMEOUT_MS = 3000;
const RATE_KEY = 'leader.replication.throttled.rate';
const RECORD_BYTES = 50_000;

/** Four brokers whose self-healing starts after FAILURE_TIMEOUT_MS and copies at 100 kB/s. */
export function startThrottledHealingCluster(minInsyncReplicas: number): Promise<TestCluster> {
  return startCluster({
    brokers: 4,
    overrides: {
      'zookeeper.session.timeout.ms': 6000,
      'min.insync.replicas': minInsyncReplicas,
      'brook.self.healing.broker.failure.timeout.ms': FAILURE_TIMEOUT_MS,
      'brook.self.healing.replication.throttled.rate': 100_000,
      'replication.quota.window.num': 2,
      'auto.leader.rebalance.enable': false,
    },
  });
}

/** Writes `records` records of 50 kB round-robin over the topic's first `partitions` partitions (acks=all). */
export async function preload(
  cluster: TestCluster,
  topic: string,
  partitions: number,
  records: number,
): Promise<void> {
  const loader = new Producer({ bootstrapServers: cluster.bootstrap, acks: -1 });
  try {
    const value = Buffer.alloc(RECORD_BYTES, 1);
    for (let i = 0; i < records; i++) await loader.send({ topic, partition: i % partitions, value });
  } finally {
    await loader.close();
  }
}

/**
 * The four brokers as the controller `c` and three others: `v` (to fail), `o` and `t`. Creates `topic` with
 * `partitions` partitions on v and o and a ballast topic of 8 partitions on c and o, so that self-healing picks t,
 * the least loaded, for v's replicas; fills `topic` with `records` records.
 */
export async function createOnVictimAndOther(
  cluster: TestCluster,
  admin: Admin,
  c: number,
  topic: string,
  partitions: number,
  records: number,
): Promise<{ v: number; o: number; t: number }> {
  const [v, o, t] = [0, 1, 2, 3].filter((id) => id !== c) as [number, number, number];
  const spread = (n: number, replicas: number[]) =>
    Object.fromEntries(Array.from({ length: n }, (_, p) => [p, replicas]));
  const created = await admin.createTopics([
    { topic, replicaAssignment: spread(partitions, [v, o]) },
    { topic: 'ballast', replicaAssignment: spread(8, [c, o]) },
  ]);
  assert.deepEqual(
    created.map((r) => r.error),
    [null, null],
  );
  await waitForInSync(admin, topic, partitions, 2);
  await preload(cluster, topic, partitions, records);
  return { v, o, t };
}

/** Waits until reassignments run and every one adds broker `t` alone. */
export async function waitForMovesTo(admin: Admin, t: number): Promise<void> {
  await waitFor(
    `self-healing moving the replicas to broker ${t}`,
    async () => {
      const list = await admin.listPartitionReassignments();
      return list.length > 0 && list.every((r) => r.addingReplicas.join(',') === String(t))
        ? true
        : undefined;
    },
    60_000,
  );
}

/** Waits until every partition of `topic` has two in-sync replicas, both among `brokers`. */
export async function waitForTwoInSyncOn(
  admin: Admin,
  topic: string,
  partitions: number,
  brokers: readonly number[],
): Promise<void> {
  await waitFor(
    `every partition on two in-sync replicas among brokers ${brokers.join(', ')}`,
    async () => {
      const [d] = await admin.describeTopics([topic]);
      const ps = d!.partitions;
      return ps.length === partitions &&
        ps.every(
          (p) =>
            p.replicas.length === 2 && p.isr.length === 2 && p.replicas.every((r) => brokers.includes(r)),
        )
        ? true
        : undefined;
    },
    90_000,
  );
}

/** The brokers among `ids` whose replication throttle rate is set dynamically (by self-healing in these tests). */
export async function throttledBrokers(admin: Admin, ids: readonly number[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const [r] = await admin.describeConfigs([{ type: 'broker', name: String(id), keys: [RATE_KEY] }]);
    if (r!.configs.find((x) => x.name === RATE_KEY)?.source === 'DYNAMIC_BROKER_CONFIG') out.push(id);
  }
  return out;
}
