// Record headers through the record caches, through a broker with caching on (the default budget). Kafka's
// caching stores keep each entry's whole ProcessorRecordContext, headers included (LRUCacheEntry), and forward
// the entry on flush with that context's timestamp and headers (CachingKeyValueStore / CachingWindowStore /
// CachingSessionStore putAndMaybeForward): what a cached table or aggregation sends to .toStream().to(...)
// carries the headers of the last record that wrote the entry, as does suppress() after it (its output and the
// record context in its changelog). A tombstone that leaves a cached table has the deleting record's timestamp.
// A punctuation's writes have no source topic: Kafka's context topic is null there (StreamTask.punctuate), which
// its ProcessorRecordContext.serialize cannot write; Brook logs the empty topic, which Kafka's deserialize reads.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Consumer, type ConsumerRecord } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  KeyValue,
  type Processor,
  type ProcessorContext,
  Produced,
  type Record,
  Serdes,
  SessionWindows,
  SlidingWindows,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
} from '../../src/streams/index.js';
import { eventually } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();
const CLICKS = 'ch-clicks';
const PROFILES = 'ch-profiles';
const TICKS_IN = 'ch-ticks-in';
const OUT = {
  count: 'ch-count',
  windowed: 'ch-windowed',
  sliding: 'ch-sliding',
  session: 'ch-session',
  table: 'ch-table',
  groupedTable: 'ch-grouped-table',
  suppressed: 'ch-suppressed',
  final: 'ch-final',
};

const broker = useStreamsBroker(
  Object.fromEntries([CLICKS, PROFILES, TICKS_IN, ...Object.values(OUT)].map((t) => [t, 1])),
  2,
);

const trace = (value: string) => [{ key: 'trace', value: Buffer.from(value) }];

/** A record's headers as key=value, for messages that show what came. */
const shown = (r: ConsumerRecord) =>
  `${r.key?.toString()}@${r.timestamp}[${r.headers.map((h) => `${h.key}=${h.value?.toString()}`).join(',')}]`;

