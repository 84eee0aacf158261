// Builds test values for any generated codec straight from the parsed specification: every field present at
// a version gets a distinct non-default value (or null, when asked and allowed), every absent field gets the
// default a decoder must produce. Independent of the emitter, so the codecs are checked against the
// specification rather than against themselves.

import type { FieldSchema, FieldType, StructSchema } from '../../../src/protocol/generator/schema.js';
import { contains } from '../../../src/protocol/generator/versions.js';

export const ZERO_UUID_TEXT = Buffer.alloc(16).toString('base64url');

export interface SampleOptions {
  /** Use null for every field that may be null at the version. */
  readonly nulls: boolean;
  /** Elements per array. */
  readonly arrayLength: number;
  /** Leave tagged fields at their defaults, so that no tagged field is written (default: set them). */
  readonly untagged?: boolean;
}

type Value = unknown;

export class SampleBuilder {
  private counter = 0;

  constructor(private readonly options: SampleOptions) {}

  struct(struct: StructSchema, version: number): Record<string, Value> {
    const out: Record<string, Value> = {};
    for (const field of struct.fields) {
      const present = contains(field.versions, version) && !(this.options.untagged && field.tag !== null);
      out[field.property] = present ? this.field(field, version) : defaultOf(field);
    }
    return out;
  }

  private field(field: FieldSchema, version: number): Value {
    if (this.options.nulls && contains(field.nullableVersions, version)) return null;
    return this.value(field.type, version, field);
  }

  private value(type: FieldType, version: number, field: FieldSchema): Value {
    if (type.kind === 'array') {
      const items: Value[] = [];
      for (let i = 0; i < this.options.arrayLength; i++) items.push(this.value(type.element, version, field));
      return items;
    }
    if (type.kind === 'struct') return this.struct(type.struct, version);
    const n = ++this.counter;
    const d = field.defaultValue.kind === 'value' ? field.defaultValue.value : undefined;
    const avoid = <T>(v: T, other: T): T => (v === d ? other : v);
    switch (type.name) {
      case 'bool':
        return d !== true;
      case 'int8':
        return avoid((n % 120) + 2, 1);
      case 'int16':
        return avoid((n % 30000) + 2, 1);
      case 'uint16':
        return avoid((n % 60000) + 2, 1);
      case 'int32':
        return avoid(((n * 7919) % 2000000000) + 2, 1);
      case 'uint32':
        return avoid(((n * 7919) % 4000000000) + 2, 1);
      case 'int64':
        return avoid(BigInt(n) * 1000000007n + 2n, 1n);
      case 'float64':
        return n + 0.25;
      case 'uuid': {
        const bytes = Buffer.alloc(16, n & 0xff);
        bytes.writeUInt32BE(n, 0);
        bytes[15] = 1;
        return bytes.toString('base64url');
      }
      case 'string':
        return avoid(n % 3 === 0 ? `s${n}-é` : `s${n}`, 'other');
      case 'bytes':
      case 'records':
        return Buffer.from([n & 0xff, 1, 2, 3, (n >> 8) & 0xff]);
    }
  }
}

/** The value a decoder gives for an absent field. */
export function defaultOf(field: FieldSchema): Value {
  const d = field.defaultValue;
  switch (d.kind) {
    case 'null':
      return null;
    case 'value':
      return d.value;
    case 'struct':
      return defaultStruct((field.type as { struct: StructSchema }).struct);
    case 'empty':
      if (field.type.kind === 'array') return [];
      if (field.type.kind === 'primitive' && field.type.name === 'uuid') return ZERO_UUID_TEXT;
      return Buffer.alloc(0);
  }
}

export function defaultStruct(struct: StructSchema): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const field of struct.fields) out[field.property] = defaultOf(field);
  return out;
}
