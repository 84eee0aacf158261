// The DSL and the Processor API run in TopologyTestDriver: each stateless operation, splitting, merging, topic
// extractors, grouping with repartition and the aggregations with their stores, and describe() in Kafka's shape.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Branched,
  Consumed,
  Grouped,
  KeyValue,
  Materialized,
  Named,
  Produced,
  Record,
  Serdes,
  Stores,
  StreamsBuilder,
  StreamsConfigError,
  StreamsError,
  Topology,
  TopologyTestDriver,
} from '../../src/streams/index.js';

const S = Serdes.String();
const L = Serdes.Long();

function wordCount(): Topology {
  const builder = new StreamsBuilder();
  builder
    .stream('text-lines', Consumed.with(S, S))
    .flatMapValues((line) =>
      line
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w.length > 0),
    )
    .groupBy((_key, word) => word)
    .count(Materialized.as('counts'))
    .toStream()
    .to('word-counts', Produced.with(S, L));
  return builder.build();
}

describe('Topology.describe()', () => {
  it('prints word count as Kafka Streams prints the same topology', () => {
    const expected = [
      'Topologies:',
      '   Sub-topology: 0',
      '    Source: KSTREAM-SOURCE-0000000000 (topics: [text-lines])',
      '      --> KSTREAM-FLATMAPVALUES-0000000001',
      '    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])',
      '      --> KSTREAM-KEY-SELECT-0000000002',
      '      <-- KSTREAM-SOURCE-0000000000',
      '    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])',
      '      --> counts-repartition-filter',
      '      <-- KSTREAM-FLATMAPVALUES-0000000001',
      '    Processor: counts-repartition-filter (stores: [])',
      '      --> counts-repartition-sink',
      '      <-- KSTREAM-KEY-SELECT-0000000002',
      '    Sink: counts-repartition-sink (topic: counts-repartition)',
      '      <-- counts-repartition-filter',
      '',
      '  Sub-topology: 1',
      '    Source: counts-repartition-source (topics: [counts-repartition])',
      '      --> KSTREAM-AGGREGATE-0000000003',
      '    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts])',
      '      --> KTABLE-TOSTREAM-0000000007',
      '      <-- counts-repartition-source',
      '    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])',
      '      --> KSTREAM-SINK-0000000008',
      '      <-- KSTREAM-AGGREGATE-0000000003',
      '    Sink: KSTREAM-SINK-0000000008 (topic: word-counts)',
      '      <-- KTABLE-TOSTREAM-0000000007',
      '',
      '',
    ].join('\n');
    assert.equal(wordCount().describe().toString(), expected);
  });

  it('orders successors by the size of the graph below them, then by name', () => {
    const t = new Topology()
      .addSource('src', 'in')
      .addProcessor('small', () => ({ process() {} }), 'src')
      .addProcessor('big', () => ({ process() {} }), 'src')
      .addProcessor('big-child', () => ({ process() {} }), 'big')
      .addSink('sink', 'out', 'big-child');
    const text = t.describe().toString();
    assert.match(text, /Source: src \(topics: \[in\]\)\n {6}--> big, small\n/);
    assert.match(text, /Processor: small \(stores: \[\]\)\n {6}--> none\n {6}<-- src/);
    assert.deepEqual(
      t.describe().subtopologies[0]!.nodes.map((n) => n.name),
      ['src', 'big', 'big-child', 'sink', 'small'],
    );
  });
});

