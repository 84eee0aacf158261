// Sliding windows (Kafka's SlidingWindows): windows of a fixed time difference, both ends inclusive, that exist
// where records are: for a record at t, the window [t - d, t] that ends with it, and the window [t + 1, t + 1 + d]
// just after it when a later record falls in that one; a record near the start of time counts in [0, d]. Each
// distinct window's aggregate is kept in a window store keyed by start, as Kafka keeps it.
//
// How Brook computes them: the key's records of the last 2d + grace are kept in a second store
// (`<store>-records`, a window store with duplicates, logged), and every window a new record touches is folded
// again from those records, in time order. Kafka instead derives new windows from existing aggregates, which
// needs no record store; the results per window are the same, this is simpler to get right.
//
// With a record cache (caching on, as Kafka's default for DSL stores) the window aggregates go through Kafka's
// CachingWindowStore: a window's updates between two commits reach the changelog and downstream once, through
// the cache's flush listener. The records store is never cached: each window is folded again from it.

import type { Processor, ProcessorContext } from './processor.js';
import { Change, Record } from './processor.js';
import { CachingTimestampedWindowStore } from './state/caching-window-store.js';
import type { DuplicatesWindowStore, TimestampedWindowStore } from './state/window-store.js';
import { TimeWindow, Windowed } from './windows.js';

export class SlidingWindows {
  private constructor(
    readonly timeDifferenceMs: number,
    readonly graceMs: number,
  ) {
    if (!(timeDifferenceMs >= 0)) throw new RangeError('Window time difference must not be negative.');
    if (!(graceMs >= 0)) throw new RangeError('Window grace period must not be negative.');
  }

  static ofTimeDifferenceWithNoGrace(timeDifferenceMs: number): SlidingWindows {
    return new SlidingWindows(timeDifferenceMs, 0);
  }

  static ofTimeDifferenceAndGrace(timeDifferenceMs: number, graceMs: number): SlidingWindows {
    return new SlidingWindows(timeDifferenceMs, graceMs);
  }

  gracePeriodMs(): number {
    return this.graceMs;
  }
}

export function slidingAggregateSupplier<K, V, VA>(
  storeName: string,
  recordsStoreName: string,
  windows: SlidingWindows,
  step: (key: K, value: V, old: VA | null) => VA,
) {
  const d = windows.timeDifferenceMs;
  return (): Processor<K, V, Windowed<K>, Change<VA>> => {
    let context: ProcessorContext<Windowed<K>, Change<VA>>;
    let store: TimestampedWindowStore<K, VA>;
    let records: DuplicatesWindowStore<K, V>;
    let observedStreamTimeMs = -1;
    let cached = false;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<TimestampedWindowStore<K, VA>>(storeName);
        records = c.getStateStore<DuplicatesWindowStore<K, V>>(recordsStoreName);
        cached = store instanceof CachingTimestampedWindowStore && store.cachingEnabled;
        if (cached)
          // Kafka's TimestampedCacheFlushListener: the last writer's headers, the new value's timestamp.
          (store as CachingTimestampedWindowStore<K, VA>).setFlushListener((key, start, next, old, written) =>
            c.forward(
              new Record(
                new Windowed(key, new TimeWindow(start, start + d)),
                new Change(next?.value ?? null, old?.value ?? null),
                next?.timestamp ?? written.timestamp,
                written.headers,
              ),
            ),
          );
      },
      process(r: Record<K, V>) {
        if (r.key === null || r.key === undefined || r.value === null || r.value === undefined) return;
        const t = r.timestamp;
        observedStreamTimeMs = Math.max(observedStreamTimeMs, t);
        const closeTimeMs = observedStreamTimeMs - windows.graceMs;
        // The last window this record can count in ends at t + 1 + d; past that it is dropped, as Kafka does.
        if (t + 1 + d <= closeTimeMs) return;
        records.put(r.key, r.value, t);
        const near = records.fetch(r.key, t - d - 1, t + d + 1);
        const starts = new Set<number>([Math.max(0, t - d)]);
        for (const n of near) {
          if (n.timestamp >= t && n.timestamp <= t + d) starts.add(Math.max(0, n.timestamp - d));
          if (n.timestamp < t && n.timestamp + 1 + d >= t) starts.add(n.timestamp + 1);
          if (n.timestamp > t) starts.add(t + 1);
        }
        for (const start of [...starts].sort((a, b) => a - b)) {
          const end = start + d;
          if (end < closeTimeMs) continue; // a closed window keeps its final value
          let agg: VA | null = null;
          let timestamp = -1;
          for (const n of near) {
            if (n.timestamp < start || n.timestamp > end) continue;
            agg = step(r.key, n.value, agg);
            timestamp = Math.max(timestamp, n.timestamp);
          }
          if (agg === null) continue;
          const old = store.fetch(r.key, start);
          if (
            old !== null &&
            old.timestamp === timestamp &&
            JSON.stringify(old.value) === JSON.stringify(agg)
          )
            continue;
          store.put(r.key, { value: agg, timestamp }, start);
          if (cached) continue; // forwarded when the cache lets the window go
          context.forward(
            r
              .withKey(new Windowed(r.key, new TimeWindow(start, end)))
              .withValue(new Change(agg, old?.value ?? null))
              .withTimestamp(timestamp),
          );
        }
      },
    };
  };
}
