// suppress(): holds a table's updates back and emits only the last one per key, when its window closes
// (untilWindowCloses: stream time passed the window's end plus the grace period, plus the inactivity gap for
// session windows; tombstones are then dropped, as Kafka's final results) or when it has waited a time
// limit of stream time (untilTimeLimit), as Kafka's KTableSuppressProcessor. The held updates live in a
// SuppressBuffer store (state/suppress-buffer.ts) named as Kafka names it (`KTABLE-SUPPRESS-STATE-STORE-<n>`,
// or `<Suppressed name>-store`), logged to `<application.id>-<store>-changelog` and restored from it, so
// updates buffered when an instance crashes are emitted by the task's next owner. Entries leave in buffer-time
// order (window end, or the first held record's time), then by key bytes, each within the record context it was
// buffered with (topic, partition, offset, timestamp, headers), as Kafka's emit sets it. Stream time is the
// largest record timestamp the processor has seen since the task started (Kafka's observedStreamTime, not
// restored either).
//
// Bounds (Kafka's Suppressed.BufferConfig): maxRecords (buffered keys) and maxBytes (the buffer's size
// estimate, state/suppress-buffer.ts), checked after each record once the due entries left. Over a bound, an
// eager config (emitEarlyWhenFull) emits the oldest entries until the buffer fits again; a strict one
// (shutDownWhenFull, or unbounded) throws Kafka's StreamsException, which reaches the uncaught exception
// handler. untilWindowCloses takes only strict configs: an early emit would break "one final result".

import assert from 'node:assert/strict';
import type { Named } from './dsl-options.js';
import { StreamsError } from './errors.js';
import { KTable, type ValueGetterSupplier } from './ktable.js';
import {
  Change,
  type InternalProcessorContext,
  type ProcessorSupplier,
  Record,
  type RecordContext,
  runWithinRecordContext,
} from './processor.js';
import type { Serde } from './serdes.js';
import { StoreBuilder, type ValueAndTimestamp } from './state/stores.js';
import type { BufferedContext, EvictionHandler, SuppressBuffer } from './state/suppress-buffer.js';
import { type Windowed, WindowedSerdes } from './windows.js';

/** What a bounded buffer does when a bound is passed (Kafka's BufferFullStrategy). */
export type BufferFullStrategy = 'EMIT' | 'SHUT_DOWN';

/** A suppression buffer's changelog: written or not, and its topic configs. */
export interface BufferLogging {
  readonly enabled: boolean;
  readonly config: { readonly [key: string]: string };
}

const LOGGED: BufferLogging = { enabled: true, config: {} };

/** Kafka prints an absent bound as Long.MAX_VALUE. */
const NO_BOUND = Number.POSITIVE_INFINITY;

function checkLimit(what: string, n: number): number {
  if (!(Number.isSafeInteger(n) && n >= 0) && n !== NO_BOUND)
    throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
  return n;
}

/**
 * Kafka's Suppressed.BufferConfig: how much a suppression may hold (maxRecords keys, maxBytes of its size
 * estimate) and what happens beyond. `BufferConfig.maxRecords(n)` / `maxBytes(n)` start an eager config
 * (emits early when full); `unbounded()`, `withNoBound()` and `shutDownWhenFull()` give a strict one.
 */
export abstract class BufferConfig {
  protected constructor(
    readonly maxRecords: number,
    readonly maxBytes: number,
    readonly bufferFullStrategy: BufferFullStrategy,
    /**
     * Whether the buffer writes its changelog (`<application.id>-<store>-changelog`), and that topic's configs
     * (KIP-446; Kafka's default: logged, no extra configs). Unlogged, buffered updates are lost with the instance.
     */
    readonly logging: BufferLogging = LOGGED,
  ) {}

  /** The same config with `logging`. */
  protected abstract withLogging(logging: BufferLogging): BufferConfig;

  /** No changelog: the buffer is not restored after a crash or a move (Kafka's withLoggingDisabled). */
  withLoggingDisabled(): this {
    return this.withLogging({ enabled: false, config: {} }) as this;
  }

  /** A changelog created with these topic configs on top of Kafka's (Kafka's withLoggingEnabled). */
  withLoggingEnabled(config: { [key: string]: string }): this {
    return this.withLogging({ enabled: true, config: { ...config } }) as this;
  }

