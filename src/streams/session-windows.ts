// Session windows (Kafka's SessionWindows): a key's records closer together than the inactivity gap form one
// session; a record bridging two sessions merges them (the aggregates combine through the merger). Sessions
// accept records until stream time passes their end plus the grace period. SessionWindowedKStream aggregates
// per key and session into a session store (state/session-store.ts); each change is forwarded with the key
// Windowed(key, [start, end]): a new or grown session as its new aggregate, a session merged away or replaced as
// a tombstone (new value null, old value the session's aggregate), as Kafka forwards them.

import { Materialized, type Named } from './dsl-options.js';
import type { Aggregator, Initializer, KGroupedStream, Reducer } from './ktable.js';
import { burnCountName, KTable, type ValueGetterSupplier } from './ktable.js';
import { Change, type Processor, type ProcessorContext, Record } from './processor.js';
import { type Serde, Serdes } from './serdes.js';
import { CachingSessionStore } from './state/caching-session-store.js';
import type { SessionStore } from './state/session-store.js';
import { StoreBuilder, storeRetentionMs } from './state/stores.js';
import { TimeWindow, Windowed, WindowedSerdes } from './windows.js';

/** Combines the aggregates of two sessions being merged (Kafka's Merger). */
export type Merger<K, VA> = (key: K, aggregate1: VA, aggregate2: VA) => VA;

export class SessionWindows {
  private constructor(
    readonly inactivityGapMs: number,
    readonly graceMs: number,
  ) {
    if (!(inactivityGapMs > 0)) throw new RangeError('Gap time cannot be zero or negative.');
    if (!(graceMs >= 0)) throw new RangeError('Grace period must not be negative.');
  }

  static ofInactivityGapWithNoGrace(inactivityGapMs: number): SessionWindows {
    return new SessionWindows(inactivityGapMs, 0);
  }

  static ofInactivityGapAndGrace(inactivityGapMs: number, graceMs: number): SessionWindows {
    return new SessionWindows(inactivityGapMs, graceMs);
  }

  /** Kafka's name for the same constructor as ofInactivityGapAndGrace. */
  static withInactivityGapAndGrace(inactivityGapMs: number, graceMs: number): SessionWindows {
    return new SessionWindows(inactivityGapMs, graceMs);
  }

  inactivityGap(): number {
    return this.inactivityGapMs;
  }

  gracePeriodMs(): number {
    return this.graceMs;
  }
}

/** A session: its first and last record's timestamps, both inclusive. */
export class SessionWindow extends TimeWindow {}

export class SessionWindowedKStream<K, V> {
  constructor(
    private readonly grouped: KGroupedStream<K, V>,
    private readonly windows: SessionWindows,
  ) {}

  count(materialized?: Materialized<K, number>, named?: Named): KTable<Windowed<K>, number> {
    burnCountName(this.grouped.builder, materialized);
    const m = materialized ?? Materialized.with<K, number>(this.grouped.keySerde as Serde<K>, Serdes.Long());
    return this.build<number>(
      m.valueSerde === null ? m.withValueSerde(Serdes.Long()) : m,
      named,
      () => 0,
      (_k, _v, agg) => agg + 1,
      (_k, a, b) => a + b,
    );
  }

  reduce(reducer: Reducer<V>, materialized?: Materialized<K, V>, named?: Named): KTable<Windowed<K>, V> {
    const g = this.grouped;
    const m = materialized ?? Materialized.with<K, V>(g.keySerde as Serde<K>, g.valueSerde as Serde<V>);
    // The initial aggregate is "no value yet": the first record becomes the aggregate, as Kafka's reduce does.
    const none = null as unknown as V;
    return this.build<V>(
      m.valueSerde === null && g.valueSerde !== null ? m.withValueSerde(g.valueSerde) : m,
      named,
      () => none,
      (_k, v, agg) => (agg === none ? v : reducer(agg, v)),
      (_k, a, b) => (a === none ? b : b === none ? a : reducer(a, b)),
      'KSTREAM-REDUCE-',
    );
  }

  aggregate<VA>(
    initializer: Initializer<VA>,
    aggregator: Aggregator<K, V, VA>,
    merger: Merger<K, VA>,
    materialized?: Materialized<K, VA>,
    named?: Named,
  ): KTable<Windowed<K>, VA> {
    return this.build<VA>(
      materialized ??
        Materialized.with<K, VA>(this.grouped.keySerde as Serde<K>, null as unknown as Serde<VA>),
      named,
      initializer,
      aggregator,
      merger,
    );
  }

