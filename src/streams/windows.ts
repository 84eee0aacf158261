// Time windows (Kafka's TimeWindows: tumbling, or hopping with advanceBy, with a grace period), the Windowed
// key, the windowed serde, and windowed aggregations (TimeWindowedKStream: count, reduce, aggregate).
//
// A record at time t belongs to every window [start, start + size) with start a multiple of the advance and
// start <= t < start + size. A window accepts records until stream time passes its end plus the grace period;
// later records for it are dropped (Kafka logs "Skipping record for expired window"). The aggregates live in a
// window store (state/window-store.ts) whose changelog is compacted and deleted after the store's retention.

import { Materialized, type Named } from './dsl-options.js';
import {
  type Aggregator,
  burnCountName,
  type Initializer,
  type KGroupedStream,
  KTable,
  type Reducer,
  type ValueGetterSupplier,
} from './ktable.js';
import { Change, type Processor, type ProcessorContext, Record } from './processor.js';
import { type Serde, Serdes, SerializationError } from './serdes.js';
import { SlidingWindows, slidingAggregateSupplier } from './sliding-windows.js';
import { CachingTimestampedWindowStore } from './state/caching-window-store.js';
import { StoreBuilder, storeRetentionMs } from './state/stores.js';
import type { TimestampedWindowStore } from './state/window-store.js';

export class TimeWindows {
  private constructor(
    readonly sizeMs: number,
    readonly advanceMs: number,
    readonly graceMs: number,
  ) {
    if (!(sizeMs > 0)) throw new RangeError('Window size must be larger than zero.');
    if (!(advanceMs > 0 && advanceMs <= sizeMs))
      throw new RangeError(
        `Window advancement interval should be more than zero and less than window duration`,
      );
    if (!(graceMs >= 0)) throw new RangeError('Grace period must not be negative.');
  }

  static ofSizeWithNoGrace(sizeMs: number): TimeWindows {
    return new TimeWindows(sizeMs, sizeMs, 0);
  }

  static ofSizeAndGrace(sizeMs: number, graceMs: number): TimeWindows {
    return new TimeWindows(sizeMs, sizeMs, graceMs);
  }

  /** Hopping windows: a new window every `advanceMs`. */
  advanceBy(advanceMs: number): TimeWindows {
    return new TimeWindows(this.sizeMs, advanceMs, this.graceMs);
  }

  /** Start times of the windows a timestamp falls in (Kafka's TimeWindows.windowsFor). */
  windowsFor(timestamp: number): number[] {
    const out: number[] = [];
    let start =
      Math.floor(Math.max(0, timestamp - this.sizeMs + this.advanceMs) / this.advanceMs) * this.advanceMs;
    for (; start <= timestamp; start += this.advanceMs) out.push(start);
    return out;
  }
}

export class TimeWindow {
  constructor(
    readonly startMs: number,
    readonly endMs: number,
  ) {}

  start(): number {
    return this.startMs;
  }

  end(): number {
    return this.endMs;
  }
}

/** A key within a window (Kafka's Windowed). */
export class Windowed<K> {
  constructor(
    readonly key: K,
    readonly window: TimeWindow,
  ) {}

  toString(): string {
    return `[${String(this.key)}@${this.window.startMs}/${this.window.endMs}]`;
  }
}

/**
 * Kafka's TimeWindowedSerializer/Deserializer: the inner key's bytes followed by the window start as an 8-byte
 * big-endian long; the end is start + window size, which the reader must know.
 */
