// Serdes: how keys and values become record bytes and back, writing exactly what Kafka's own serdes write, so
// that a Java or librdkafka application reads Brook Streams' topics unchanged: String is UTF-8, Integer a 4-byte
// and Long an 8-byte big-endian two's complement, Double an 8-byte big-endian IEEE 754, ByteArray the bytes as
// they are, JSON the UTF-8 text of JSON.stringify. A null stays null (a tombstone) in both directions, as in
// Kafka. Argument order is Kafka's: serialize(topic, data), deserialize(topic, bytes).

import assert from 'node:assert/strict';

export interface Serializer<T> {
  serialize(topic: string, data: T | null): Buffer | null;
}

export interface Deserializer<T> {
  deserialize(topic: string, data: Buffer | null): T | null;
}

/** A serializer and its deserializer; user serdes implement these two methods. */
export interface Serde<T> extends Serializer<T>, Deserializer<T> {}

/** Raised by a deserializer for bytes it cannot read (Kafka's SerializationException). */
export class SerializationError extends Error {
  override name = 'SerializationError';
}

function fixedWidth<T>(
  name: string,
  size: number,
  write: (b: Buffer, v: T) => void,
  read: (b: Buffer) => T,
): Serde<T> {
  return {
    serialize(_topic, data) {
      if (data === null || data === undefined) return null;
      const b = Buffer.allocUnsafe(size);
      write(b, data);
      return b;
    },
    deserialize(_topic, data) {
      if (data === null || data === undefined) return null;
      if (data.length !== size)
        throw new SerializationError(`Size of data received by ${name}Deserializer is not ${size}`);
      return read(data);
    },
  };
}

const STRING: Serde<string> = {
  serialize: (_t, data) => (data === null || data === undefined ? null : Buffer.from(data, 'utf8')),
  deserialize: (_t, data) => (data === null || data === undefined ? null : data.toString('utf8')),
};

const BYTE_ARRAY: Serde<Buffer> = {
  serialize: (_t, data) => data ?? null,
  deserialize: (_t, data) => data ?? null,
};

const INTEGER = fixedWidth<number>(
  'Integer',
  4,
  (b, v) => {
    assert.ok(Number.isInteger(v), `Integer serde: ${v} is not an integer`);
    b.writeInt32BE(v);
  },
  (b) => b.readInt32BE(0),
);

/**
 * Long: numbers in JavaScript are exact to 2^53, so the serde takes and gives `number` and refuses (on both
 * paths) a value it cannot represent exactly; `Serdes.BigLong()` gives the full int64 range as bigint.
 */
const LONG = fixedWidth<number>(
  'Long',
  8,
  (b, v) => {
    assert.ok(Number.isSafeInteger(v), `Long serde: ${v} is not a safe integer`);
    b.writeBigInt64BE(BigInt(v));
  },
  (b) => {
    const v = b.readBigInt64BE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
      throw new SerializationError(`Long ${v} is beyond 2^53: use Serdes.BigLong()`);
    return Number(v);
  },
);

const BIG_LONG = fixedWidth<bigint>(
  'Long',
  8,
  (b, v) => b.writeBigInt64BE(v),
  (b) => b.readBigInt64BE(0),
);

const DOUBLE = fixedWidth<number>(
  'Double',
  8,
  (b, v) => b.writeDoubleBE(v),
  (b) => b.readDoubleBE(0),
);

function json<T>(): Serde<T> {
  return {
    serialize: (_t, data) =>
      data === null || data === undefined ? null : Buffer.from(JSON.stringify(data), 'utf8'),
    deserialize(_t, data) {
      if (data === null || data === undefined) return null;
      try {
        return JSON.parse(data.toString('utf8')) as T;
      } catch (e) {
        throw new SerializationError(`JSON deserializer: ${(e as Error).message}`);
      }
    },
  };
}

/** Kafka's Serdes factory. */
export const Serdes = {
  String: (): Serde<string> => STRING,
  ByteArray: (): Serde<Buffer> => BYTE_ARRAY,
  Bytes: (): Serde<Buffer> => BYTE_ARRAY,
  Integer: (): Serde<number> => INTEGER,
  Long: (): Serde<number> => LONG,
  BigLong: (): Serde<bigint> => BIG_LONG,
  Double: (): Serde<number> => DOUBLE,
  JSON: <T = unknown>(): Serde<T> => json<T>(),
  /** A user serde from its two functions (Kafka's Serdes.serdeFrom). */
  serdeFrom: <T>(serializer: Serializer<T>, deserializer: Deserializer<T>): Serde<T> => ({
    serialize: (topic, data) => serializer.serialize(topic, data),
    deserialize: (topic, data) => deserializer.deserialize(topic, data),
  }),
} as const;

/** The serde named by a default.key.serde / default.value.serde setting (Kafka's class names accepted). */
export function serdeByName(name: string): Serde<unknown> {
  const short = name
    .replace(/^org\.apache\.kafka\.common\.serialization\.Serdes\$/, '')
    .replace(/Serde$/, '');
  switch (short) {
    case 'String':
      return STRING as Serde<unknown>;
    case 'ByteArray':
    case 'Bytes':
      return BYTE_ARRAY as Serde<unknown>;
    case 'Integer':
      return INTEGER as Serde<unknown>;
    case 'Long':
      return LONG as Serde<unknown>;
    case 'Double':
      return DOUBLE as Serde<unknown>;
    case 'JSON':
    case 'Json':
      return json<unknown>();
    default:
      throw new Error(`unknown serde ${name}: pass a Serde object instead`);
  }
}
