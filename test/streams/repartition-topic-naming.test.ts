// Kafka's RepartitionTopicNamingTest topology (a key change; a count, an aggregate and a reduce under Grouped
// names, the count with Materialized.with and no store name; a filtered and peeked grouping; a named stream-stream
// join with the count's stream; a process()) describes exactly as Kafka's expected texts, unoptimized and under
// topology.optimization=all: node names (a StreamJoined name still takes the counter's numbers, as Kafka's
// NamedInternal.suffixWithOrElseGet; so does count(Materialized) without a store name) and each node's successors
// and predecessors in Kafka's order (TopologyDescription's TreeSets filled in the hash order of the node names, with
// the subgraph sizes of the moment). Through a broker the optimized topology creates exactly the internal topics
// its description names.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  Grouped,
  JoinWindows,
  KafkaStreams,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  StreamJoined,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

function topology(
  input: string,
  optimization: string,
  out = ['outputTopic_0', 'outputTopic_1', 'outputTopic_2'],
) {
  const builder = new StreamsBuilder();
  const mapped = builder.stream(input, Consumed.with(S, S)).map((k, v) => KeyValue.pair(k.toUpperCase(), v));
  mapped
    .filter((k) => k === 'B')
    .mapValues((v) => v.toUpperCase())
    .process(() => ({ init() {}, process() {} }));
  const countStream = mapped
    .groupByKey(Grouped.as('count-stream'))
    .count(Materialized.with(S, Serdes.Long()))
    .toStream();
  countStream.to(out[0]!, Produced.with(S, Serdes.Long()));
  mapped
    .groupByKey(Grouped.as('aggregate-stream'))
    .aggregate(
      () => 0,
      (_k, v, agg) => agg + v.length,
      Materialized.with(S, Serdes.Integer()),
    )
    .toStream()
    .to(out[1]!, Produced.with(S, Serdes.Integer()));
  mapped
    .filter(() => true)
    .peek(() => {})
    .groupByKey(Grouped.as('reduced-stream'))
    .reduce((a, b) => `${a}:${b}`, Materialized.with(S, S))
    .toStream()
    .to(out[2]!, Produced.with(S, S));
  mapped
    .filter((k) => k === 'A')
    .join(
      countStream,
      (a, c) => `${a}:${c}`,
      JoinWindows.ofTimeDifferenceWithNoGrace(5000),
      StreamJoined.with(S, S, Serdes.Long()).withStoreName('joined-stream').withName('joined-stream'),
    )
    .to('outputTopicForJoin');
  return builder.build({ 'topology.optimization': optimization });
}

