// The record cache of a DSL window store (Kafka's CachingWindowStore): a windowed aggregation's writes stay in
// the cache, one entry per key and window, until the thread commits or its cache is full; only then does the
// window's latest aggregate go to the engine, the changelog and, through the flush listener, downstream as one
// change (the new aggregate and the one the store held before). Many records of a window between two commits so
// cost one changelog record and one downstream update, as in Kafka.
//
// Reads (the aggregation's own fetch, interactive queries) see the cache over the store. The cache is in memory
// only: what it holds at a crash was not committed either, so it is processed again.

import { type CacheBudget, ENTRY_OVERHEAD_BYTES } from './caching-store.js';
import type { ValueAndTimestamp } from './stores.js';
import { TimestampedWindowStore, windowStoreKey } from './window-store.js';

interface DirtyWindow<K, V> {
  key: K;
  keyBytes: Buffer;
  windowStartMs: number;
  value: ValueAndTimestamp<V> | null;
  sizeBytes: number;
}

export type WindowCacheFlushListener<K, V> = (
  key: K,
  windowStartMs: number,
  newValue: ValueAndTimestamp<V> | null,
  oldValue: ValueAndTimestamp<V> | null,
) => void;

export class CachingTimestampedWindowStore<K, V> extends TimestampedWindowStore<K, V> {
  /** latin1 of the window store key -> the window's latest write, least recently written first. */
  private readonly dirty = new Map<string, DirtyWindow<K, V>>();
  private listener: WindowCacheFlushListener<K, V> | null = null;
  private budget: CacheBudget | null = null;

  enableCache(budget: CacheBudget): void {
    this.budget = budget;
  }

  get cachingEnabled(): boolean {
    return this.budget !== null;
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
    if (this.budget !== null) {
      const d = this.dirty.get(windowStoreKey(this.serializedKey(key), windowStartMs).toString('latin1'));
      if (d !== undefined) return d.value;
    }
    return super.fetch(key, windowStartMs);
  }

  override put(key: K, value: ValueAndTimestamp<V> | null, windowStartMs: number): void {
    const budget = this.budget;
    if (budget === null) {
      super.put(key, value, windowStartMs);
      return;
    }
    const keyBytes = this.serializedKey(key);
    const id = windowStoreKey(keyBytes, windowStartMs).toString('latin1');
    const previous = this.dirty.get(id);
    if (previous !== undefined) {
      budget.usedBytes -= previous.sizeBytes;
      this.dirty.delete(id); // re-inserted below: most recently written last
    }
    const valueBytes =
      value === null ? 0 : (this.o.valueSerde.serialize(this.o.serdeTopic, value.value)?.length ?? 0);
    const sizeBytes = id.length + valueBytes + ENTRY_OVERHEAD_BYTES;
    this.dirty.set(id, { key, keyBytes, windowStartMs, value, sizeBytes });
    budget.usedBytes += sizeBytes;
    while (budget.usedBytes > budget.maxBytes && this.dirty.size > 0) {
      const [oldestId, oldest] = this.dirty.entries().next().value as [string, DirtyWindow<K, V>];
      this.dirty.delete(oldestId);
      budget.usedBytes -= oldest.sizeBytes;
      this.write(oldest);
    }
  }

  private write(d: DirtyWindow<K, V>): void {
    const old = super.fetch(d.key, d.windowStartMs);
    if (old === null && d.value === null) return;
    super.put(d.key, d.value, d.windowStartMs);
    this.listener?.(d.key, d.windowStartMs, d.value, old);
  }

  /** Writes every cached window through, oldest first, each forwarded through the flush listener. */
  flushCache(): void {
    if (this.dirty.size === 0) return;
    const entries = [...this.dirty.values()];
    this.dirty.clear();
    for (const d of entries) {
      this.budget!.usedBytes -= d.sizeBytes;
      this.write(d);
    }
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
    if (this.dirty.size === 0) return stored;
    const keyBytes = this.serializedKey(key);
    const merged = new Map<number, ValueAndTimestamp<V> | null>();
    for (const w of stored) merged.set(w.windowStartMs, w.value);
    for (const d of this.dirty.values())
      if (d.keyBytes.equals(keyBytes) && d.windowStartMs >= fromMs && d.windowStartMs <= toMs)
        merged.set(d.windowStartMs, d.value);
    return [...merged]
      .filter((e): e is [number, ValueAndTimestamp<V>] => e[1] !== null)
      .sort((a, b) => a[0] - b[0])
      .map(([windowStartMs, value]) => ({ windowStartMs, value }));
  }

  override all(): { key: K; windowStartMs: number; value: ValueAndTimestamp<V> }[] {
    const stored = super.all();
    if (this.dirty.size === 0) return stored;
    const entries = new Map<
      string,
      { order: Buffer; entry: { key: K; windowStartMs: number; value: ValueAndTimestamp<V> } | null }
    >();
    for (const e of stored) {
      const order = windowStoreKey(this.serializedKey(e.key), e.windowStartMs);
      entries.set(order.toString('latin1'), { order, entry: e });
    }
    for (const [id, d] of this.dirty)
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
    if (this.budget !== null) for (const d of this.dirty.values()) this.budget.usedBytes -= d.sizeBytes;
    this.dirty.clear();
    super.close();
  }
}
