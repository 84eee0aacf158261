// topology.optimization's single.store.self.join (KIP-862, Kafka's InternalStreamsBuilder.rewriteSingleStoreSelfJoin
// and KStreamKStreamSelfJoin): a stream-stream join whose two sides hang from one node keeps one window store, its
// this side's, read by one processor named as the join's merge node; the other side's windowed node, both join
// nodes and the other store go. describe() gives Kafka's text, the results are the unoptimized join's
// (KStreamKStreamSelfJoinTest's inputs, in the test driver and through a broker), and a broker gets no changelog
// for the store that went.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  JoinWindows,
  KafkaStreams,
  Produced,
  Serdes,
  StreamJoined,
  StreamsBuilder,
  StreamsConfig,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const OPTIMIZE = { [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE };
const SELF_JOIN_ONLY = { [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.SINGLE_STORE_SELF_JOIN };

type Kind = 'join' | 'leftJoin';

/** One stream joined with itself, the results written to `out`. */
function selfJoin(input: string, out: string, windows: JoinWindows, kind: Kind = 'join'): StreamsBuilder {
  const builder = new StreamsBuilder();
  const stream = builder.stream(input, Consumed.with(S, S));
  const joiner = (a: string, b: string | null) => `${a}${b}`;
  const joined =
    kind === 'join'
      ? stream.join(stream, joiner, windows, StreamJoined.with(S, S, S))
      : stream.leftJoin(stream, joiner, windows, StreamJoined.with(S, S, S));
  joined.to(out, Produced.with(S, S));
  return builder;
}

const OPTIMIZED =
  'Topologies:\n' +
  '   Sub-topology: 0\n' +
  '    Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n' +
  '      --> KSTREAM-WINDOWED-0000000001\n' +
  '    Processor: KSTREAM-WINDOWED-0000000001 (stores: [KSTREAM-JOINTHIS-0000000003-store])\n' +
  '      --> KSTREAM-MERGE-0000000005\n' +
  '      <-- KSTREAM-SOURCE-0000000000\n' +
  '    Processor: KSTREAM-MERGE-0000000005 (stores: [KSTREAM-JOINTHIS-0000000003-store])\n' +
  '      --> KSTREAM-SINK-0000000006\n' +
  '      <-- KSTREAM-WINDOWED-0000000001\n' +
  '    Sink: KSTREAM-SINK-0000000006 (topic: out)\n' +
  '      <-- KSTREAM-MERGE-0000000005\n\n';

/** KStreamKStreamSelfJoinTest's inputs: [key, value, timestamp]. */
const DIFFERENT_WINDOWS_INPUT: [string, string, number][] = [
  ['A', '1', 0],
  ['A', '2', 11000],
  ['B', '1', 12000],
  ['A', '3', 13000],
  ['A', '4', 15000],
  ['C', '1', 16000],
  ['D', '1', 17000],
  ['A', '5', 30000],
];
const OUT_OF_ORDER_INPUT: [string, string, number][] = [
  ['A', '1', 0],
  ['A', '2', 9999],
  ['B', '1', 11000],
  ['A', '3', 13000],
  ['A', '4', 15000],
  ['C', '1', 16000],
  ['D', '1', 17000],
  ['A', '5', 30000],
  ['A', '5', 6000],
];

function driverResults(
  builder: StreamsBuilder,
  props: Record<string, unknown>,
  input: [string, string, number][],
) {
  const driver = new TopologyTestDriver(builder.build(props), props);
  try {
    const topic = driver.createInputTopic('in', S, S);
    const out = driver.createOutputTopic('out', S, S);
    for (const [k, v, ts] of input) topic.pipeInput(k, v, ts);
    return out.readRecordsToList().map((r) => `${r.key}=${r.value}@${r.timestamp}`);
  } finally {
    driver.close();
  }
}

describe('single.store.self.join', () => {
  it("keeps one store and one join processor, as Kafka's optimized topology", () => {
    const windows = JoinWindows.ofTimeDifferenceWithNoGrace(100);
    // Kafka rewrites a left self-join too (its store names are the inner join's on the this side).
    for (const kind of ['join', 'leftJoin'] as const)
      for (const props of [OPTIMIZE, SELF_JOIN_ONLY])
        assert.equal(
          selfJoin('in', 'out', windows, kind).build(props).describe().toString(),
          OPTIMIZED,
          kind,
        );
    const plain = selfJoin('in', 'out', windows).build().describe().toString();
    assert.match(plain, /KSTREAM-JOINOTHER-0000000004-store/);
    // A filter on one side makes two parents: Kafka leaves such a join alone.
    const builder = new StreamsBuilder();
    const stream = builder.stream('in', Consumed.with(S, S));
    stream.filter((_k, v) => v !== 'x').join(stream, (a, b) => `${a}${b}`, windows);
    const text = builder.build(OPTIMIZE).describe().toString();
    assert.match(text, /KSTREAM-JOINOTHER-0000000005-store/);
  });

  it("gives the unoptimized join's results (KStreamKStreamSelfJoinTest's cases)", () => {
    const cases: [JoinWindows, [string, string, number][]][] = [
      [JoinWindows.ofTimeDifferenceWithNoGrace(10_000), OUT_OF_ORDER_INPUT],
      [JoinWindows.ofTimeDifferenceAndGrace(11_000, 10_000), DIFFERENT_WINDOWS_INPUT],
      [JoinWindows.ofTimeDifferenceWithNoGrace(10_000).before(2_000), DIFFERENT_WINDOWS_INPUT],
      [JoinWindows.ofTimeDifferenceWithNoGrace(3_000).after(12_000), OUT_OF_ORDER_INPUT],
    ];
    for (const [windows, input] of cases) {
      const expected = driverResults(selfJoin('in', 'out', windows), {}, input);
      assert.ok(expected.length > input.length, expected.join(' '));
      assert.deepEqual(driverResults(selfJoin('in', 'out', windows), OPTIMIZE, input), expected);
    }
  });

  describe('through a broker', () => {
    const env = useStreamsBroker({ 'sj-in': 1, 'sj-out': 1, 'sj-plain-out': 1 }, 2);

    it("gives the unoptimized join's results with one store's changelog", async () => {
      const windows = JoinWindows.ofTimeDifferenceWithNoGrace(10_000);
      const base = { 'bootstrap.servers': env.bootstrap, 'commit.interval.ms': 100 };
      const optimizedProps = { ...base, 'application.id': 'sj-app', 'state.dir': env.dirs[0]!, ...OPTIMIZE };
      const plainProps = { ...base, 'application.id': 'sj-plain', 'state.dir': env.dirs[1]! };
      const optimized = new KafkaStreams(
        selfJoin('sj-in', 'sj-out', windows).build(optimizedProps),
        optimizedProps,
      );
      const plain = new KafkaStreams(
        selfJoin('sj-in', 'sj-plain-out', windows).build(plainProps),
        plainProps,
      );
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      const admin = new Admin({ bootstrapServers: env.bootstrap });
      const consumer = new Consumer({ bootstrapServers: env.bootstrap, autoOffsetReset: 'earliest' });
      try {
        await optimized.start();
        await plain.start();
        for (const [k, v, ts] of OUT_OF_ORDER_INPUT)
          await producer.send({ topic: 'sj-in', key: Buffer.from(k), value: Buffer.from(v), timestamp: ts });
        consumer.assign([
          { topic: 'sj-out', partition: 0 },
          { topic: 'sj-plain-out', partition: 0 },
        ]);
        // One partition: each app's results come in the join's order, which the test driver gives too.
        const expected = driverResults(selfJoin('in', 'out', windows), {}, OUT_OF_ORDER_INPUT);
        const seen = new Map<string, string[]>([
          ['sj-out', []],
          ['sj-plain-out', []],
        ]);
        const enough = () => [...seen.values()].every((list) => list.length >= expected.length);
        for (let deadline = Date.now() + 60_000, extra = 2; Date.now() < deadline && extra > 0; ) {
          for (const r of await consumer.poll(500))
            seen.get(r.topic)!.push(`${r.key!.toString('utf8')}=${r.value!.toString('utf8')}@${r.timestamp}`);
          if (enough()) extra--;
        }
        assert.deepEqual(seen.get('sj-plain-out'), expected);
        assert.deepEqual(seen.get('sj-out'), expected);
        const internal = (await admin.listTopics()).filter((t) => t.startsWith('sj-app-')).sort();
        assert.deepEqual(internal, ['sj-app-KSTREAM-JOINTHIS-0000000003-store-changelog']);
      } finally {
        await optimized.close();
        await plain.close();
        await consumer.close();
        await admin.close();
        await producer.close();
      }
    });
  });
});
