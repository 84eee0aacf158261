// Interactive queries (Kafka's KafkaStreams.store with StoreQueryParameters and QueryableStoreTypes): read-only
// views of a state store across the local tasks that hold it (one instance per partition), as Kafka's composite
// stores give them. A key lives in one partition, so get() answers the first instance that has it; range() and
// all() put every instance's entries together (sorted within each instance, not across them, as in Kafka).
// Only the instances of running tasks (restored, initialized) are read, unless the query enables stale stores
// (Kafka's enableStaleStores): then also those of active tasks still restoring and of the instance's standby
// tasks, which may lag behind the active instance elsewhere. Only local state is visible.

import { StreamsError } from './errors.js';
import type { KeyValue } from './key-value.js';
import { SessionStore } from './state/session-store.js';
import { PlainKeyValueStore, TimestampedStore } from './state/store-stack.js';
import type { ReadOnlyKeyValueStore, StateStore, ValueAndTimestamp } from './state/stores.js';
import { TimestampedWindowStore } from './state/window-store.js';
import { TimeWindow, Windowed } from './windows.js';

/** Kafka's InvalidStateStoreException: the store is unknown, or not queryable now (rebalancing, closed). */
export class InvalidStateStoreException extends StreamsError {}

export interface QueryableStoreType<T> {
  readonly kind: string;
  accepts(store: StateStore): boolean;
  create(stores: StateStore[]): T;
}

export interface ReadOnlyWindowStore<K, V> {
  /** The value of the key's window starting at `windowStartMs`, or null. */
  fetch(key: K, windowStartMs: number): V | null;
  /** The key's windows starting from `fromMs` to `toMs` inclusive: (window start, value), by start. */
  fetchRange(key: K, fromMs: number, toMs: number): KeyValue<number, V>[];
  /** Every window of every key starting from `fromMs` to `toMs` inclusive. */
  fetchAll(fromMs: number, toMs: number): KeyValue<Windowed<K>, V>[];
  all(): KeyValue<Windowed<K>, V>[];
}

export interface ReadOnlySessionStore<K, V> {
  /** Every session of the key. */
  fetch(key: K): KeyValue<Windowed<K>, V>[];
  /** The key's sessions ending at or after `earliestSessionEndMs` and starting at or before `latestSessionStartMs`. */
  findSessions(
    key: K,
    earliestSessionEndMs: number,
    latestSessionStartMs: number,
  ): KeyValue<Windowed<K>, V>[];
  fetchSession(key: K, sessionStartMs: number, sessionEndMs: number): V | null;
}

function keyValueView<K, V, S>(
  stores: StateStore[],
  read: (store: StateStore) => ReadOnlyKeyValueStore<K, S>,
  map: (value: S) => V,
): ReadOnlyKeyValueStore<K, V> {
  const views = stores.map(read);
  return {
    get(key) {
      for (const v of views) {
        const found = v.get(key);
        if (found !== null) return map(found);
      }
      return null;
    },
    range: (from, to) =>
      views.flatMap((v) => v.range(from, to).map((e) => ({ key: e.key, value: map(e.value) }))),
    all: () => views.flatMap((v) => v.all().map((e) => ({ key: e.key, value: map(e.value) }))),
    approximateNumEntries: () => views.reduce((n, v) => n + v.approximateNumEntries(), 0),
  };
}

const isKeyValue = (s: StateStore) => s instanceof TimestampedStore || s instanceof PlainKeyValueStore;

