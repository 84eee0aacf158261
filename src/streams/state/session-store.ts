// A session store: one aggregate per key and session, over a bytes engine. The engine key is Kafka's session
// key (SessionKeySchema): the serialized key, the session end as an 8-byte big-endian long, then the session
// start, so a key's sessions are ordered by end time. Values are plain (session stores are not timestamped);
// the changelog record carries the same key and value, with the timestamp of the record being processed (Kafka's
// ChangeLoggingSessionBytesStore logs context.timestamp()), not the session end: a record merged into a session
// that ends later, and the tombstone of a session merged away, carry the merging record's time. That timestamp
// is what the broker's time retention of the changelog (compact,delete) reads; restoration places a record by
// the session end in its key, never by its timestamp.

import type { Serde } from '../serdes.js';
import type { BytesKeyValueStore } from './bytes-store.js';
import type { ChangelogWriter } from './store-stack.js';
import type { StateStore } from './stores.js';

const SUFFIX_BYTES = 16;
const MAX_TIME = Number.MAX_SAFE_INTEGER;

export function sessionStoreKey(key: Buffer, startMs: number, endMs: number): Buffer {
  const out = Buffer.allocUnsafe(key.length + SUFFIX_BYTES);
  key.copy(out, 0);
  out.writeBigInt64BE(BigInt(endMs), key.length);
  out.writeBigInt64BE(BigInt(startMs), key.length + 8);
  return out;
}

export interface SessionStoreOptions<K, V> {
  name: string;
  engine: BytesKeyValueStore;
  changelog: ChangelogWriter | null;
  serdeTopic: string;
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
  /** The timestamp of the record being processed: the changelog record's. */
  recordTimestamp: () => number;
}

export interface StoredSession<K, V> {
  key: K;
  startMs: number;
  endMs: number;
  value: V;
}

export class SessionStore<K, V> implements StateStore {
  readonly name: string;

  constructor(protected readonly o: SessionStoreOptions<K, V>) {
    this.name = o.name;
  }

  persistent(): boolean {
    return this.o.engine.persistent;
  }

  protected keyBytes(key: K): Buffer {
    const b = this.o.keySerde.serialize(this.o.serdeTopic, key);
    if (b === null) throw new Error(`store ${this.name}: a key may not serialize to null`);
    return b;
  }

  /** Writes a session's aggregate; null removes the session. */
  put(key: K, startMs: number, endMs: number, value: V | null): void {
    this.putWritten(key, startMs, endMs, value, this.o.recordTimestamp());
  }

  /**
   * Puts a session written by a record of `recordTimestamp` (the current record's for a put; a record cache's
   * entry keeps the timestamp of the record that wrote it until it is written through, as Kafka's LRUCacheEntry
   * keeps its record context).
   */
  protected putWritten(
    key: K,
    startMs: number,
    endMs: number,
    value: V | null,
    recordTimestamp: number,
  ): void {
    const k = sessionStoreKey(this.keyBytes(key), startMs, endMs);
    if (value === null) {
      this.o.engine.put(k, null);
      this.o.changelog?.log(k, null, recordTimestamp);
      return;
    }
    const bytes = this.o.valueSerde.serialize(this.o.serdeTopic, value);
    if (bytes === null) throw new Error(`store ${this.name}: a value may not serialize to null`);
    this.o.engine.put(k, bytes);
    this.o.changelog?.log(k, bytes, recordTimestamp);
  }

  /**
   * Removes a session (Kafka's SessionStore.remove): unlike a null put, never a dropped record when the session
   * has expired. The changelog gets a tombstone.
   */
  remove(key: K, startMs: number, endMs: number): void {
    const k = sessionStoreKey(this.keyBytes(key), startMs, endMs);
    if (this.o.engine.remove !== undefined) this.o.engine.remove(k);
    else this.o.engine.put(k, null);
    this.o.changelog?.log(k, null, this.o.recordTimestamp());
  }

  /** The key's sessions that end at or after `earliestEndMs` and start at or before `latestStartMs`. */
  findSessions(key: K, earliestEndMs: number, latestStartMs: number): StoredSession<K, V>[] {
    const kb = this.keyBytes(key);
    return this.o.engine
      .range(sessionStoreKey(kb, 0, Math.max(0, earliestEndMs)), sessionStoreKey(kb, MAX_TIME, MAX_TIME))
      .filter((e) => e.key.length === kb.length + SUFFIX_BYTES)
      .map((e) => this.decode(key, e.key, e.value, kb.length))
      .filter((s) => s.startMs <= latestStartMs);
  }

  /** Every session of the key, by end time (Kafka's ReadOnlySessionStore.fetch). */
  fetch(key: K): StoredSession<K, V>[] {
    return this.findSessions(key, 0, MAX_TIME);
  }

  /** One session's aggregate, or null. */
  fetchSession(key: K, startMs: number, endMs: number): V | null {
    const v = this.o.engine.get(sessionStoreKey(this.keyBytes(key), startMs, endMs));
    return v === null ? null : (this.o.valueSerde.deserialize(this.o.serdeTopic, v) as V);
  }

  all(): StoredSession<K, V>[] {
    return this.o.engine.range(null, null).map((e) => {
      const keyLength = e.key.length - SUFFIX_BYTES;
      const key = this.o.keySerde.deserialize(this.o.serdeTopic, e.key.subarray(0, keyLength)) as K;
      return this.decode(key, e.key, e.value, keyLength);
    });
  }

  private decode(key: K, stored: Buffer, value: Buffer, keyLength: number): StoredSession<K, V> {
    return {
      key,
      endMs: Number(stored.readBigInt64BE(keyLength)),
      startMs: Number(stored.readBigInt64BE(keyLength + 8)),
      value: this.o.valueSerde.deserialize(this.o.serdeTopic, value) as V,
    };
  }

  flush(): void {
    this.o.engine.flush();
  }

  close(): void {
    this.o.engine.close();
  }
}
