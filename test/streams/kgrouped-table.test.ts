// KGroupedTable (KTable.groupBy then count, reduce, aggregate with adder and subtractor): Kafka's names in
// describe(), Kafka's Change format through the repartition topic, results worked out by hand in the test
// driver, and a regrouping through a broker whose final aggregates must equal a reference computed here.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Change,
  ChangedSerde,
  Consumed,
  Grouped,
  KafkaStreams,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir, TopicFollower } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

describe('KGroupedTable in the test driver', () => {
  it('describe() names the select, repartition and aggregate nodes as Kafka does', () => {
    const builder = new StreamsBuilder();
    builder
      .table('users', Consumed.with(S, S))
      .groupBy((user, region) => KeyValue.pair(region, user))
      .count();
    assert.equal(
      builder.build().describe().toString(),
      [
        'Topologies:',
        '   Sub-topology: 0',
        '    Source: KSTREAM-SOURCE-0000000001 (topics: [users])',
        '      --> KTABLE-SOURCE-0000000002',
        '    Processor: KTABLE-SOURCE-0000000002 (stores: [users-STATE-STORE-0000000000])',
        '      --> KTABLE-SELECT-0000000003',
        '      <-- KSTREAM-SOURCE-0000000001',
        '    Processor: KTABLE-SELECT-0000000003 (stores: [])',
        '      --> KSTREAM-SINK-0000000005',
        '      <-- KTABLE-SOURCE-0000000002',
        '    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)',
        '      <-- KTABLE-SELECT-0000000003',
        '',
        '  Sub-topology: 1',
        '    Source: KSTREAM-SOURCE-0000000006 (topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])',
        '      --> KTABLE-AGGREGATE-0000000007',
        '    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])',
        '      --> none',
        '      <-- KSTREAM-SOURCE-0000000006',
        '',
        '',
      ].join('\n'),
    );
  });

  it("writes Kafka's Change format: old then 0, new then 1, or new length, new, old then 2", () => {
    const serde = new ChangedSerde(S);
    assert.deepEqual(serde.serialize('t', new Change('a', null)), Buffer.from([0x61, 1]));
    assert.deepEqual(serde.serialize('t', new Change(null, 'b')), Buffer.from([0x62, 0]));
    assert.deepEqual(
      serde.serialize('t', new Change('a', 'bc')),
      Buffer.from([0, 0, 0, 1, 0x61, 0x62, 0x63, 2]),
    );
    assert.equal(serde.serialize('t', new Change<string>(null, null)), null);
    const back = serde.deserialize('t', Buffer.from([0, 0, 0, 1, 0x61, 0x62, 0x63, 2]))!;
    assert.deepEqual([back.newValue, back.oldValue], ['a', 'bc']);
    assert.deepEqual(serde.deserialize('t', Buffer.from([0x62, 0])), new Change(null, 'b'));
    assert.throws(() => serde.deserialize('t', Buffer.from([0, 0, 0, 9, 0x61, 2])), /overruns/);
    assert.throws(() => serde.deserialize('t', Buffer.from([0x61, 7])), /unknown Change flag/);
  });

  it('count, reduce and aggregate subtract the rows that leave a group and add the rows that enter', () => {
    const builder = new StreamsBuilder();
    // users: user -> "region:points"
    const usersTable = builder.table('users', Consumed.with(S, S));
    const byRegion = usersTable.groupBy(
      (user, v) => KeyValue.pair(v.split(':')[0]!, `${user}:${v.split(':')[1]}`),
      Grouped.with(S, S).withName('by-region'),
    );
    byRegion
      .count(Materialized.as<string, number>('users-per-region').withCachingDisabled())
      .toStream()
      .to('counts', Produced.with(S, L));
    byRegion
      .aggregate<number>(
        () => 0,
        (_region, v, sum) => sum + Number(v.split(':')[1]),
        (_region, v, sum) => sum - Number(v.split(':')[1]),
        Materialized.as<string, number>('points-per-region').withValueSerde(L).withCachingDisabled(),
      )
      .toStream()
      .to('points', Produced.with(S, L));
    usersTable
      .groupBy((user, v) => KeyValue.pair(v.split(':')[0]!, user), Grouped.with(S, S).withName('names'))
      .reduce(
        (names, user) => [...names.split(','), user].sort().join(','),
        (names, user) =>
          names
            .split(',')
            .filter((n) => n !== user)
            .join(','),
        Materialized.as<string, string>('names-per-region').withCachingDisabled(),
      )
      .toStream()
      .to('names', Produced.with(S, S));
    const topology = builder.build();
    assert.ok(topology.internalTopics.has('by-region-repartition'));
    assert.ok(topology.internalTopics.has('names-repartition'));
    const driver = new TopologyTestDriver(topology);
    try {
      const users = driver.createInputTopic('users', S, S);
      users.pipeInput('u1', 'eu:10');
      users.pipeInput('u2', 'eu:5');
      users.pipeInput('u3', 'na:7');
      users.pipeInput('u1', 'na:10'); // moves: eu loses it, na gains it
      users.pipeInput('u2', null); // deleted: eu loses it
      users.pipeInput('u3', 'na:1'); // same group: one Change(new, old) record
      const read = (topic: string, serde: typeof S | typeof L) =>
        driver
          .createOutputTopic(topic, S, serde as never)
          .readKeyValuesToList()
          .map((kv) => `${kv.key}=${kv.value}`);
      assert.deepEqual(read('counts', L), ['eu=1', 'eu=2', 'na=1', 'eu=1', 'na=2', 'eu=0', 'na=2']);
      assert.deepEqual(read('points', L), ['eu=10', 'eu=15', 'na=7', 'eu=5', 'na=17', 'eu=0', 'na=11']);
      assert.deepEqual(read('names', S), [
        'eu=u1',
        'eu=u1,u2',
        'na=u3',
        'eu=u2',
        'na=u1,u3',
        'eu=',
        'na=u1,u3',
      ]);
      assert.equal(driver.getKeyValueStore<string, number>('users-per-region')!.get('na'), 2);
      // The repartition topic carries Kafka's Change bytes: the last record, u3 staying in na, holds both.
      const repartition = driver
        .createOutputTopic('dummy-topology-test-driver-app-id-by-region-repartition', S, new ChangedSerde(S))
        .readKeyValuesToList();
      assert.equal(repartition.length, 7); // 3 rows in, a move (2 records), a delete, a change in place
      const last = repartition[repartition.length - 1]!;
      assert.deepEqual([last.key, last.value!.newValue, last.value!.oldValue], ['na', 'u3:1', 'u3:7']);
    } finally {
      driver.close();
    }
  });
});

