// Suppress buffer bounds (Kafka's Suppressed.BufferConfig): the config kinds and their strategies, the buffer's
// size estimate as Kafka counts it, emit-early and shut-down in the test driver at the exact byte and record
// boundaries, then through a broker: an eager buffer emits early (the output equals a reference simulation of
// the rule), a strict one fails with Kafka's StreamsException at the uncaught exception handler.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  BufferConfig,
  Consumed,
  EagerBufferConfig,
  KafkaStreams,
  type KafkaStreamsState,
  KeyValue,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  StrictBufferConfig,
  Suppressed,
  TimeWindows,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { entrySizeBytes, SuppressBuffer } from '../../src/streams/state/suppress-buffer.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir, TopicFollower } from './streams-helpers.js';

const S = Serdes.String();
const L = Serdes.Long();
const LONG_MAX = '9223372036854775807';

describe('Suppressed.BufferConfig', () => {
  it('maxRecords / maxBytes start eager configs; unbounded, withNoBound and shutDownWhenFull strict ones', () => {
    const eager = BufferConfig.maxRecords(10);
    assert.ok(eager instanceof EagerBufferConfig);
    assert.equal(eager.bufferFullStrategy, 'EMIT');
    assert.deepEqual([eager.maxRecords, eager.maxBytes], [10, Number.POSITIVE_INFINITY]);
    const both = eager.withMaxBytes(500);
    assert.ok(both instanceof EagerBufferConfig);
    assert.deepEqual([both.maxRecords, both.maxBytes], [10, 500]);
    const strict = both.shutDownWhenFull();
    assert.ok(strict instanceof StrictBufferConfig);
    assert.equal(strict.bufferFullStrategy, 'SHUT_DOWN');
    assert.deepEqual([strict.maxRecords, strict.maxBytes], [10, 500]);
    assert.ok(strict.withMaxRecords(3) instanceof StrictBufferConfig, 'a strict config stays strict');
    assert.equal(strict.emitEarlyWhenFull().bufferFullStrategy, 'EMIT');
    const none = both.withNoBound();
    assert.deepEqual(
      [none.maxRecords, none.maxBytes, none.bufferFullStrategy],
      [Infinity, Infinity, 'SHUT_DOWN'],
    );
    assert.equal(BufferConfig.maxBytes(64).maxRecords, Number.POSITIVE_INFINITY);
    assert.equal(Suppressed.BufferConfig.unbounded().bufferFullStrategy, 'SHUT_DOWN');
    assert.equal(StrictBufferConfig.unbounded().maxBytes, Number.POSITIVE_INFINITY);
    assert.throws(() => BufferConfig.maxRecords(-1), RangeError);
    assert.throws(() => BufferConfig.maxBytes(1.5), RangeError);
  });

  it('untilWindowCloses takes only strict configs; untilTimeLimit any', () => {
    assert.throws(
      () => Suppressed.untilWindowCloses(BufferConfig.maxRecords(3) as unknown as StrictBufferConfig),
      /strict buffer config/,
    );
    assert.equal(
      Suppressed.untilWindowCloses(BufferConfig.maxRecords(3).shutDownWhenFull()).bufferConfig.maxRecords,
      3,
    );
    assert.equal(Suppressed.untilWindowCloses().bufferConfig.bufferFullStrategy, 'SHUT_DOWN');
    assert.equal(
      Suppressed.untilTimeLimit(5, BufferConfig.maxBytes(9)).bufferConfig.bufferFullStrategy,
      'EMIT',
    );
    assert.equal(Suppressed.untilTimeLimit(5).bufferConfig.maxRecords, Number.POSITIVE_INFINITY);
  });
});