// Kafka's RepartitionTopicNamingTest.EXPECTED_UNOPTIMIZED_TOPOLOGY.
const UNOPTIMIZED =
  'Topologies:\n' +
  '   Sub-topology: 0\n' +
  '    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n' +
  '      --> KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-MAP-0000000001 (stores: [])\n' +
  '      --> KSTREAM-FILTER-0000000029, KSTREAM-FILTER-0000000002, KSTREAM-FILTER-0000000020, aggregate-stream-repartition-filter, count-stream-repartition-filter\n' +
  '      <-- KSTREAM-SOURCE-0000000000\n' +
  '    Processor: KSTREAM-FILTER-0000000020 (stores: [])\n' +
  '      --> KSTREAM-PEEK-0000000021\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-FILTER-0000000002 (stores: [])\n' +
  '      --> KSTREAM-MAPVALUES-0000000003\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-FILTER-0000000029 (stores: [])\n' +
  '      --> joined-stream-left-repartition-filter\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-PEEK-0000000021 (stores: [])\n' +
  '      --> reduced-stream-repartition-filter\n' +
  '      <-- KSTREAM-FILTER-0000000020\n' +
  '    Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])\n' +
  '      --> KSTREAM-PROCESSOR-0000000004\n' +
  '      <-- KSTREAM-FILTER-0000000002\n' +
  '    Processor: aggregate-stream-repartition-filter (stores: [])\n' +
  '      --> aggregate-stream-repartition-sink\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: count-stream-repartition-filter (stores: [])\n' +
  '      --> count-stream-repartition-sink\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: joined-stream-left-repartition-filter (stores: [])\n' +
  '      --> joined-stream-left-repartition-sink\n' +
  '      <-- KSTREAM-FILTER-0000000029\n' +
  '    Processor: reduced-stream-repartition-filter (stores: [])\n' +
  '      --> reduced-stream-repartition-sink\n' +
  '      <-- KSTREAM-PEEK-0000000021\n' +
  '    Processor: KSTREAM-PROCESSOR-0000000004 (stores: [])\n' +
  '      --> none\n' +
  '      <-- KSTREAM-MAPVALUES-0000000003\n' +
  '    Sink: aggregate-stream-repartition-sink (topic: aggregate-stream-repartition)\n' +
  '      <-- aggregate-stream-repartition-filter\n' +
  '    Sink: count-stream-repartition-sink (topic: count-stream-repartition)\n' +
  '      <-- count-stream-repartition-filter\n' +
  '    Sink: joined-stream-left-repartition-sink (topic: joined-stream-left-repartition)\n' +
  '      <-- joined-stream-left-repartition-filter\n' +
  '    Sink: reduced-stream-repartition-sink (topic: reduced-stream-repartition)\n' +
  '      <-- reduced-stream-repartition-filter\n' +
  '\n' +
  '  Sub-topology: 1\n' +
  '    Source: count-stream-repartition-source (topics: [count-stream-repartition])\n' +
  '      --> KSTREAM-AGGREGATE-0000000007\n' +
  '    Processor: KSTREAM-AGGREGATE-0000000007 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000006])\n' +
  '      --> KTABLE-TOSTREAM-0000000011\n' +
  '      <-- count-stream-repartition-source\n' +
  '    Processor: KTABLE-TOSTREAM-0000000011 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000012, joined-stream-other-windowed\n' +
  '      <-- KSTREAM-AGGREGATE-0000000007\n' +
  '    Source: joined-stream-left-repartition-source (topics: [joined-stream-left-repartition])\n' +
  '      --> joined-stream-this-windowed\n' +
  '    Processor: joined-stream-other-windowed (stores: [joined-stream-other-join-store])\n' +
  '      --> joined-stream-other-join\n' +
  '      <-- KTABLE-TOSTREAM-0000000011\n' +
  '    Processor: joined-stream-this-windowed (stores: [joined-stream-this-join-store])\n' +
  '      --> joined-stream-this-join\n' +
  '      <-- joined-stream-left-repartition-source\n' +
  '    Processor: joined-stream-other-join (stores: [joined-stream-this-join-store])\n' +
  '      --> joined-stream-merge\n' +
  '      <-- joined-stream-other-windowed\n' +
  '    Processor: joined-stream-this-join (stores: [joined-stream-other-join-store])\n' +
  '      --> joined-stream-merge\n' +
  '      <-- joined-stream-this-windowed\n' +
  '    Processor: joined-stream-merge (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000038\n' +
  '      <-- joined-stream-this-join, joined-stream-other-join\n' +
  '    Sink: KSTREAM-SINK-0000000012 (topic: outputTopic_0)\n' +
  '      <-- KTABLE-TOSTREAM-0000000011\n' +
  '    Sink: KSTREAM-SINK-0000000038 (topic: outputTopicForJoin)\n' +
  '      <-- joined-stream-merge\n' +
  '\n' +
  '  Sub-topology: 2\n' +
  '    Source: aggregate-stream-repartition-source (topics: [aggregate-stream-repartition])\n' +
  '      --> KSTREAM-AGGREGATE-0000000014\n' +
  '    Processor: KSTREAM-AGGREGATE-0000000014 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000013])\n' +
  '      --> KTABLE-TOSTREAM-0000000018\n' +
  '      <-- aggregate-stream-repartition-source\n' +
  '    Processor: KTABLE-TOSTREAM-0000000018 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000019\n' +
  '      <-- KSTREAM-AGGREGATE-0000000014\n' +
  '    Sink: KSTREAM-SINK-0000000019 (topic: outputTopic_1)\n' +
  '      <-- KTABLE-TOSTREAM-0000000018\n' +
  '\n' +
  '  Sub-topology: 3\n' +
  '    Source: reduced-stream-repartition-source (topics: [reduced-stream-repartition])\n' +
  '      --> KSTREAM-REDUCE-0000000023\n' +
  '    Processor: KSTREAM-REDUCE-0000000023 (stores: [KSTREAM-REDUCE-STATE-STORE-0000000022])\n' +
  '      --> KTABLE-TOSTREAM-0000000027\n' +
  '      <-- reduced-stream-repartition-source\n' +
  '    Processor: KTABLE-TOSTREAM-0000000027 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000028\n' +
  '      <-- KSTREAM-REDUCE-0000000023\n' +
  '    Sink: KSTREAM-SINK-0000000028 (topic: outputTopic_2)\n' +
  '      <-- KTABLE-TOSTREAM-0000000027\n' +
  '\n';

