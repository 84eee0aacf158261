// The record cache of a key-value store (Kafka's CachingKeyValueStore over its ThreadCache): writes stay in the
// cache, one entry per key, until the cache is flushed, at each commit or when the thread's cache is full (the
// store that writes evicts its least recently written entries). Only then does the latest value go to the store's
// engine and changelog and, through the flush listener, downstream as one change (the new value and the value the
// store held before). So a key updated many times between commits costs one changelog record and one downstream
// update, as in Kafka with cache.max.bytes.buffering / statestore.cache.max.bytes.
//
// Two stores use it: the DSL's timestamped stores (aggregations, tables; their processors listen to forward) and
// the Processor API's plain key-value stores whose builder asked for withCachingEnabled() (nobody listens: as in
// Kafka, the cache only saves changelog records and engine writes). A Processor API timestamped store is the
// first kind without a listener. Both keep each entry's record timestamp, which a plain store's changelog record
// (and any store's tombstone) carries when the entry is written through, as Kafka's entries keep their context.
//
// Reads see the cache first. The cache is in memory only: what it holds when an instance crashes was not
// committed either (the input offsets are committed after the flush), so it is processed again.

import type { KeyValue } from '../key-value.js';
import {
  type CacheBudget,
  type CacheRecordContext,
  type CapturedRecordContext,
  type FlushedRecord,
  RecordCache,
} from './record-cache.js';
import { PlainKeyValueStore, TimestampedStore } from './store-stack.js';
import type { ValueAndTimestamp } from './stores.js';

interface Dirty<K, S> {
  key: K;
  keyBytes: Buffer;
  value: S | null;
  /** The timestamp of the record that wrote the entry. */
  timestamp: number;
}

/** Hears an entry as it leaves the cache; `written` is its last writer's timestamp and headers. */
export type CacheFlushListener<K, V> = (
  key: K,
  newValue: ValueAndTimestamp<V> | null,
  oldValue: ValueAndTimestamp<V> | null,
  written: FlushedRecord,
) => void;

/** What the cache needs of the typed store under it. */
interface StoreBelow<K, S> {
  keyBytes(key: K): Buffer;
  /** The serialized size of a value, counted against the budget. */
  valueBytes(value: S): number;
  get(key: K): S | null;
  put(key: K, value: S | null, recordTimestamp: number): void;
  range(from: K, to: K): KeyValue<K, S>[];
  all(): KeyValue<K, S>[];
  approximateNumEntries(): number;
  recordTimestamp(): number;
}

/** The cache of one key-value store laid over the store below it; the store classes below delegate to it. */
class KeyValueCache<K, S> {
  /** Keyed by the latin1 of the key bytes; null until the runtime turns caching on. */
  private cache: RecordCache<Dirty<K, S>> | null = null;
  listener: ((key: K, newValue: S | null, oldValue: S | null, written: FlushedRecord) => void) | null = null;

  constructor(private readonly below: StoreBelow<K, S>) {}

  enable(budget: CacheBudget, recordContext: CacheRecordContext | null): void {
    this.cache = new RecordCache(budget, (d, context) => this.write(d, context), recordContext);
  }

  get enabled(): boolean {
    return this.cache !== null;
  }

  get(key: K): S | null {
    const d = this.cache?.get(this.below.keyBytes(key).toString('latin1'));
    return d !== undefined ? d.value : this.below.get(key);
  }

  put(key: K, value: S | null): void {
    if (this.cache === null) {
      this.below.put(key, value, this.below.recordTimestamp());
      return;
    }
    const keyBytes = this.below.keyBytes(key);
    const valueBytes = value === null ? 0 : this.below.valueBytes(value);
    this.cache.put(
      keyBytes.toString('latin1'),
      { key, keyBytes, value, timestamp: this.below.recordTimestamp() },
      valueBytes,
    );
  }

  private write(d: Dirty<K, S>, context: CapturedRecordContext): void {
    const old = this.below.get(d.key);
    if (old === null && d.value === null) return; // created and deleted within the cache: nothing happened
    this.below.put(d.key, d.value, d.timestamp);
    this.listener?.(d.key, d.value, old, { timestamp: d.timestamp, headers: context.headers });
  }

  flush(): void {
    this.cache?.flush();
  }

  range(from: K, to: K): KeyValue<K, S>[] {
    const lo = this.below.keyBytes(from);
    const hi = this.below.keyBytes(to);
    return this.overlay(
      this.below.range(from, to),
      (b) => Buffer.compare(b, lo) >= 0 && Buffer.compare(b, hi) <= 0,
    );
  }

  all(): KeyValue<K, S>[] {
    return this.overlay(this.below.all(), () => true);
  }

