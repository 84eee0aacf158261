// KStream.repartition()'s topic is written and read with the Repartitioned key serde, the default one when it has
// none, not the stream's: Kafka's KStreamImpl.doRepartition hands the Repartitioned key serde alone to the
// repartition node, while the value serde and the serdes of the stream it returns fall back to the stream's.
// Through a broker: a stream keyed in a tagged serde with JSON values, repartitioned by name only, then written
// without Produced: the repartition topic holds the plain key and the JSON value, the output the tagged key.
// merge() drops both serdes (Kafka's KStreamImpl.merge: neither stream's can stand for both), so a merged stream
// written without Produced goes out in the default serdes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Consumed, Repartitioned, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { rawRecord, readFollowed, runTopology, TAGGED } from './serdes-helpers.js';
import { useStreamsBroker } from './streams-helpers.js';

describe('serdes of a repartitioned or merged stream', () => {
  const env = useStreamsBroker({ 'rp-in': 1, 'rp-out': 1, 'mg-a': 1, 'mg-b': 1, 'mg-out': 1 }, 1);

  it('a merged stream has no serdes: written without Produced, it goes out in the default ones', async () => {
    const builder = new StreamsBuilder();
    const consumed = Consumed.with(TAGGED, Serdes.JSON<string>());
    builder.stream('mg-a', consumed).merge(builder.stream('mg-b', consumed)).to('mg-out');
    await runTopology(env, 'mg-app', builder, { out: ['mg-out', 1] }, async ({ producer, followed }) => {
      await producer.send({ topic: 'mg-a', key: Buffer.from('tag:A'), value: Buffer.from('"a"') });
      await producer.send({ topic: 'mg-b', key: Buffer.from('tag:B'), value: Buffer.from('"b"') });
      const out = followed.get('out')!;
      await waitUntil(
        () => out.records.length >= 2,
        60_000,
        () => readFollowed(followed),
      );
      // Two topics' records: in either order.
      assert.deepEqual(out.records.map(rawRecord).sort(), ['A=a', 'B=b']);
    });
  });

  it('the topic takes the Repartitioned key serde, else the default one; the stream keeps its own', async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('rp-in', Consumed.with(TAGGED, Serdes.JSON<string>()))
      .repartition(Repartitioned.as('rp'))
      .to('rp-out');
    const app = 'rp-app';
    const topics = { repartition: [`${app}-rp-repartition`, 1], out: ['rp-out', 1] } as const;
    await runTopology(env, app, builder, topics, async ({ producer, followed }) => {
      await producer.send({ topic: 'rp-in', key: Buffer.from('tag:A'), value: Buffer.from('"v"') });
      const read = () => readFollowed(followed);
      await waitUntil(() => [...followed.values()].every((f) => f.records.length > 0), 60_000, read);
      assert.equal(read(), 'repartition: A="v"; out: tag:A="v"');
    });
  });
});
