// What suppress() emits carries the record context of the buffered update, as Kafka's KTableSuppressProcessor
// sets the evicted entry's ProcessorRecordContext before it forwards: downstream, recordMetadata() and a sink's
// TopicNameExtractor see the topic, partition and offset of the record that last updated the held key (and the
// record carries its timestamp and headers), not those of the record whose stream time let it out. For a record
// read from a repartition topic the topic is the real one, `<application.id>-...-repartition`; for an update
// restored from the buffer's changelog by another instance, the context the changelog kept.
// Before the fix, the emitted update was routed by, and reported, the record that advanced stream time.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  Grouped,
  KafkaStreams,
  Materialized,
  Produced,
  type RecordMetadata,
  Serdes,
  StreamsBuilder,
  Suppressed,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { changelogEnd, leavingGroup, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();
const TIME_LIMIT_MS = 1000;

const broker = useStreamsBroker(
  {
    'src-left': 1,
    'src-right': 1,
    'src-left-out': 1,
    'src-right-out': 1,
    'src-votes': 1,
    'src-restore-in': 1,
  },
  4,
);

/** What a processor after suppress saw: the record and its context's metadata. */
interface Seen {
  key: unknown;
  timestampMs: number;
  metadata: RecordMetadata | null;
}

function metadataRecorder(seen: Seen[]) {
  return () => {
    let ctx: { recordMetadata(): RecordMetadata | null };
    return {
      init(c: typeof ctx) {
        ctx = c;
      },
      process(r: { key: unknown; timestamp: number }) {
        seen.push({ key: r.key, timestampMs: r.timestamp, metadata: ctx.recordMetadata() });
      },
    };
  };
}

function streamsConfig(app: string, stateDir: string) {
  return {
    'application.id': app,
    'bootstrap.servers': broker.bootstrap,
    'state.dir': stateDir,
    'commit.interval.ms': 200,
    // No record cache: each update reaches the suppression with its own record's context.
    'statestore.cache.max.bytes': 0,
  };
}

/** The records of `topics` (partition 0) from the beginning: waits for the first, then reads to the end offsets. */
async function readOutput(topics: string[]) {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, autoOffsetReset: 'earliest' });
  try {
    const tps = topics.map((topic) => ({ topic, partition: 0 }));
    consumer.assign(tps);
    const out: { topic: string; key: string; timestamp: number; headers: string[] }[] = [];
    const take = async () => {
      for (const r of await consumer.poll(100))
        out.push({
          topic: r.topic,
          key: r.key!.toString(),
          timestamp: r.timestamp,
          headers: r.headers.map((h) => `${h.key}=${h.value?.toString()}`),
        });
    };
    for (const deadline = Date.now() + 30_000; out.length === 0; await take())
      assert.ok(Date.now() < deadline, `nothing reached ${topics.join(' or ')} within 30 s`);
    const ends = await consumer.endOffsets(tps);
    for (const deadline = Date.now() + 20_000; ; await take()) {
      let caughtUp = true;
      for (const e of ends) if ((await consumer.position(e)) < e.offset) caughtUp = false;
      if (caughtUp) return out;
      assert.ok(Date.now() < deadline, 'the output was not read to its end within 20 s');
    }
  } finally {
    await consumer.close();
  }
}

