// The suppress buffer's changelog as Kafka Streams writes and reads it (InMemoryTimeOrderedKeyValueChangeBuffer
// flush/logValue/restoreBatch), so that an application moved between Kafka Streams and Brook keeps its buffered
// updates. Written: each record has the producer's clock as its timestamp (Kafka sends none), the header v=[3]
// (a tombstone: no header), and the value context + prior + old (-2: the prior) + new + buffer time, byte for
// byte. Read: hand-written records in each of Kafka's formats (v3; v2; v1; v0 without a header) are restored and
// emitted with their record contexts when stream time passes them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerRecord } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  Suppressed,
} from '../../src/streams/index.js';
import { eventually } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const WRITE_IN = 'scf-write-in';
const READ_IN = 'scf-read-in';
const READ_OUT = 'scf-read-out';

const broker = useStreamsBroker({ [WRITE_IN]: 1, [READ_IN]: 1, [READ_OUT]: 1 }, 2);

// Kafka's encodings, written out here independently of Brook's encoder.
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};
const sized = (b: Buffer | null) => (b === null ? int32(-1) : Buffer.concat([int32(b.length), b]));
/** ProcessorRecordContext.serialize. */
const context = (timestampMs: number, offset: number, topic: string, headers: [string, string][]) =>
  Buffer.concat([
    int64(timestampMs),
    int64(offset),
    sized(Buffer.from(topic)),
    int32(0),
    int32(headers.length),
    ...headers.flatMap(([k, v]) => [sized(Buffer.from(k)), sized(Buffer.from(v))]),
  ]);
/** FullChangeSerde's legacy array: old then new, each size-prefixed. */
const legacyChange = (old: Buffer | null, next: Buffer | null) => Buffer.concat([sized(old), sized(next)]);

/** Reads a topic's partition 0 from the beginning until `n` records came. */
async function readRecords(topic: string, n: number): Promise<ConsumerRecord[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, allowAutoCreateTopics: false });
  const records: ConsumerRecord[] = [];
  try {
    consumer.assign([{ topic, partition: 0 }]);
    consumer.seek({ topic, partition: 0 }, 0);
    await eventually(
      async () => {
        records.push(...(await consumer.poll(100)));
        return records.length >= n;
      },
      30_000,
      `${n} records of ${topic}`,
    );
    return records;
  } finally {
    await consumer.close();
  }
}

test('the suppress changelog carries the producer clock, header v=3 and the Kafka buffer value', async () => {
  const builder = new StreamsBuilder();
  builder
    .stream(WRITE_IN, Consumed.with(S, S))
    .groupByKey()
    .count()
    .suppress(Suppressed.untilTimeLimit(60_000).withName('held'));
  const streams = new KafkaStreams(builder.build(), {
    'application.id': 'scf-write',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': broker.dirs[0]!,
    'commit.interval.ms': 100,
    'statestore.cache.max.bytes': 0,
  });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const changelog = 'scf-write-held-store-changelog';
  try {
    await streams.start();
    const startedMs = Date.now();
    await producer.send({
      topic: WRITE_IN,
      key: Buffer.from('a'),
      value: Buffer.from('v'),
      timestamp: 1000,
      headers: [{ key: 'trace', value: Buffer.from('t1') }],
    });
    const [logged] = await readRecords(changelog, 1);
    // Past the time limit: a leaves the buffer, its tombstone is logged at the next commit.
    await producer.send({
      topic: WRITE_IN,
      key: Buffer.from('b'),
      value: Buffer.from('v'),
      timestamp: 70_000,
    });
    const all = await readRecords(changelog, 3);
    const readMs = Date.now();

    assert.equal(logged!.key!.toString(), 'a');
    assert.ok(
      logged!.timestamp >= startedMs && logged!.timestamp <= readMs,
      `changelog timestamp ${logged!.timestamp} is not the clock's (${startedMs}..${readMs})`,
    );
    assert.deepEqual(
      logged!.headers.map((h) => [h.key, h.value]),
      [['v', Buffer.from([3])]],
    );
    const expected = Buffer.concat([
      context(1000, 0, WRITE_IN, [['trace', 't1']]),
      sized(null), // prior: the first update's old value
      int32(-1), // old: null
      sized(int64(1)), // new: the count
      int64(1000), // buffer time: the record's (untilTimeLimit)
    ]);
    assert.equal(logged!.value!.toString('hex'), expected.toString('hex'));

    const tombstone = all.find((r) => r.key!.toString() === 'a' && r.value === null);
    assert.ok(tombstone, `no tombstone for a in ${all.map((r) => r.key!.toString()).join(',')}`);
    assert.deepEqual(tombstone.headers, []);
    assert.ok(tombstone.timestamp >= startedMs && tombstone.timestamp <= readMs, `${tombstone.timestamp}`);
  } finally {
    await producer.close();
    await streams.close();
  }
});