  /** Stored entries with the cached writes laid over them, in key-byte order. */
  private overlay(stored: KeyValue<K, S>[], inRange: (keyBytes: Buffer) => boolean): KeyValue<K, S>[] {
    if (this.cache === null || this.cache.size === 0) return stored;
    const merged = new Map<string, { keyBytes: Buffer; entry: KeyValue<K, S> | null }>();
    for (const e of stored) {
      const keyBytes = this.below.keyBytes(e.key);
      merged.set(keyBytes.toString('latin1'), { keyBytes, entry: e });
    }
    for (const [id, d] of this.cache.entries()) {
      if (!inRange(d.keyBytes)) continue;
      merged.set(id, {
        keyBytes: d.keyBytes,
        entry: d.value === null ? null : { key: d.key, value: d.value },
      });
    }
    return [...merged.values()]
      .filter((m) => m.entry !== null)
      .sort((a, b) => Buffer.compare(a.keyBytes, b.keyBytes))
      .map((m) => m.entry!);
  }

  approximateNumEntries(): number {
    return this.below.approximateNumEntries() + (this.cache?.size ?? 0);
  }

  /** Dropped, not written: close follows a commit (which flushed) or a failure (whose work is redone). */
  drop(): void {
    this.cache?.drop();
  }
}

/** A timestamped store (the DSL's, or a Processor API timestampedKeyValueStoreBuilder's) behind a record cache. */
export class CachingTimestampedStore<K, V> extends TimestampedStore<K, V> {
  private readonly cache = new KeyValueCache<K, ValueAndTimestamp<V>>({
    keyBytes: (key) => this.keyBytes(key),
    valueBytes: (value) => this.o.valueSerde.serialize(this.o.serdeTopic, value.value)?.length ?? 0,
    get: (key) => super.get(key),
    put: (key, value, timestamp) => this.putWritten(key, value, timestamp),
    range: (from, to) => super.range(from, to),
    all: () => super.all(),
    approximateNumEntries: () => super.approximateNumEntries(),
    recordTimestamp: () => this.o.recordTimestamp(),
  });

  /** Turns the cache on (the runtime does, when the store asks for caching and the budget is not zero). */
  enableCache(budget: CacheBudget, recordContext: CacheRecordContext | null = null): void {
    this.cache.enable(budget, recordContext);
  }

  get cachingEnabled(): boolean {
    return this.cache.enabled;
  }

  /** Who hears each entry as it leaves the cache (the processor that owns the store, to forward it). */
  setFlushListener(listener: CacheFlushListener<K, V>): void {
    this.cache.listener = listener;
  }

  override get(key: K): ValueAndTimestamp<V> | null {
    return this.cache.get(key);
  }

  override put(key: K, value: ValueAndTimestamp<V> | null): void {
    this.cache.put(key, value);
  }

  /** Writes every cached entry through, oldest first, and forwards each through the flush listener. */
  flushCache(): void {
    this.cache.flush();
  }

  override flush(): void {
    this.cache.flush();
    super.flush();
  }

  override range(from: K, to: K): KeyValue<K, ValueAndTimestamp<V>>[] {
    return this.cache.range(from, to);
  }

  override all(): KeyValue<K, ValueAndTimestamp<V>>[] {
    return this.cache.all();
  }

  override approximateNumEntries(): number {
    return this.cache.approximateNumEntries();
  }

  override close(): void {
    this.cache.drop();
    super.close();
  }
}

/** A Processor API key-value store (keyValueStoreBuilder(...).withCachingEnabled()) behind a record cache. */
export class CachingKeyValueStore<K, V> extends PlainKeyValueStore<K, V> {
  private readonly cache = new KeyValueCache<K, V>({
    keyBytes: (key) => this.keyBytes(key),
    valueBytes: (value) => this.o.valueSerde.serialize(this.o.serdeTopic, value)?.length ?? 0,
    get: (key) => super.get(key),
    put: (key, value, timestamp) => this.putWritten(key, value, timestamp),
    range: (from, to) => super.range(from, to),
    all: () => super.all(),
    approximateNumEntries: () => super.approximateNumEntries(),
    recordTimestamp: () => this.o.recordTimestamp(),
  });

  /** Turns the cache on (the runtime does, when the builder asks for caching and the budget is not zero). */
  enableCache(budget: CacheBudget, recordContext: CacheRecordContext | null = null): void {
    this.cache.enable(budget, recordContext);
  }

  get cachingEnabled(): boolean {
    return this.cache.enabled;
  }

  override get(key: K): V | null {
    return this.cache.get(key);
  }

  override put(key: K, value: V | null): void {
    this.cache.put(key, value);
  }

  /** Writes every cached entry through to the engine and the changelog, oldest first. */
  flushCache(): void {
    this.cache.flush();
  }

  override flush(): void {
    this.cache.flush();
    super.flush();
  }

  override range(from: K, to: K): KeyValue<K, V>[] {
    return this.cache.range(from, to);
  }

  override all(): KeyValue<K, V>[] {
    return this.cache.all();
  }

  override approximateNumEntries(): number {
    return this.cache.approximateNumEntries();
  }

  override close(): void {
    this.cache.drop();
    super.close();
  }
}