export const QueryableStoreTypes = {
  /** Plain values (a timestamped store's values without their timestamps). */
  keyValueStore<K, V>(): QueryableStoreType<ReadOnlyKeyValueStore<K, V>> {
    return {
      kind: 'keyValueStore',
      accepts: isKeyValue,
      create: (stores) =>
        keyValueView<K, V, unknown>(
          stores,
          (s) => s as unknown as ReadOnlyKeyValueStore<K, unknown>,
          (v) => (stores[0] instanceof TimestampedStore ? (v as ValueAndTimestamp<V>).value : (v as V)),
        ),
    };
  },

  timestampedKeyValueStore<K, V>(): QueryableStoreType<ReadOnlyKeyValueStore<K, ValueAndTimestamp<V>>> {
    return {
      kind: 'timestampedKeyValueStore',
      accepts: (s) => s instanceof TimestampedStore,
      create: (stores) =>
        keyValueView<K, ValueAndTimestamp<V>, ValueAndTimestamp<V>>(
          stores,
          (s) => s as unknown as ReadOnlyKeyValueStore<K, ValueAndTimestamp<V>>,
          (v) => v,
        ),
    };
  },

  windowStore<K, V>(): QueryableStoreType<ReadOnlyWindowStore<K, V>> {
    return {
      kind: 'windowStore',
      accepts: (s) => s instanceof TimestampedWindowStore,
      create(stores) {
        const windows = stores as TimestampedWindowStore<K, V>[];
        const windowed = (key: K, start: number, sizeMs: number) =>
          new Windowed(key, new TimeWindow(start, start + sizeMs));
        return {
          fetch(key, windowStartMs) {
            for (const w of windows) {
              const found = w.fetch(key, windowStartMs);
              if (found !== null) return found.value;
            }
            return null;
          },
          fetchRange: (key, fromMs, toMs) =>
            windows.flatMap((w) =>
              w.fetchRange(key, fromMs, toMs).map((e) => ({ key: e.windowStartMs, value: e.value.value })),
            ),
          fetchAll: (fromMs, toMs) =>
            windows.flatMap((w) =>
              w
                .all()
                .filter((e) => e.windowStartMs >= fromMs && e.windowStartMs <= toMs)
                .map((e) => ({
                  key: windowed(e.key, e.windowStartMs, w.windowSizeMs),
                  value: e.value.value,
                })),
            ),
          all: () =>
            windows.flatMap((w) =>
              w.all().map((e) => ({
                key: windowed(e.key, e.windowStartMs, w.windowSizeMs),
                value: e.value.value,
              })),
            ),
        };
      },
    };
  },

  sessionStore<K, V>(): QueryableStoreType<ReadOnlySessionStore<K, V>> {
    return {
      kind: 'sessionStore',
      accepts: (s) => s instanceof SessionStore,
      create(stores) {
        const sessions = stores as SessionStore<K, V>[];
        const pairs = (list: { key: K; startMs: number; endMs: number; value: V }[]) =>
          list.map((s) => ({ key: new Windowed(s.key, new TimeWindow(s.startMs, s.endMs)), value: s.value }));
        return {
          fetch: (key) => sessions.flatMap((s) => pairs(s.fetch(key))),
          findSessions: (key, earliestEnd, latestStart) =>
            sessions.flatMap((s) => pairs(s.findSessions(key, earliestEnd, latestStart))),
          fetchSession(key, start, end) {
            for (const s of sessions) {
              const v = s.fetchSession(key, start, end);
              if (v !== null) return v;
            }
            return null;
          },
        };
      },
    };
  },
} as const;

/** What KafkaStreams.store() looks for (Kafka's StoreQueryParameters). */
export class StoreQueryParameters<T> {
  private constructor(
    readonly storeName: string,
    readonly queryableStoreType: QueryableStoreType<T>,
    readonly partition: number | null,
    readonly staleStoresEnabled: boolean,
  ) {}

  static fromNameAndType<T>(storeName: string, type: QueryableStoreType<T>): StoreQueryParameters<T> {
    return new StoreQueryParameters(storeName, type, null, false);
  }

  /** Only the instance of this partition. */
  withPartition(partition: number): StoreQueryParameters<T> {
    return new StoreQueryParameters(
      this.storeName,
      this.queryableStoreType,
      partition,
      this.staleStoresEnabled,
    );
  }

  /**
   * Stale stores (Kafka's enableStaleStores): also the instances of standby tasks and of active tasks still
   * restoring, and also while the client is REBALANCING; their values may be behind the active instance's.
   */
  enableStaleStores(): StoreQueryParameters<T> {
    return new StoreQueryParameters(this.storeName, this.queryableStoreType, this.partition, true);
  }
}