// Kafka's RepartitionTopicNamingTest.EXPECTED_OPTIMIZED_TOPOLOGY.
const OPTIMIZED =
  'Topologies:\n' +
  '   Sub-topology: 0\n' +
  '    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n' +
  '      --> KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-MAP-0000000001 (stores: [])\n' +
  '      --> KSTREAM-FILTER-0000000002, count-stream-repartition-filter\n' +
  '      <-- KSTREAM-SOURCE-0000000000\n' +
  '    Processor: KSTREAM-FILTER-0000000002 (stores: [])\n' +
  '      --> KSTREAM-MAPVALUES-0000000003\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])\n' +
  '      --> KSTREAM-PROCESSOR-0000000004\n' +
  '      <-- KSTREAM-FILTER-0000000002\n' +
  '    Processor: count-stream-repartition-filter (stores: [])\n' +
  '      --> count-stream-repartition-sink\n' +
  '      <-- KSTREAM-MAP-0000000001\n' +
  '    Processor: KSTREAM-PROCESSOR-0000000004 (stores: [])\n' +
  '      --> none\n' +
  '      <-- KSTREAM-MAPVALUES-0000000003\n' +
  '    Sink: count-stream-repartition-sink (topic: count-stream-repartition)\n' +
  '      <-- count-stream-repartition-filter\n' +
  '\n' +
  '  Sub-topology: 1\n' +
  '    Source: count-stream-repartition-source (topics: [count-stream-repartition])\n' +
  '      --> KSTREAM-FILTER-0000000020, KSTREAM-AGGREGATE-0000000007, KSTREAM-AGGREGATE-0000000014, KSTREAM-FILTER-0000000029\n' +
  '    Processor: KSTREAM-AGGREGATE-0000000007 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000006])\n' +
  '      --> KTABLE-TOSTREAM-0000000011\n' +
  '      <-- count-stream-repartition-source\n' +
  '    Processor: KTABLE-TOSTREAM-0000000011 (stores: [])\n' +
  '      --> joined-stream-other-windowed, KSTREAM-SINK-0000000012\n' +
  '      <-- KSTREAM-AGGREGATE-0000000007\n' +
  '    Processor: KSTREAM-FILTER-0000000020 (stores: [])\n' +
  '      --> KSTREAM-PEEK-0000000021\n' +
  '      <-- count-stream-repartition-source\n' +
  '    Processor: KSTREAM-FILTER-0000000029 (stores: [])\n' +
  '      --> joined-stream-this-windowed\n' +
  '      <-- count-stream-repartition-source\n' +
  '    Processor: KSTREAM-PEEK-0000000021 (stores: [])\n' +
  '      --> KSTREAM-REDUCE-0000000023\n' +
  '      <-- KSTREAM-FILTER-0000000020\n' +
  '    Processor: joined-stream-other-windowed (stores: [joined-stream-other-join-store])\n' +
  '      --> joined-stream-other-join\n' +
  '      <-- KTABLE-TOSTREAM-0000000011\n' +
  '    Processor: joined-stream-this-windowed (stores: [joined-stream-this-join-store])\n' +
  '      --> joined-stream-this-join\n' +
  '      <-- KSTREAM-FILTER-0000000029\n' +
  '    Processor: KSTREAM-AGGREGATE-0000000014 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000013])\n' +
  '      --> KTABLE-TOSTREAM-0000000018\n' +
  '      <-- count-stream-repartition-source\n' +
  '    Processor: KSTREAM-REDUCE-0000000023 (stores: [KSTREAM-REDUCE-STATE-STORE-0000000022])\n' +
  '      --> KTABLE-TOSTREAM-0000000027\n' +
  '      <-- KSTREAM-PEEK-0000000021\n' +
  '    Processor: joined-stream-other-join (stores: [joined-stream-this-join-store])\n' +
  '      --> joined-stream-merge\n' +
  '      <-- joined-stream-other-windowed\n' +
  '    Processor: joined-stream-this-join (stores: [joined-stream-other-join-store])\n' +
  '      --> joined-stream-merge\n' +
  '      <-- joined-stream-this-windowed\n' +
  '    Processor: KTABLE-TOSTREAM-0000000018 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000019\n' +
  '      <-- KSTREAM-AGGREGATE-0000000014\n' +
  '    Processor: KTABLE-TOSTREAM-0000000027 (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000028\n' +
  '      <-- KSTREAM-REDUCE-0000000023\n' +
  '    Processor: joined-stream-merge (stores: [])\n' +
  '      --> KSTREAM-SINK-0000000038\n' +
  '      <-- joined-stream-this-join, joined-stream-other-join\n' +
  '    Sink: KSTREAM-SINK-0000000012 (topic: outputTopic_0)\n' +
  '      <-- KTABLE-TOSTREAM-0000000011\n' +
  '    Sink: KSTREAM-SINK-0000000019 (topic: outputTopic_1)\n' +
  '      <-- KTABLE-TOSTREAM-0000000018\n' +
  '    Sink: KSTREAM-SINK-0000000028 (topic: outputTopic_2)\n' +
  '      <-- KTABLE-TOSTREAM-0000000027\n' +
  '    Sink: KSTREAM-SINK-0000000038 (topic: outputTopicForJoin)\n' +
  '      <-- joined-stream-merge\n' +
  '\n';

