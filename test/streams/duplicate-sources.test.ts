// Two stream() calls of the same topics share one source node, as Kafka's InternalStreamsBuilder
// .mergeDuplicateSourceNodes merges them (the second's generated name is still taken); overlapping but not equal
// topics fail with Kafka's TopologyException text. A join of two such streams is a self-join for
// single.store.self.join (KStreamKStreamSelfJoinTest's "two streams" case). Through a broker both streams see each
// record once.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
  TopologyError,
} from '../../src/streams/index.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

function upperAndLower(input: string, upper: string, lower: string): StreamsBuilder {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(S, S))
    .mapValues((v) => v.toUpperCase())
    .to(upper, Produced.with(S, S));
  builder
    .stream(input, Consumed.with(S, S))
    .mapValues((v) => v.toLowerCase())
    .to(lower, Produced.with(S, S));
  return builder;
}

describe('stream() of topics another stream() reads', () => {
  it('shares its source node, and overlapping topics fail as in Kafka', () => {
    const text = upperAndLower('in', 'up', 'low').build().describe().toString();
    assert.match(
      text,
      /Source: KSTREAM-SOURCE-0000000000 \(topics: \[in\]\)\n {6}--> KSTREAM-MAPVALUES-0000000001, KSTREAM-MAPVALUES-0000000004\n/,
    );
    assert.doesNotMatch(text, /KSTREAM-SOURCE-0000000003/);
    const builder = new StreamsBuilder();
    builder.stream(['a', 'b']);
    assert.throws(
      () => builder.stream(['a']),
      (e: unknown) =>
        e instanceof TopologyError &&
        e.message === 'Two source nodes are subscribed to overlapping but not equal input topics',
    );
    // A table of a stream's topic is not merged: Kafka's InternalTopologyBuilder refuses the second source.
    const table = new StreamsBuilder();
    table.stream('in');
    assert.throws(
      () => table.table('in'),
      (e: unknown) =>
        e instanceof TopologyError && e.message === 'Topic in has already been registered by another source.',
    );
    // Two streams of one topic joined: one store under single.store.self.join.
    const joined = new StreamsBuilder();
    joined
      .stream('in', Consumed.with(S, S))
      .join(
        joined.stream('in', Consumed.with(S, S)),
        (a, b) => a + b,
        JoinWindows.ofTimeDifferenceWithNoGrace(100),
        StreamJoined.with(S, S, S),
      );
    const optimized = joined
      .build({ [StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG]: StreamsConfig.OPTIMIZE })
      .describe()
      .toString();
    assert.match(
      optimized,
      /Processor: KSTREAM-MERGE-0000000006 \(stores: \[KSTREAM-JOINTHIS-0000000004-store\]\)/,
    );
    assert.doesNotMatch(optimized, /JOINOTHER/);
  });

  describe('through a broker', () => {
    const env = useStreamsBroker({ 'dup-in': 1, 'dup-up': 1, 'dup-low': 1 }, 1);

    it('gives each record to both streams once', async () => {
      const props = {
        'application.id': 'dup-app',
        'bootstrap.servers': env.bootstrap,
        'state.dir': env.dirs[0]!,
        'commit.interval.ms': 100,
      };
      const streams = new KafkaStreams(upperAndLower('dup-in', 'dup-up', 'dup-low').build(), props);
      const producer = new Producer({ bootstrapServers: env.bootstrap });
      const consumer = new Consumer({ bootstrapServers: env.bootstrap, autoOffsetReset: 'earliest' });
      try {
        await streams.start();
        await producer.send({ topic: 'dup-in', key: Buffer.from('k'), value: Buffer.from('MiXeD') });
        consumer.assign([
          { topic: 'dup-up', partition: 0 },
          { topic: 'dup-low', partition: 0 },
        ]);
        const seen: string[] = [];
        for (let deadline = Date.now() + 30_000, extra = 2; Date.now() < deadline && extra > 0; ) {
          for (const r of await consumer.poll(500)) seen.push(`${r.topic} ${r.value!.toString('utf8')}`);
          if (seen.length >= 2) extra--;
        }
        assert.deepEqual(seen.sort(), ['dup-low mixed', 'dup-up MIXED']);
      } finally {
        await streams.close();
        await consumer.close();
        await producer.close();
      }
    });
  });
});