describe('stateless operations in the test driver', () => {
  it('filter, filterNot, map, mapValues, flatMap, flatMapValues, selectKey, peek and foreach', () => {
    const builder = new StreamsBuilder();
    const peeked: string[] = [];
    const seen: string[] = [];
    const input = builder.stream('in', Consumed.with(S, S));
    input.filter((_k, v) => v.startsWith('a')).to('filtered', Produced.with(S, S));
    input.filterNot((_k, v) => v.startsWith('a')).to('not-filtered', Produced.with(S, S));
    input.map((k, v) => KeyValue.pair(v, k.length)).to('mapped', Produced.with(S, Serdes.Integer()));
    input.mapValues((v, k) => `${k}:${v.toUpperCase()}`).to('upper', Produced.with(S, S));
    input
      .flatMap((k, v) => [KeyValue.pair(`${k}1`, v), KeyValue.pair(`${k}2`, v)])
      .to('fm', Produced.with(S, S));
    input.flatMapValues((v) => v.split('')).to('chars', Produced.with(S, S));
    input
      .selectKey((_k, v) => v.length)
      .peek((k, v) => peeked.push(`${k}=${v}`))
      .to('by-length', Produced.with(Serdes.Integer(), S));
    input.foreach((k, v) => seen.push(`${k}/${v}`));

    const driver = new TopologyTestDriver(builder.build());
    try {
      const inTopic = driver.createInputTopic('in', S, S);
      inTopic.pipeInput('k', 'ab', 1000);
      inTopic.pipeInput('kk', 'xyz', 2000);
      const read = (topic: string, kd = S, vd: typeof S | ReturnType<typeof Serdes.Integer> = S) =>
        driver.createOutputTopic(topic, kd as typeof S, vd as typeof S).readKeyValuesToList();
      assert.deepEqual(read('filtered'), [{ key: 'k', value: 'ab' }]);
      assert.deepEqual(read('not-filtered'), [{ key: 'kk', value: 'xyz' }]);
      assert.deepEqual(read('mapped', S, Serdes.Integer()), [
        { key: 'ab', value: 1 },
        { key: 'xyz', value: 2 },
      ]);
      assert.deepEqual(read('upper'), [
        { key: 'k', value: 'k:AB' },
        { key: 'kk', value: 'kk:XYZ' },
      ]);
      assert.deepEqual(
        read('fm').map((kv) => kv.key),
        ['k1', 'k2', 'kk1', 'kk2'],
      );
      assert.deepEqual(
        read('chars').map((kv) => kv.value),
        ['a', 'b', 'x', 'y', 'z'],
      );
      assert.deepEqual(driver.createOutputTopic('by-length', Serdes.Integer(), S).readKeyValuesToList(), [
        { key: 2, value: 'ab' },
        { key: 3, value: 'xyz' },
      ]);
      assert.deepEqual(peeked, ['2=ab', '3=xyz']);
      assert.deepEqual(seen, ['k/ab', 'kk/xyz']);
      const records = driver.createOutputTopic('upper', S, S);
      assert.equal(records.isEmpty(), true);
    } finally {
      driver.close();
    }
  });

  it('split sends each record to the first matching branch, merge joins streams, timestamps pass through', () => {
    const builder = new StreamsBuilder();
    const input = builder.stream('in', Consumed.with(S, Serdes.Integer()));
    const branches = input
      .split(Named.as('sign-'))
      .branch((_k, v) => v < 0, Branched.as('negative'))
      .branch(
        (_k, v) => v === 0,
        Branched.withFunction((s) => s.mapValues((v) => v + 100), 'zero'),
      )
      .defaultBranch(Branched.as('positive'));
    assert.deepEqual(Object.keys(branches).sort(), ['sign-negative', 'sign-positive', 'sign-zero']);
    branches['sign-negative']!.to('negative', Produced.with(S, Serdes.Integer()));
    branches['sign-zero']!.merge(branches['sign-positive']!).to('rest', Produced.with(S, Serdes.Integer()));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const inTopic = driver.createInputTopic('in', S, Serdes.Integer(), 5000, 10);
      for (const v of [-1, 0, 7, -3, 2]) inTopic.pipeInput('k', v);
      const neg = driver.createOutputTopic('negative', S, Serdes.Integer()).readRecordsToList();
      assert.deepEqual(
        neg.map((r) => [r.value, r.timestamp]),
        [
          [-1, 5000],
          [-3, 5030],
        ],
      );
      assert.deepEqual(driver.createOutputTopic('rest', S, Serdes.Integer()).readValuesToList(), [100, 7, 2]);
    } finally {
      driver.close();
    }
  });

  it('to() with a topic extractor routes each record by its content', () => {
    const builder = new StreamsBuilder();
    builder.stream('events', Consumed.with(S, S)).to((key) => `events-${key}`, Produced.with(S, S));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('events', S, S);
      input.pipeInput('red', 'r1');
      input.pipeInput('blue', 'b1');
      input.pipeInput('red', 'r2');
      assert.deepEqual(driver.createOutputTopic('events-red', S, S).readValuesToList(), ['r1', 'r2']);
      assert.deepEqual(driver.createOutputTopic('events-blue', S, S).readValuesToList(), ['b1']);
      assert.deepEqual(driver.producedTopicNames().sort(), ['events-blue', 'events-red']);
    } finally {
      driver.close();
    }
  });

  it('default serdes come from the configuration; without one, strings pass and other values are a clear error', () => {
    const builder = new StreamsBuilder();
    builder
      .stream<string, string>('in')
      .mapValues((v) => v.length)
      .to('out', Produced.with(S, L));
    builder
      .stream<string, string>('in2')
      .mapValues((v) => v.length)
      .to('out2');
    const driver = new TopologyTestDriver(builder.build(), {
      'default.key.serde': Serdes.String() as never,
      'default.value.serde': 'org.apache.kafka.common.serialization.Serdes$StringSerde',
    });
    try {
      driver.createInputTopic('in', S, S).pipeInput('a', 'four');
      assert.deepEqual(driver.createOutputTopic('out', S, L).readValuesToList(), [4]);
    } finally {
      driver.close();
    }
    const bare = new TopologyTestDriver(builder.build());
    try {
      bare.createInputTopic('in', S, S).pipeInput('a', 'bcd');
      assert.deepEqual(bare.createOutputTopic('out', S, L).readValuesToList(), [3]);
      // Kafka's SinkNode.init error, the ConfigException its cause (Kafka finds it before any record).
      assert.throws(
        () => bare.createInputTopic('in2', S, S).pipeInput('a', 'b'),
        (e: Error) =>
          e.name === 'StreamsException' &&
          /^Failed to initialize value serdes for sink node KSTREAM-SINK-/.test(e.message) &&
          e.cause instanceof StreamsConfigError,
      );
    } finally {
      bare.close();
    }
  });
});

