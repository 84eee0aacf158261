// A window store: aggregates per key and window start, over a bytes engine. The engine key is Kafka's window
// store key (WindowKeySchema): the serialized key, the window start as an 8-byte big-endian long, and a 4-byte
// sequence number (0: Brook keeps one value per key and window, as aggregations need). The changelog record
// carries that same key, the plain serialized value, and the aggregate's timestamp as the record timestamp (a
// null put, which has no value timestamp, the timestamp of the record being processed: Kafka's
// ChangeLoggingTimestampedWindowBytesStore); the engine keeps the timestamp before the value (a timestamped
// window store, KIP-258).

import type { Serde } from '../serdes.js';
import type { BytesKeyValueStore } from './bytes-store.js';
import { type ChangelogWriter, timestampedStoredValue } from './store-stack.js';
import type { StateStore, ValueAndTimestamp } from './stores.js';

const SUFFIX_BYTES = 12;

export function windowStoreKey(key: Buffer, windowStartMs: number, sequence = 0): Buffer {
  const out = Buffer.allocUnsafe(key.length + SUFFIX_BYTES);
  key.copy(out, 0);
  out.writeBigInt64BE(BigInt(windowStartMs), key.length);
  out.writeUInt32BE(sequence >>> 0, key.length + 8);
  return out;
}

export interface WindowStoreOptions<K, V> {
  name: string;
  engine: BytesKeyValueStore;
  changelog: ChangelogWriter | null;
  serdeTopic: string;
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
  windowSizeMs: number;
  /** The timestamp of the record being processed: a null put's changelog record's. */
  recordTimestamp: () => number;
}

export class TimestampedWindowStore<K, V> implements StateStore {
  readonly name: string;

  constructor(protected readonly o: WindowStoreOptions<K, V>) {
    this.name = o.name;
  }

  get windowSizeMs(): number {
    return this.o.windowSizeMs;
  }

  persistent(): boolean {
    return this.o.engine.persistent;
  }

  private keyBytes(key: K): Buffer {
    const b = this.o.keySerde.serialize(this.o.serdeTopic, key);
    if (b === null) throw new Error(`store ${this.name}: a key may not serialize to null`);
    return b;
  }

  fetch(key: K, windowStartMs: number): ValueAndTimestamp<V> | null {
    const stored = this.o.engine.get(windowStoreKey(this.keyBytes(key), windowStartMs));
    return stored === null ? null : this.decode(stored);
  }

  put(key: K, value: ValueAndTimestamp<V> | null, windowStartMs: number): void {
    this.putWritten(key, value, windowStartMs, this.o.recordTimestamp());
  }

  /**
   * Puts a window written by a record of `recordTimestamp` (the current record's for a put; a record cache's entry
   * keeps the timestamp of the record that wrote it until it is written through). Only a null put logs it.
   */
  protected putWritten(
    key: K,
    value: ValueAndTimestamp<V> | null,
    windowStartMs: number,
    recordTimestamp: number,
  ): void {
    const k = windowStoreKey(this.keyBytes(key), windowStartMs);
    if (value === null) {
      this.o.engine.put(k, null);
      this.o.changelog?.log(k, null, recordTimestamp);
      return;
    }
    const bytes = this.o.valueSerde.serialize(this.o.serdeTopic, value.value);
    if (bytes === null) throw new Error(`store ${this.name}: a value may not serialize to null`);
    this.o.engine.put(k, timestampedStoredValue(bytes, value.timestamp));
    this.o.changelog?.log(k, bytes, value.timestamp);
  }

  /** The key's windows starting from `fromMs` to `toMs` inclusive, by start time. */
  fetchRange(key: K, fromMs: number, toMs: number): { windowStartMs: number; value: ValueAndTimestamp<V> }[] {
    const kb = this.keyBytes(key);
    return this.o.engine
      .range(windowStoreKey(kb, Math.max(0, fromMs)), windowStoreKey(kb, toMs))
      .filter((e) => e.key.length === kb.length + SUFFIX_BYTES)
      .map((e) => ({ windowStartMs: Number(e.key.readBigInt64BE(kb.length)), value: this.decode(e.value) }));
  }