  /** A buffer of at most `recordLimit` keys that emits its oldest entries when full. */
  static maxRecords(recordLimit: number): EagerBufferConfig {
    return new EagerBufferConfig(checkLimit('maxRecords', recordLimit), NO_BOUND);
  }

  /** A buffer of at most `byteLimit` bytes (Kafka's estimate) that emits its oldest entries when full. */
  static maxBytes(byteLimit: number): EagerBufferConfig {
    return new EagerBufferConfig(NO_BOUND, checkLimit('maxBytes', byteLimit));
  }

  /** No bound: the buffer holds what the time limit asks (strict: never emits early). */
  static unbounded(): StrictBufferConfig {
    return new StrictBufferConfig(NO_BOUND, NO_BOUND);
  }

  abstract withMaxRecords(recordLimit: number): BufferConfig;
  abstract withMaxBytes(byteLimit: number): BufferConfig;

  withNoBound(): StrictBufferConfig {
    return new StrictBufferConfig(NO_BOUND, NO_BOUND, this.logging);
  }

  /** Over a bound, the suppression fails with a StreamsException (strict: never emits early). */
  shutDownWhenFull(): StrictBufferConfig {
    return new StrictBufferConfig(this.maxRecords, this.maxBytes, this.logging);
  }

  /** Over a bound, the oldest entries are emitted until the buffer fits (not strict). */
  emitEarlyWhenFull(): EagerBufferConfig {
    return new EagerBufferConfig(this.maxRecords, this.maxBytes, this.logging);
  }
}

/** A config that never emits early: it holds to the time bound or fails (Kafka's StrictBufferConfig). */
export class StrictBufferConfig extends BufferConfig {
  /** Tells the two kinds apart for the type checker (untilWindowCloses takes only this one). */
  readonly strict = true as const;

  /** @internal */
  constructor(maxRecords: number, maxBytes: number, logging: BufferLogging = LOGGED) {
    super(maxRecords, maxBytes, 'SHUT_DOWN', logging);
  }

  protected withLogging(logging: BufferLogging): StrictBufferConfig {
    return new StrictBufferConfig(this.maxRecords, this.maxBytes, logging);
  }

  static override unbounded(): StrictBufferConfig {
    return BufferConfig.unbounded();
  }

  withMaxRecords(recordLimit: number): StrictBufferConfig {
    return new StrictBufferConfig(checkLimit('maxRecords', recordLimit), this.maxBytes, this.logging);
  }

  withMaxBytes(byteLimit: number): StrictBufferConfig {
    return new StrictBufferConfig(this.maxRecords, checkLimit('maxBytes', byteLimit), this.logging);
  }
}

/** A config that emits its oldest entries early when full (Kafka's EagerBufferConfigImpl). */
export class EagerBufferConfig extends BufferConfig {
  readonly strict = false as const;

  /** @internal */
  constructor(maxRecords: number, maxBytes: number, logging: BufferLogging = LOGGED) {
    super(maxRecords, maxBytes, 'EMIT', logging);
  }

  protected withLogging(logging: BufferLogging): EagerBufferConfig {
    return new EagerBufferConfig(this.maxRecords, this.maxBytes, logging);
  }

  withMaxRecords(recordLimit: number): EagerBufferConfig {
    return new EagerBufferConfig(checkLimit('maxRecords', recordLimit), this.maxBytes, this.logging);
  }

  withMaxBytes(byteLimit: number): EagerBufferConfig {
    return new EagerBufferConfig(this.maxRecords, checkLimit('maxBytes', byteLimit), this.logging);
  }
}

export class Suppressed {
  /** Kafka's nested name: `Suppressed.BufferConfig.maxRecords(10)`. */
  static readonly BufferConfig = BufferConfig;

  private constructor(
    readonly mode: 'untilWindowCloses' | 'untilTimeLimit',
    readonly timeLimitMs: number,
    readonly bufferConfig: BufferConfig,
    readonly name: string | null,
  ) {}

  /**
   * Kafka's Suppressed.untilWindowCloses(bufferConfig): one final result per window. The config must be strict
   * (`BufferConfig.unbounded()`, the default here, or a bounded one with `shutDownWhenFull()`).
   */
  static untilWindowCloses(bufferConfig: StrictBufferConfig = BufferConfig.unbounded()): Suppressed {
    if (!(bufferConfig instanceof StrictBufferConfig))
      throw new TypeError(
        'untilWindowCloses takes a strict buffer config (BufferConfig.unbounded() or shutDownWhenFull()): an early emit would break the final result',
      );
    return new Suppressed('untilWindowCloses', 0, bufferConfig, null);
  }