describe('suppress() emits within the buffered record context', () => {
  it("a TopicNameExtractor and recordMetadata() after suppress see the held update's source record", async () => {
    const seen: Seen[] = [];
    const builder = new StreamsBuilder();
    const left = builder.stream('src-left', Consumed.with(S, S));
    const right = builder.stream('src-right', Consumed.with(S, S));
    const emitted = left
      .merge(right)
      .groupByKey()
      .count(Materialized.with(S, L))
      .suppress(Suppressed.untilTimeLimit(TIME_LIMIT_MS))
      .toStream();
    emitted.process(metadataRecorder(seen));
    // Routes each emitted count to `<source topic>-out`, as an application routing by provenance would.
    emitted.to((_key, _value, context) => `${context.topic}-out`, Produced.with(S, L));
    const streams = new KafkaStreams(builder.build(), streamsConfig('src-route-app', broker.dirs[0]!));
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    try {
      await streams.start();
      const send = (topic: string, key: string, timestamp: number, headers: Record<string, string>) =>
        producer.send({ topic, key: Buffer.from(key), value: Buffer.from('v'), timestamp, headers });
      // a is updated twice from src-left (offsets 0 and 1); b, from src-right, moves stream time past a's limit.
      await send('src-left', 'a', 0, { h: 'first' });
      await send('src-left', 'a', 10, { h: 'second' });
      await send('src-right', 'b', 5000, { h: 'late' });
      const records = await readOutput(['src-left-out', 'src-right-out']);
      assert.deepEqual(records, [{ topic: 'src-left-out', key: 'a', timestamp: 10, headers: ['h=second'] }]);
      assert.deepEqual(seen, [
        { key: 'a', timestampMs: 10, metadata: { topic: 'src-left', partition: 0, offset: 1 } },
      ]);
    } finally {
      await producer.close();
      await streams.close();
    }
  });

  it('an update read from a repartition topic is emitted with that topic, by its real name, and its offset', async () => {
    const app = 'src-repartition-app';
    const seen: Seen[] = [];
    const builder = new StreamsBuilder();
    builder
      .stream('src-votes', Consumed.with(S, S))
      .groupBy((_voter, choice) => choice, Grouped.with(S, S).withName('by-choice'))
      .count(Materialized.with(S, L))
      .suppress(Suppressed.untilTimeLimit(TIME_LIMIT_MS))
      .toStream()
      .process(metadataRecorder(seen));
    const streams = new KafkaStreams(builder.build(), streamsConfig(app, broker.dirs[1]!));
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      await streams.start();
      const send = (voter: string, choice: string, timestamp: number) =>
        producer.send({ topic: 'src-votes', key: Buffer.from(voter), value: Buffer.from(choice), timestamp });
      // In the repartition topic: x at offsets 0 and 1, then y at offset 2, which lets x's count out.
      await send('v1', 'x', 0);
      await send('v2', 'x', 10);
      await send('v3', 'y', 5000);
      await waitUntil(
        () => seen.length >= 1,
        30_000,
        () => 'the suppression emitted nothing within 30 s',
      );
      const repartition = `${app}-by-choice-repartition`;
      assert.ok((await admin.listTopics()).includes(repartition), `${repartition} exists`);
      assert.deepEqual(seen, [
        { key: 'x', timestampMs: 10, metadata: { topic: repartition, partition: 0, offset: 1 } },
      ]);
    } finally {
      await admin.close();
      await producer.close();
      await streams.close();
    }
  });

  it('an update restored from the changelog is emitted with the record context the changelog kept', async () => {
    const app = 'src-restore-app';
    const seen: Seen[] = [];
    const topology = () => {
      const builder = new StreamsBuilder();
      builder
        .stream('src-restore-in', Consumed.with(S, S))
        .groupByKey()
        .count(Materialized.with(S, L))
        .suppress(Suppressed.untilTimeLimit(TIME_LIMIT_MS).withName('held'))
        .toStream()
        .process(metadataRecorder(seen));
      return builder.build();
    };
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    const send = (key: string, timestamp: number) =>
      producer.send({ topic: 'src-restore-in', key: Buffer.from(key), value: Buffer.from('v'), timestamp });
    let streams = new KafkaStreams(topology(), streamsConfig(app, broker.dirs[2]!));
    try {
      // The first instance holds a (updated at offsets 0 and 1) and logs it when it closes (a final commit).
      await streams.start();
      await send('a', 0);
      await send('a', 10);
      await waitUntil(
        () => streams.processedRecords() >= 2,
        30_000,
        () => `processed ${streams.processedRecords()}`,
      );
      // Leaving the group hands the task to the next instance at once.
      await streams.close(leavingGroup());
      assert.deepEqual(seen, []);
      assert.ok((await changelogEnd(broker.bootstrap, `${app}-held-store-changelog`, 0)) >= 1);
      // A second instance, with its own state directory, restores a from the changelog; b lets it out.
      streams = new KafkaStreams(topology(), streamsConfig(app, broker.dirs[3]!));
      await streams.start();
      await send('b', 5000);
      await waitUntil(
        () => seen.length >= 1,
        30_000,
        () => `nothing emitted; restored ${streams.restoredRecords()}, state ${streams.state()}`,
      );
      assert.ok(streams.restoredRecords() >= 1, `restored ${streams.restoredRecords()}`);
      assert.deepEqual(seen, [
        { key: 'a', timestampMs: 10, metadata: { topic: 'src-restore-in', partition: 0, offset: 1 } },
      ]);
    } finally {
      await producer.close();
      await streams.close();
    }
  });
});
