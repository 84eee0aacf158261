// Foreign-key table-table joins (KIP-213) in the test driver: Kafka's node, store and internal topic names in
// describe(), the wrapper formats, hand-worked sequences (foreign key changes, deletes on either side, null
// foreign keys, left-join nulls), and a seeded run of 600 updates after each of which the join's output, read as
// a table, equals the join of the two input tables computed here.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeResponse,
  decodeSubscription,
  encodeResponse,
  encodeSubscription,
  Instruction,
  valueHash,
} from '../../src/streams/fk-join.js';
import {
  Consumed,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  TableJoined,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { murmur3Hash128 } from '../../src/streams/state/murmur3.js';
import { seeded } from './streams-helpers.js';

const S = Serdes.String();

/** Orders are `<customer id or ->|<item>`: "-" is a null foreign key. */
const customerOf = (order: string) => {
  const id = order.split('|')[0]!;
  return id === '-' ? null : id;
};
const joiner = (order: string, customer: string | null) => `${order.split('|')[1]}/${customer ?? 'none'}`;

function topology(kind: 'join' | 'leftJoin', options: { named?: string; materialized?: string } = {}) {
  const builder = new StreamsBuilder();
  const orders = builder.table('orders', Consumed.with(S, S));
  const customers = builder.table('customers', Consumed.with(S, S));
  const joined = options.named === undefined ? undefined : TableJoined.as<string, string>(options.named);
  const m =
    options.materialized === undefined ? undefined : Materialized.as<string, string>(options.materialized);
  const table =
    kind === 'join'
      ? orders.join(customers, customerOf, joiner, joined, m)
      : orders.leftJoin(customers, customerOf, joiner, joined, m);
  table.toStream().to('out', Produced.with(S, S));
  return builder.build();
}

function drive(kind: 'join' | 'leftJoin', options: { named?: string; materialized?: string } = {}) {
  const driver = new TopologyTestDriver(topology(kind, options), {
    'application.id': 'fk',
    // Every change goes downstream at once, so each step's output can be checked.
    'statestore.cache.max.bytes': 0,
  });
  return {
    driver,
    orders: driver.createInputTopic('orders', S, S),
    customers: driver.createInputTopic('customers', S, S),
    out: driver.createOutputTopic('out', S, S),
  };
}

const FK = 'KTABLE-FK-JOIN-';

describe('foreign-key table-table joins', () => {
  it('describe() shows Kafka names: two sub-topologies, subscription and response topics', () => {
    const text = topology('join').describe().toString();
    assert.equal(
      text,
      [
        'Topologies:',
        '   Sub-topology: 0',
        `    Source: KTABLE-SOURCE-0000000016 (topics: [${FK}SUBSCRIPTION-RESPONSE-0000000014-topic])`,
        `      --> ${FK}SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017`,
        '    Source: KSTREAM-SOURCE-0000000001 (topics: [orders])',
        '      --> KTABLE-SOURCE-0000000002',
        `    Processor: ${FK}SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017 (stores: [orders-STATE-STORE-0000000000])`,
        `      --> ${FK}OUTPUT-0000000018`,
        '      <-- KTABLE-SOURCE-0000000016',
        `    Processor: ${FK}OUTPUT-0000000018 (stores: [])`,
        '      --> KTABLE-TOSTREAM-0000000020',
        `      <-- ${FK}SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017`,
        '    Processor: KTABLE-SOURCE-0000000002 (stores: [orders-STATE-STORE-0000000000])',
        `      --> ${FK}SUBSCRIPTION-REGISTRATION-0000000007`,
        '      <-- KSTREAM-SOURCE-0000000001',
        `    Processor: ${FK}SUBSCRIPTION-REGISTRATION-0000000007 (stores: [])`,
        '      --> KTABLE-SINK-0000000008',
        '      <-- KTABLE-SOURCE-0000000002',
        '    Processor: KTABLE-TOSTREAM-0000000020 (stores: [])',
        '      --> KSTREAM-SINK-0000000021',
        `      <-- ${FK}OUTPUT-0000000018`,
        '    Sink: KSTREAM-SINK-0000000021 (topic: out)',
        '      <-- KTABLE-TOSTREAM-0000000020',
        `    Sink: KTABLE-SINK-0000000008 (topic: ${FK}SUBSCRIPTION-REGISTRATION-0000000006-topic)`,
        `      <-- ${FK}SUBSCRIPTION-REGISTRATION-0000000007`,
        '',
        '  Sub-topology: 1',
        '    Source: KSTREAM-SOURCE-0000000004 (topics: [customers])',
        '      --> KTABLE-SOURCE-0000000005',
        `    Source: KTABLE-SOURCE-0000000009 (topics: [${FK}SUBSCRIPTION-REGISTRATION-0000000006-topic])`,
        `      --> ${FK}SUBSCRIPTION-PROCESSOR-0000000011`,
        `    Processor: ${FK}SUBSCRIPTION-PROCESSOR-0000000011 (stores: [${FK}SUBSCRIPTION-STATE-STORE-0000000010])`,
        `      --> ${FK}SUBSCRIPTION-PROCESSOR-0000000012`,
        '      <-- KTABLE-SOURCE-0000000009',
        '    Processor: KTABLE-SOURCE-0000000005 (stores: [customers-STATE-STORE-0000000003])',
        `      --> ${FK}SUBSCRIPTION-PROCESSOR-0000000013`,
        '      <-- KSTREAM-SOURCE-0000000004',
        `    Processor: ${FK}SUBSCRIPTION-PROCESSOR-0000000012 (stores: [customers-STATE-STORE-0000000003])`,
        '      --> KTABLE-SINK-0000000015',
        `      <-- ${FK}SUBSCRIPTION-PROCESSOR-0000000011`,
        `    Processor: ${FK}SUBSCRIPTION-PROCESSOR-0000000013 (stores: [${FK}SUBSCRIPTION-STATE-STORE-0000000010])`,
        '      --> KTABLE-SINK-0000000015',
        '      <-- KTABLE-SOURCE-0000000005',
        `    Sink: KTABLE-SINK-0000000015 (topic: ${FK}SUBSCRIPTION-RESPONSE-0000000014-topic)`,
        `      <-- ${FK}SUBSCRIPTION-PROCESSOR-0000000012, ${FK}SUBSCRIPTION-PROCESSOR-0000000013`,
        '',
        '',
      ].join('\n'),
    );
  });

  it('a TableJoined name and a Materialized store name the parts as Kafka does', () => {
    const t = topology('leftJoin', { named: 'oc', materialized: 'order-customers' });
    const names = [...t.nodes.keys()];
    for (const n of [
      'oc-subscription-registration-processor',
      'oc-subscription-registration-sink',
      'oc-subscription-registration-source',
      'oc-subscription-receive',
      'oc-subscription-join-foreign',
      'oc-foreign-join-subscription',
      'oc-subscription-response-sink',
      'oc-subscription-response-source',
      'oc-subscription-response-resolver',
      'oc-result',
    ])
      assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
    assert.deepEqual(
      [...t.internalTopics.keys()].sort(),
      ['oc-subscription-registration-topic', 'oc-subscription-response-topic'].sort(),
    );
    assert.deepEqual([...t.stores.keys()].sort(), [
      'customers-STATE-STORE-0000000003',
      'oc-subscription-store',
      'order-customers',
      'orders-STATE-STORE-0000000000',
    ]);
    const { driver, orders, customers } = drive('leftJoin', { named: 'oc', materialized: 'order-customers' });
    try {
      orders.pipeInput('o1', 'c1|book', 1);
      customers.pipeInput('c1', 'ada', 2);
      const store = driver.getKeyValueStore<string, string>('order-customers');
      assert.ok(store);
      assert.equal(store.get('o1'), 'book/ada');
      assert.ok(driver.producedTopicNames().includes('fk-oc-subscription-store-changelog'));
    } finally {
      driver.close();
    }
  });

  it("the wrappers are Kafka's bytes: SubscriptionWrapper version 1 (and 0 read), response version 0", () => {
    // Kafka's hash of a value: Murmur3.hash128 of its serialized bytes, as two big-endian longs.
    const hash = valueHash(Buffer.from('c1|book'))!;
    assert.deepEqual(hash, murmur3Hash128(Buffer.from('c1|book'), 104729));
    // {1 bit hash null}{7 bits version}{instruction}{16 bytes hash}{primary key}{int32 primary partition}
    const sub = encodeSubscription({
      hash,
      instruction: Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE,
      primaryKey: Buffer.from('o1'),
      primaryPartition: 2,
    });
    assert.deepEqual(
      sub,
      Buffer.concat([Buffer.from([1, 2]), hash, Buffer.from('o1'), Buffer.from([0, 0, 0, 2])]),
    );
    assert.deepEqual(decodeSubscription(sub), {
      hash,
      instruction: 2,
      primaryKey: Buffer.from('o1'),
      primaryPartition: 2,
    });
    const deleted = encodeSubscription({
      hash: null,
      instruction: Instruction.DELETE_KEY_AND_PROPAGATE,
      primaryKey: Buffer.from('o1'),
      primaryPartition: 0x01020304,
    });
    assert.deepEqual([...deleted], [0x81, 1, ...Buffer.from('o1'), 1, 2, 3, 4]);
    // Version 0 (Kafka before 3.4): no partition after the key.
    assert.deepEqual(decodeSubscription(Buffer.concat([Buffer.from([0, 3]), hash, Buffer.from('o9')])), {
      hash,
      instruction: 3,
      primaryKey: Buffer.from('o9'),
      primaryPartition: null,
    });
    assert.deepEqual(decodeSubscription(Buffer.from([0x80, 0, 0x6f])), {
      hash: null,
      instruction: 0,
      primaryKey: Buffer.from('o'),
      primaryPartition: null,
    });
    // {1 bit hash null}{7 bits version 0}{16 bytes hash}{foreign value}: the partition never on the wire.
    const response = encodeResponse({ hash, foreignValue: Buffer.from('ada') });
    assert.deepEqual(response, Buffer.concat([Buffer.from([0]), hash, Buffer.from('ada')]));
    assert.deepEqual(decodeResponse(response), { hash, foreignValue: Buffer.from('ada') });
    assert.deepEqual([...encodeResponse({ hash: null, foreignValue: null })], [0x80]);
    assert.deepEqual(decodeResponse(Buffer.from([0x80])), { hash: null, foreignValue: null });
    assert.throws(() => decodeSubscription(Buffer.from([2, 0, 0, 0, 0, 0])), /incompatible version/);
    assert.throws(() => decodeSubscription(Buffer.from([0x81, 9, 0, 0, 0, 0])), /instruction/);
    assert.throws(() => decodeSubscription(Buffer.from([0x81, 1, 0, 0])), /shorter/);
    assert.throws(() => decodeResponse(Buffer.from([1])), /incompatible version/);
    assert.throws(() => decodeResponse(Buffer.from([0, 1, 2])), /shorter/);
  });

  it('a subscription carries the left partition and the murmur3 hash of the left value', () => {
    const { driver, orders, customers } = drive('join');
    const registration = `fk-${FK}SUBSCRIPTION-REGISTRATION-0000000006-topic`;
    try {
      customers.pipeInput('c1', 'ada', 1);
      orders.pipeInput('o1', 'c1|book', 2);
      const subs = driver.createOutputTopic(registration, S, Serdes.ByteArray()).readRecordsToList();
      assert.equal(subs.length, 1);
      const sub = decodeSubscription(subs[0]!.value!);
      assert.equal(sub.primaryPartition, 0);
      assert.deepEqual(sub.hash, murmur3Hash128(Buffer.from('c1|book')));
    } finally {
      driver.close();
    }
  });

  it('inner join: foreign key changes, deletes on either side, null foreign keys', () => {
    const { driver, orders, customers, out } = drive('join');
    try {
      const step = (f: () => void) => {
        f();
        return out.readRecordsToList().map((r) => `${r.key}=${r.value}`);
      };
      // No customer yet: an inner join says nothing for a new order.
      assert.deepEqual(
        step(() => orders.pipeInput('o1', 'c1|book', 1)),
        [],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c1', 'ada', 2)),
        ['o1=book/ada'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c1', 'ada2', 3)),
        ['o1=book/ada2'],
      );
      // The foreign key moves to a customer that does not exist: the earlier result is retracted.
      assert.deepEqual(
        step(() => orders.pipeInput('o1', 'c2|book', 4)),
        ['o1=null'],
      );
      // The old customer no longer concerns o1.
      assert.deepEqual(
        step(() => customers.pipeInput('c1', 'ada3', 5)),
        [],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob', 6)),
        ['o1=book/bob'],
      );
      assert.deepEqual(
        step(() => orders.pipeInput('o2', 'c2|pen', 7)),
        ['o2=pen/bob'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', null, 8)),
        ['o1=null', 'o2=null'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob2', 9)),
        ['o1=book/bob2', 'o2=pen/bob2'],
      );
      // A null foreign key joins nothing: the result is retracted, and c2 forgets o1.
      assert.deepEqual(
        step(() => orders.pipeInput('o1', '-|book', 10)),
        ['o1=null'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob3', 11)),
        ['o2=pen/bob3'],
      );
      assert.deepEqual(
        step(() => orders.pipeInput('o2', null, 12)),
        ['o2=null'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob4', 13)),
        [],
      );
    } finally {
      driver.close();
    }
  });

  it('left join: every order has a result, null where the customer is missing', () => {
    const { driver, orders, customers, out } = drive('leftJoin');
    try {
      const step = (f: () => void) => {
        f();
        return out.readRecordsToList().map((r) => `${r.key}=${r.value}@${r.timestamp}`);
      };
      assert.deepEqual(
        step(() => orders.pipeInput('o1', 'c1|book', 1)),
        ['o1=book/none@1'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c1', 'ada', 2)),
        ['o1=book/ada@2'],
      );
      assert.deepEqual(
        step(() => orders.pipeInput('o1', 'c2|book', 3)),
        ['o1=book/none@3'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c1', 'ada2', 4)),
        [],
      );
      // A null foreign key from the start, and one that becomes null.
      assert.deepEqual(
        step(() => orders.pipeInput('o2', '-|pen', 5)),
        ['o2=pen/none@5'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob', 6)),
        ['o1=book/bob@6'],
      );
      assert.deepEqual(
        step(() => orders.pipeInput('o1', '-|cup', 7)),
        ['o1=cup/none@7'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob2', 8)),
        [],
      );
      assert.deepEqual(
        step(() => orders.pipeInput('o2', 'c2|pen', 9)),
        ['o2=pen/bob2@9'],
      );
      // A right delete keeps the left row, joined with null; a left delete retracts it.
      assert.deepEqual(
        step(() => customers.pipeInput('c2', null, 10)),
        ['o2=pen/none@10'],
      );
      assert.deepEqual(
        step(() => orders.pipeInput('o2', null, 11)),
        ['o2=null@11'],
      );
      assert.deepEqual(
        step(() => customers.pipeInput('c2', 'bob3', 12)),
        [],
      );
      // A row that never had a foreign key is retracted too when deleted.
      assert.deepEqual(
        step(() => orders.pipeInput('o1', null, 13)),
        ['o1=null@13'],
      );
    } finally {
      driver.close();
    }
  });

  it('regrouping an unmaterialized result materializes it, so old values are subtracted', () => {
    const builder = new StreamsBuilder();
    const orders = builder.table('orders', Consumed.with(S, S));
    const customers = builder.table('customers', Consumed.with(S, S));
    orders
      .join(customers, customerOf, joiner)
      .groupBy((_order, result) => KeyValue.pair(result.split('/')[1]!, result))
      .count()
      .toStream()
      .to('per-customer', Produced.with(S, Serdes.Long()));
    const t = builder.build();
    // Kafka's forced materialization: the result store takes the name reserved for it.
    assert.ok(t.stores.has(`${FK}OUTPUT-STATE-STORE-0000000019`), [...t.stores.keys()].join(', '));
    const driver = new TopologyTestDriver(t, { 'application.id': 'fk', 'statestore.cache.max.bytes': 0 });
    try {
      const o = driver.createInputTopic('orders', S, S);
      const c = driver.createInputTopic('customers', S, S);
      const out = driver.createOutputTopic('per-customer', S, Serdes.Long());
      c.pipeInput('c1', 'ada', 1);
      c.pipeInput('c2', 'bob', 2);
      o.pipeInput('o1', 'c1|book', 3);
      o.pipeInput('o2', 'c1|pen', 4);
      o.pipeInput('o1', 'c2|book', 5);
      c.pipeInput('c1', null, 6);
      const counts = out.readKeyValuesToMap();
      assert.deepEqual(Object.fromEntries(counts), { ada: 0, bob: 1 });
    } finally {
      driver.close();
    }
  });

  it('a response computed for an earlier value of the row is dropped (the hash check)', () => {
    const { driver, orders, customers, out } = drive('join');
    const responseTopic = `fk-${FK}SUBSCRIPTION-RESPONSE-0000000014-topic`;
    const respond = (order: string, customer: string, timestamp: number) =>
      driver.pipeRaw(
        responseTopic,
        Buffer.from('o1'),
        encodeResponse({ hash: valueHash(Buffer.from(order)), foreignValue: Buffer.from(customer) }),
        timestamp,
      );
    try {
      orders.pipeInput('o1', 'c1|book', 1);
      customers.pipeInput('c1', 'ada', 2);
      orders.pipeInput('o1', 'c2|book', 3);
      customers.pipeInput('c2', 'bob', 4);
      assert.deepEqual(
        out.readRecordsToList().map((r) => `${r.key}=${r.value}`),
        ['o1=book/ada', 'o1=null', 'o1=book/bob'],
      );
      // The answer of c1 to o1's first value arrives late, as it may through a broker: it must not count.
      respond('c1|book', 'ada-late', 5);
      assert.deepEqual(out.readRecordsToList(), []);
      // An answer for the current value is joined.
      respond('c2|book', 'bob2', 6);
      assert.deepEqual(
        out.readRecordsToList().map((r) => `${r.key}=${r.value}`),
        ['o1=book/bob2'],
      );
    } finally {
      driver.close();
    }
  });

  for (const kind of ['join', 'leftJoin'] as const) {
    it(`${kind}: after each of 600 seeded updates the output equals the reference join`, () => {
      const random = seeded(kind === 'join' ? 213 : 962);
      const { driver, orders, customers, out } = drive(kind);
      const orderTable = new Map<string, string>();
      const customerTable = new Map<string, string>();
      const view = new Map<string, string>();
      try {
        for (let i = 0; i < 600; i++) {
          const r = random();
          if (r < 0.55) {
            const key = `o${Math.floor(random() * 15)}`;
            if (random() < 0.15) {
              orders.pipeInput(key, null, i);
              orderTable.delete(key);
            } else {
              const fk = random() < 0.1 ? '-' : `c${Math.floor(random() * 6)}`;
              const value = `${fk}|item${i}`;
              orders.pipeInput(key, value, i);
              orderTable.set(key, value);
            }
          } else {
            const key = `c${Math.floor(random() * 6)}`;
            if (random() < 0.2) {
              customers.pipeInput(key, null, i);
              customerTable.delete(key);
            } else {
              customers.pipeInput(key, `name${i}`, i);
              customerTable.set(key, `name${i}`);
            }
          }
          for (const rec of out.readRecordsToList()) {
            if (rec.value === null) view.delete(rec.key!);
            else view.set(rec.key!, rec.value);
          }
          const expected = new Map<string, string>();
          for (const [key, order] of orderTable) {
            const fk = customerOf(order);
            const customer = fk === null ? undefined : customerTable.get(fk);
            if (customer !== undefined) expected.set(key, joiner(order, customer));
            else if (kind === 'leftJoin') expected.set(key, joiner(order, null));
          }
          assert.deepEqual(view, expected, `after update ${i}`);
        }
      } finally {
        driver.close();
      }
    });
  }
});
