// The record cache of a DSL key-value store (Kafka's CachingKeyValueStore over its ThreadCache): writes stay in
// the cache, one entry per key, until the cache is flushed, at each commit or when the thread's cache is full
// (the store that writes evicts its least recently written entries). Only then does the latest value go to the
// store's engine and changelog and, through the flush listener, downstream as one change (the new value and the
// value the store held before). So a key updated many times between commits costs one changelog record and one
// downstream update, as in Kafka with cache.max.bytes.buffering / statestore.cache.max.bytes.
//
// Reads see the cache first. The cache is in memory only: what it holds when an instance crashes was not
// committed either (the input offsets are committed after the flush), so it is processed again.

import type { KeyValue } from '../key-value.js';
import { type CacheBudget, type CacheRecordContext, RecordCache } from './record-cache.js';
import { TimestampedStore } from './store-stack.js';
import type { ValueAndTimestamp } from './stores.js';

interface Dirty<K, V> {
  key: K;
  keyBytes: Buffer;
  value: ValueAndTimestamp<V> | null;
}

export type CacheFlushListener<K, V> = (
  key: K,
  newValue: ValueAndTimestamp<V> | null,
  oldValue: ValueAndTimestamp<V> | null,
) => void;

export class CachingTimestampedStore<K, V> extends TimestampedStore<K, V> {
  /** Keyed by the latin1 of the key bytes; null until the runtime turns caching on. */
  private cache: RecordCache<Dirty<K, V>> | null = null;
  private listener: CacheFlushListener<K, V> | null = null;

  /** Turns the cache on (the runtime does, when the store asks for caching and the budget is not zero). */
  enableCache(budget: CacheBudget, recordContext: CacheRecordContext | null = null): void {
    this.cache = new RecordCache(budget, (d) => this.write(d), recordContext);
  }

  get cachingEnabled(): boolean {
    return this.cache !== null;
  }

  /** Who hears each entry as it leaves the cache (the processor that owns the store, to forward it). */
  setFlushListener(listener: CacheFlushListener<K, V>): void {
    this.listener = listener;
  }

  override get(key: K): ValueAndTimestamp<V> | null {
    const d = this.cache?.get(this.keyBytes(key).toString('latin1'));
    return d !== undefined ? d.value : super.get(key);
  }

  override put(key: K, value: ValueAndTimestamp<V> | null): void {
    if (this.cache === null) {
      super.put(key, value);
      return;
    }
    const keyBytes = this.keyBytes(key);
    const valueBytes =
      value === null ? 0 : (this.o.valueSerde.serialize(this.o.serdeTopic, value.value)?.length ?? 0);
    this.cache.put(keyBytes.toString('latin1'), { key, keyBytes, value }, valueBytes);
  }

  private write(d: Dirty<K, V>): void {
    const old = super.get(d.key);
    if (old === null && d.value === null) return; // created and deleted within the cache: nothing happened
    super.put(d.key, d.value);
    this.listener?.(d.key, d.value, old);
  }

  /** Writes every cached entry through, oldest first, and forwards each through the flush listener. */
  flushCache(): void {
    this.cache?.flush();
  }

  override flush(): void {
    this.flushCache();
    super.flush();
  }

  override range(from: K, to: K): KeyValue<K, ValueAndTimestamp<V>>[] {
    const lo = this.keyBytes(from);
    const hi = this.keyBytes(to);
    return this.overlay(
      super.range(from, to),
      (b) => Buffer.compare(b, lo) >= 0 && Buffer.compare(b, hi) <= 0,
    );
  }

  override all(): KeyValue<K, ValueAndTimestamp<V>>[] {
    return this.overlay(super.all(), () => true);
  }

  /** Stored entries with the cached writes laid over them, in key-byte order. */
  private overlay(
    stored: KeyValue<K, ValueAndTimestamp<V>>[],
    inRange: (keyBytes: Buffer) => boolean,
  ): KeyValue<K, ValueAndTimestamp<V>>[] {
    if (this.cache === null || this.cache.size === 0) return stored;
    const merged = new Map<string, { keyBytes: Buffer; entry: KeyValue<K, ValueAndTimestamp<V>> | null }>();
    for (const e of stored) {
      const keyBytes = this.keyBytes(e.key);
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

  override approximateNumEntries(): number {
    return super.approximateNumEntries() + (this.cache?.size ?? 0);
  }

  override close(): void {
    // Dropped, not written: close follows a commit (which flushed) or a failure (whose work is redone).
    this.cache?.drop();
    super.close();
  }
}
