// Self-healing in a real cluster: a ZooKeeper server and four broker processes, topics with replication factor 3
// written with acks=all the whole time. A broker killed with SIGKILL stays gone past
// brook.self.healing.broker.failure.timeout.ms: the controller moves its replicas to the live brokers and every
// partition is back to three in-sync replicas on live brokers, no acknowledged record lost, a consumer reading
// every one. Then the same with a broker that comes back while its replicas are still moving (the moves are held
// back by the replication throttle on a topic with more data): the moves not finished are cancelled and its
// partitions are back to their replicas as before. Each case runs on a cluster of its own.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { agreedController, waitFor, waitForInSync } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const FAILURE_TIMEOUT_MS = 3000;
const PARTITIONS = 4;
/** Records of 50 kB written before the second case's broker dies: 1.2 MB a partition. */
const PRELOADED = 96;

/** Writes `prefix-N` to `topic` with acks=all, one after another, until stopped; keeps what was acknowledged. */
function startWriter(bootstrap: string, topic: string, prefix: string) {
  const producer = new Producer({
    bootstrapServers: bootstrap,
    acks: -1,
    clientId: `writer-${topic}`,
    deliveryTimeoutMs: 120_000,
    requestTimeoutMs: 10_000,
  });
  const acked = new Set<string>();
  let failures = 0;
  let running = true;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      const value = `${prefix}-${n}`;
      try {
        await producer.send({ topic, key: Buffer.from(String(n)), value: Buffer.from(value) });
        acked.add(value);
      } catch {
        failures++;
      }
    }
  })();
  return {
    acked,
    get failures() {
      return failures;
    },
    async stop() {
      running = false;
      await loop;
      await producer.close();
    },
  };
}

/** Every value in the topic, read from the beginning of each partition by a consumer without a group. */
async function readAll(bootstrap: string, topic: string, expected: number): Promise<Set<string>> {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    autoOffsetReset: 'earliest',
    clientId: 'reader',
  });
  const seen = new Set<string>();
  try {
    consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })));
    const deadline = Date.now() + 60_000;
    while (seen.size < expected && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
    }
  } finally {
    await consumer.close();
  }
  return seen;
}

