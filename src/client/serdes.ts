// Serializers and deserializers: how typed keys and values become record bytes and back. A null stays null
// (Kafka's tombstone) in both directions.

/** Turns a value into the bytes of a record's key or value; null stays null (a tombstone). */
export interface Serializer<T> {
  serialize(value: T, topic: string): Buffer | null;
}

/** Turns a record's key or value bytes back into a value; null bytes give null. */
export interface Deserializer<T> {
  deserialize(bytes: Buffer | null, topic: string): T;
}

/** A serializer and deserializer pair. */
export type Serde<T> = Serializer<T> & Deserializer<T>;

/** Bytes as they are. */
export const bytesSerde: Serde<Buffer | null> = {
  serialize: (v) => v,
  deserialize: (b) => b,
};

/** UTF-8 strings. */
export const stringSerde: Serde<string | null> = {
  serialize: (v) => (v === null ? null : Buffer.from(v, 'utf8')),
  deserialize: (b) => (b === null ? null : b.toString('utf8')),
};

/** JSON values (JSON.stringify and JSON.parse over UTF-8). */
export function jsonSerde<T>(): Serde<T | null> {
  return {
    serialize: (v) => (v === null ? null : Buffer.from(JSON.stringify(v), 'utf8')),
    deserialize: (b) => (b === null ? null : (JSON.parse(b.toString('utf8')) as T)),
  };
}

function fixedSerde<T>(
  size: number,
  write: (b: Buffer, v: T) => void,
  read: (b: Buffer) => T,
): Serde<T | null> {
  return {
    serialize: (v) => {
      if (v === null) return null;
      const b = Buffer.allocUnsafe(size);
      write(b, v);
      return b;
    },
    deserialize: (b) => {
      if (b === null) return null;
      if (b.length !== size) throw new RangeError(`expected ${size} bytes, got ${b.length}`);
      return read(b);
    },
  };
}

/** Java's IntegerSerializer: 4 bytes big-endian. */
export const int32Serde = fixedSerde<number>(
  4,
  (b, v) => b.writeInt32BE(v),
  (b) => b.readInt32BE(0),
);
/** Java's ShortSerializer. */
export const int16Serde = fixedSerde<number>(
  2,
  (b, v) => b.writeInt16BE(v),
  (b) => b.readInt16BE(0),
);
/** Java's LongSerializer: 8 bytes big-endian. */
export const int64Serde = fixedSerde<bigint>(
  8,
  (b, v) => b.writeBigInt64BE(v),
  (b) => b.readBigInt64BE(0),
);
/** Java's DoubleSerializer. */
export const float64Serde = fixedSerde<number>(
  8,
  (b, v) => b.writeDoubleBE(v),
  (b) => b.readDoubleBE(0),
);
