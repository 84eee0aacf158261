// The record cache of a DSL window store (Kafka's CachingWindowStore): a windowed aggregation's writes stay in
// the cache, one entry per key and window, until the thread commits or its cache is full; only then does the
// window's latest aggregate go to the engine, the changelog and, through the flush listener, downstream as one
// change (the new aggregate and the one the store held before). Many records of a window between two commits so
// cost one changelog record and one downstream update, as in Kafka.
//
// Reads (the aggregation's own fetch, interactive queries) see the cache over the store. The cache is in memory
// only: what it holds at a crash was not committed either, so it is processed again.

import {
  type CacheBudget,
  type CacheRecordContext,
  type CapturedRecordContext,
  type FlushedRecord,
  RecordCache,
} from './record-cache.js';
import type { ValueAndTimestamp } from './stores.js';
import { TimestampedWindowStore, windowStoreKey } from './window-store.js';

interface DirtyWindow<K, V> {
  key: K;
  keyBytes: Buffer;
  windowStartMs: number;
  value: ValueAndTimestamp<V> | null;
  /** The timestamp of the record that wrote the entry: a null entry's changelog record's when written through. */
  recordTimestamp: number;
}

/** Hears a window as it leaves the cache; `written` is its last writer's timestamp and headers. */
export type WindowCacheFlushListener<K, V> = (
  key: K,
  windowStartMs: number,
  newValue: ValueAndTimestamp<V> | null,
  oldValue: ValueAndTimestamp<V> | null,
  written: FlushedRecord,
) => void;

export class CachingTimestampedWindowStore<K, V> extends TimestampedWindowStore<K, V> {
  /** Keyed by the latin1 of the window store key; null until the runtime turns caching on. */
  private cache: RecordCache<DirtyWindow<K, V>> | null = null;
  private listener: WindowCacheFlushListener<K, V> | null = null;

  enableCache(budget: CacheBudget, recordContext: CacheRecordContext | null = null): void {
    this.cache = new RecordCache(budget, (d, context) => this.write(d, context), recordContext);
  }

  get cachingEnabled(): boolean {
    return this.cache !== null;
  }

  setFlushListener(listener: WindowCacheFlushListener<K, V>): void {
    this.listener = listener;
  }

  private serializedKey(key: K): Buffer {
    const b = this.o.keySerde.serialize(this.o.serdeTopic, key);
    if (b === null) throw new Error(`store ${this.name}: a key may not serialize to null`);
    return b;
  }

  override fetch(key: K, windowStartMs: number): ValueAndTimestamp<V> | null {
    if (this.cache !== null) {
      const d = this.cache.get(windowStoreKey(this.serializedKey(key), windowStartMs).toString('latin1'));
      if (d !== undefined) return d.value;
    }
    return super.fetch(key, windowStartMs);
  }

  override put(key: K, value: ValueAndTimestamp<V> | null, windowStartMs: number): void {
    if (this.cache === null) {
      super.put(key, value, windowStartMs);
      return;
    }
    const keyBytes = this.serializedKey(key);
    const id = windowStoreKey(keyBytes, windowStartMs).toString('latin1');
    const valueBytes =
      value === null ? 0 : (this.o.valueSerde.serialize(this.o.serdeTopic, value.value)?.length ?? 0);
    const recordTimestamp = this.o.recordTimestamp();
    this.cache.put(id, { key, keyBytes, windowStartMs, value, recordTimestamp }, valueBytes);
  }

  private write(d: DirtyWindow<K, V>, context: CapturedRecordContext): void {
    const old = super.fetch(d.key, d.windowStartMs);
    if (old === null && d.value === null) return;
    this.putWritten(d.key, d.value, d.windowStartMs, d.recordTimestamp);
    this.listener?.(d.key, d.windowStartMs, d.value, old, {
      timestamp: d.recordTimestamp,
      headers: context.headers,
    });
  }

  /** Writes every cached window through, oldest first, each forwarded through the flush listener. */
  flushCache(): void {
    this.cache?.flush();
  }

  override flush(): void {
    this.flushCache();
    super.flush();
  }

  override fetchRange(
    key: K,
    fromMs: number,
    toMs: number,
  ): { windowStartMs: number; value: ValueAndTimestamp<V> }[] {
    const stored = super.fetchRange(key, fromMs, toMs);
    if (this.cache === null || this.cache.size === 0) return stored;
    const keyBytes = this.serializedKey(key);
    const merged = new Map<number, ValueAndTimestamp<V> | null>();
    for (const w of stored) merged.set(w.windowStartMs, w.value);
    for (const [, d] of this.cache.entries())
      if (d.keyBytes.equals(keyBytes) && d.windowStartMs >= fromMs && d.windowStartMs <= toMs)
        merged.set(d.windowStartMs, d.value);
    return [...merged]
      .filter((e): e is [number, ValueAndTimestamp<V>] => e[1] !== null)
      .sort((a, b) => a[0] - b[0])
      .map(([windowStartMs, value]) => ({ windowStartMs, value }));
  }

  override all(): { key: K; windowStartMs: number; value: ValueAndTimestamp<V> }[] {
    const stored = super.all();
    if (this.cache === null || this.cache.size === 0) return stored;
    const entries = new Map<
      string,
      { order: Buffer; entry: { key: K; windowStartMs: number; value: ValueAndTimestamp<V> } | null }
    >();
    for (const e of stored) {
      const order = windowStoreKey(this.serializedKey(e.key), e.windowStartMs);
      entries.set(order.toString('latin1'), { order, entry: e });
    }
    for (const [id, d] of this.cache.entries())
      entries.set(id, {
        order: windowStoreKey(d.keyBytes, d.windowStartMs),
        entry: d.value === null ? null : { key: d.key, windowStartMs: d.windowStartMs, value: d.value },
      });
    return [...entries.values()]
      .filter((e) => e.entry !== null)
      .sort((a, b) => Buffer.compare(a.order, b.order))
      .map((e) => e.entry!);
  }

  override close(): void {
    // Dropped, not written: close follows a commit (which flushed) or a failure (whose work is redone).
    this.cache?.drop();
    super.close();
  }
}