  /** Every window of every key: [key, window start, value]. */
  all(): { key: K; windowStartMs: number; value: ValueAndTimestamp<V> }[] {
    return this.o.engine.range(null, null).map((e) => ({
      key: this.o.keySerde.deserialize(
        this.o.serdeTopic,
        e.key.subarray(0, e.key.length - SUFFIX_BYTES),
      ) as K,
      windowStartMs: Number(e.key.readBigInt64BE(e.key.length - SUFFIX_BYTES)),
      value: this.decode(e.value),
    }));
  }

  private decode(stored: Buffer): ValueAndTimestamp<V> {
    return {
      timestamp: Number(stored.readBigInt64BE(0)),
      value: this.o.valueSerde.deserialize(this.o.serdeTopic, stored.subarray(8)) as V,
    };
  }

  flush(): void {
    this.o.engine.flush();
  }

  close(): void {
    this.o.engine.close();
  }
}

/**
 * The window store of a stream-stream join (Kafka's window store with retainDuplicates): every record is kept
 * under (key, record timestamp, sequence number), so two records of one key and time both stay. Values are
 * plain (not timestamped: the timestamp is the key's), and the changelog carries the same key and value. The
 * sequence number starts at a random point so that records written after a restoration do not overwrite the
 * restored ones of the same key and time.
 */
export class DuplicatesWindowStore<K, V> implements StateStore {
  readonly name: string;
  private sequence = Math.floor(Math.random() * 0xffffffff);

  constructor(private readonly o: WindowStoreOptions<K, V>) {
    this.name = o.name;
  }

  persistent(): boolean {
    return this.o.engine.persistent;
  }

  private keyBytes(key: K): Buffer {
    const b = this.o.keySerde.serialize(this.o.serdeTopic, key);
    if (b === null) throw new Error(`store ${this.name}: a key may not serialize to null`);
    return b;
  }

  put(key: K, value: V, timestampMs: number): void {
    this.sequence = (this.sequence + 1) >>> 0;
    const k = windowStoreKey(this.keyBytes(key), timestampMs, this.sequence);
    const bytes = this.o.valueSerde.serialize(this.o.serdeTopic, value);
    if (bytes === null) throw new Error(`store ${this.name}: a value may not serialize to null`);
    this.o.engine.put(k, bytes);
    // Kafka logs the processed record's timestamp (ChangeLoggingWindowBytesStore): every put here is of the
    // record being processed, at its own timestamp (a join's or a sliding aggregation's input record).
    this.o.changelog?.log(k, bytes, timestampMs);
  }

  /** The key's records with timestamps from `fromMs` to `toMs` inclusive, by timestamp. */
  fetch(key: K, fromMs: number, toMs: number): { timestamp: number; value: V }[] {
    if (toMs < fromMs) return [];
    const kb = this.keyBytes(key);
    const lo = windowStoreKey(kb, Math.max(0, fromMs), 0);
    const hi = windowStoreKey(kb, toMs, 0xffffffff);
    return this.o.engine
      .range(lo, hi)
      .filter((e) => e.key.length === kb.length + SUFFIX_BYTES)
      .map((e) => ({
        timestamp: Number(e.key.readBigInt64BE(kb.length)),
        value: this.o.valueSerde.deserialize(this.o.serdeTopic, e.value) as V,
      }));
  }

  /** Drops the records older than `beforeMs` (retention), without logging: the changelog expires by time. */
  purge(key: K, beforeMs: number): void {
    const kb = this.keyBytes(key);
    for (const e of this.o.engine.range(
      windowStoreKey(kb, 0, 0),
      windowStoreKey(kb, beforeMs - 1, 0xffffffff),
    ))
      if (e.key.length === kb.length + SUFFIX_BYTES) this.o.engine.put(e.key, null);
  }

  flush(): void {
    this.o.engine.flush();
  }

  close(): void {
    this.o.engine.close();
  }
}
