// State store interfaces and the builders a topology holds (Kafka's StateStore, KeyValueStore, StoreBuilder and
// the Stores factory). A store the application uses is a stack built per task (store-stack.ts): a bytes store
// (in memory, or persistent on LMDB) at the bottom, the changelog layer that mirrors every write to the store's
// `<application.id>-<store>-changelog` partition, and the typed layer with the serdes on top.

import type { Serde } from '../serdes.js';

export interface StateStore {
  readonly name: string;
  persistent(): boolean;
  /** Makes every write so far durable in the store (persistent stores) and in its changelog's producer. */
  flush(): void;
  close(): void;
}

import type { KeyValue } from '../key-value.js';

export type { KeyValue };

export interface ReadOnlyKeyValueStore<K, V> {
  get(key: K): V | null;
  /** Keys from `from` to `to` inclusive, in the order of their serialized bytes (as Kafka's stores). */
  range(from: K, to: K): KeyValue<K, V>[];
  all(): KeyValue<K, V>[];
  approximateNumEntries(): number;
}

export interface KeyValueStore<K, V> extends StateStore, ReadOnlyKeyValueStore<K, V> {
  put(key: K, value: V | null): void;
  putIfAbsent(key: K, value: V): V | null;
  delete(key: K): V | null;
}

/** What the DSL keeps for a key: the value and the timestamp of the record that made it (KIP-258). */
export interface ValueAndTimestamp<V> {
  value: V;
  timestamp: number;
}

export type TimestampedKeyValueStore<K, V> = KeyValueStore<K, ValueAndTimestamp<V>>;

/** Which engine holds a store's bytes. */
export type StoreEngine = 'in-memory' | 'persistent';

/** How to build one store per task; what Topology.addStateStore takes. */
export class StoreBuilder<K = unknown, V = unknown> {
  loggingEnabled = true;
  logConfig: Record<string, string> = {};
  cachingEnabled = false;
  /** A window store: the size of its windows and how long it keeps them (both ms); null for key-value stores. */
  window: { sizeMs: number; retentionMs: number; retainDuplicates?: boolean } | null = null;
  /** The buffer of a suppress() (state/suppress-buffer.ts), logged in Kafka's suppress changelog format. */
  suppressBuffer = false;
  /** A session store (session windows); null for other stores. */
  session: { retentionMs: number } | null = null;
  /**
   * Serdes made from the configured defaults at task creation, for stores whose keys or values wrap the user's
   * (the outer-join buffer of a stream-stream join); takes precedence over keySerde and valueSerde.
   */
  serdesFrom:
    | ((
        defaultKey: Serde<unknown>,
        defaultValue: Serde<unknown>,
      ) => { key: Serde<unknown>; value: Serde<unknown> })
    | null = null;

  constructor(
    readonly name: string,
    readonly engine: StoreEngine,
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    /** Values stored with their record timestamp (the DSL's stores). */
    readonly timestamped: boolean,
  ) {}

  withLoggingEnabled(config: Record<string, string> = {}): this {
    this.loggingEnabled = true;
    this.logConfig = { ...config };
    return this;
  }

  withLoggingDisabled(): this {
    this.loggingEnabled = false;
    return this;
  }

  withCachingEnabled(): this {
    this.cachingEnabled = true;
    return this;
  }

  withCachingDisabled(): this {
    this.cachingEnabled = false;
    return this;
  }
}

/** A named store of an engine, before serdes are given (Kafka's KeyValueBytesStoreSupplier). */
export interface KeyValueBytesStoreSupplier {
  readonly name: string;
  readonly engine: StoreEngine;
}

/** A named window store of an engine, before serdes are given (Kafka's WindowBytesStoreSupplier). */
export interface WindowBytesStoreSupplier {
  readonly name: string;
  readonly engine: StoreEngine;
  readonly retentionPeriodMs: number;
  readonly windowSizeMs: number;
  readonly retainDuplicates: boolean;
}

function windowStoreSupplier(
  name: string,
  engine: StoreEngine,
  retentionPeriodMs: number,
  windowSizeMs: number,
  retainDuplicates: boolean,
): WindowBytesStoreSupplier {
  if (!(retentionPeriodMs >= 0)) throw new Error('retentionPeriod cannot be negative');
  if (!(windowSizeMs >= 0)) throw new Error('windowSize cannot be negative');
  if (windowSizeMs > retentionPeriodMs)
    throw new Error(
      `The retention period of the window store ${name} must be no smaller than its window size. Got size=[${windowSizeMs}], retention=[${retentionPeriodMs}]`,
    );
  return { name, engine, retentionPeriodMs, windowSizeMs, retainDuplicates };
}

