// The interpreted model of one specification: structs with typed fields and version ranges resolved. Both the
// emitter and the tests (which build sample values from it) read this model, never the raw JSON.

import { camelCase } from './names.js';
import type { RawField, RawMessage, RawSpec, RawStruct } from './spec-reader.js';
import { intersect, isEmpty, NO_VERSIONS, parseVersions, type VersionRange } from './versions.js';

export type PrimitiveName =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'float64'
  | 'uuid'
  | 'string'
  | 'bytes'
  | 'records';

export type FieldType =
  | { readonly kind: 'primitive'; readonly name: PrimitiveName }
  | { readonly kind: 'array'; readonly element: FieldType }
  | { readonly kind: 'struct'; readonly struct: StructSchema };

/**
 * What a decoder gives for an absent field: null, a given scalar, an empty value (`[]`, a zero-length buffer, the
 * all-zero UUID) or, for structs, a struct whose fields all hold their defaults.
 */
export type DefaultValue =
  | { readonly kind: 'null' }
  | { readonly kind: 'value'; readonly value: boolean | number | bigint | string }
  | { readonly kind: 'empty' }
  | { readonly kind: 'struct' };

export interface FieldSchema {
  readonly name: string;
  /** The camelCase property name used in generated types. */
  readonly property: string;
  readonly type: FieldType;
  readonly versions: VersionRange;
  readonly nullableVersions: VersionRange;
  readonly taggedVersions: VersionRange;
  readonly tag: number | null;
  /** Overrides the message's flexible versions for this field's own encoding (only RequestHeader.ClientId). */
  readonly flexibleVersions: VersionRange | null;
  readonly defaultValue: DefaultValue;
}

export interface StructSchema {
  /** The specification's name of the struct type (or of the message for the top level). */
  readonly name: string;
  /** The generated TypeScript type name. */
  readonly typeName: string;
  readonly fields: FieldSchema[];
  /** Versions in which the struct can appear. */
  readonly versions: VersionRange;
}

export interface MessageSchema {
  readonly name: string;
  readonly kind: RawMessage['type'];
  readonly apiKey: number | null;
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange;
  readonly listeners: readonly string[];
  readonly latestVersionUnstable: boolean;
  readonly deprecatedVersions: VersionRange;
  readonly root: StructSchema;
  /** Every struct of the message, the root first, each name once. */
  readonly structs: StructSchema[];
}

const PRIMITIVES = new Set<string>([
  'bool',
  'int8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'float64',
  'uuid',
  'string',
  'bytes',
  'records',
]);

const INTEGER_RANGES: Record<string, [number, number]> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
};

class SchemaBuilder {
  private readonly structs = new Map<string, StructSchema>();
  private readonly common = new Map<string, RawStruct>();

  constructor(
    private readonly message: RawMessage,
    private readonly typePrefix: string,
  ) {
    for (const s of message.commonStructs ?? []) this.common.set(s.name, s);
  }

  build(): MessageSchema {
    const m = this.message;
    const validVersions = parseVersions(m.validVersions);
    const root: StructSchema = {
      name: m.name,
      typeName: m.name,
      fields: [],
      versions: validVersions,
    };
    this.structs.set(m.name, root);
    root.fields.push(...m.fields.map((f) => this.field(f, validVersions)));
    return {
      name: m.name,
      kind: m.type,
      apiKey: m.apiKey ?? null,
      validVersions,
      flexibleVersions: parseVersions(m.flexibleVersions),
      listeners: m.listeners ?? [],
      latestVersionUnstable: m.latestVersionUnstable === true,
      deprecatedVersions: parseVersions(m.deprecatedVersions),
      root,
      structs: [...this.structs.values()],
    };
  }

