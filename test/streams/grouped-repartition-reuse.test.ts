// The aggregations of one grouped stream that needs a repartition and has a Grouped name share its one repartition
// topic, as Kafka's GroupedStreamAggregateBuilder reuses its repartition node (RepartitionTopicNamingTest's
// shouldNotFailWithSameRepartitionTopicNameUsingSameKGroupedStream and ...SameTimeWindowStream): describe() gives
// Kafka's text, a later aggregation still consumes the repartition's generated names, and through a broker only
// `<app>-grp-repartition` is created and every aggregation counts each record once. Two groupings of different
// streams under one Grouped name still fail (shouldFailWithSameRepartitionTopicName), as without a name each
// aggregation keeps its own topic (shouldNotReuseRepartitionNodeWithUnnamedRepartitionTopics).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  Grouped,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  TimeWindows,
  TopologyError,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** A key change, one named grouping, then a count, a reduce and a windowed count of it. */
function threeAggregations(input: string, counts: string, reduced: string): StreamsBuilder {
  const builder = new StreamsBuilder();
  const grouped = builder
    .stream(input, Consumed.with(S, S))
    .selectKey((_k, v) => v.split(':')[0]!)
    .groupByKey(Grouped.as('grp'));
  grouped.count().toStream().to(counts, Produced.with(S, Serdes.Long()));
  grouped
    .reduce((a, b) => `${a}|${b}`)
    .toStream()
    .to(reduced, Produced.with(S, S));
  grouped.windowedBy(TimeWindows.ofSizeWithNoGrace(60_000)).count();
  return builder;
}

// Kafka's names for threeAggregations: each aggregation takes a store name, its own name and the three names of
// the repartition it would write (sink, filter, source), whether or not it writes one.
const EXPECTED =
  'Topologies:\n' +
  '   Sub-topology: 0\n' +
  '    Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n' +
  '      --> KSTREAM-KEY-SELECT-0000000001\n' +
  '    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n' +
  '      --> grp-repartition-filter\n' +
  '      <-- KSTREAM-SOURCE-0000000000\n' +
  '    Processor: grp-repartition-filter (stores: [])\n' +
  '      --> grp-repartition-sink\n' +
  '      <-- KSTREAM-KEY-SELECT-0000000001\n' +
  '    Sink: grp-repartition-sink (topic: grp-repartition)\n' +
  '      <-- grp-repartition-filter\n' +
  '\n' +
  '  Sub-topology: 1\n' +
  '    Source: grp-repartition-source (topics: [grp-repartition])\n' +
  '      --> KSTREAM-AGGREGATE-0000000003, KSTREAM-AGGREGATE-0000000017, KSTREAM-REDUCE-0000000010\n' +
  '    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])\n' +
  '      --> KTABLE-TOSTREAM-0000000007\n' +
  '      <-- grp-repartition-source\n' +
  '    Processor: KSTREAM-REDUCE-0000000010 (stores: [KSTREAM-REDUCE-STATE-STORE-0000000009])\n' +
  '      --> KTABLE-TOSTREAM-0000000014\n' +
  '      <-- grp-repartition-source\n' +
  '    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000008\n' +
  '      <-- KSTREAM-AGGREGATE-0000000003\n' +
  '    Processor: KTABLE-TOSTREAM-0000000014 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000015\n' +
  '      <-- KSTREAM-REDUCE-0000000010\n' +
  '    Processor: KSTREAM-AGGREGATE-0000000017 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000016])\n' +
  '      --> none\n' +
  '      <-- grp-repartition-source\n' +
  '    Sink: KSTREAM-SINK-0000000008 (topic: counts)\n' +
  '      <-- KTABLE-TOSTREAM-0000000007\n' +
  '    Sink: KSTREAM-SINK-0000000015 (topic: reduced)\n' +
  '      <-- KTABLE-TOSTREAM-0000000014\n\n';

/** Successor lists in name order: Kafka's order among siblings is not what this file checks. */
function successorsByName(text: string): string {
  return text.replace(/--> (.*)\n/g, (_m, list: string) => `--> ${list.split(', ').sort().join(', ')}\n`);
}

describe('aggregations of one named grouping', () => {
  it("share one repartition, under Kafka's node names", () => {
    const text = threeAggregations('in', 'counts', 'reduced').build().describe().toString();
    assert.equal(successorsByName(text), successorsByName(EXPECTED));
  });

  it('of two streams under one Grouped name still fail, and unnamed ones keep a topic each', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('a', Consumed.with(S, S))
      .selectKey((k) => k)
      .groupByKey(Grouped.as('grouping'))
      .count();
    const second = builder
      .stream('b', Consumed.with(S, S))
      .selectKey((k) => k)
      .groupByKey(Grouped.as('grouping'));
    assert.throws(
      () => second.count(),
      (e: unknown) =>
        e instanceof TopologyError && e.message === 'Processor grouping-repartition-filter is already added.',
    );
    const unnamed = new StreamsBuilder();
    const g = unnamed
      .stream('c', Consumed.with(S, S))
      .selectKey((k) => k)
      .groupByKey();
    g.windowedBy(TimeWindows.ofSizeWithNoGrace(10)).count();
    g.windowedBy(TimeWindows.ofSizeWithNoGrace(30)).count();
    const text = unnamed.build().describe().toString();
    assert.equal([...text.matchAll(/Sink: .*-repartition/g)].length, 2, text);
  });

  describe('through a broker', () => {
    const env = useStreamsBroker({ 'grp-in': 2, 'grp-counts': 1, 'grp-reduced': 1 }, 1);

    it('create one repartition topic, and each aggregation sees every record once', async () => {
      const app = 'grp-app';
      const props = {
        'application.id': app,
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[0]!,
        'commit.interval.ms': 100,
      };
      const streams = new KafkaStreams(
        threeAggregations('grp-in', 'grp-counts', 'grp-reduced').build(),
        props,
      );
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      const admin = new Admin({ bootstrapServers: env.bootstrap });
      const counts = new TopicFollower(env.bootstrap, 'grp-counts', 1);
      const reduced = new TopicFollower(env.bootstrap, 'grp-reduced', 1);
      try {
        await streams.start();
        counts.start();
        reduced.start();
        for (let i = 0; i < 6; i++)
          await producer.send({
            topic: 'grp-in',
            partition: i % 2,
            key: Buffer.from(`k${i}`),
            value: Buffer.from(`${i % 2 === 0 ? 'A' : 'B'}:${i}`),
          });
        const read = () =>
          [
            `A ${counts.latest.get('A')?.readBigInt64BE(0)}`,
            `B ${counts.latest.get('B')?.readBigInt64BE(0)}`,
            `A ${reduced.latest.get('A')?.toString('utf8')}`,
            `B ${reduced.latest.get('B')?.toString('utf8')}`,
          ].join(', ');
        const expected = 'A 3, B 3, A A:0|A:2|A:4, B B:1|B:3|B:5';
        await waitUntil(() => read() === expected, 60_000, read);
        const internal = (await admin.listTopics()).filter((t) => t.startsWith(`${app}-`)).sort();
        assert.deepEqual(internal, [
          `${app}-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog`,
          `${app}-KSTREAM-AGGREGATE-STATE-STORE-0000000016-changelog`,
          `${app}-KSTREAM-REDUCE-STATE-STORE-0000000009-changelog`,
          `${app}-grp-repartition`,
        ]);
      } finally {
        await counts.stop();
        await reduced.stop();
        await streams.close();
        await admin.close();
        await producer.close();
      }
    });
  });
});
