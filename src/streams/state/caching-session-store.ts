// The record cache of a session aggregation's store (Kafka's CachingSessionStore): writes stay in the cache, one
// entry per key and session, until the thread commits or its cache is full; only then does a session's latest
// aggregate (or its removal, when a later record merged it into a bigger session) go to the engine, the
// changelog and, through the flush listener, downstream as one change. A session created and merged away between
// two commits never leaves the cache: nothing of it reaches the changelog or downstream, as in Kafka.
//
// Reads (the aggregation's own findSessions, interactive queries) see the cache over the store. The cache is in
// memory only: what it holds at a crash was not committed either, so it is processed again.

import {
  type CacheBudget,
  type CacheRecordContext,
  type CapturedRecordContext,
  type FlushedRecord,
  RecordCache,
} from './record-cache.js';
import { SessionStore, type StoredSession, sessionStoreKey } from './session-store.js';

interface DirtySession<K, V> {
  key: K;
  keyBytes: Buffer;
  startMs: number;
  endMs: number;
  value: V | null;
  /** The timestamp of the record that wrote the entry: its changelog record's when written through. */
  recordTimestamp: number;
}

/** Hears a session as it leaves the cache; `written` is its last writer's timestamp and headers. */
export type SessionCacheFlushListener<K, V> = (
  key: K,
  startMs: number,
  endMs: number,
  newValue: V | null,
  oldValue: V | null,
  written: FlushedRecord,
) => void;

export class CachingSessionStore<K, V> extends SessionStore<K, V> {
  /** Keyed by the latin1 of the session store key; null until the runtime turns caching on. */
  private cache: RecordCache<DirtySession<K, V>> | null = null;
  private listener: SessionCacheFlushListener<K, V> | null = null;

  enableCache(budget: CacheBudget, recordContext: CacheRecordContext | null = null): void {
    this.cache = new RecordCache(budget, (d, context) => this.write(d, context), recordContext);
  }

  get cachingEnabled(): boolean {
    return this.cache !== null;
  }

  setFlushListener(listener: SessionCacheFlushListener<K, V>): void {
    this.listener = listener;
  }

  override put(key: K, startMs: number, endMs: number, value: V | null): void {
    if (this.cache === null) {
      super.put(key, startMs, endMs, value);
      return;
    }
    const keyBytes = this.keyBytes(key);
    const id = sessionStoreKey(keyBytes, startMs, endMs).toString('latin1');
    const valueBytes =
      value === null ? 0 : (this.o.valueSerde.serialize(this.o.serdeTopic, value)?.length ?? 0);
    const recordTimestamp = this.o.recordTimestamp();
    this.cache.put(id, { key, keyBytes, startMs, endMs, value, recordTimestamp }, valueBytes);
  }

  /** Kafka's CachingSessionStore.remove: a null put into the cache, written through as a put when evicted. */
  override remove(key: K, startMs: number, endMs: number): void {
    if (this.cache === null) super.remove(key, startMs, endMs);
    else this.put(key, startMs, endMs, null);
  }

  private write(d: DirtySession<K, V>, context: CapturedRecordContext): void {
    const old = super.fetchSession(d.key, d.startMs, d.endMs);
    if (old === null && d.value === null) return; // created and merged away within the cache
    this.putWritten(d.key, d.startMs, d.endMs, d.value, d.recordTimestamp);
    this.listener?.(d.key, d.startMs, d.endMs, d.value, old, {
      timestamp: d.recordTimestamp,
      headers: context.headers,
    });
  }

  /** Writes every cached session through, oldest first, each forwarded through the flush listener. */
  flushCache(): void {
    this.cache?.flush();
  }

  override flush(): void {
    this.flushCache();
    super.flush();
  }

  override fetchSession(key: K, startMs: number, endMs: number): V | null {
    if (this.cache !== null) {
      const d = this.cache.get(sessionStoreKey(this.keyBytes(key), startMs, endMs).toString('latin1'));
      if (d !== undefined) return d.value;
    }
    return super.fetchSession(key, startMs, endMs);
  }

  override findSessions(key: K, earliestEndMs: number, latestStartMs: number): StoredSession<K, V>[] {
    const stored = super.findSessions(key, earliestEndMs, latestStartMs);
    if (this.cache === null || this.cache.size === 0) return stored;
    const keyBytes = this.keyBytes(key);
    const merged = new Map<string, { order: Buffer; session: StoredSession<K, V> | null }>();
    for (const s of stored) {
      const order = sessionStoreKey(keyBytes, s.startMs, s.endMs);
      merged.set(order.toString('latin1'), { order, session: s });
    }
    for (const [id, d] of this.cache.entries()) {
      if (!d.keyBytes.equals(keyBytes) || d.endMs < earliestEndMs || d.startMs > latestStartMs) continue;
      merged.set(id, {
        order: sessionStoreKey(keyBytes, d.startMs, d.endMs),
        session: d.value === null ? null : { key, startMs: d.startMs, endMs: d.endMs, value: d.value },
      });
    }
    return [...merged.values()]
      .filter((m) => m.session !== null)
      .sort((a, b) => Buffer.compare(a.order, b.order))
      .map((m) => m.session!);
  }

  override all(): StoredSession<K, V>[] {
    const stored = super.all();
    if (this.cache === null || this.cache.size === 0) return stored;
    const merged = new Map<string, { order: Buffer; session: StoredSession<K, V> | null }>();
    for (const s of stored) {
      const order = sessionStoreKey(this.keyBytes(s.key), s.startMs, s.endMs);
      merged.set(order.toString('latin1'), { order, session: s });
    }
    for (const [id, d] of this.cache.entries())
      merged.set(id, {
        order: sessionStoreKey(d.keyBytes, d.startMs, d.endMs),
        session: d.value === null ? null : { key: d.key, startMs: d.startMs, endMs: d.endMs, value: d.value },
      });
    return [...merged.values()]
      .filter((m) => m.session !== null)
      .sort((a, b) => Buffer.compare(a.order, b.order))
      .map((m) => m.session!);
  }

  override close(): void {
    // Dropped, not written: close follows a commit (which flushed) or a failure (whose work is redone).
    this.cache?.drop();
    super.close();
  }
}