export const WindowedSerdes = {
  timeWindowedSerdeFrom<K>(inner: Serde<K>, windowSizeMs: number): Serde<Windowed<K>> {
    return {
      serialize(topic, data) {
        if (data === null || data === undefined) return null;
        const key = inner.serialize(topic, data.key);
        if (key === null) throw new SerializationError('a windowed key may not be null');
        const out = Buffer.allocUnsafe(key.length + 8);
        key.copy(out, 0);
        out.writeBigInt64BE(BigInt(data.window.startMs), key.length);
        return out;
      },
      deserialize(topic, data) {
        if (data === null || data === undefined) return null;
        if (data.length < 8) throw new SerializationError('a windowed key needs at least 8 bytes');
        const start = Number(data.readBigInt64BE(data.length - 8));
        const key = inner.deserialize(topic, data.subarray(0, data.length - 8)) as K;
        return new Windowed(key, new TimeWindow(start, start + windowSizeMs));
      },
    };
  },

  /** Kafka's SessionWindowedSerializer/Deserializer: the key's bytes, the session end, then its start (8 bytes each). */
  sessionWindowedSerdeFrom<K>(inner: Serde<K>): Serde<Windowed<K>> {
    return {
      serialize(topic, data) {
        if (data === null || data === undefined) return null;
        const key = inner.serialize(topic, data.key);
        if (key === null) throw new SerializationError('a windowed key may not be null');
        const out = Buffer.allocUnsafe(key.length + 16);
        key.copy(out, 0);
        out.writeBigInt64BE(BigInt(data.window.endMs), key.length);
        out.writeBigInt64BE(BigInt(data.window.startMs), key.length + 8);
        return out;
      },
      deserialize(topic, data) {
        if (data === null || data === undefined) return null;
        if (data.length < 16) throw new SerializationError('a session-windowed key needs at least 16 bytes');
        const end = Number(data.readBigInt64BE(data.length - 16));
        const start = Number(data.readBigInt64BE(data.length - 8));
        const key = inner.deserialize(topic, data.subarray(0, data.length - 16)) as K;
        return new Windowed(key, new TimeWindow(start, end));
      },
    };
  },
} as const;

export class TimeWindowedKStream<K, V> {
  constructor(
    private readonly grouped: KGroupedStream<K, V>,
    private readonly windows: TimeWindows | SlidingWindows,
  ) {}

  count(materialized?: Materialized<K, number>, named?: Named): KTable<Windowed<K>, number> {
    // Kafka's TimeWindowedKStreamImpl takes the extra name, its SlidingWindowedKStreamImpl does not.
    if (!(this.windows instanceof SlidingWindows)) burnCountName(this.grouped.builder, materialized);
    const m = materialized ?? Materialized.with<K, number>(this.grouped.keySerde as Serde<K>, Serdes.Long());
    return this.build<number>(
      m.valueSerde === null ? m.withValueSerde(Serdes.Long()) : m,
      named,
      (_k, _v, old) => (old ?? 0) + 1,
    );
  }

  reduce(reducer: Reducer<V>, materialized?: Materialized<K, V>, named?: Named): KTable<Windowed<K>, V> {
    const g = this.grouped;
    const m = materialized ?? Materialized.with<K, V>(g.keySerde as Serde<K>, g.valueSerde as Serde<V>);
    return this.build<V>(
      m.valueSerde === null && g.valueSerde !== null ? m.withValueSerde(g.valueSerde) : m,
      named,
      (_k, v, old) => (old === null ? v : reducer(old, v)),
      'KSTREAM-REDUCE-',
    );
  }

  aggregate<VA>(
    initializer: Initializer<VA>,
    aggregator: Aggregator<K, V, VA>,
    materialized?: Materialized<K, VA>,
    named?: Named,
  ): KTable<Windowed<K>, VA> {
    return this.build<VA>(
      materialized ??
        Materialized.with<K, VA>(this.grouped.keySerde as Serde<K>, null as unknown as Serde<VA>),
      named,
      (k, v, old) => aggregator(k, v, old ?? initializer()),
    );
  }