  private field(raw: RawField, context: VersionRange): FieldSchema {
    // A few internal schemas give tagged fields no "versions"; they exist wherever they may be tagged.
    const versions = parseVersions(raw.versions ?? raw.taggedVersions);
    const reachable = intersect(versions, context);
    const type = this.type(raw, isEmpty(reachable) ? NO_VERSIONS : reachable);
    const nullableVersions = parseVersions(raw.nullableVersions);
    const taggedVersions = parseVersions(raw.taggedVersions);
    if (!isEmpty(taggedVersions)) {
      // Every specification tags a field in all of its versions; the emitter relies on that.
      if (raw.tag === undefined) throw new Error(`${raw.name}: tagged without a tag`);
      if (taggedVersions.min !== versions.min || taggedVersions.max !== versions.max) {
        throw new Error(`${raw.name}: tagged in only some of its versions`);
      }
    }
    return {
      name: raw.name,
      property: camelCase(raw.name),
      type,
      versions,
      nullableVersions,
      taggedVersions,
      tag: isEmpty(taggedVersions) ? null : raw.tag!,
      flexibleVersions: raw.flexibleVersions === undefined ? null : parseVersions(raw.flexibleVersions),
      defaultValue: defaultValue(raw, type, !isEmpty(nullableVersions)),
    };
  }

  private type(raw: RawField, context: VersionRange): FieldType {
    const isArray = raw.type.startsWith('[]');
    const base = isArray ? raw.type.slice(2) : raw.type;
    const element: FieldType = PRIMITIVES.has(base)
      ? { kind: 'primitive', name: base as PrimitiveName }
      : { kind: 'struct', struct: this.struct(base, raw.fields, context) };
    return isArray ? { kind: 'array', element } : element;
  }

  private struct(name: string, inline: RawField[] | undefined, context: VersionRange): StructSchema {
    const existing = this.structs.get(name);
    const common = this.common.get(name);
    if (existing) {
      if (inline && !common) throw new Error(`${this.message.name}: struct ${name} is defined twice`);
      return existing;
    }
    const fields = inline ?? common?.fields;
    if (!fields) throw new Error(`${this.message.name}: unknown struct ${name}`);
    // Common structs may be used from several places, so they keep the whole message's range.
    const versions = common ? parseVersions(this.message.validVersions) : context;
    const struct: StructSchema = { name, typeName: `${this.typePrefix}${name}`, fields: [], versions };
    this.structs.set(name, struct);
    struct.fields.push(...fields.map((f) => this.field(f, versions)));
    return struct;
  }
}

function defaultValue(raw: RawField, type: FieldType, nullable: boolean): DefaultValue {
  const given = raw.default;
  if (given === null || given === 'null') {
    if (!nullable) throw new Error(`${raw.name}: default null on a non-nullable field`);
    return { kind: 'null' };
  }
  if (type.kind === 'array') {
    if (given !== undefined) throw new Error(`${raw.name}: arrays take no default but null`);
    return { kind: 'empty' };
  }
  if (type.kind === 'struct') return { kind: 'struct' };
  switch (type.name) {
    case 'bool':
      return { kind: 'value', value: given === true || given === 'true' };
    case 'int64':
      return { kind: 'value', value: given === undefined ? 0n : BigInt(given as string | number) };
    case 'float64':
      return { kind: 'value', value: given === undefined ? 0 : Number(given) };
    case 'string':
      return { kind: 'value', value: given === undefined ? '' : String(given) };
    case 'uuid':
    case 'bytes':
    case 'records':
      if (given !== undefined) throw new Error(`${raw.name}: unsupported default ${String(given)}`);
      return type.name === 'records' && nullable ? { kind: 'null' } : { kind: 'empty' };
    default: {
      const n = given === undefined ? 0 : Number(given);
      const [lo, hi] = INTEGER_RANGES[type.name]!;
      if (!Number.isInteger(n) || n < lo || n > hi)
        throw new Error(`${raw.name}: bad default ${String(given)}`);
      return { kind: 'value', value: n };
    }
  }
}

/**
 * Builds the model of one specification. Nested struct types are prefixed with the message name so that a
 * request and its response can share a file without clashing.
 */
export function buildSchema(spec: RawSpec): MessageSchema {
  return new SchemaBuilder(spec.json, spec.json.name).build();
}