describe('aggregations in the test driver', () => {
  it('word count repartitions by word and counts into the named store', () => {
    const driver = new TopologyTestDriver(wordCount(), { 'application.id': 'wc' });
    try {
      const lines = driver.createInputTopic('text-lines', S, S);
      lines.pipeInput(null, 'Hello Kafka Streams', 10);
      lines.pipeInput(null, 'hello brook', 20);
      const out = driver.createOutputTopic('word-counts', S, L);
      assert.deepEqual(out.readKeyValuesToList(), [
        { key: 'hello', value: 1 },
        { key: 'kafka', value: 1 },
        { key: 'streams', value: 1 },
        { key: 'hello', value: 2 },
        { key: 'brook', value: 1 },
      ]);
      const store = driver.getKeyValueStore<string, number>('counts')!;
      assert.equal(store.get('hello'), 2);
      assert.deepEqual(
        store.all().map((e) => e.key),
        ['brook', 'hello', 'kafka', 'streams'],
      );
      assert.deepEqual(driver.getTimestampedKeyValueStore<string, number>('counts')!.get('hello'), {
        value: 2,
        timestamp: 20,
      });
      // The repartition topic and the changelog carry Kafka's names and formats.
      const changelog = driver.createOutputTopic('wc-counts-changelog', S, L).readKeyValuesToList();
      assert.deepEqual(changelog.at(-2), { key: 'hello', value: 2 });
      assert.equal(driver.createOutputTopic('wc-counts-repartition', S, S).getQueueSize(), 5);
    } finally {
      driver.close();
    }
  });

  it('groupByKey aggregates without a repartition; reduce and aggregate keep their timestamps', () => {
    const builder = new StreamsBuilder();
    const grouped = builder.stream('scores', Consumed.with(S, Serdes.Integer())).groupByKey();
    grouped
      .reduce(
        (a, b) => Math.max(a, b),
        Materialized.as<string, number>('max').withValueSerde(Serdes.Integer()),
      )
      .toStream()
      .to('max-out', Produced.with(S, Serdes.Integer()));
    grouped
      .aggregate(
        () => [] as number[],
        (_k, v, agg) => [...agg, v],
        Materialized.as<string, number[]>('all').withValueSerde(Serdes.JSON<number[]>()),
      )
      .toStream()
      .to('all-out', Produced.with(S, Serdes.JSON<number[]>()));
    const topology = builder.build();
    assert.equal(topology.subtopologies().length, 1);
    assert.equal(topology.internalTopics.size, 0);
    const driver = new TopologyTestDriver(topology);
    try {
      const input = driver.createInputTopic('scores', S, Serdes.Integer());
      input.pipeInput('a', 3, 100);
      input.pipeInput('a', 1, 50);
      input.pipeInput('b', 9, 70);
      input.pipeInput(null, 4, 80);
      assert.deepEqual(
        driver
          .createOutputTopic('max-out', S, Serdes.Integer())
          .readRecordsToList()
          .map((r) => [r.key, r.value, r.timestamp]),
        [
          ['a', 3, 100],
          ['a', 3, 100],
          ['b', 9, 70],
        ],
      );
      assert.deepEqual(
        driver.createOutputTopic('all-out', S, Serdes.JSON<number[]>()).readKeyValuesToMap(),
        new Map([
          ['a', [3, 1]],
          ['b', [9]],
        ]),
      );
    } finally {
      driver.close();
    }
  });

  it('Grouped.as names the repartition topic; an unnamed count gets generated names', () => {
    const builder = new StreamsBuilder();
    const s = builder.stream('in', Consumed.with(S, S));
    s.groupBy((_k, v) => v, Grouped.as('by-value')).count();
    s.selectKey((_k, v) => v)
      .groupByKey()
      .count();
    const t = builder.build();
    assert.deepEqual(
      [...t.internalTopics.keys()],
      ['by-value-repartition', 'KSTREAM-AGGREGATE-STATE-STORE-0000000008-repartition'],
    );
    assert.ok(t.stores.has('KSTREAM-AGGREGATE-STATE-STORE-0000000002'));
    assert.ok(t.nodes.has('KSTREAM-SINK-0000000010'));
  });

  it('a table keeps the latest value per key and forwards it; a tombstone deletes', () => {
    const builder = new StreamsBuilder();
    builder
      .table('prices', Consumed.with(S, L), Materialized.as('prices-store'))
      .filter((_k, v) => v > 10)
      .toStream()
      .to('expensive', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('prices', S, L);
      input.pipeInput('a', 5);
      input.pipeInput('b', 20);
      input.pipeInput('a', 15);
      input.pipeInput('b', null);
      const out = driver.createOutputTopic('expensive', S, L).readKeyValuesToList();
      assert.deepEqual(out, [
        { key: 'b', value: 20 },
        { key: 'a', value: 15 },
        { key: 'b', value: null },
      ]);
      const store = driver.getKeyValueStore<string, number>('prices-store')!;
      assert.equal(store.get('a'), 15);
      assert.equal(store.get('b'), null);
    } finally {
      driver.close();
    }
  });

  it('a filter on a table without a named store forwards a tombstone for every record it drops (KTableFilter)', () => {
    const builder = new StreamsBuilder();
    builder
      .table('prices-plain', Consumed.with(S, L))
      .filter((_k, v) => v > 10)
      .toStream()
      .to('expensive-plain', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('prices-plain', S, L);
      for (const [k, v] of [
        ['a', 5],
        ['b', 20],
        ['a', 15],
        ['b', null],
        ['c', 3],
      ] as const)
        input.pipeInput(k, v);
      // Kafka's table is not materialized: the filter knows no old value, so each dropped record may retract one.
      assert.deepEqual(driver.createOutputTopic('expensive-plain', S, L).readKeyValuesToList(), [
        { key: 'a', value: null },
        { key: 'b', value: 20 },
        { key: 'a', value: 15 },
        { key: 'b', value: null },
        { key: 'c', value: null },
      ]);
    } finally {
      driver.close();
    }
  });

  it('a groupBy below such a filter makes it send old values: counts retract only what passed', () => {
    const builder = new StreamsBuilder();
    builder
      .table('prices-grouped', Consumed.with(S, L))
      .filter((_k, v) => v > 10)
      .groupBy((_k, v) => KeyValue.pair('expensive', v), Grouped.with(S, L))
      .count()
      .toStream()
      .to('expensive-count', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('prices-grouped', S, L);
      for (const [k, v] of [
        ['a', 5],
        ['b', 20],
        ['a', 15],
        ['b', null],
        ['c', 3],
      ] as const)
        input.pipeInput(k, v);
      const counts = driver.createOutputTopic('expensive-count', S, L).readKeyValuesToList();
      assert.deepEqual(
        counts.map((kv) => kv.value),
        [1, 2, 1],
      );
    } finally {
      driver.close();
    }
  });
});

