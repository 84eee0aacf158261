// A join reads a suppressed table through the suppression's view (Kafka's KTableSuppressProcessorSupplier.view,
// the buffer's priorValueForBuffered): a key with held updates reads as its value before them (none for a key
// new to the table), which is what the suppressed table has emitted; any other key as the table above.
// Before, a stream-table join with a suppressed table was refused when the topology was built ("a stream-table
// join needs a table whose values can be read").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  Suppressed,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();

const broker = useStreamsBroker({ 'sv-counted': 1, 'sv-lookups': 1, 'sv-out': 1 }, 1);

test('a stream joined with a suppressed count reads a held key as its value before the held updates', async () => {
  const builder = new StreamsBuilder();
  const counts = builder
    .stream('sv-counted', Consumed.with(S, S))
    .groupByKey()
    .count(Materialized.with(S, L))
    .suppress(Suppressed.untilTimeLimit(1000));
  builder
    .stream('sv-lookups', Consumed.with(S, S))
    .join(counts, (lookup, count) => `${lookup}:${count}`)
    .to('sv-out', Produced.with(S, S));
  const streams = new KafkaStreams(builder.build(), {
    'application.id': 'sv-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': broker.dirs[0]!,
    'commit.interval.ms': 200,
    'statestore.cache.max.bytes': 0,
  });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, autoOffsetReset: 'earliest' });
  try {
    await streams.start();
    let sent = 0;
    // One record at a time, each processed before the next: the order across the two topics is the test's.
    const send = async (topic: string, key: string, value: string, timestamp: number) => {
      await producer.send({ topic, key: Buffer.from(key), value: Buffer.from(value), timestamp });
      sent++;
      await waitUntil(
        () => streams.processedRecords() >= sent,
        30_000,
        () => `processed ${streams.processedRecords()} of ${sent}`,
      );
    };
    await send('sv-counted', 'a', 'x', 0); // a held at 1, nothing before it
    await send('sv-lookups', 'a', 'first', 1); // reads none: no output
    await send('sv-counted', 'b', 'x', 5000); // a's 1 goes out; b held
    await send('sv-counted', 'a', 'x', 5001); // a held at 2, 1 before it
    await send('sv-lookups', 'a', 'second', 5002); // reads 1, not the count's 2
    await send('sv-lookups', 'b', 'third', 5003); // b held, nothing before it: no output
    await send('sv-counted', 'c', 'x', 9000); // a's 2 and b's 1 go out; c held
    await send('sv-lookups', 'a', 'fourth', 9001); // a no longer held: reads the count's 2
    consumer.assign([{ topic: 'sv-out', partition: 0 }]);
    const out: string[] = [];
    for (const deadline = Date.now() + 30_000; out.length < 2 && Date.now() < deadline; )
      for (const r of await consumer.poll(100)) out.push(`${r.key}=${r.value}`);
    // A little longer, so that a third (wrong) join result would be seen too.
    for (const until = Date.now() + 1000; Date.now() < until; )
      for (const r of await consumer.poll(100)) out.push(`${r.key}=${r.value}`);
    assert.deepEqual(out, ['a=second:1', 'a=fourth:2']);
  } finally {
    await consumer.close();
    await producer.close();
    await streams.close();
  }
});