/** A named session store of an engine, before serdes are given (Kafka's SessionBytesStoreSupplier). */
export interface SessionBytesStoreSupplier {
  readonly name: string;
  readonly engine: StoreEngine;
  readonly retentionPeriodMs: number;
}

function sessionStoreSupplier(
  name: string,
  engine: StoreEngine,
  retentionPeriodMs: number,
): SessionBytesStoreSupplier {
  if (!(retentionPeriodMs >= 0)) throw new Error('retentionPeriod cannot be negative');
  return { name, engine, retentionPeriodMs };
}

/** Kafka's Stores factory. */
export const Stores = {
  persistentKeyValueStore: (name: string): KeyValueBytesStoreSupplier => ({ name, engine: 'persistent' }),
  persistentTimestampedKeyValueStore: (name: string): KeyValueBytesStoreSupplier => ({
    name,
    engine: 'persistent',
  }),
  inMemoryKeyValueStore: (name: string): KeyValueBytesStoreSupplier => ({ name, engine: 'in-memory' }),
  keyValueStoreBuilder: <K, V>(
    supplier: KeyValueBytesStoreSupplier,
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
  ): StoreBuilder<K, V> => new StoreBuilder(supplier.name, supplier.engine, keySerde, valueSerde, false),
  timestampedKeyValueStoreBuilder: <K, V>(
    supplier: KeyValueBytesStoreSupplier,
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
  ): StoreBuilder<K, V> => new StoreBuilder(supplier.name, supplier.engine, keySerde, valueSerde, true),
  persistentWindowStore: (
    name: string,
    retentionPeriodMs: number,
    windowSizeMs: number,
    retainDuplicates: boolean,
  ): WindowBytesStoreSupplier =>
    windowStoreSupplier(name, 'persistent', retentionPeriodMs, windowSizeMs, retainDuplicates),
  persistentTimestampedWindowStore: (
    name: string,
    retentionPeriodMs: number,
    windowSizeMs: number,
    retainDuplicates: boolean,
  ): WindowBytesStoreSupplier =>
    windowStoreSupplier(name, 'persistent', retentionPeriodMs, windowSizeMs, retainDuplicates),
  inMemoryWindowStore: (
    name: string,
    retentionPeriodMs: number,
    windowSizeMs: number,
    retainDuplicates: boolean,
  ): WindowBytesStoreSupplier =>
    windowStoreSupplier(name, 'in-memory', retentionPeriodMs, windowSizeMs, retainDuplicates),
  /**
   * A window store of values with their timestamps (a TimestampedWindowStore: put(key, { value, timestamp },
   * windowStart), fetch, fetchRange, all), as the DSL's windowed aggregations keep. Brook has no window store
   * of plain values (Kafka's windowStoreBuilder), and keeps one value per key and window (no retainDuplicates).
   */
  timestampedWindowStoreBuilder: <K, V>(
    supplier: WindowBytesStoreSupplier,
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
  ): StoreBuilder<K, V> => {
    if (supplier.retainDuplicates)
      throw new Error(
        `window store ${supplier.name}: Brook's Processor API window stores keep one value per key and window (retainDuplicates is not supported)`,
      );
    const builder = new StoreBuilder(supplier.name, supplier.engine, keySerde, valueSerde, true);
    builder.window = { sizeMs: supplier.windowSizeMs, retentionMs: supplier.retentionPeriodMs };
    return builder;
  },
  persistentSessionStore: (name: string, retentionPeriodMs: number): SessionBytesStoreSupplier =>
    sessionStoreSupplier(name, 'persistent', retentionPeriodMs),
  inMemorySessionStore: (name: string, retentionPeriodMs: number): SessionBytesStoreSupplier =>
    sessionStoreSupplier(name, 'in-memory', retentionPeriodMs),
  /** A session store (SessionStore: put(key, start, end, value), fetchSession, findSessions, all), as the DSL's. */
  sessionStoreBuilder: <K, V>(
    supplier: SessionBytesStoreSupplier,
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
  ): StoreBuilder<K, V> => {
    const builder = new StoreBuilder(supplier.name, supplier.engine, keySerde, valueSerde, false);
    builder.session = { retentionMs: supplier.retentionPeriodMs };
    return builder;
  },
} as const;

/**
 * The retention of a window or session store: what Materialized.withRetention asked for, which may not be less
 * than the windows' size plus grace (Kafka's check), else what the windows need.
 */
export function storeRetentionMs(
  storeName: string,
  givenMs: number | null,
  neededMs: number,
  minimumMs: number,
): number {
  if (givenMs === null) return neededMs;
  if (givenMs < minimumMs)
    throw new Error(
      `The retention period of the window store ${storeName} must be no smaller than its window size plus the grace period. Got retention=[${givenMs}], size plus grace=[${minimumMs}]`,
    );
  return Math.max(givenMs, neededMs);
}