describe('suppress buffer size (Kafka computeRecordSize)', () => {
  const context = (headers: { key: string; value: Buffer | null }[] = []) => ({
    timestamp: 1,
    offset: 2,
    topic: 'topic',
    partition: 0,
    headers,
  });

  it('counts buffer time, key, prior, old unless it equals prior, new and the record context', () => {
    const base = {
      keyBytes: Buffer.from('key'),
      timeMs: 0,
      prior: null,
      old: null,
      new: Buffer.alloc(8),
      context: context(),
    };
    // 8 time + 3 key + 8 new + (8 timestamp + 8 offset + 5 topic + 4 partition)
    assert.equal(entrySizeBytes(base), 44);
    assert.equal(
      entrySizeBytes({ ...base, prior: Buffer.alloc(4), old: Buffer.alloc(4) }),
      48,
      'old = prior',
    );
    assert.equal(entrySizeBytes({ ...base, prior: Buffer.alloc(4), old: Buffer.alloc(6, 1) }), 54);
    assert.equal(entrySizeBytes({ ...base, old: Buffer.alloc(6) }), 50, 'a null prior: old counted');
    const withHeaders = {
      ...base,
      context: context([
        { key: 'hk', value: Buffer.alloc(3) },
        { key: 'é', value: null },
      ]),
    };
    assert.equal(entrySizeBytes(withHeaders), 44 + 2 + 3 + 1, 'header keys in UTF-16 units, values in bytes');
  });

  it("the buffer's total follows puts, in-place replacements, evictions and restoration", () => {
    const buffer = new SuppressBuffer('b', S as never, L as never, 'b-changelog', null);
    buffer.put(10, 'a', 1, null, context());
    assert.equal(buffer.bufferSize(), 8 + 1 + 8 + 25);
    buffer.put(12, 'a', 2, 1, context());
    assert.equal(buffer.bufferSize(), 8 + 1 + 8 + 8 + 25, 'the replaced entry counts old (8) now');
    buffer.put(11, 'b', 5, null, context());
    assert.equal(buffer.numRecords(), 2);
    assert.equal(buffer.bufferSize(), 50 + 42);
    const target = buffer.restoreTarget();
    const encoded = target.get(Buffer.from('a'))!;
    const emitted: string[] = [];
    buffer.evictWhile(
      () => buffer.numRecords() > 1,
      (k, v) => emitted.push(`${k}=${v}`),
    );
    assert.deepEqual(emitted, ['a=2'], 'the oldest buffer time (a at 10) leaves first');
    assert.equal(buffer.bufferSize(), 42);
    target.put(Buffer.from('a'), encoded);
    assert.equal(buffer.bufferSize(), 92, 'a restored entry counts as it did');
    target.put(Buffer.from('b'), null);
    assert.equal(buffer.bufferSize(), 50);
    buffer.close();
    assert.equal(buffer.bufferSize(), 0);
  });
});

