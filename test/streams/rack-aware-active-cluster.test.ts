// KIP-925 rack-aware active task placement through a real three-broker cluster, one broker per rack (a, b, c).
// The input topic's six partitions live two per rack (partitions 0-1 on broker 0 in rack a, 2-3 in b, 4-5 in
// c); three instances of a count, one per rack (client.rack), with rack.aware.assignment.strategy=min_traffic:
// once all three have joined, every instance runs exactly the two tasks whose partitions are in its rack (the
// balanced placement alone deals the tasks round-robin, tasks i and i + 3 to one client, which never matches a
// rack's pair), and the counts equal the reference. Bad strategy values get Kafka's config error.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { KafkaStreams, StreamsBuilder, StreamsConfigError } from '../../src/streams/index.js';
import { agreedLeader } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { waitUntil } from '../helpers/wait.js';
import { activeTasks, countByKeyTopology, stateDir, TopicFollower } from './streams-helpers.js';

const RACKS = ['a', 'b', 'c'];
const PARTITIONS = 6;
const INPUT = 'rack-input';
const OUTPUT = 'rack-counts';

function countApp(bootstrap: string, rack: string, dir: string, strategy: string): KafkaStreams {
  return new KafkaStreams(countByKeyTopology(INPUT, OUTPUT, 'rack-counts-store'), {
    'application.id': 'rack-aware-active',
    'bootstrap.servers': bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 200,
    'client.rack': rack,
    'rack.aware.assignment.strategy': strategy as 'min_traffic',
    'session.timeout.ms': 10_000,
    'heartbeat.interval.ms': 500,
  });
}

describe('rack-aware active task placement across three racks (KIP-925)', () => {
  let cluster: TestCluster | undefined;
  const dirs: string[] = [];

  before(async () => {
    cluster = await startCluster({
      overrides: { 'group.initial.rebalance.delay.ms': 0 },
      brokerOverrides: Object.fromEntries(RACKS.map((rack, id) => [id, { 'broker.rack': rack }])),
    });
    await createTopicOn(cluster.brokers[0]!, INPUT, {
      assignments: Object.fromEntries(Array.from({ length: PARTITIONS }, (_, p) => [p, [Math.floor(p / 2)]])),
    });
    await createTopicOn(cluster.brokers[0]!, OUTPUT, { numPartitions: 1, replicationFactor: 1 });
    await agreedLeader(cluster.brokers, INPUT, undefined, 60_000);
    await agreedLeader(cluster.brokers, OUTPUT, undefined, 60_000);
  });

  after(async () => {
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('rejects an unknown strategy and a negative cost with Kafka config errors', () => {
    assert.throws(
      () => countApp('localhost:1', 'a', 'unused', 'nearest'),
      (e: Error) =>
        e instanceof StreamsConfigError &&
        e.message ===
          'Invalid value nearest for configuration rack.aware.assignment.strategy: String must be one of: none, min_traffic, balance_subtopology',
    );
    assert.throws(
      () =>
        new KafkaStreams(new StreamsBuilder().build(), {
          'application.id': 'x',
          'bootstrap.servers': 'localhost:1',
          'rack.aware.assignment.traffic_cost': -1,
        }),
      StreamsConfigError,
    );
  });

  it('min_traffic: each instance runs the tasks of its rack and the counts are right', async () => {
    const instances = RACKS.map((rack) => {
      const dir = stateDir();
      dirs.push(dir);
      return { rack, streams: countApp(cluster!.bootstrap, rack, dir, 'min_traffic') };
    });
    // Tasks whose partitions are in each rack: 0_0, 0_1 in a; 0_2, 0_3 in b; 0_4, 0_5 in c.
    const expected: Record<string, string[]> = { a: ['0_0', '0_1'], b: ['0_2', '0_3'], c: ['0_4', '0_5'] };
    const follower = new TopicFollower(cluster!.bootstrap, OUTPUT, 1);
    follower.start();
    const what = () =>
      instances.map((i) => `${i.rack}: ${i.streams.state()} ${activeTasks(i.streams).join(',')}`).join('; ');
    try {
      for (const i of instances) await i.streams.start();
      await waitUntil(
        () =>
          instances.every(
            (i) =>
              i.streams.state() === 'RUNNING' &&
              activeTasks(i.streams).join(',') === expected[i.rack]!.join(','),
          ),
        120_000,
        what,
      );
      const producer = new Producer({ bootstrapServers: cluster!.bootstrap });
      const reference = new Map<string, number>();
      try {
        const records = [];
        for (let p = 0; p < PARTITIONS; p++)
          for (let n = 0; n < 5 + p; n++) {
            const key = `key-${p}-${n % 3}`;
            reference.set(key, (reference.get(key) ?? 0) + 1);
            records.push({ topic: INPUT, partition: p, key: Buffer.from(key), value: Buffer.from('v') });
          }
        await producer.sendBatch(records);
      } finally {
        await producer.close();
      }
      await waitUntil(
        () => [...reference].every(([k, n]) => follower.latest.get(k)?.readBigInt64BE() === BigInt(n)),
        90_000,
        () =>
          `counts ${[...follower.latest].map(([k, v]) => `${k}=${v?.readBigInt64BE()}`).join(',')}; ${what()}`,
      );
      // The placement held while the records were processed (no rebalance moved a task off its rack).
      for (const i of instances) assert.deepEqual(activeTasks(i.streams), expected[i.rack], what());
    } finally {
      await Promise.all(instances.map((i) => i.streams.close()));
      await follower.stop();
    }
  });
});