  private build<VA>(
    m: Materialized<K, VA>,
    named: Named | undefined,
    initializer: Initializer<VA>,
    aggregator: Aggregator<K, V, VA>,
    merger: Merger<K, VA>,
    prefix = 'KSTREAM-AGGREGATE-',
  ): KTable<Windowed<K>, VA> {
    const g = this.grouped;
    const b = g.builder;
    const storeName = m.storeName ?? b.newStoreName(prefix);
    const name = b.nameOr(named, prefix);
    const keySerde = m.keySerde ?? g.keySerde;
    const parent = g.aggregationSource(storeName);
    const w = this.windows;
    const retentionMs = storeRetentionMs(
      storeName,
      m.retentionMs,
      w.inactivityGapMs + w.graceMs,
      w.inactivityGapMs + w.graceMs,
    );
    const store = new StoreBuilder<K, VA>(storeName, m.engine, keySerde, m.valueSerde, false);
    store.session = { retentionMs };
    if (m.cachingEnabled) store.withCachingEnabled();
    if (m.loggingEnabled)
      store.withLoggingEnabled({
        'cleanup.policy': 'compact,delete',
        ...m.logConfig,
      });
    else store.withLoggingDisabled();
    b.topology.addProcessor(
      name,
      sessionAggregateSupplier<K, V, VA>(storeName, w, initializer, aggregator, merger),
      parent,
    );
    b.topology.addStateStore(store as StoreBuilder, name);
    const windowedKeySerde = keySerde === null ? null : WindowedSerdes.sessionWindowedSerdeFrom(keySerde);
    return new KTable<Windowed<K>, VA>(
      b,
      name,
      windowedKeySerde,
      m.valueSerde,
      storeName,
      w,
      sessionStoreGetter<K, VA>(storeName),
    );
  }
}

/**
 * How processors below read a session aggregation's table (Kafka's KStreamSessionWindowAggregate view()): a
 * windowed key reads the aggregate of exactly that session (its key, start and end), timestamped with the
 * session's end; so a session-windowed table can be joined.
 */
export function sessionStoreGetter<K, V>(storeName: string): ValueGetterSupplier<Windowed<K>, V> {
  return {
    stores: [storeName],
    init(context) {
      const store = context.getStateStore<SessionStore<K, V>>(storeName);
      return (windowed) => {
        const value = store.fetchSession(windowed.key, windowed.window.startMs, windowed.window.endMs);
        return value === null ? null : { value, timestamp: windowed.window.endMs };
      };
    },
  };
}

function sessionAggregateSupplier<K, V, VA>(
  storeName: string,
  windows: SessionWindows,
  initializer: Initializer<VA>,
  aggregator: Aggregator<K, V, VA>,
  merger: Merger<K, VA>,
) {
  return (): Processor<K, V, Windowed<K>, Change<VA>> => {
    let context: ProcessorContext<Windowed<K>, Change<VA>>;
    let store: SessionStore<K, VA>;
    let observedStreamTimeMs = -1;
    let cached = false;
    const windowed = (key: K, start: number, end: number) => new Windowed(key, new SessionWindow(start, end));
    return {
      init(c) {
        context = c;
        store = c.getStateStore<SessionStore<K, VA>>(storeName);
        cached = store instanceof CachingSessionStore && store.cachingEnabled;
        if (cached)
          // Kafka's SessionCacheFlushListener: the session's end as the timestamp, the last writer's headers.
          (store as CachingSessionStore<K, VA>).setFlushListener((key, start, end, next, old, written) =>
            c.forward(new Record(windowed(key, start, end), new Change<VA>(next, old), end, written.headers)),
          );
      },
      process(r: Record<K, V>) {
        if (r.key === null || r.key === undefined || r.value === null || r.value === undefined) return;
        const ts = r.timestamp;
        observedStreamTimeMs = Math.max(observedStreamTimeMs, ts);
        const closeTimeMs = observedStreamTimeMs - windows.graceMs;
        const gap = windows.inactivityGapMs;
        const overlapping = store.findSessions(r.key, ts - gap, ts + gap);
        let start = ts;
        let end = ts;
        let agg = initializer();
        for (const s of overlapping) {
          start = Math.min(start, s.startMs);
          end = Math.max(end, s.endMs);
          agg = merger(r.key, agg, s.value);
        }
        // A session that closed before this record came is not reopened (Kafka drops the record).
        if (end < closeTimeMs) return;
        for (const s of overlapping) {
          store.remove(r.key, s.startMs, s.endMs);
          if (cached) continue; // forwarded when the cache lets the session go
          context.forward(
            r
              .withKey(windowed(r.key, s.startMs, s.endMs))
              .withValue(new Change<VA>(null, s.value))
              .withTimestamp(s.endMs),
          );
        }
        agg = aggregator(r.key, r.value, agg);
        store.put(r.key, start, end, agg);
        if (cached) return;
        context.forward(
          r
            .withKey(windowed(r.key, start, end))
            .withValue(new Change<VA>(agg, null))
            .withTimestamp(end),
        );
      },
    };
  };
}