describe("Kafka's RepartitionTopicNamingTest topology", () => {
  it("describes as Kafka's texts, successor order included", () => {
    assert.equal(topology('input', 'none').describe().toString(), UNOPTIMIZED);
    assert.equal(topology('input', 'all').describe().toString(), OPTIMIZED);
  });

  describe('through a broker', () => {
    const env = useStreamsBroker(
      { 'rtn-in': 1, 'rtn-out0': 1, 'rtn-out1': 1, 'rtn-out2': 1, outputTopicForJoin: 1 },
      1,
    );

    it('creates the internal topics its description names', async () => {
      const app = 'rtn-app';
      const props = {
        'application.id': app,
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[0]!,
        'commit.interval.ms': 100,
        'topology.optimization': 'all',
      };
      const built = topology('rtn-in', 'all', ['rtn-out0', 'rtn-out1', 'rtn-out2']);
      const text = built.describe().toString();
      const expected = [
        ...[...text.matchAll(/\(topic: (\S+-repartition)\)/g)].map((m) => `${app}-${m[1]}`),
        ...[...built.stores.keys()].map((s) => `${app}-${s}-changelog`),
      ].sort();
      const streams = new KafkaStreams(built, props);
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      const admin = new Admin({ bootstrapServers: env.bootstrap });
      try {
        await streams.start();
        await producer.send({ topic: 'rtn-in', key: Buffer.from('a'), value: Buffer.from('x') });
        await waitUntil(
          () => streams.processedRecords() >= 1,
          30_000,
          () => `processed ${streams.processedRecords()}`,
        );
        const internal = (await admin.listTopics()).filter((t) => t.startsWith(`${app}-`)).sort();
        assert.deepEqual(internal, expected);
        assert.ok(
          internal.includes(`${app}-KSTREAM-AGGREGATE-STATE-STORE-0000000006-changelog`),
          internal.join(),
        );
      } finally {
        await streams.close();
        await admin.close();
        await producer.close();
      }
    });
  });
});