test('a suppress changelog in each of Kafka formats (v3, v2, v1, v0) restores and is emitted', async () => {
  const changelog = 'scf-read-held-store-changelog';
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const long = (n: number) => int64(n);
  const v = (n: number) => [{ key: 'v', value: Buffer.from([n]) }];
  const builder = new StreamsBuilder();
  builder
    .stream(READ_IN, Consumed.with(S, S))
    .groupByKey()
    .count()
    .suppress(Suppressed.untilTimeLimit(1000).withName('held'))
    .toStream()
    .to(READ_OUT, Produced.with(S, Serdes.Long()));
  const streams = new KafkaStreams(builder.build(), {
    'application.id': 'scf-read',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': broker.dirs[1]!,
    'commit.interval.ms': 100,
    'statestore.cache.max.bytes': 0,
  });
  try {
    const [created] = await admin.createTopics([
      { topic: changelog, numPartitions: 1, replicationFactor: 1, configs: { 'cleanup.policy': 'compact' } },
    ]);
    assert.equal(created!.error, null);
    await producer.sendBatch([
      {
        // v3: context, prior, old (-2: the prior), new, buffer time.
        topic: changelog,
        partition: 0,
        key: Buffer.from('x'),
        headers: v(3),
        timestamp: 50,
        value: Buffer.concat([
          context(500, 7, READ_IN, [['hk', 'hv']]),
          sized(long(4)),
          int32(-2),
          sized(long(5)),
          int64(500),
        ]),
      },
      {
        // v2: context, size-prefixed legacy change, prior, buffer time.
        topic: changelog,
        partition: 0,
        key: Buffer.from('y'),
        headers: v(2),
        timestamp: 50,
        value: Buffer.concat([
          context(600, 8, READ_IN, []),
          sized(legacyChange(null, long(2))),
          sized(null),
          int64(600),
        ]),
      },
      {
        // v1: buffer time, context, size-prefixed legacy change.
        topic: changelog,
        partition: 0,
        key: Buffer.from('z'),
        headers: v(1),
        timestamp: 50,
        value: Buffer.concat([
          int64(700),
          context(700, 9, READ_IN, []),
          sized(legacyChange(long(6), long(7))),
        ]),
      },
      {
        // v0, no header: buffer time, legacy change; the context is the changelog record's own.
        topic: changelog,
        partition: 0,
        key: Buffer.from('w'),
        timestamp: 800,
        value: Buffer.concat([int64(800), legacyChange(null, long(9))]),
      },
    ]);
    await streams.start();
    await producer.send({
      topic: READ_IN,
      key: Buffer.from('t'),
      value: Buffer.from('v'),
      timestamp: 100_000,
    });
    const out = await readRecords(READ_OUT, 4);
    assert.deepEqual(
      out.map((r) => [
        r.key!.toString(),
        Number(r.value!.readBigInt64BE(0)),
        r.timestamp,
        r.headers.map((h) => `${h.key}=${h.value}`),
      ]),
      [
        ['x', 5, 500, ['hk=hv']],
        ['y', 2, 600, []],
        ['z', 7, 700, []],
        ['w', 9, 800, []],
      ],
    );
  } finally {
    await producer.close();
    await admin.close();
    await streams.close();
  }
});
