// A punctuation runs in a record context of its own (Kafka's StreamTask.punctuate): topic null, partition -1,
// offset -1, empty headers, so recordMetadata() is present there, and downstream of what the punctuator forwards,
// with those values; only in init(), before any record context, is it absent. Through a broker: a processor
// punctuates on stream time and forwards what it saw; the processor below adds what it sees.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { Consumed, KafkaStreams, Produced, Record, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import type { ProcessorContext, RecordMetadata } from '../../src/streams/processor.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

const shown = (m: RecordMetadata | null) => (m === null ? 'absent' : `${m.topic}/${m.partition}/${m.offset}`);

describe('record context in a punctuation', () => {
  const broker = useStreamsBroker({ 'punct-in': 1, 'punct-out': 1 }, 1);

  it('recordMetadata() in a punctuation and below it is topic null, partition -1, offset -1', async () => {
    const inInit: string[] = [];
    const builder = new StreamsBuilder();
    builder
      .stream('punct-in', Consumed.with(S, S))
      .process<string, string>(() => {
        let ctx: ProcessorContext<string, string>;
        return {
          init(c) {
            ctx = c;
            inInit.push(shown(c.recordMetadata()));
            c.schedule(1000, 'STREAM_TIME', (t) => {
              ctx.forward(new Record('punctuation', shown(ctx.recordMetadata()), t));
            });
          },
          process(r) {
            ctx.forward(r.withValue(shown(ctx.recordMetadata())));
          },
        };
      })
      .process<string, string>(() => {
        let ctx: ProcessorContext<string, string>;
        return {
          init(c) {
            ctx = c;
          },
          process(r) {
            ctx.forward(r.withValue(`${r.value} then ${shown(ctx.recordMetadata())}`));
          },
        };
      })
      .to('punct-out', Produced.with(S, S));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'punct-context',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': broker.dirs[0]!,
      'commit.interval.ms': 100,
    });
    const follower = new TopicFollower(broker.bootstrap, 'punct-out', 1);
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    follower.start();
    try {
      await streams.start();
      await producer.send({
        topic: 'punct-in',
        key: Buffer.from('a'),
        value: Buffer.from('v'),
        timestamp: 5000,
      });
      await waitUntil(
        () => follower.records.length >= 2,
        60_000,
        () => follower.records.map((r) => `${r.key}=${r.value}`).join(', '),
      );
      const values = follower.records.map((r) => `${r.key}=${r.value?.toString()}`);
      assert.deepEqual(values, [
        'a=punct-in/0/0 then punct-in/0/0',
        'punctuation=null/-1/-1 then null/-1/-1',
      ]);
      assert.deepEqual(inInit, ['absent'], 'no record context in init()');
    } finally {
      await producer.close();
      await streams.close();
      await follower.stop();
    }
  });
});
