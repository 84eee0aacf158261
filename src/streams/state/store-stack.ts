// One key-value store as a task uses it: the typed layer (serdes, and for the DSL's timestamped stores the
// record timestamp kept before the value) over the changelog layer over a bytes engine.
//
// Formats, as Kafka's: the changelog record's key is the serialized key and its value the serialized value
// (without the timestamp, which travels as the record's timestamp); a timestamped store keeps in its engine the
// 8-byte big-endian timestamp followed by the serialized value, so restoring a changelog record prefixes it.
// A delete is a null value in the changelog (a tombstone, which compaction eventually removes).

import type { Serde } from '../serdes.js';
import type { BytesKeyValueStore } from './bytes-store.js';
import type { KeyValue, KeyValueStore, ValueAndTimestamp } from './stores.js';

/** Receives each write for the store's changelog partition. */
export interface ChangelogWriter {
  log(key: Buffer, value: Buffer | null, timestamp: number): void;
}

/** A timestamped store's stored value: these bytes of timestamp, then the serialized value. */
export const TIMESTAMP_BYTES = 8;

export function timestampedStoredValue(value: Buffer, timestamp: number): Buffer {
  const out = Buffer.allocUnsafe(TIMESTAMP_BYTES + value.length);
  writeTimestampPrefix(out, timestamp);
  value.copy(out, TIMESTAMP_BYTES);
  return out;
}

/** Writes a timestamped stored value's first 8 bytes: the timestamp, big-endian. */
export function writeTimestampPrefix(out: Buffer, timestamp: number): void {
  // Two 32-bit halves: the same 8 big-endian bytes as writeBigInt64BE, without a BigInt per record (restoration
  // writes one per changelog record). Timestamps are safe integers, so the division is exact.
  const high = Math.floor(timestamp / 0x1_0000_0000);
  out.writeInt32BE(high, 0);
  out.writeUInt32BE(timestamp - high * 0x1_0000_0000, 4);
}

/**
 * Applies one changelog record to a store's engine during restoration. An engine with putRestored gets the
 * record as it came and the timestamp to put before the value (it may build the stored value when it writes);
 * others get the stored value.
 */
export function restoreInto(
  engine: BytesKeyValueStore,
  timestamped: boolean,
  key: Buffer,
  value: Buffer | null,
  timestamp: number,
): void {
  if (engine.putRestored !== undefined) engine.putRestored(key, value, timestamped ? timestamp : null);
  else engine.put(key, value === null || !timestamped ? value : timestampedStoredValue(value, timestamp));
}

export interface StoreStackOptions<K, V> {
  name: string;
  engine: BytesKeyValueStore;
  changelog: ChangelogWriter | null;
  /** The topic name handed to the serdes (the changelog topic, as Kafka does). */
  serdeTopic: string;
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
  /** The timestamp a plain store's changelog record gets: the current record's. */
  recordTimestamp: () => number;
}

abstract class TypedStoreBase<K, V, S> implements KeyValueStore<K, S> {
  readonly name: string;

  constructor(protected readonly o: StoreStackOptions<K, V>) {
    this.name = o.name;
  }

  /** `recordTimestamp` is the timestamp of the record that wrote the value (a plain store's changelog record's). */
  protected abstract encode(
    value: S,
    recordTimestamp: number,
  ): { stored: Buffer; logged: Buffer; timestamp: number };
  protected abstract decode(stored: Buffer): S;

  persistent(): boolean {
    return this.o.engine.persistent;
  }

  keyBytes(key: K): Buffer {
    const b = this.o.keySerde.serialize(this.o.serdeTopic, key);
    if (b === null) throw new Error(`store ${this.name}: a key may not serialize to null`);
    return b;
  }

  get(key: K): S | null {
    const stored = this.o.engine.get(this.keyBytes(key));
    return stored === null ? null : this.decode(stored);
  }

  put(key: K, value: S | null): void {
    this.putWritten(key, value, this.o.recordTimestamp());
  }