  private build<VA>(
    m: Materialized<K, VA>,
    named: Named | undefined,
    step: (key: K, value: V, old: VA | null) => VA,
    prefix = 'KSTREAM-AGGREGATE-',
  ): KTable<Windowed<K>, VA> {
    const g = this.grouped;
    const b = g.builder;
    const storeName = m.storeName ?? b.newStoreName(prefix);
    const name = b.nameOr(named, prefix);
    const keySerde = m.keySerde ?? g.keySerde;
    const parent = g.aggregationSource(storeName);
    const w = this.windows;
    const sliding = w instanceof SlidingWindows;
    const sizeMs = sliding ? w.timeDifferenceMs : w.sizeMs;
    // A sliding window's records reach back one difference further than its own window (the one just after).
    const retentionMs = storeRetentionMs(
      storeName,
      m.retentionMs,
      sliding ? 2 * sizeMs + w.graceMs : sizeMs + w.graceMs,
      sizeMs + w.graceMs,
    );
    // retention.ms of the changelog is the store's retention plus windowstore.changelog.additional.retention.ms,
    // set when the topic is created (runtime/internal-topics.ts).
    const logConfig = (policy: string) => ({ 'cleanup.policy': policy, ...m.logConfig });
    const store = new StoreBuilder<K, VA>(storeName, m.engine, keySerde, m.valueSerde, true);
    store.window = { sizeMs, retentionMs };
    // Kafka caches the window aggregates of time and sliding windows alike (CachingWindowStore).
    if (m.cachingEnabled) store.withCachingEnabled();
    if (m.loggingEnabled) store.withLoggingEnabled(logConfig('compact,delete'));
    else store.withLoggingDisabled();
    if (sliding) {
      const recordsStoreName = `${storeName}-records`;
      const records = new StoreBuilder<K, V>(recordsStoreName, m.engine, keySerde, g.valueSerde, false);
      records.window = { sizeMs, retentionMs, retainDuplicates: true };
      if (m.loggingEnabled) records.withLoggingEnabled(logConfig('delete'));
      else records.withLoggingDisabled();
      b.topology.addProcessor(
        name,
        slidingAggregateSupplier<K, V, VA>(storeName, recordsStoreName, w, step),
        parent,
      );
      b.topology.addStateStore(store as StoreBuilder, name);
      b.topology.addStateStore(records as StoreBuilder, name);
    } else {
      b.topology.addProcessor(name, windowAggregateSupplier<K, V, VA>(storeName, w, step), parent);
      b.topology.addStateStore(store as StoreBuilder, name);
    }
    const windowedKeySerde =
      keySerde === null ? null : WindowedSerdes.timeWindowedSerdeFrom(keySerde, sizeMs);
    return new KTable<Windowed<K>, VA>(
      b,
      name,
      windowedKeySerde,
      m.valueSerde,
      storeName,
      w,
      windowStoreGetter<K, VA>(storeName),
    );
  }
}

/**
 * How processors below read a time or sliding window aggregation's table (Kafka's KStreamWindowAggregate and
 * KStreamSlidingWindowAggregate view()): a windowed key reads the aggregate of its key's window that starts
 * where its window starts, with the aggregate's timestamp; so a windowed table can be joined.
 */
export function windowStoreGetter<K, V>(storeName: string): ValueGetterSupplier<Windowed<K>, V> {
  return {
    stores: [storeName],
    init(context) {
      const store = context.getStateStore<TimestampedWindowStore<K, V>>(storeName);
      return (windowed) => store.fetch(windowed.key, windowed.window.startMs);
    },
  };
}

function windowAggregateSupplier<K, V, VA>(
  storeName: string,
  windows: TimeWindows,
  step: (key: K, value: V, old: VA | null) => VA,
) {
  return (): Processor<K, V, Windowed<K>, Change<VA>> => {
    let context: ProcessorContext<Windowed<K>, Change<VA>>;
    let store: TimestampedWindowStore<K, VA>;
    let observedStreamTimeMs = -1;
    let cached = false;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<TimestampedWindowStore<K, VA>>(storeName);
        cached = store instanceof CachingTimestampedWindowStore && store.cachingEnabled;
        if (cached)
          // Kafka's TimestampedCacheFlushListener: the last writer's headers, the new value's timestamp.
          (store as CachingTimestampedWindowStore<K, VA>).setFlushListener((key, start, next, old, written) =>
            c.forward(
              new Record(
                new Windowed(key, new TimeWindow(start, start + windows.sizeMs)),
                new Change(next?.value ?? null, old?.value ?? null),
                next?.timestamp ?? written.timestamp,
                written.headers,
              ),
            ),
          );
      },
      process(r: Record<K, V>) {
        if (r.key === null || r.key === undefined || r.value === null || r.value === undefined) return;
        observedStreamTimeMs = Math.max(observedStreamTimeMs, r.timestamp);
        const closeTimeMs = observedStreamTimeMs - windows.graceMs;
        for (const start of windows.windowsFor(r.timestamp)) {
          const end = start + windows.sizeMs;
          if (end <= closeTimeMs) continue; // expired window: dropped, as Kafka drops it
          const old = store.fetch(r.key, start);
          const next = step(r.key, r.value, old?.value ?? null);
          const timestamp = old === null ? r.timestamp : Math.max(old.timestamp, r.timestamp);
          store.put(r.key, { value: next, timestamp }, start);
          if (cached) continue; // forwarded when the cache lets the window go
          context.forward(
            r
              .withKey(new Windowed(r.key, new TimeWindow(start, end)))
              .withValue(new Change(next, old?.value ?? null))
              .withTimestamp(timestamp),
          );
        }
      },
    };
  };
}