/** Reads a topic's partition 0 from the beginning until `done` holds for what came. */
async function readUntil(
  topic: string,
  done: (records: ConsumerRecord[]) => boolean,
): Promise<ConsumerRecord[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, allowAutoCreateTopics: false });
  const records: ConsumerRecord[] = [];
  try {
    consumer.assign([{ topic, partition: 0 }]);
    consumer.seek({ topic, partition: 0 }, 0);
    await eventually(
      async () => {
        records.push(...(await consumer.poll(100)));
        return done(records);
      },
      15_000,
      topic,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; so far: ${records.map(shown).join(' ')}`);
    });
    return records;
  } finally {
    await consumer.close();
  }
}

/** The last record of each key. */
function lastByKey(records: ConsumerRecord[]): Map<string, ConsumerRecord> {
  return new Map(records.map((r) => [r.key!.toString(), r]));
}

/** Whether the last record of every key in `expected` carries the trace header `expected` names. */
const tracesAre = (expected: { [key: string]: string }) => (records: ConsumerRecord[]) => {
  const last = lastByKey(records);
  return Object.entries(expected).every(
    ([key, t]) =>
      last.get(key)?.headers.length === 1 &&
      last.get(key)!.headers[0]!.key === 'trace' &&
      last.get(key)!.headers[0]!.value?.toString() === t,
  );
};

function clickTopology() {
  const builder = new StreamsBuilder();
  const grouped = builder.stream(CLICKS, Consumed.with(S, S)).groupByKey();
  const counts = grouped.count();
  counts.toStream().to(OUT.count, Produced.with(S, L));
  counts
    .suppress(Suppressed.untilTimeLimit(1000).withName('held'))
    .toStream()
    .to(OUT.suppressed, Produced.with(S, L));
  const windowed = grouped.windowedBy(TimeWindows.ofSizeWithNoGrace(1000)).count();
  windowed
    .toStream()
    .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}`, n))
    .to(OUT.windowed, Produced.with(S, L));
  windowed
    .suppress(Suppressed.untilWindowCloses())
    .toStream()
    .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}`, n))
    .to(OUT.final, Produced.with(S, L));
  grouped
    .windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(40))
    .count()
    .toStream()
    .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}`, n))
    .to(OUT.sliding, Produced.with(S, L));
  grouped
    .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(150))
    .count()
    .toStream()
    .filter((_, n) => n !== null)
    .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}-${w.window.endMs}`, n))
    .to(OUT.session, Produced.with(S, L));
  const profiles = builder.table(PROFILES, Consumed.with(S, S));
  profiles.toStream().to(OUT.table, Produced.with(S, S));
  profiles
    .groupBy((k, v) => KeyValue.pair(v, k))
    .count()
    .toStream()
    .to(OUT.groupedTable, Produced.with(S, L));
  return builder.build();
}

const click = (key: string, t: string, timestamp: number) =>
  ({ topic: CLICKS, key: Buffer.from(key), value: Buffer.from('v'), timestamp, headers: trace(t) }) as const;
const profile = (key: string, value: string | null, t: string, timestamp: number) =>
  ({
    topic: PROFILES,
    key: Buffer.from(key),
    value: value === null ? null : Buffer.from(value),
    timestamp,
    headers: trace(t),
  }) as const;

describe("record headers through the record caches: each entry's last writer's", () => {
  let streams: KafkaStreams | undefined;
  let producer: Producer | undefined;
  before(async () => {
    streams = new KafkaStreams(clickTopology(), {
      'application.id': 'ch-clicks-app',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': broker.dirs[0]!,
      'commit.interval.ms': 200,
    });
    producer = new Producer({ bootstrapServers: broker.bootstrap });
    await streams.start();
    await producer.sendBatch([click('a', 'c1', 100), click('a', 'c2', 200), click('b', 'c3', 300)]);
    await producer.sendBatch([
      profile('x', 'p', 't1', 10),
      profile('x', 'q', 't2', 20),
      profile('y', 'p', 't3', 30),
    ]);
  });
  after(async () => {
    await producer?.close();
    await streams?.close();
  });

  it('a cached count', async () => {
    await readUntil(OUT.count, tracesAre({ a: 'c2', b: 'c3' }));
  });

  it('a cached windowed count', async () => {
    await readUntil(OUT.windowed, tracesAre({ 'a@0': 'c2', 'b@0': 'c3' }));
  });

  it('a cached sliding-window count', async () => {
    // Windows of 40 ms: each record alone in the window that ends at it.
    await readUntil(OUT.sliding, tracesAre({ 'a@60': 'c1', 'a@160': 'c2', 'b@260': 'c3' }));
  });

  it('a cached session count', async () => {
    // A 150 ms gap: a's two records make one session, written last by the second.
    await readUntil(OUT.session, tracesAre({ 'a@100-200': 'c2', 'b@300-300': 'c3' }));
  });

  it("a cached source table; its tombstone has the deleting record's headers and timestamp", async () => {
    // y's value goes downstream first (a commit), so that its deletion is a change that leaves the cache.
    await readUntil(OUT.table, (rs) => rs.some((r) => r.key?.toString() === 'y'));
    await producer!.send(profile('y', null, 't4', 40));
    const table = lastByKey(await readUntil(OUT.table, (rs) => lastByKey(rs).get('y')?.value === null));
    assert.deepEqual([...table.values()].map(shown).sort(), ['x@20[trace=t2]', 'y@40[trace=t4]']);
  });

  it('a cached aggregation of a grouped table', async () => {
    // Grouped by value: p lost x (to q) and then y (deleted); q gained x.
    await readUntil(OUT.groupedTable, tracesAre({ p: 't4', q: 't2' }));
  });

  it('suppress(untilTimeLimit) after a cached count: its output and its changelog record context', async () => {
    // Past the time limit (and the window end): the held counts come out.
    await producer!.send(click('z', 'late', 5000));
    const suppressed = await readUntil(OUT.suppressed, tracesAre({ a: 'c2', b: 'c3' }));
    assert.equal(lastByKey(suppressed).get('a')!.value!.readBigInt64BE(0), 2n);
    // The changelog value (Kafka's format 3) starts with the record context, headers included.
    const logged = await readUntil('ch-clicks-app-held-store-changelog', (rs) =>
      rs.some((r) => r.key?.toString() === 'a' && r.value !== null),
    );
    const a = logged.find((r) => r.key?.toString() === 'a' && r.value !== null)!;
    const expected = contextOf(200, 1, CLICKS, 0, 'c2');
    assert.equal(a.value!.subarray(0, expected.length).toString('hex'), expected.toString('hex'));
  });

  it('suppress(untilWindowCloses) after a cached windowed count', async () => {
    await readUntil(OUT.final, tracesAre({ 'a@0': 'c2', 'b@0': 'c3' }));
  });
});

describe('record context of a punctuation', () => {
  it('a punctuation write logs an empty topic, offset -1 and partition -1 with its headers in the suppress changelog', async () => {
    const builder = new StreamsBuilder();
    builder
      .stream(TICKS_IN, Consumed.with(S, S))
      // A record held and sent on by a stream-time punctuation, in the same sub-topology as the count (no
      // repartition between): the count's cache entry is written in the punctuation's context.
      .processValues<string>(() => {
        let context: ProcessorContext<string, string>;
        let held: Record<string, string> | null = null;
        const p: Processor<string, string, string, string> = {
          init(c) {
            context = c;
            c.schedule(1000, 'STREAM_TIME', (timestampMs) => {
              if (held === null) return;
              context.forward(
                held.withTimestamp(timestampMs).withHeaders([{ key: 'from', value: Buffer.from('p') }]),
              );
              held = null;
            });
          },
          process(r) {
            held = r;
          },
        };
        return p;
      })
      .groupByKey()
      .count()
      .suppress(Suppressed.untilTimeLimit(60_000).withName('ticks'));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'ch-ticks-app',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': broker.dirs[1]!,
      'commit.interval.ms': 200,
    });
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    try {
      await streams.start();
      await producer.send({
        topic: TICKS_IN,
        key: Buffer.from('k'),
        value: Buffer.from('v'),
        timestamp: 1000,
      });
      const [logged] = await readUntil('ch-ticks-app-ticks-store-changelog', (rs) => rs.length >= 1);
      const expected = Buffer.concat([
        long(1000), // the punctuation's time
        long(-1), // offset
        int32(0), // topic: the empty string
        int32(-1), // partition
        int32(1),
        int32(4),
        Buffer.from('from'),
        int32(1),
        Buffer.from('p'),
      ]);
      assert.equal(logged!.value!.subarray(0, expected.length).toString('hex'), expected.toString('hex'));
    } finally {
      await producer.close();
      await streams.close();
    }
  });
});

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

function long(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}

/** ProcessorRecordContext.serialize of a record with one header trace=`t`. */
function contextOf(timestampMs: number, offset: number, topic: string, partition: number, t: string): Buffer {
  return Buffer.concat([
    long(timestampMs),
    long(offset),
    int32(Buffer.byteLength(topic)),
    Buffer.from(topic),
    int32(partition),
    int32(1),
    int32(5),
    Buffer.from('trace'),
    int32(Buffer.byteLength(t)),
    Buffer.from(t),
  ]);
}
