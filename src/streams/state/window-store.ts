// A window store: aggregates per key and window start, over a bytes engine. The engine key is Kafka's window
// store key (WindowKeySchema): the serialized key, the window start as an 8-byte big-endian long, and a 4-byte
// sequence number (0: Brook keeps one value per key and window, as aggregations need). The changelog record
// carries that same key, the plain serialized value, and the aggregate's timestamp as the record timestamp;
// the engine keeps the timestamp before the value (a timestamped window store, KIP-258).

import type { Serde } from '../serdes.js';
import type { BytesKeyValueStore } from './bytes-store.js';
import { type ChangelogWriter, timestampedStoredValue } from './store-stack.js';
import type { StateStore, ValueAndTimestamp } from './stores.js';

const SUFFIX_BYTES = 12;

export function windowStoreKey(key: Buffer, windowStartMs: number): Buffer {
  const out = Buffer.allocUnsafe(key.length + SUFFIX_BYTES);
  key.copy(out, 0);
  out.writeBigInt64BE(BigInt(windowStartMs), key.length);
  out.writeInt32BE(0, key.length + 8);
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
}

export class TimestampedWindowStore<K, V> implements StateStore {
  readonly name: string;

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

  fetch(key: K, windowStartMs: number): ValueAndTimestamp<V> | null {
    const stored = this.o.engine.get(windowStoreKey(this.keyBytes(key), windowStartMs));
    return stored === null ? null : this.decode(stored);
  }

  put(key: K, value: ValueAndTimestamp<V> | null, windowStartMs: number): void {
    const k = windowStoreKey(this.keyBytes(key), windowStartMs);
    if (value === null) {
      this.o.engine.put(k, null);
      this.o.changelog?.log(k, null, windowStartMs);
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
