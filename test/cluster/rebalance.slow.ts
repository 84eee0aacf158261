// `brook rebalance` against a real cluster: three brokers on racks a, b and c, a topic whose replicas are all on
// brokers 0 and 1. A dry run prints a plan and moves nothing; --add-broker 2 --execute moves the plan's partitions
// (and only those) with a throttle, copies exactly the bytes the plan announced, and ends with the throttles gone
// and the preferred leaders leading; --remove-broker 0 --execute then drains broker 0.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { run } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const TOPIC = 'lopsided';
const PARTITIONS = 6;

function brook(...args: string[]) {
  return run(process.execPath, [BROOK, ...args], { timeoutMs: 120_000 });
}

/** The moves a plan printed: `t-p: [a,b] -> [c,d] (n bytes)`. */
function plannedMoves(stdout: string) {
  return [...stdout.matchAll(/^ {2}(\S+)-(\d+): \[([\d,]*)\] -> \[([\d,]*)\] \((\d+) bytes\)$/gm)].map(
    (m) => ({
      partition: Number(m[2]),
      from: m[3]!.split(',').map(Number),
      to: m[4]!.split(',').map(Number),
      bytes: Number(m[5]),
    }),
  );
}

describe('brook rebalance', () => {
  let cluster: TestCluster;
  let admin: Admin;

  before(async () => {
    cluster = await startCluster({
      brokerOverrides: { 0: { 'broker.rack': 'a' }, 1: { 'broker.rack': 'b' }, 2: { 'broker.rack': 'c' } },
      overrides: { 'auto.leader.rebalance.enable': false },
    });
    admin = new Admin({ bootstrapServers: cluster.bootstrap, clientId: 'rebalance-test' });
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  async function replicas(): Promise<Map<number, number[]>> {
    const [t] = await admin.describeTopics([TOPIC]);
    return new Map(t!.partitions.map((p) => [p.partition, p.replicas]));
  }

  it('plans on a dry run, then moves what it planned onto the added broker, then drains a removed one', async () => {
    const assignment = Object.fromEntries(
      Array.from({ length: PARTITIONS }, (_, p) => [p, p % 2 === 0 ? [0, 1] : [1, 0]]),
    );
    const created = await admin.createTopics([{ topic: TOPIC, replicaAssignment: assignment }]);
    assert.equal(created[0]!.error, null);
    await waitFor('replicas in sync', async () => {
      const [t] = await admin.describeTopics([TOPIC]);
      return t!.partitions.length === PARTITIONS && t!.partitions.every((p) => p.isr.length === 2)
        ? true
        : undefined;
    });
    const producer = new Producer({ bootstrapServers: cluster.bootstrap, acks: -1 });
    try {
      // Partition p gets (p + 1) x 20 records of 2 kB: sizes differ, so bytes matter to the plan.
      for (let p = 0; p < PARTITIONS; p++)
        for (let i = 0; i < (p + 1) * 20; i++)
          await producer.send({ topic: TOPIC, partition: p, value: Buffer.alloc(2000, p) });
    } finally {
      await producer.close();
    }
    const bootstrap = cluster.brokers[0]!.bootstrap;
    const before = await replicas();

    const dry = await brook('rebalance', '--bootstrap-server', bootstrap, '--add-broker', '2');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /This was a dry run: nothing moved/);
    const planned = plannedMoves(dry.stdout);
    assert.ok(
      planned.some((m) => m.to.includes(2)),
      dry.stdout,
    );
    assert.deepEqual(await replicas(), before, 'a dry run moves nothing');

    const executed = await brook(
      'rebalance',
      '--bootstrap-server',
      bootstrap,
      '--add-broker',
      '2',
      '--execute',
      '--throttle',
      '50000000',
    );
    assert.equal(executed.code, 0, `${executed.stdout}\n${executed.stderr}`);
    assert.deepEqual(plannedMoves(executed.stdout), planned, 'the plan executed is the one shown');
    assert.match(executed.stdout, /All moves done/);
    const now = await replicas();
    for (const [p, r] of before) {
      const move = planned.find((m) => m.partition === p);
      assert.deepEqual(now.get(p), move?.to ?? r, `partition ${p} as planned`);
    }
    const perBroker = [0, 1, 2].map((b) => [...now.values()].filter((r) => r.includes(b)).length);
    assert.ok(Math.max(...perBroker) - Math.min(...perBroker) <= 1, `replicas per broker ${perBroker}`);
    // The data copied is what the plan said: the sizes of the replicas new on broker 2.
    const dirs = await admin.describeLogDirs([2]);
    const copied = dirs
      .flatMap((d) => d.partitions)
      .filter((p) => p.topic === TOPIC)
      .reduce((n, p) => n + p.size, 0);
    assert.equal(
      copied,
      planned.reduce((n, m) => n + m.bytes, 0),
    );
    const [config] = await admin.describeConfigs([
      { type: 'broker', name: '2', keys: ['follower.replication.throttled.rate'] },
    ]);
    assert.notEqual(config!.configs[0]?.source, 'DYNAMIC_BROKER_CONFIG', 'the throttle was removed');
    const [t] = await admin.describeTopics([TOPIC]);
    assert.ok(
      t!.partitions.every((p) => p.leader === p.replicas[0]),
      'the preferred replicas lead',
    );

    const drained = await brook(
      'rebalance',
      '--bootstrap-server',
      bootstrap,
      '--remove-broker',
      '0',
      '--execute',
    );
    assert.equal(drained.code, 0, `${drained.stdout}\n${drained.stderr}`);
    const last = await replicas();
    assert.ok(
      [...last.values()].every((r) => !r.includes(0) && r.length === 2),
      JSON.stringify([...last]),
    );
  });
});