describe('the Processor API', () => {
  it('processors with a store, forward to a named child, and punctuate on stream and wall-clock time', () => {
    const punctuations: string[] = [];
    const topology = new Topology()
      .addSource({ name: 'src', keyDeserializer: S, valueDeserializer: S }, 'in')
      .addProcessor(
        'dedupe',
        () => {
          let ctx: import('../../src/streams/index.js').ProcessorContext<string, string>;
          let store: import('../../src/streams/index.js').KeyValueStore<string, string>;
          return {
            init(c) {
              ctx = c;
              store = c.getStateStore('seen');
              c.schedule(100, 'STREAM_TIME', (t) => punctuations.push(`stream@${t}`));
              c.schedule(1000, 'WALL_CLOCK_TIME', (t) => {
                punctuations.push(`wall@${t}`);
                ctx.forward(new Record('tick', String(store.approximateNumEntries()), t), 'ticks');
              });
            },
            process(r: Record<string, string>) {
              if (store.get(r.key) !== null) return;
              store.put(r.key, r.value);
              ctx.forward(r, 'fresh');
            },
          };
        },
        'src',
      )
      .addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore('seen'), S, S), 'dedupe')
      .addSink({ name: 'fresh', keySerializer: S, valueSerializer: S }, 'fresh-out', 'dedupe')
      .addSink({ name: 'ticks', keySerializer: S, valueSerializer: S }, 'tick-out', 'dedupe');
    const driver = new TopologyTestDriver(topology, {}, 0);
    try {
      const input = driver.createInputTopic('in', S, S);
      input.pipeInput('a', '1', 10);
      input.pipeInput('a', '2', 150);
      input.pipeInput('b', '3', 160);
      assert.deepEqual(driver.createOutputTopic('fresh-out', S, S).readKeyValuesToList(), [
        { key: 'a', value: '1' },
        { key: 'b', value: '3' },
      ]);
      driver.advanceWallClockTime(1000);
      assert.deepEqual(driver.createOutputTopic('tick-out', S, S).readKeyValuesToList(), [
        { key: 'tick', value: '2' },
      ]);
      assert.deepEqual(punctuations, ['stream@10', 'stream@150', 'wall@1000']);
    } finally {
      driver.close();
    }
  });

  it('a record that fails to deserialize fails the task, or is skipped with LogAndContinue', () => {
    const build = () => {
      const b = new StreamsBuilder();
      b.stream('in', Consumed.with(S, L)).to('out', Produced.with(S, L));
      return b.build();
    };
    const failing = new TopologyTestDriver(build());
    try {
      assert.throws(
        () => failing.pipeRaw('in', Buffer.from('k'), Buffer.from('bad'), 1),
        (e: Error) => e instanceof StreamsError && /Deserialization exception handler/.test(e.message),
      );
    } finally {
      failing.close();
    }
    const skipped: number[] = [];
    const continuing = new TopologyTestDriver(build(), {
      'default.deserialization.exception.handler': (record) => {
        skipped.push(record.offset);
        return 'CONTINUE';
      },
    });
    try {
      continuing.pipeRaw('in', Buffer.from('k'), Buffer.from('bad'), 1);
      continuing.createInputTopic('in', S, L).pipeInput('k', 42, 2);
      assert.deepEqual(continuing.createOutputTopic('out', S, L).readValuesToList(), [42]);
      assert.deepEqual(skipped, [0]);
    } finally {
      continuing.close();
    }
  });
});
