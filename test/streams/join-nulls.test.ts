// Stream-table and stream-globalTable joins through a broker, for records with a null value, a null key or a
// global key selector that answers null. Kafka's KStreamKTableJoinProcessor (3.7+, KIP-962) drops a stream record
// with a null value in every kind of join, and a record whose join key is null, except in a left join whose
// record key itself is null (the joiner then gets a null table value); a global join's key is the selector's
// answer, so a left join of a keyed record whose selector answers null drops it too. A windowed stream-stream
// join (KStreamKStreamJoin, 3.7+) drops null keys and values too, except that the outer side of a left or outer
// join emits a record with a null key (and a value) at once, joined with null: it can have no partner.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  JoinWindows,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

function topology() {
  const builder = new StreamsBuilder();
  const customers = builder.table('customers', Consumed.with(S, S));
  const regions = builder.globalTable('regions', Consumed.with(S, S));
  const orders = builder.stream('orders', Consumed.with(S, S));
  const joiner = (order: string | null, customer: string | null) => `${order}+${customer}`;
  orders.join(customers, joiner).to('inner-out', Produced.with(S, S));
  orders.leftJoin(customers, joiner).to('left-out', Produced.with(S, S));
  // An order's value is "<region>:<item>"; the region "-" stands for none.
  const regionOf = (_key: string, order: string) => {
    const region = order.split(':')[0]!;
    return region === '-' ? null : region;
  };
  orders
    .leftJoin(regions, regionOf, (order: string | null, region: string | null) => `${order}@${region}`)
    .to('global-out', Produced.with(S, S));
  return builder.build();
}

function streamStreamTopology() {
  const builder = new StreamsBuilder();
  const left = builder.stream('ss-left', Consumed.with(S, S));
  const right = builder.stream('ss-right', Consumed.with(S, S));
  const joiner = (l: string | null, r: string | null) => `${l}+${r}`;
  const windows = JoinWindows.ofTimeDifferenceWithNoGrace(100);
  left.leftJoin(right, joiner, windows).to('ss-left-out', Produced.with(S, S));
  left.outerJoin(right, joiner, windows).to('ss-outer-out', Produced.with(S, S));
  return builder.build();
}

const text = (f: TopicFollower) => f.records.map((r) => `${r.key}=${r.value?.toString() ?? 'null'}`);

describe('joins of null keys and values through a broker', () => {
  const cluster = useStreamsBroker(
    {
      customers: 1,
      regions: 1,
      orders: 1,
      'inner-out': 1,
      'left-out': 1,
      'global-out': 1,
      'ss-left': 1,
      'ss-right': 1,
      'ss-left-out': 1,
      'ss-outer-out': 1,
    },
    2,
  );

  it('drops null values, and global left joins of keyed records without a global key, as Kafka', async () => {
    const producer = new Producer({ bootstrapServers: cluster.bootstrap });
    const buf = (s: string | null) => (s === null ? null : Buffer.from(s));
    const send = (topic: string, rows: [string | null, string | null][], timestamp: number) =>
      producer.sendBatch(
        rows.map(([key, value], i) => ({
          topic,
          key: buf(key),
          value: buf(value),
          timestamp: timestamp + i,
        })),
      );
    await send(
      'regions',
      [
        ['fr', 'eu'],
        ['de', 'eu'],
      ],
      1,
    );
    await send(
      'customers',
      [
        ['c1', 'C1'],
        ['c3', 'C3'],
      ],
      1,
    );
    const streams = new KafkaStreams(topology(), {
      'application.id': 'join-nulls',
      'bootstrap.servers': cluster.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': cluster.dirs[0]!,
    });
    const out = {
      inner: new TopicFollower(cluster.bootstrap, 'inner-out', 1),
      left: new TopicFollower(cluster.bootstrap, 'left-out', 1),
      global: new TopicFollower(cluster.bootstrap, 'global-out', 1),
    };
    for (const f of Object.values(out)) f.start();
    try {
      await streams.start();
      // The table is loaded before any order comes, so every order sees it.
      await waitUntil(
        () => streams.processedRecords() >= 2,
        30_000,
        () => 'customers not loaded',
      );
      await send(
        'orders',
        [
          ['c1', 'fr:a'],
          ['c1', null],
          [null, 'de:b'],
          [null, null],
          ['c2', 'xx:c'],
          ['c2', null],
          ['c3', '-:d'],
          ['c3', 'end:e'],
        ],
        100,
      );
      // The last order reaches every output; anything of the earlier ones has come out before it.
      await waitUntil(
        () => Object.values(out).every((f) => text(f).some((t) => t.startsWith('c3=end:e'))),
        60_000,
        () => `outputs so far: ${JSON.stringify(Object.values(out).map(text))}`,
      );
      assert.deepEqual(text(out.inner), ['c1=fr:a+C1', 'c3=-:d+C3', 'c3=end:e+C3']);
      assert.deepEqual(text(out.left), [
        'c1=fr:a+C1',
        // KIP-962: a left join keeps a record whose key is null (but not one whose value is null too).
        '=de:b+null',
        'c2=xx:c+null',
        'c3=-:d+C3',
        'c3=end:e+C3',
      ]);
      // "-:d" has a key but no global key: dropped, as Kafka drops it; "de:b" has no key but a global key.
      assert.deepEqual(text(out.global), ['c1=fr:a@eu', '=de:b@eu', 'c2=xx:c@null', 'c3=end:e@null']);
    } finally {
      await streams.close();
      for (const f of Object.values(out)) await f.stop();
      await producer.close();
    }
  });

  it('stream-stream left and outer joins emit a null-key record of their outer side at once, as Kafka', async () => {
    const producer = new Producer({ bootstrapServers: cluster.bootstrap });
    const streams = new KafkaStreams(streamStreamTopology(), {
      'application.id': 'ss-join-nulls',
      'bootstrap.servers': cluster.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': cluster.dirs[1]!,
    });
    const out = {
      left: new TopicFollower(cluster.bootstrap, 'ss-left-out', 1),
      outer: new TopicFollower(cluster.bootstrap, 'ss-outer-out', 1),
    };
    for (const f of Object.values(out)) f.start();
    const buf = (s: string | null) => (s === null ? null : Buffer.from(s));
    try {
      await producer.sendBatch(
        (
          [
            ['ss-left', null, 'x', 10],
            ['ss-right', null, 'y', 20],
            ['ss-left', 'k', null, 25],
            ['ss-left', 'k', 'a', 30],
            ['ss-right', 'k', 'b', 40],
            ['ss-left', 'm', 'e1', 1000],
            ['ss-right', 'm', 'e2', 1001],
          ] as const
        ).map(([topic, key, value, timestamp]) => ({ topic, key: buf(key), value: buf(value), timestamp })),
      );
      await streams.start();
      await waitUntil(
        () => Object.values(out).every((f) => text(f).includes('m=e1+e2')),
        60_000,
        () => `outputs so far: ${JSON.stringify(Object.values(out).map(text))}`,
      );
      // A left join's outer side is the left one: the right side's null-key record is dropped.
      assert.deepEqual(text(out.left), ['=x+null', 'k=a+b', 'm=e1+e2']);
      assert.deepEqual(text(out.outer), ['=x+null', '=null+y', 'k=a+b', 'm=e1+e2']);
    } finally {
      await streams.close();
      for (const f of Object.values(out)) await f.stop();
      await producer.close();
    }
  });
});