  /** Kafka's Suppressed.untilTimeLimit(timeToWaitForMoreEvents, bufferConfig); unbounded by default here. */
  static untilTimeLimit(
    timeToWaitForMoreEventsMs: number,
    bufferConfig: BufferConfig = BufferConfig.unbounded(),
  ): Suppressed {
    if (!(bufferConfig instanceof BufferConfig)) throw new TypeError('untilTimeLimit takes a BufferConfig');
    return new Suppressed('untilTimeLimit', timeToWaitForMoreEventsMs, bufferConfig, null);
  }

  withName(name: string): Suppressed {
    return new Suppressed(this.mode, this.timeLimitMs, this.bufferConfig, name);
  }
}

export function suppressTable<K, V>(
  table: KTable<K, V>,
  suppressed: Suppressed,
  named?: Named,
): KTable<K, V> {
  const b = table.builder;
  const userName = named?.name ?? suppressed.name;
  const name = userName ?? b.newProcessorName('KTABLE-SUPPRESS-');
  const storeName = userName !== null ? `${userName}-store` : b.newStoreName('KTABLE-SUPPRESS-');
  const windows = table.windows;
  if (suppressed.mode === 'untilWindowCloses' && windows === null)
    throw new Error('untilWindowCloses applies to the table of a windowed aggregation');
  const store = new StoreBuilder(storeName, 'in-memory', null, null, false);
  store.suppressBuffer = true;
  store.loggingEnabled = suppressed.bufferConfig.logging.enabled;
  store.logConfig = { ...suppressed.bufferConfig.logging.config };
  store.serdesFrom = (defaultKey, defaultValue) => ({
    key: (table.keySerde as Serde<unknown> | null) ?? windowedKeySerde(windows, defaultKey),
    value: (table.valueSerde as Serde<unknown> | null) ?? defaultValue,
  });
  // Kafka's KTableSuppressProcessorSupplier asks its parent for old values.
  table.oldValues.enable(true);
  b.topology.addProcessor(name, suppressSupplier(name, storeName, suppressed, windows), table.nodeName);
  b.topology.addStateStore(store, name);
  return new KTable<K, V>(b, name, table.keySerde, table.valueSerde, null, windows, () =>
    suppressedGetter(table.valueGetter, storeName),
  );
}

/**
 * How processors below (a join) read a suppressed table (Kafka's KTableSuppressProcessorSupplier.view): a buffered
 * key reads as its value before the held updates, which downstream has not seen replaced yet; any other key as
 * the parent table. Null when the parent cannot be read.
 */
function suppressedGetter<K, V>(
  parent: ValueGetterSupplier<K, V> | null,
  storeName: string,
): ValueGetterSupplier<K, V> | null {
  if (parent === null) return null;
  return {
    stores: [storeName, ...parent.stores],
    init(context) {
      const buffer = context.getStateStore<SuppressBuffer>(storeName);
      const get = parent.init(context);
      return (key) => {
        const held = buffer.priorValueForBuffered(key);
        return held.buffered ? (held.prior as ValueAndTimestamp<V> | null) : get(key);
      };
    },
  };
}

/** The serde of a windowed table's keys made from the default key serde (Kafka's bytes for each kind). */
function windowedKeySerde(
  windows: KTable<unknown, unknown>['windows'],
  inner: Serde<unknown>,
): Serde<unknown> {
  if (windows === null) return inner;
  const w = windows as { inactivityGapMs?: number; timeDifferenceMs?: number; sizeMs?: number };
  if (w.inactivityGapMs !== undefined)
    return WindowedSerdes.sessionWindowedSerdeFrom(inner) as Serde<unknown>;
  const sizeMs = w.timeDifferenceMs ?? w.sizeMs;
  assert.ok(sizeMs !== undefined, 'a windowed table without a window size');
  return WindowedSerdes.timeWindowedSerdeFrom(inner, sizeMs) as Serde<unknown>;
}

/**
 * The topic a buffered update keeps when it came with no record metadata (forwarded by a punctuator). Kafka keeps
 * a null topic there, which its changelog cannot hold; no real topic is named "".
 */
const NO_TOPIC = '';