describe('suppress bounds in the test driver', () => {
  function sumPerKey(bufferConfig: BufferConfig) {
    const builder = new StreamsBuilder();
    builder
      .stream('in', Consumed.with(S, L))
      .groupByKey()
      .reduce((a, b) => a + b, Materialized.with(S, L))
      .suppress(Suppressed.untilTimeLimit(1000, bufferConfig))
      .toStream()
      .to('out', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build(), { 'statestore.cache.max.bytes': 0 });
    return {
      driver,
      input: driver.createInputTopic('in', S, L),
      out: driver.createOutputTopic('out', S, L),
    };
  }

  it('maxRecords with emitEarlyWhenFull emits the oldest key when a new one comes beyond the bound', () => {
    const { driver, input, out } = sumPerKey(BufferConfig.maxRecords(2));
    try {
      input.pipeInput('a', 1, 0);
      input.pipeInput('b', 1, 1);
      input.pipeInput('a', 5, 2);
      assert.equal(out.getQueueSize(), 0, 'two keys fit');
      input.pipeInput('c', 1, 3);
      assert.deepEqual(out.readKeyValuesToList(), [{ key: 'a', value: 6 }]);
      input.pipeInput('d', 1, 4);
      assert.deepEqual(out.readKeyValuesToList(), [{ key: 'b', value: 1 }]);
      input.pipeInput('x', 1, 2000);
      assert.deepEqual(out.readKeyValuesToList(), [
        { key: 'c', value: 1 },
        { key: 'd', value: 1 },
      ]);
    } finally {
      driver.close();
    }
  });

  it("maxBytes emits at the exact byte bound of Kafka's estimate", () => {
    // Topic "in" (2 units): context 8 + 8 + 2 + 4 = 22. "a" once: 8 + 1 + 8 new + 22 = 39; "a" again: old (8)
    // counted too, 47; "b" once: 39. The two keys hold 86 bytes.
    const fits = sumPerKey(BufferConfig.maxBytes(86));
    try {
      fits.input.pipeInput('a', 1, 0);
      fits.input.pipeInput('a', 1, 1);
      fits.input.pipeInput('b', 1, 2);
      assert.equal(fits.out.getQueueSize(), 0);
    } finally {
      fits.driver.close();
    }
    const over = sumPerKey(BufferConfig.maxBytes(85));
    try {
      over.input.pipeInput('a', 1, 0);
      over.input.pipeInput('a', 1, 1);
      assert.equal(over.out.getQueueSize(), 0);
      over.input.pipeInput('b', 1, 2);
      assert.deepEqual(over.out.readKeyValuesToList(), [{ key: 'a', value: 2 }]);
    } finally {
      over.driver.close();
    }
  });

  it("shutDownWhenFull fails with Kafka's StreamsException message once a bound is passed", () => {
    const builder = new StreamsBuilder();
    builder
      .stream('views', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(100, 0))
      .count()
      .suppress(
        Suppressed.untilWindowCloses(BufferConfig.maxRecords(2).shutDownWhenFull()).withName('bounded'),
      )
      .toStream()
      .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}`, n))
      .to('final', Produced.with(S, L));
    const driver = new TopologyTestDriver(builder.build(), { 'statestore.cache.max.bytes': 0 });
    try {
      const input = driver.createInputTopic('views', S, S);
      const out = driver.createOutputTopic('final', S, L);
      input.pipeInput('a', 'v', 1);
      input.pipeInput('b', 'v', 2);
      input.pipeInput('a', 'v', 3);
      // Each window's entry: 8 + key (1 + 8 window start) + new (8) + context 8 + 8 + 5 ("views") + 4 = 50, and
      // a's second update also counts its old value (8; its prior is null): 58 + 50 + 50.
      assert.throws(
        () => input.pipeInput('c', 'v', 4),
        // Kafka 3.9's ProcessorNode hands the buffer's StreamsException to processing.exception.handler, whose
        // default fails: the task's StreamsException carries it as its cause.
        (e: Error) =>
          e.name === 'StreamsException' &&
          /^Exception caught in process\. taskId=0_0, /.test(e.message) &&
          (e.cause as Error).name === 'StreamsException' &&
          (e.cause as Error).message ===
            `bounded buffer exceeded its max capacity. Currently [3/2] records and [158/${LONG_MAX}] bytes.`,
      );
      assert.equal(out.getQueueSize(), 0, 'a strict buffer never emits early');
    } finally {
      driver.close();
    }
  });
});

describe('suppress bounds through a broker', () => {
  let broker: BrokerProcess;
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics(
      ['early-in', 'early-out', 'shut-in', 'shut-out'].map((topic) => ({
        topic,
        numPartitions: 1,
        replicationFactor: 1,
      })),
    );
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function produce(topic: string, records: { key: string; timestamp: number }[]): Promise<void> {
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    try {
      await producer.sendBatch(
        records.map((r) => ({
          topic,
          key: Buffer.from(r.key),
          value: Buffer.from('v'),
          timestamp: r.timestamp,
        })),
      );
    } finally {
      await producer.close();
    }
  }

  it('an eager buffer (maxRecords 3) emits early: the output equals the rule applied to the input', async () => {
    const random = seeded(1801);
    const t0 = Date.now();
    const input = Array.from({ length: 200 }, (_, i) => ({
      key: `k${Math.floor(random() * 8)}`,
      timestamp: t0 + i,
    }));
    // Reference: per-key counts; the buffer holds each key from its first held record (its buffer time); after
    // each record, while more than 3 keys are held, the one with the oldest buffer time leaves with its count.
    const counts = new Map<string, number>();
    const held = new Map<string, number>();
    const expected: string[] = [];
    for (const r of input) {
      counts.set(r.key, (counts.get(r.key) ?? 0) + 1);
      if (!held.has(r.key)) held.set(r.key, r.timestamp);
      while (held.size > 3) {
        const [oldest] = [...held.entries()].sort((a, b) => a[1] - b[1])[0]!;
        held.delete(oldest);
        expected.push(`${oldest}=${counts.get(oldest)}`);
      }
    }
    assert.ok(expected.length > 100, 'the input makes the buffer emit early often');

    const builder = new StreamsBuilder();
    builder
      .stream('early-in', Consumed.with(S, S))
      .groupByKey()
      .count()
      .suppress(Suppressed.untilTimeLimit(3_600_000, BufferConfig.maxRecords(3).emitEarlyWhenFull()))
      .toStream()
      .to('early-out', Produced.with(S, L));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'suppress-emit-early',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': dir,
      'commit.interval.ms': 100,
      'statestore.cache.max.bytes': 0,
    });
    const follower = new TopicFollower(broker.bootstrap, 'early-out', 1);
    follower.start();
    const seen = () => follower.records.map((r) => `${r.key}=${r.value!.readBigInt64BE()}`);
    try {
      await streams.start();
      await produce('early-in', input);
      await waitUntil(
        () => follower.records.length >= expected.length,
        90_000,
        () => `${follower.records.length} of ${expected.length} out; state ${streams.state()}`,
      );
      assert.deepEqual(seen(), expected);
      assert.equal(streams.state(), 'RUNNING');
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it("a strict buffer over its bound hands Kafka's StreamsException to the uncaught exception handler", async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('shut-in', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(60_000, 0))
      .count()
      .suppress(
        Suppressed.untilWindowCloses(BufferConfig.maxRecords(2).shutDownWhenFull()).withName('bounded'),
      )
      .toStream()
      .map((w, n) => KeyValue.pair(`${w.key}@${w.window.startMs}`, n))
      .to('shut-out', Produced.with(S, L));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'suppress-shut-down',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': dir,
      'commit.interval.ms': 100,
      'statestore.cache.max.bytes': 0,
    });
    const errors: Error[] = [];
    const states: KafkaStreamsState[] = [];
    streams.setStateListener((s) => states.push(s));
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    const windowStart = Math.floor(Date.now() / 60_000) * 60_000;
    try {
      await streams.start();
      await produce('shut-in', [
        { key: 'a', timestamp: windowStart + 1 },
        { key: 'b', timestamp: windowStart + 2 },
        { key: 'c', timestamp: windowStart + 3 },
      ]);
      await waitUntil(
        () => streams.state() === 'ERROR',
        60_000,
        () => `states ${states.join(',')}; errors ${errors.map((e) => e.message).join(' | ')}`,
      );
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.name, 'StreamsException');
      // Each entry: 8 + key (1 + 8) + new (8) + context 8 + 8 + 7 ("shut-in") + 4 = 52.
      assert.match(errors[0]!.message, /^Exception caught in process\. taskId=0_0, processor=/);
      assert.equal(
        (errors[0]!.cause as Error).message,
        `bounded buffer exceeded its max capacity. Currently [3/2] records and [156/${LONG_MAX}] bytes.`,
      );
    } finally {
      await streams.close();
    }
  });
});
