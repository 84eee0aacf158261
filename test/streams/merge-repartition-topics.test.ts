// topology.optimization's merge.repartition.topics (Kafka's InternalStreamsBuilder.mergeRepartitionTopics): the
// groupings below one key-changing node (or below a merge node of key-changed streams) share one repartition
// topic, the first one's, right below that node. describe() prints Kafka's text for Kafka's own test topologies
// (RepartitionWithMergeOptimizingTest, RepartitionOptimizingTest without its join; successor lists compared in
// name order), and through a broker only the merged topic is created and both counts come out right.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  Grouped,
  JoinWindows,
  KafkaStreams,
  KeyValue,
  Materialized,
  Named,
  Produced,
  Serdes,
  StreamsBuilder,
  StreamsConfig,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const OPTIMIZE = { [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE };

/** Kafka's RepartitionWithMergeOptimizingTest topology: two mapped streams merged, then counted twice. */
function mergedCounts(a: string, b: string, out0: string, out1: string): StreamsBuilder {
  const builder = new StreamsBuilder();
  const key = (v: string) => v.split(':')[0]!;
  const mappedA = builder
    .stream(a, Consumed.with(S, S).withName('sourceAStream'))
    .map((_k, v) => KeyValue.pair(key(v), v), Named.as('mappedAStream'));
  const mappedB = builder
    .stream(b, Consumed.with(S, S).withName('sourceBStream'))
    .map((_k, v) => KeyValue.pair(key(v), v), Named.as('mappedBStream'));
  const merged = mappedA.merge(mappedB, Named.as('mergedStream'));
  merged
    .groupByKey(Grouped.as('long-groupByKey'))
    .count(Materialized.inMemory('long-store'), Named.as('long-count'))
    .toStream(Named.as('long-toStream'))
    .to(out0, Produced.with(S, Serdes.Long()).withName('long-to'));
  merged
    .groupByKey(Grouped.as('string-groupByKey'))
    .count(Materialized.inMemory('string-store'), Named.as('string-count'))
    .toStream(Named.as('string-toStream'))
    .mapValues((v) => String(v), Named.as('string-mapValues'))
    .to(out1, Produced.with(S, S).withName('string-to'));
  return builder;
}

const MERGED_OPTIMIZED =
  'Topologies:\n' +
  '   Sub-topology: 0\n' +
  '    Source: sourceAStream (topics: [inputA])\n' +
  '      --> mappedAStream\n' +
  '    Source: sourceBStream (topics: [inputB])\n' +
  '      --> mappedBStream\n' +
  '    Processor: mappedAStream (stores: [])\n' +
  '      --> mergedStream\n' +
  '      <-- sourceAStream\n' +
  '    Processor: mappedBStream (stores: [])\n' +
  '      --> mergedStream\n' +
  '      <-- sourceBStream\n' +
  '    Processor: mergedStream (stores: [])\n' +
  '      --> long-groupByKey-repartition-filter\n' +
  '      <-- mappedAStream, mappedBStream\n' +
  '    Processor: long-groupByKey-repartition-filter (stores: [])\n' +
  '      --> long-groupByKey-repartition-sink\n' +
  '      <-- mergedStream\n' +
  '    Sink: long-groupByKey-repartition-sink (topic: long-groupByKey-repartition)\n' +
  '      <-- long-groupByKey-repartition-filter\n' +
  '\n' +
  '  Sub-topology: 1\n' +
  '    Source: long-groupByKey-repartition-source (topics: [long-groupByKey-repartition])\n' +
  '      --> long-count, string-count\n' +
  '    Processor: string-count (stores: [string-store])\n' +
  '      --> string-toStream\n' +
  '      <-- long-groupByKey-repartition-source\n' +
  '    Processor: long-count (stores: [long-store])\n' +
  '      --> long-toStream\n' +
  '      <-- long-groupByKey-repartition-source\n' +
  '    Processor: string-toStream (stores: [])\n' +
  '      --> string-mapValues\n' +
  '      <-- string-count\n' +
  '    Processor: long-toStream (stores: [])\n' +
  '      --> long-to\n' +
  '      <-- long-count\n' +
  '    Processor: string-mapValues (stores: [])\n' +
  '      --> string-to\n' +
  '      <-- string-toStream\n' +
  '    Sink: long-to (topic: outputTopic_0)\n' +
  '      <-- long-toStream\n' +
  '    Sink: string-to (topic: outputTopic_1)\n' +
  '      <-- string-mapValues\n\n';

/** Kafka's RepartitionOptimizingTest topology without its join: a filter and a peek above one of the groupings. */
function filteredGroupings(): StreamsBuilder {
  const builder = new StreamsBuilder();
  const mapped = builder
    .stream('input', Consumed.with(S, S).withName('sourceStream'))
    .map((k, v) => KeyValue.pair(k.toUpperCase(), v), Named.as('source-map'));
  mapped
    .filter((k) => k === 'B', Named.as('process-filter'))
    .mapValues((v) => v.toUpperCase(), Named.as('process-mapValues'))
    .process(() => ({ process() {} }));
  mapped
    .groupByKey(Grouped.as('count-groupByKey'))
    .count(Materialized.inMemory('count-store'), Named.as('count'))
    .toStream(Named.as('count-toStream'))
    .to('outputTopic_0', Produced.with(S, Serdes.Long()).withName('count-to'));
  mapped
    .groupByKey(Grouped.as('aggregate-groupByKey'))
    .aggregate(
      () => 0,
      (_k, _v, agg: number) => agg + 1,
      Materialized.inMemory<string, number>('aggregate-store'),
      Named.as('aggregate'),
    )
    .toStream(Named.as('aggregate-toStream'))
    .to('outputTopic_1', Produced.with(S, Serdes.Integer()).withName('reduce-to'));
  mapped
    .filter(() => true, Named.as('reduce-filter'))
    .peek(() => {}, Named.as('reduce-peek'))
    .groupByKey(Grouped.as('reduce-groupByKey'))
    .reduce((a, b) => a + b, Materialized.inMemory('reduce-store'), Named.as('reducer'))
    .toStream(Named.as('reduce-toStream'))
    .to('outputTopic_2', Produced.with(S, S));
  return builder;
}

/** The text with each successor list in name order, for the checks of parts of Kafka's texts below. */
function successorsByName(text: string): string {
  return text.replace(/--> (.*)\n/g, (_m, list: string) => `--> ${list.split(', ').sort().join(', ')}\n`);
}

describe('merge.repartition.topics', () => {
  it("describe() prints Kafka's merged topology for a merge of key-changed streams", () => {
    const topology = mergedCounts('inputA', 'inputB', 'outputTopic_0', 'outputTopic_1').build(OPTIMIZE);
    assert.equal(topology.describe().toString(), MERGED_OPTIMIZED);
  });

  it('a filter between the key changer and a grouping runs after the merged repartition, as in Kafka', () => {
    const text = successorsByName(filteredGroupings().build(OPTIMIZE).describe().toString());
    const sub1 = text.slice(text.indexOf('  Sub-topology: 1\n'));
    assert.ok(
      text.includes(
        '    Processor: source-map (stores: [])\n' +
          '      --> count-groupByKey-repartition-filter, process-filter\n' +
          '      <-- sourceStream\n',
      ),
      text,
    );
    assert.ok(
      sub1.startsWith(
        '  Sub-topology: 1\n' +
          '    Source: count-groupByKey-repartition-source (topics: [count-groupByKey-repartition])\n' +
          '      --> aggregate, count, reduce-filter\n',
      ),
      text,
    );
    assert.ok(sub1.includes('    Processor: reduce-filter (stores: [])\n      --> reduce-peek\n'), text);
    assert.ok(!text.includes('Sub-topology: 2'), text);
    assert.deepEqual(
      [...text.matchAll(/Sink: .*-repartition/g)].map((m) => m[0]),
      ['Sink: count-groupByKey-repartition-sink (topic: count-groupByKey-repartition'],
    );
  });

  it("a single grouping's repartition takes names from its topic, as Kafka renames it", () => {
    const builder = new StreamsBuilder();
    builder
      .stream('in', Consumed.with(S, S))
      .flatMap((k, v) => [KeyValue.pair(v, k)])
      .groupByKey()
      .count();
    const text = builder.build(OPTIMIZE).describe().toString();
    const topic = 'KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition';
    assert.ok(
      text.includes(
        `    Processor: ${topic}-filter (stores: [])\n      --> ${topic}-sink\n      <-- KSTREAM-FLATMAP-0000000001\n` +
          `    Sink: ${topic}-sink (topic: ${topic})\n` +
          `      <-- ${topic}-filter\n\n` +
          '  Sub-topology: 1\n' +
          `    Source: ${topic}-source (topics: [${topic}])\n` +
          '      --> KSTREAM-AGGREGATE-0000000003\n',
      ),
      text,
    );
  });

  it('a count, a filtered stream-stream join and a reduce of one key changer: one topic, the same results', () => {
    const topology = (props: Record<string, unknown>) => {
      const builder = new StreamsBuilder();
      const mapped = builder
        .stream('in', Consumed.with(S, S))
        .map((k, v) => KeyValue.pair(v.split(':')[0]!, `${k}${v}`));
      mapped
        .groupByKey()
        .count()
        .toStream()
        .mapValues((v) => String(v))
        .to('counts', Produced.with(S, S));
      mapped
        .filter((k) => k !== 'skip')
        .join(
          builder.stream('other', Consumed.with(S, S)),
          (a, c) => `${a}+${c}`,
          JoinWindows.ofTimeDifferenceWithNoGrace(100),
        )
        .to('joined', Produced.with(S, S));
      mapped
        .groupByKey(Grouped.as('g2'))
        .reduce((a, c) => a + c)
        .toStream()
        .to('reduced', Produced.with(S, S));
      return builder.build(props);
    };
    const run = (props: Record<string, unknown>) => {
      const t = topology(props);
      const driver = new TopologyTestDriver(t);
      try {
        driver.createInputTopic('other', S, S).pipeInput('A', 'o1', 1);
        const input = driver.createInputTopic('in', S, S);
        for (const [i, v] of ['A:1', 'B:2', 'A:3', 'skip:4', 'B:5'].entries())
          input.pipeInput(`k${i}`, v, 2 + i);
        const outputs = ['counts', 'joined', 'reduced'].map((topic) =>
          driver.createOutputTopic(topic, S, S).readKeyValuesToList(),
        );
        return {
          sinks: [
            ...t
              .describe()
              .toString()
              .matchAll(/Sink: .*-repartition/g),
          ].length,
          outputs,
        };
      } finally {
        driver.close();
      }
    };
    const optimized = run(OPTIMIZE);
    const plain = run({});
    assert.equal(optimized.sinks, 1);
    assert.equal(plain.sinks, 3);
    assert.deepEqual(optimized.outputs, plain.outputs);
    assert.deepEqual(optimized.outputs[1], [
      { key: 'A', value: 'k0A:1+o1' },
      { key: 'A', value: 'k2A:3+o1' },
    ]);
  });

  it('without the optimization each grouping keeps its own topic', () => {
    const text = mergedCounts('inputA', 'inputB', 'outputTopic_0', 'outputTopic_1')
      .build()
      .describe()
      .toString();
    assert.equal([...text.matchAll(/Sink: .*-repartition/g)].length, 2, text);
  });

  describe('through a broker', () => {
    const env = useStreamsBroker({ 'mrt-a': 1, 'mrt-b': 1, 'mrt-out0': 1, 'mrt-out1': 1 }, 1);

    it('creates only the merged topic, and both counts are right', async () => {
      const app = 'mrt-app';
      const props = {
        'application.id': app,
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[0]!,
        'commit.interval.ms': 100,
        ...OPTIMIZE,
      };
      const streams = new KafkaStreams(
        mergedCounts('mrt-a', 'mrt-b', 'mrt-out0', 'mrt-out1').build(props),
        props,
      );
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      const admin = new Admin({ bootstrapServers: env.bootstrap });
      const consumer = new Consumer({ bootstrapServers: env.bootstrap, autoOffsetReset: 'earliest' });
      try {
        await streams.start();
        for (const topic of ['mrt-a', 'mrt-b'])
          for (const k of ['X', 'Y', 'Z'])
            for (const v of ['A:foo', 'B:foo', 'C:foo'])
              await producer.send({ topic, key: Buffer.from(k), value: Buffer.from(v) });
        consumer.assign([
          { topic: 'mrt-out0', partition: 0 },
          { topic: 'mrt-out1', partition: 0 },
        ]);
        const latest = new Map<string, string>();
        const done = () => latest.size === 6 && [...latest.values()].every((v) => v === '6');
        for (const deadline = Date.now() + 60_000; !done() && Date.now() < deadline; )
          for (const r of await consumer.poll(200)) {
            const value =
              r.topic === 'mrt-out0' ? String(r.value!.readBigInt64BE(0)) : r.value!.toString('utf8');
            latest.set(`${r.topic} ${r.key!.toString('utf8')}`, value);
          }
        assert.ok(done(), JSON.stringify([...latest]));
        const internal = (await admin.listTopics()).filter((t) => t.startsWith(`${app}-`)).sort();
        assert.deepEqual(internal, [
          `${app}-long-groupByKey-repartition`,
          `${app}-long-store-changelog`,
          `${app}-string-store-changelog`,
        ]);
      } finally {
        await streams.close();
        await consumer.close();
        await admin.close();
        await producer.close();
      }
    });
  });
});