describe('self-healing in a four-broker ZooKeeper cluster', () => {
  let cluster: TestCluster;
  let admin: Admin;
  let controllerId = -1;

  beforeEach(async () => {
    cluster = await startCluster({
      brokers: 4,
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'min.insync.replicas': 2,
        'brook.self.healing.broker.failure.timeout.ms': FAILURE_TIMEOUT_MS,
        'brook.self.healing.replication.throttled.rate': 100_000,
        // The throttle bites within about a second (see replication-throttle.test.ts).
        'replication.quota.window.num': 2,
        'auto.leader.rebalance.enable': false,
      },
    });
    controllerId = await agreedController(cluster.brokers);
    admin = new Admin({
      bootstrapServers: cluster.brokers[controllerId]!.bootstrap,
      clientId: 'self-healing-test',
    });
  });
  afterEach(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  async function partitions(topic: string) {
    const [t] = await admin.describeTopics([topic]);
    return t!.partitions;
  }

  /** Every partition with three replicas, all of them in sync, none of them on `gone`. */
  async function healed(topic: string, gone: number): Promise<boolean> {
    const ps = await partitions(topic);
    return (
      ps.length === PARTITIONS &&
      ps.every((p) => p.replicas.length === 3 && !p.replicas.includes(gone) && p.isr.length === 3)
    );
  }

  it("moves a killed broker's replicas to live brokers: back to three in-sync replicas, nothing acknowledged lost", async () => {
    const topic = 'healed';
    const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }]);
    assert.equal(created[0]!.error, null);
    const victim = [0, 1, 2, 3].find((id) => id !== controllerId)!;
    await waitForInSync(admin, topic, PARTITIONS, 3);
    const before = await partitions(topic);
    assert.ok(
      before.some((p) => p.replicas.includes(victim)),
      'the victim holds replicas',
    );
    const live = cluster.brokers.filter((b) => b.brokerId !== victim);
    const writer = startWriter(live.map((b) => b.bootstrap).join(','), topic, 'h');
    try {
      await waitFor('writes acknowledged', async () => (writer.acked.size >= 50 ? true : undefined));
      await cluster.brokers[victim]!.kill();
      const killedAt = Date.now();
      await waitFor(
        'every partition back to three in-sync replicas on live brokers',
        async () => ((await healed(topic, victim)) ? true : undefined),
        60_000,
      );
      assert.ok(Date.now() - killedAt >= FAILURE_TIMEOUT_MS, 'nothing moved before the timeout');
      const before = writer.acked.size;
      await waitFor('writes acknowledged after healing', async () =>
        writer.acked.size >= before + 20 ? true : undefined,
      );
    } finally {
      await writer.stop();
    }
    const log = cluster.brokers[controllerId]!.log();
    assert.match(log, new RegExp(`self-healing: broker ${victim} has been gone \\d+ ms`));
    assert.match(log, new RegExp(`every replica of failed broker ${victim} has moved to live brokers`));
    assert.match(log, /self-healing: replication throttles removed/);
    const read = await readAll(cluster.brokers[controllerId]!.bootstrap, topic, writer.acked.size);
    const lost = [...writer.acked].filter((v) => !read.has(v));
    assert.deepEqual(lost, [], `${lost.length} of ${writer.acked.size} acknowledged records not read back`);
    const [throttles] = await admin.describeConfigs([
      { type: 'topic', name: topic, keys: ['follower.replication.throttled.replicas'] },
    ]);
    assert.equal(
      throttles!.configs.find((c) => c.name === 'follower.replication.throttled.replicas')?.source,
      'DEFAULT_CONFIG',
      'the throttles are gone',
    );

    // The broker comes back after its replicas moved: it rejoins without them.
    await cluster.start(victim);
    await waitFor('the broker back', async () =>
      (await admin.describeCluster()).brokers.some((b) => b.nodeId === victim) ? true : undefined,
    );
    assert.ok((await partitions(topic)).every((p) => !p.replicas.includes(victim)));
  });

  it('a broker that comes back while its replicas move cancels the moves not finished', async () => {
    const topic = 'returning';
    const created = await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }]);
    assert.equal(created[0]!.error, null);
    await waitForInSync(admin, topic, PARTITIONS, 3);
    // About 1.2 MB a partition: a replacement replica gets 1 MiB (replica.fetch.max.bytes) in its first fetch, and
    // the rest only once the 100 kB/s throttle allows, seconds later.
    const loader = new Producer({ bootstrapServers: cluster.bootstrap, acks: -1 });
    try {
      // One send at a time, to load the partitions in a known order (the stall once seen with 20 sends in flight
      // was the client reordering its first requests to a broker; test/cluster/concurrent-acks-all.slow.ts).
      const value = Buffer.alloc(50_000, 1);
      for (let i = 0; i < PRELOADED; i++) await loader.send({ topic, partition: i % PARTITIONS, value });
    } finally {
      await loader.close();
    }
    const victim = [0, 1, 2, 3].find((id) => id !== controllerId && cluster.brokers[id] !== undefined)!;
    const before = new Map((await partitions(topic)).map((p) => [p.partition, p.replicas]));
    const writer = startWriter(
      cluster.brokers
        .filter((b) => b.brokerId !== victim)
        .map((b) => b.bootstrap)
        .join(','),
      topic,
      'r',
    );
    try {
      await cluster.brokers[victim]!.kill();
      await waitFor(
        'self-healing moving replicas off the broker',
        async () => ((await admin.listPartitionReassignments()).length > 0 ? true : undefined),
        60_000,
      );
      await cluster.start(victim);
      await waitFor(
        'no partition moving any more',
        async () => ((await admin.listPartitionReassignments()).length === 0 ? true : undefined),
        60_000,
      );
      await waitFor(
        'every partition with three in-sync replicas',
        async () => {
          const ps = await partitions(topic);
          return ps.length === PARTITIONS && ps.every((p) => p.replicas.length === 3 && p.isr.length === 3)
            ? true
            : undefined;
        },
        60_000,
      );
    } finally {
      await writer.stop();
    }
    const log = cluster.brokers[controllerId]!.log();
    const cancelled = log.match(
      new RegExp(`broker ${victim} is back before its replicas finished moving; cancelling (\\d+) moves`),
    );
    assert.ok(cancelled !== null, 'the controller cancelled the moves');
    const after = await partitions(topic);
    const restored = after.filter((p) => p.replicas.join(',') === before.get(p.partition)!.join(','));
    assert.ok(
      restored.length >= Number(cancelled[1]),
      `${cancelled[1]} moves cancelled, ${restored.length} partitions back to their replicas`,
    );
    assert.ok(
      restored.some((p) => p.replicas.includes(victim)),
      'the returning broker holds replicas again',
    );
    const read = await readAll(
      cluster.brokers[controllerId]!.bootstrap,
      topic,
      PRELOADED + writer.acked.size,
    );
    const lost = [...writer.acked].filter((v) => !read.has(v));
    assert.deepEqual(lost, [], `${lost.length} of ${writer.acked.size} acknowledged records not read back`);
  });
});