/** What `put` keeps of the record being processed (Kafka's buffer keeps the processor's ProcessorRecordContext). */
function bufferedContextOf(
  ctx: InternalProcessorContext<unknown, Change<unknown>>,
  r: Record<unknown, Change<unknown>>,
): BufferedContext {
  const meta = ctx.recordMetadata();
  return {
    timestamp: r.timestamp,
    offset: meta?.offset ?? -1,
    topic: meta?.topic ?? NO_TOPIC,
    partition: meta?.partition ?? -1,
    headers: [...r.headers],
  };
}

/** The record context an evicted entry is emitted within: its own, kept or restored from the changelog. */
function emittedContextOf(buffered: BufferedContext): RecordContext {
  // An update a punctuator forwarded goes on from nowhere, as it came: topic null, partition and offset -1.
  return {
    metadata: {
      topic: buffered.topic === NO_TOPIC ? null : buffered.topic,
      partition: buffered.partition,
      offset: buffered.offset,
    },
    timestampMs: buffered.timestamp,
    headers: buffered.headers,
  };
}

/** A bound as Kafka prints it (Long.MAX_VALUE when there is none). */
function printedLimit(n: number): string {
  return n === NO_BOUND ? '9223372036854775807' : String(n);
}

function suppressSupplier(
  nodeName: string,
  storeName: string,
  suppressed: Suppressed,
  windows: KTable<unknown, unknown>['windows'],
): ProcessorSupplier<unknown, Change<unknown>, unknown, Change<unknown>> {
  // untilWindowCloses: buffer time is the window end, and an entry is due once stream time - grace reaches it;
  // untilTimeLimit: buffer time is the record's, due once stream time - limit reaches it.
  // A session window can still grow by a record up to the inactivity gap after its end: Kafka waits grace + gap.
  const sessionGapMs = (windows as { inactivityGapMs?: number } | null)?.inactivityGapMs ?? 0;
  const waitMs =
    suppressed.mode === 'untilWindowCloses' ? windows!.graceMs + sessionGapMs : suppressed.timeLimitMs;
  // Kafka's safeToDropTombstones: final results never forward a tombstone (a merged-away session, say).
  const dropTombstones = suppressed.mode === 'untilWindowCloses';
  const { maxRecords, maxBytes, bufferFullStrategy } = suppressed.bufferConfig;
  return () => {
    let ctx: InternalProcessorContext<unknown, Change<unknown>>;
    let buffer: SuppressBuffer;
    let observedStreamTimeMs = -1;
    // Kafka's emit: the evicted entry's record context is the processor's while its update goes downstream, so
    // recordMetadata() and a sink's TopicNameExtractor read the held update's source record, not the one that
    // let it out; the processor's own context is set back after.
    const emit: EvictionHandler = (key, newValue, priorValue, context) => {
      if (newValue === null && dropTombstones) return;
      ctx[runWithinRecordContext](emittedContextOf(context), () =>
        ctx.forward(new Record(key, new Change(newValue, priorValue), context.timestamp, context.headers)),
      );
    };
    return {
      init(c) {
        ctx = c as InternalProcessorContext<unknown, Change<unknown>>;
        assert.equal(
          typeof ctx[runWithinRecordContext],
          'function',
          'suppress runs in a task context, which can set a record context',
        );
        buffer = c.getStateStore<SuppressBuffer>(storeName);
      },
      process(r) {
        observedStreamTimeMs = Math.max(observedStreamTimeMs, r.timestamp);
        const timeMs =
          suppressed.mode === 'untilWindowCloses' ? (r.key as Windowed<unknown>).window.endMs : r.timestamp;
        buffer.put(timeMs, r.key, r.value.newValue, r.value.oldValue, bufferedContextOf(ctx, r));
        buffer.evictUpTo(observedStreamTimeMs - waitMs, emit);
        const overCapacity = () => buffer.numRecords() > maxRecords || buffer.bufferSize() > maxBytes;
        if (!overCapacity()) return;
        if (bufferFullStrategy === 'EMIT') {
          buffer.evictWhile(overCapacity, emit);
          return;
        }
        throw new StreamsError(
          `${nodeName} buffer exceeded its max capacity. Currently [${buffer.numRecords()}/${printedLimit(maxRecords)}] records and [${buffer.bufferSize()}/${printedLimit(maxBytes)}] bytes.`,
        );
      },
    };
  };
}