describe('KGroupedTable through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'accounts', numPartitions: 3, replicationFactor: 1 },
      { topic: 'branch-counts', numPartitions: 1, replicationFactor: 1 },
      { topic: 'branch-balances', numPartitions: 1, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('regrouped counts and sums of a changing table end at the reference', async () => {
    const random = seeded(213);
    const branches = ['north', 'south', 'east', 'west'];
    const accounts = Array.from({ length: 30 }, (_, i) => `acct-${i}`);
    // Each update moves an account to a branch with a balance, or closes it (a tombstone).
    const updates = Array.from({ length: 400 }, () => {
      const account = accounts[Math.floor(random() * accounts.length)]!;
      const closed = random() < 0.1;
      const branch = branches[Math.floor(random() * branches.length)]!;
      return { account, value: closed ? null : `${branch}:${Math.floor(random() * 1000)}` };
    });
    const last = new Map<string, string | null>();
    for (const u of updates) last.set(u.account, u.value);
    const expectedCounts = new Map<string, number>();
    const expectedBalances = new Map<string, number>();
    for (const v of last.values()) {
      if (v === null) continue;
      const [branch, balance] = v.split(':') as [string, string];
      expectedCounts.set(branch, (expectedCounts.get(branch) ?? 0) + 1);
      expectedBalances.set(branch, (expectedBalances.get(branch) ?? 0) + Number(balance));
    }

    const builder = new StreamsBuilder();
    const grouped = builder
      .table('accounts', Consumed.with(S, S))
      .groupBy(
        (account, v) => KeyValue.pair(v.split(':')[0]!, `${account}:${v.split(':')[1]}`),
        Grouped.with(S, S),
      );
    grouped.count(Materialized.as('branch-count')).toStream().to('branch-counts', Produced.with(S, L));
    grouped
      .aggregate<number>(
        () => 0,
        (_b, v, sum) => sum + Number(v.split(':')[1]),
        (_b, v, sum) => sum - Number(v.split(':')[1]),
        Materialized.as<string, number>('branch-balance').withValueSerde(L),
      )
      .toStream()
      .to('branch-balances', Produced.with(S, L));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'grouped-table',
      'bootstrap.servers': bootstrap,
      'commit.interval.ms': 100,
      'state.dir': dir,
    });
    const producer = new Producer({ bootstrapServers: bootstrap });
    const counts = new TopicFollower(bootstrap, 'branch-counts', 1);
    const balances = new TopicFollower(bootstrap, 'branch-balances', 1);
    counts.start();
    balances.start();
    const final = (f: TopicFollower) =>
      new Map(
        [...f.latest]
          .filter(([, v]) => v !== null)
          .map(([k, v]) => [k, Number(v!.readBigInt64BE(0))] as const)
          .filter(([, n]) => n !== 0)
          .sort(),
      );
    const sortedCounts = new Map([...expectedCounts].sort());
    const sortedBalances = new Map([...expectedBalances].sort());
    try {
      await streams.start();
      // In batches, so that rows move while earlier moves are still in flight through the repartition topic.
      for (let i = 0; i < updates.length; i += 50)
        await producer.sendBatch(
          updates.slice(i, i + 50).map((u) => ({
            topic: 'accounts',
            key: Buffer.from(u.account),
            value: u.value === null ? null : Buffer.from(u.value),
          })),
        );
      await waitUntil(
        () =>
          JSON.stringify([...final(counts)]) === JSON.stringify([...sortedCounts]) &&
          JSON.stringify([...final(balances)]) === JSON.stringify([...sortedBalances]),
        60_000,
        () =>
          `counts ${JSON.stringify([...final(counts)])} want ${JSON.stringify([...sortedCounts])}; balances ${JSON.stringify([...final(balances)])} want ${JSON.stringify([...sortedBalances])}`,
      );
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(final(counts), sortedCounts);
      assert.deepEqual(final(balances), sortedBalances);
      // Counts never went negative on the way (a subtraction always met the row's earlier addition).
      for (const r of counts.records)
        if (r.value !== null) assert.ok(r.value.readBigInt64BE(0) >= 0n, `count of ${r.key} went negative`);
      const admin = new Admin({ bootstrapServers: bootstrap });
      try {
        const [d] = await admin.describeTopics(['grouped-table-branch-count-repartition']);
        assert.equal(d!.partitions.length, 3, 'the repartition topic takes the writer task count');
      } finally {
        await admin.close();
      }
    } finally {
      await streams.close();
      await counts.stop();
      await balances.stop();
      await producer.close();
    }
  });
});
