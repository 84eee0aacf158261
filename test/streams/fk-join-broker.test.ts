// Foreign-key joins through a broker: an orders table (3 partitions) joined to a customers table (2 partitions,
// so not co-partitioned) by the customer id inside each order, inner and left, over seeded updates with foreign
// key changes, null foreign keys and deletes on both sides. The outputs, read as tables, must equal the joins of
// the final input tables computed here; then customers that orders left behind are renamed, and no output may
// ever name them (a stale subscription would). Also checks the internal topics' partition counts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { keyPartition } from '../../src/client/partitioners.js';
import { Producer } from '../../src/client/producer.js';
import { decodeResponse, decodeSubscription } from '../../src/streams/fk-join.js';
import {
  Consumed,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  TableJoined,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const ORDERS = 3;
const CUSTOMERS = 2;

/** Orders are `<customer id or ->|<item>`: "-" is a null foreign key. */
const customerOf = (order: string) => {
  const id = order.split('|')[0]!;
  return id === '-' ? null : id;
};
const joiner = (order: string, customer: string | null) => `${order.split('|')[1]}/${customer ?? 'none'}`;

function topology() {
  const builder = new StreamsBuilder();
  const orders = builder.table('orders', Consumed.with(S, S));
  const customers = builder.table('customers', Consumed.with(S, S));
  orders.join(customers, customerOf, joiner).toStream().to('fk-inner', Produced.with(S, S));
  orders
    .leftJoin(customers, customerOf, joiner, TableJoined.as('orders-left'))
    .toStream()
    .to('fk-left', Produced.with(S, S));
  return builder.build();
}

function reference(orders: Map<string, string>, customers: Map<string, string>, left: boolean) {
  const out = new Map<string, string>();
  for (const [key, order] of orders) {
    const fk = customerOf(order);
    const customer = fk === null ? undefined : customers.get(fk);
    if (customer !== undefined) out.set(key, joiner(order, customer));
    else if (left) out.set(key, joiner(order, null));
  }
  return out;
}

function view(f: TopicFollower): Map<string, string> {
  return new Map(
    [...f.latest].filter(([, v]) => v !== null).map(([k, v]) => [k, v!.toString()] as [string, string]),
  );
}

const same = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

describe('foreign-key joins through a broker', () => {
  const env = useStreamsBroker(
    {
      orders: ORDERS,
      customers: CUSTOMERS,
      'fk-inner': 1,
      'fk-left': 1,
      'orders-custom': ORDERS,
      'customers-custom': CUSTOMERS,
      'fk-custom': 1,
      'orders-own': ORDERS,
      'customers-plain': CUSTOMERS,
      'fk-own': 1,
    },
    2,
  );

  it('inner and left joins equal their references; abandoned foreign keys never show up', async () => {
    const random = seeded(213);
    const orderTable = new Map<string, string>();
    const customerTable = new Map<string, string>();
    const everReferenced = new Set<string>();
    const updates: { topic: string; key: string; value: string | null }[] = [];
    for (let i = 0; i < 400; i++) {
      if (random() < 0.6) {
        const key = `o${Math.floor(random() * 30)}`;
        if (random() < 0.1) {
          updates.push({ topic: 'orders', key, value: null });
          orderTable.delete(key);
        } else {
          const fk = random() < 0.08 ? '-' : `c${Math.floor(random() * 12)}`;
          if (fk !== '-') everReferenced.add(fk);
          const value = `${fk}|item${i}`;
          updates.push({ topic: 'orders', key, value });
          orderTable.set(key, value);
        }
      } else {
        const key = `c${Math.floor(random() * 12)}`;
        const value = random() < 0.15 ? null : `name${i}`;
        updates.push({ topic: 'customers', key, value });
        if (value === null) customerTable.delete(key);
        else customerTable.set(key, value);
      }
    }
    const rec = (u: { topic: string; key: string; value: string | null }) => ({
      topic: u.topic,
      key: Buffer.from(u.key),
      value: u.value === null ? null : Buffer.from(u.value),
    });

    const streams = new KafkaStreams(topology(), {
      'application.id': 'fk',
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': env.dirs[0]!,
    });
    const inner = new TopicFollower(env.bootstrap, 'fk-inner', 1);
    const left = new TopicFollower(env.bootstrap, 'fk-left', 1);
    inner.start();
    left.start();
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    try {
      await streams.start();
      // One producer, in order: each key's updates reach its partition in order, as a table's must.
      await producer.sendBatch(updates.map(rec));
      const settle = async (phase: string) => {
        const expectInner = reference(orderTable, customerTable, false);
        const expectLeft = reference(orderTable, customerTable, true);
        await waitUntil(
          () => same(view(inner), expectInner) && same(view(left), expectLeft),
          90_000,
          () =>
            `${phase}: inner ${view(inner).size} of ${expectInner.size} rows, left ${view(left).size} of ${expectLeft.size}; processed ${streams.processedRecords()}`,
        );
        await new Promise((r) => setTimeout(r, 500)); // room for a wrong late result to show up
        assert.deepEqual(view(inner), expectInner, `${phase}: inner join`);
        assert.deepEqual(view(left), expectLeft, `${phase}: left join`);
      };
      await settle('after the updates');

      // Customers no order points at any more (some did before): rename them, then every customer still
      // referenced, on each partition after the abandoned ones, so that once the referenced renames show up the
      // abandoned ones were processed too.
      const referenced = new Set([...orderTable.values()].map(customerOf).filter((c) => c !== null));
      const abandoned = [...everReferenced].filter((c) => !referenced.has(c) && customerTable.has(c));
      assert.ok(abandoned.length > 0, 'the seeded updates leave some customers behind');
      const partitionsWithReferenced = new Set(
        [...referenced].map((c) => keyPartition(Buffer.from(c), CUSTOMERS)),
      );
      assert.equal(partitionsWithReferenced.size, CUSTOMERS, 'each customers partition has a referenced row');
      const renames = [...abandoned, ...referenced].map((key) => ({
        topic: 'customers',
        key,
        value: `renamed-${key}`,
      }));
      for (const r of renames) customerTable.set(r.key, r.value);
      await producer.sendBatch(renames.map(rec));
      await settle('after the renames');
      const stale = [...inner.records, ...left.records].filter((r) =>
        abandoned.some((c) => r.value?.toString().endsWith(`/renamed-${c}`)),
      );
      assert.deepEqual(stale, [], 'no result names a customer its order left');

      const topics = await admin.describeTopics([
        'fk-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic',
        'fk-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic',
        'fk-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010-changelog',
        'fk-orders-left-subscription-registration-topic',
        'fk-orders-left-subscription-response-topic',
        'fk-orders-left-subscription-store-changelog',
      ]);
      assert.deepEqual(
        topics.map((t) => [t.topic, t.error, t.partitions.length]).sort(),
        [
          ['fk-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic', null, CUSTOMERS],
          ['fk-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic', null, ORDERS],
          ['fk-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010-changelog', null, CUSTOMERS],
          ['fk-orders-left-subscription-registration-topic', null, CUSTOMERS],
          ['fk-orders-left-subscription-response-topic', null, ORDERS],
          ['fk-orders-left-subscription-store-changelog', null, CUSTOMERS],
        ].sort(),
      );
    } finally {
      await streams.close();
      await inner.stop();
      await left.stop();
      await producer.close();
      await admin.close();
    }
  });

  it('TableJoined partitioners place subscriptions and responses for custom-partitioned tables', async () => {
    // Both tables' topics are written with a custom partitioning: the number in the key modulo the partitions.
    const byNumber = (key: string, n: number) => Number(key.slice(1)) % n;
    const builder = new StreamsBuilder();
    const orders = builder.table('orders-custom', Consumed.with(S, S));
    const customers = builder.table('customers-custom', Consumed.with(S, S));
    orders
      .leftJoin(
        customers,
        customerOf,
        joiner,
        TableJoined.with<string, string>(
          (_topic, key, _value, n) => byNumber(key, n),
          (_topic, key, _value, n) => byNumber(key, n),
        ).withName('custom'),
      )
      .toStream()
      .to('fk-custom', Produced.with(S, S));
    const random = seeded(2023);
    const orderTable = new Map<string, string>();
    const customerTable = new Map<string, string>();
    const records: { topic: string; key: Buffer; value: Buffer; partition: number }[] = [];
    for (let i = 0; i < 20; i++) {
      const key = `c${i}`;
      customerTable.set(key, `name${i}`);
      records.push({
        topic: 'customers-custom',
        key: Buffer.from(key),
        value: Buffer.from(`name${i}`),
        partition: byNumber(key, CUSTOMERS),
      });
    }
    for (let i = 0; i < 150; i++) {
      const key = `o${Math.floor(random() * 40)}`;
      // Some null foreign keys: their keyless subscriptions must not reach the partitioner.
      const value = `${random() < 0.1 ? '-' : `c${Math.floor(random() * 20)}`}|item${i}`;
      orderTable.set(key, value);
      records.push({
        topic: 'orders-custom',
        key: Buffer.from(key),
        value: Buffer.from(value),
        partition: byNumber(key, ORDERS),
      });
    }
    const expected = reference(orderTable, customerTable, true);
    // With the default partitioner, most subscriptions would reach a task without their customer (and most
    // responses one without their order): the check below fails without the partitioners.
    const misplaced = [...orderTable.keys()].filter(
      (k) => keyPartition(Buffer.from(k), ORDERS) !== byNumber(k, ORDERS),
    );
    assert.ok(misplaced.length > 5, 'the custom partitioning differs from the default for many orders');

    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'fk-custom',
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': env.dirs[1]!,
    });
    const out = new TopicFollower(env.bootstrap, 'fk-custom', 1);
    out.start();
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    try {
      await streams.start();
      await producer.sendBatch(records);
      await waitUntil(
        () => same(view(out), expected),
        90_000,
        () =>
          `${[...expected].filter(([k, v]) => view(out).get(k) !== v).length} of ${expected.size} rows differ`,
      );
      await new Promise((r) => setTimeout(r, 500)); // room for a wrong late result to show up
      assert.deepEqual(view(out), expected);
    } finally {
      await streams.close();
      await out.stop();
      await producer.close();
    }
  });

  it("without partitioners, answers go back to the left record's partition (SubscriptionWrapper version 1)", async () => {
    // Orders written with a custom partitioning and no TableJoined partitioner: the subscriptions carry each
    // order's partition and the answers go there, as Kafka 3.4+ routes them. Routed by the key's hash instead
    // (version 0), most answers would reach a task without their order and be lost.
    const byNumber = (key: string, n: number) => Number(key.slice(1)) % n;
    const builder = new StreamsBuilder();
    const orders = builder.table('orders-own', Consumed.with(S, S));
    const customers = builder.table('customers-plain', Consumed.with(S, S));
    orders
      .join(customers, customerOf, joiner, TableJoined.as('own'))
      .toStream()
      .to('fk-own', Produced.with(S, S));
    const random = seeded(34);
    const orderTable = new Map<string, string>();
    const customerTable = new Map<string, string>();
    const records: { topic: string; key: Buffer; value: Buffer; partition?: number }[] = [];
    for (let i = 0; i < 20; i++) {
      customerTable.set(`c${i}`, `name${i}`);
      records.push({ topic: 'customers-plain', key: Buffer.from(`c${i}`), value: Buffer.from(`name${i}`) });
    }
    const orderPartition = new Map<string, number>();
    for (let i = 0; i < 150; i++) {
      const key = `o${Math.floor(random() * 40)}`;
      const value = `c${Math.floor(random() * 20)}|item${i}`;
      orderTable.set(key, value);
      orderPartition.set(key, byNumber(key, ORDERS));
      records.push({
        topic: 'orders-own',
        key: Buffer.from(key),
        value: Buffer.from(value),
        partition: byNumber(key, ORDERS),
      });
    }
    const misplaced = [...orderTable.keys()].filter(
      (k) => keyPartition(Buffer.from(k), ORDERS) !== byNumber(k, ORDERS),
    );
    assert.ok(misplaced.length > 5, 'the custom partitioning differs from the default for many orders');
    const expected = reference(orderTable, customerTable, false);

    const app = 'fk-own';
    const streams = new KafkaStreams(builder.build(), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'commit.interval.ms': 100,
      'state.dir': env.dirs[0]!,
    });
    const out = new TopicFollower(env.bootstrap, 'fk-own', 1);
    const subscriptions = new TopicFollower(
      env.bootstrap,
      `${app}-own-subscription-registration-topic`,
      CUSTOMERS,
    );
    const responses = new TopicFollower(env.bootstrap, `${app}-own-subscription-response-topic`, ORDERS);
    out.start();
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    try {
      await streams.start();
      subscriptions.start();
      responses.start();
      await producer.sendBatch(records);
      await waitUntil(
        () => same(view(out), expected),
        90_000,
        () =>
          `${[...expected].filter(([k, v]) => view(out).get(k) !== v).length} of ${expected.size} rows differ`,
      );
      await waitUntil(
        () => subscriptions.records.length >= orderTable.size && responses.records.length >= expected.size,
        30_000,
        () => `${subscriptions.records.length} subscriptions, ${responses.records.length} responses read`,
      );
      // Every subscription is version 1 and names its order's partition; every answer lands there.
      for (const r of subscriptions.records) {
        assert.equal(r.value![0]! & 0x7f, 1);
        const sub = decodeSubscription(r.value!);
        assert.equal(sub.primaryPartition, orderPartition.get(sub.primaryKey.toString()));
      }
      for (const r of responses.records) {
        assert.equal(r.partition, orderPartition.get(r.key), `the answer to ${r.key}`);
        assert.equal(decodeResponse(r.value!).hash?.length ?? 16, 16);
      }
      assert.ok(
        responses.records.some((r) => keyPartition(Buffer.from(r.key), ORDERS) !== r.partition),
        'some answers went where the key does not hash',
      );
    } finally {
      await streams.close();
      await out.stop();
      await subscriptions.stop();
      await responses.stop();
      await producer.close();
    }
  });
});
