// Hand-written helpers shared by the generated codecs in this folder, src/protocol/internal and
// src/protocol/consumer-protocol: the descriptor types the registry is built from, shared default values, and
// tagged-field framing. Kept small and free of state so the generated code stays the only place that knows a
// message's layout.

import { DecodeError, Reader, Writer } from '../primitives/index.js';

/** Kafka's all-zero UUID in its text form; the default of every uuid field. */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** The default of non-nullable bytes fields. Shared, so callers must not write into it. */
export const EMPTY_BYTES: Buffer = Buffer.alloc(0);

/**
 * One API's codecs and version facts. Decoders read one body from the reader's position and leave it after the
 * body; encoders append one body to the writer. Both throw DecodeError('unsupported-version') outside
 * minVersion..maxVersion.
 */
export interface ApiDescriptor<Request = unknown, Response = unknown> {
  readonly apiKey: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** As the specification writes it, e.g. '9+' or 'none'. */
  readonly flexibleVersions: string;
  /** The first version that uses compact encodings and tagged fields, or null when none does. */
  readonly firstFlexibleVersion: number | null;
  readonly listeners: readonly string[];
  /** True when Kafka marks the newest version as still under development. */
  readonly latestVersionUnstable: boolean;
  /** As the specification writes it, e.g. '0-6' or 'none'. */
  readonly deprecatedVersions: string;
  decodeRequest(r: Reader, version: number): Request;
  encodeRequest(w: Writer, version: number, value: Request): void;
  decodeResponse(r: Reader, version: number): Response;
  encodeResponse(w: Writer, version: number, value: Response): void;
}

/** A versioned schema that is not an API message: headers, internal-topic records, consumer protocol blobs. */
export interface DataSchema<Value = unknown> {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly flexibleVersions: string;
  decode(r: Reader, version: number): Value;
  encode(w: Writer, version: number, value: Value): void;
}

export function unsupportedVersion(name: string, version: number): DecodeError {
  return new DecodeError('unsupported-version', `${name} version ${version} is not supported`);
}

/** Checks a tagged field's size against the input and returns where the field ends. */
export function taggedFieldEnd(r: Reader, size: number): number {
  if (size > r.remaining) {
    throw new DecodeError('length-exceeds-input', `tagged field of ${size} bytes exceeds input`, r.pos);
  }
  return r.pos + size;
}

/**
 * Moves past a tagged field. A known field that read beyond its declared size means a corrupt frame; one that
 * read less (a newer sender's longer struct) or an unknown tag is skipped, as Kafka does.
 */
export function finishTaggedField(r: Reader, end: number): void {
  if (r.pos > end) throw new DecodeError('bad-value', 'tagged field longer than its declared size', r.pos);
  r.pos = end;
}

/** Skips the tagged-field section of a struct that defines no tagged fields. */
export function skipTaggedFields(r: Reader): void {
  // Nearly every section is empty (a single zero byte): take that without the varint loop.
  if (r.pos < r.end && r.buf[r.pos] === 0) {
    r.pos++;
    return;
  }
  const count = r.uvarint();
  for (let i = 0; i < count; i++) {
    r.uvarint();
    r.pos = taggedFieldEnd(r, r.uvarint());
  }
}

/** Appends one tagged field: its tag, its size, then the bytes already encoded into `value`. */
export function writeTaggedField(w: Writer, tag: number, value: Writer): void {
  w.uvarint(tag);
  w.uvarint(value.length);
  for (const chunk of value.chunksOut()) w.raw(chunk);
}

/** A value together with the schema version it was (or is to be) written with. */
export interface Versioned<Value> {
  readonly version: number;
  readonly value: Value;
}

/** Writes the int16 version prefix and then the value, as internal-topic records and consumer blobs are stored. */
export function encodeVersioned<Value>(schema: DataSchema<Value>, version: number, value: Value): Buffer {
  const w = new Writer();
  w.int16(version);
  schema.encode(w, version, value);
  return w.toBuffer();
}

/**
 * Reads an int16 version prefix and the value after it. A version newer than the schema knows is read as the
 * newest known one when `newerVersions` is 'read-known-fields' (Kafka's rule for the consumer protocol: newer
 * versions only add fields at the end), and rejected when it is 'reject'. Bytes after the known fields are
 * ignored in the first case and rejected in the second.
 */
export function decodeVersioned<Value>(
  schema: DataSchema<Value>,
  bytes: Buffer,
  newerVersions: 'read-known-fields' | 'reject',
): Versioned<Value> {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < schema.minVersion || (version > schema.maxVersion && newerVersions === 'reject')) {
    throw unsupportedVersion(schema.name, version);
  }
  const value = schema.decode(r, Math.min(version, schema.maxVersion));
  if (newerVersions === 'reject') r.expectEnd();
  return { version, value };
}

/**
 * One field of a message as code that builds values without knowing the message sees it (the generated
 * RESPONSE_SHAPES): the versions it is in, where it may be null, its type and the decoder's default.
 */
export interface FieldShape {
  /** Inclusive version range; [1, 0] is none. */
  readonly versions: readonly [number, number];
  readonly nullable?: readonly [number, number];
  /** A primitive type's name, or 'array' / 'struct'. */
  readonly type: string;
  /** The default of a primitive field, or null for a field (of any type) whose default is null. */
  readonly value?: unknown;
  /** The struct of a struct field, or of the elements of an array of structs. */
  readonly struct?: StructShape;
}

/** A struct's fields by their property names. */
export interface StructShape {
  readonly [property: string]: FieldShape;
}