  /**
   * Puts a value written by a record of `recordTimestamp` (the current record's for a put; a record cache's
   * entry keeps the timestamp of the record that wrote it until it is written through).
   */
  protected putWritten(key: K, value: S | null, recordTimestamp: number): void {
    const k = this.keyBytes(key);
    if (value === null) {
      this.o.engine.put(k, null);
      this.o.changelog?.log(k, null, recordTimestamp);
      return;
    }
    const e = this.encode(value, recordTimestamp);
    this.o.engine.put(k, e.stored);
    this.o.changelog?.log(k, e.logged, e.timestamp);
  }

  putIfAbsent(key: K, value: S): S | null {
    const old = this.get(key);
    if (old === null) this.put(key, value);
    return old;
  }

  delete(key: K): S | null {
    const old = this.get(key);
    if (old !== null) this.put(key, null);
    return old;
  }

  range(from: K, to: K): KeyValue<K, S>[] {
    return this.entries(this.keyBytes(from), this.keyBytes(to));
  }

  all(): KeyValue<K, S>[] {
    return this.entries(null, null);
  }

  private entries(from: Buffer | null, to: Buffer | null): KeyValue<K, S>[] {
    return this.o.engine.range(from, to).map((e) => ({
      key: this.o.keySerde.deserialize(this.o.serdeTopic, e.key) as K,
      value: this.decode(e.value),
    }));
  }

  approximateNumEntries(): number {
    return this.o.engine.count();
  }

  flush(): void {
    this.o.engine.flush();
  }

  close(): void {
    this.o.engine.close();
  }
}

/** A store of plain values (the Processor API's keyValueStoreBuilder). */
export class PlainKeyValueStore<K, V> extends TypedStoreBase<K, V, V> {
  protected encode(value: V, recordTimestamp: number) {
    const bytes = this.o.valueSerde.serialize(this.o.serdeTopic, value);
    if (bytes === null) throw new Error(`store ${this.name}: a value may not serialize to null`);
    return { stored: bytes, logged: bytes, timestamp: recordTimestamp };
  }

  protected decode(stored: Buffer): V {
    return this.o.valueSerde.deserialize(this.o.serdeTopic, stored) as V;
  }
}

/** A store of values with their timestamps (the DSL's aggregations and tables). */
export class TimestampedStore<K, V> extends TypedStoreBase<K, V, ValueAndTimestamp<V>> {
  protected encode(vt: ValueAndTimestamp<V>) {
    const bytes = this.o.valueSerde.serialize(this.o.serdeTopic, vt.value);
    if (bytes === null) throw new Error(`store ${this.name}: a value may not serialize to null`);
    return { stored: timestampedStoredValue(bytes, vt.timestamp), logged: bytes, timestamp: vt.timestamp };
  }

  protected decode(stored: Buffer): ValueAndTimestamp<V> {
    return {
      timestamp: Number(stored.readBigInt64BE(0)),
      value: this.o.valueSerde.deserialize(this.o.serdeTopic, stored.subarray(TIMESTAMP_BYTES)) as V,
    };
  }

  /** The same store seen without timestamps (what a test driver's or a query's reader wants). */
  plainView(): KeyValueStore<K, V> {
    return {
      name: this.name,
      persistent: () => this.persistent(),
      flush: () => this.flush(),
      close: () => this.close(),
      get: (k) => this.get(k)?.value ?? null,
      put: (k, v) => this.put(k, v === null ? null : { value: v, timestamp: this.o.recordTimestamp() }),
      putIfAbsent: (k, v) =>
        this.putIfAbsent(k, { value: v, timestamp: this.o.recordTimestamp() })?.value ?? null,
      delete: (k) => this.delete(k)?.value ?? null,
      range: (a, b) => this.range(a, b).map((e) => ({ key: e.key, value: e.value.value })),
      all: () => this.all().map((e) => ({ key: e.key, value: e.value.value })),
      approximateNumEntries: () => this.approximateNumEntries(),
    };
  }
}
