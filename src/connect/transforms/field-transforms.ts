// Kafka's field-level single message transforms, each as `<Name>$Key` and `<Name>$Value` with Kafka's
// options: InsertField, ReplaceField, MaskField, ExtractField, HoistField, Flatten, Cast, and ValueToKey.
// Records with a schema are rewritten as Structs with a new schema; records without one as plain objects.
// A null key or value (a tombstone) passes through unchanged, as in Kafka.

import type { ConfigDef } from '../api/config-def.js';
import { SinkRecord } from '../api/records.js';
import { BigDecimal } from '../data/big-decimal.js';
import { ConnectTimestamp, Decimal } from '../data/logical.js';
import { type Schema, SchemaBuilder, Schemas, type SchemaType } from '../data/schema.js';
import { Struct } from '../data/struct.js';
import { ConfigException, DataException } from '../errors.js';
import {
  copySchemaBasics,
  defWith,
  KeyOrValueTransform,
  listProp,
  requireMap,
  requireStruct,
  type Which,
} from './support.js';
import type { AnyRecord, Transformation } from './transformation.js';

// ---- InsertField ----------------------------------------------------------------------------------------

interface InsertSpec {
  name: string;
  optional: boolean;
}

function insertSpec(v: string | undefined): InsertSpec | null {
  if (v === undefined || v.trim() === '') return null;
  const t = v.trim();
  if (t.endsWith('!')) return { name: t.slice(0, -1), optional: false };
  if (t.endsWith('?')) return { name: t.slice(0, -1), optional: true };
  return { name: t, optional: true };
}

export class InsertField extends KeyOrValueTransform {
  private topic: InsertSpec | null = null;
  private partition: InsertSpec | null = null;
  private offset: InsertSpec | null = null;
  private timestamp: InsertSpec | null = null;
  private staticField: InsertSpec | null = null;
  private staticValue: string | null = null;

  configure(props: Readonly<Record<string, string>>): void {
    this.topic = insertSpec(props['topic.field']);
    this.partition = insertSpec(props['partition.field']);
    this.offset = insertSpec(props['offset.field']);
    this.timestamp = insertSpec(props['timestamp.field']);
    this.staticField = insertSpec(props['static.field']);
    this.staticValue = props['static.value'] ?? null;
    if (!this.topic && !this.partition && !this.offset && !this.timestamp && !this.staticField) {
      throw new ConfigException('No field insertion configured');
    }
    if (this.staticField !== null && this.staticValue === null) {
      throw new ConfigException(`No value specified for static field: ${this.staticField.name}`);
    }
  }

  config(): ConfigDef {
    return defWith(
      [
        'topic.field',
        'STRING',
        '',
        'Field name for Kafka topic. Suffix with ! to make this a required field, or ? to keep it optional (the default).',
      ],
      ['partition.field', 'STRING', '', 'Field name for Kafka partition.'],
      ['offset.field', 'STRING', '', 'Field name for Kafka offset - only applicable to sink connectors.'],
      ['timestamp.field', 'STRING', '', 'Field name for record timestamp.'],
      ['static.field', 'STRING', '', 'Field name for static data field.'],
      ['static.value', 'STRING', '', 'Static field value, if field name configured.'],
    );
  }

  private inserts(r: AnyRecord): { spec: InsertSpec; schema: Schema; value: unknown }[] {
    const out: { spec: InsertSpec; schema: Schema; value: unknown }[] = [];
    const opt = (s: Schema, spec: InsertSpec) => (spec.optional ? s.with({ optional: true }) : s);
    if (this.topic) out.push({ spec: this.topic, schema: opt(Schemas.STRING, this.topic), value: r.topic });
    if (this.partition)
      out.push({ spec: this.partition, schema: opt(Schemas.INT32, this.partition), value: r.kafkaPartition });
    if (this.offset) {
      if (!(r instanceof SinkRecord))
        throw new DataException('Offset field can only be inserted on sink records');
      out.push({ spec: this.offset, schema: opt(Schemas.INT64, this.offset), value: r.kafkaOffset });
    }
    if (this.timestamp) {
      out.push({
        spec: this.timestamp,
        schema: opt(ConnectTimestamp.SCHEMA, this.timestamp),
        value: r.timestamp === null ? null : new Date(r.timestamp),
      });
    }
    if (this.staticField)
      out.push({
        spec: this.staticField,
        schema: opt(Schemas.STRING, this.staticField),
        value: this.staticValue,
      });
    return out;
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    if (value === null) return r;
    const out = { ...requireMap(value, 'field insertion') };
    for (const i of this.inserts(r)) out[i.spec.name] = i.value;
    return this.replace(r, null, out);
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    if (value === null) return r;
    const struct = requireStruct(value, 'field insertion');
    const inserts = this.inserts(r);
    const b = copySchemaBasics(schema);
    for (const f of schema.fields()) b.field(f.name, f.schema);
    for (const i of inserts) b.field(i.spec.name, i.schema);
    const next = new Struct(b.build());
    for (const f of schema.fields()) next.put(f.name, struct.getWithoutDefault(f.name) ?? null);
    for (const i of inserts) next.put(i.spec.name, i.value);
    return this.replace(r, next.schema, next);
  }
}

// ---- ReplaceField ---------------------------------------------------------------------------------------

export class ReplaceField extends KeyOrValueTransform {
  private exclude: string[] = [];
  private include: string[] = [];
  private renames = new Map<string, string>();

  configure(props: Readonly<Record<string, string>>): void {
    this.exclude = listProp(props, 'exclude').concat(listProp(props, 'blacklist'));
    this.include = listProp(props, 'include').concat(listProp(props, 'whitelist'));
    for (const pair of listProp(props, 'renames')) {
      const parts = pair.split(':');
      if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
        throw ConfigException.invalid('renames', props.renames, `Invalid rename mapping: ${pair}`);
      }
      this.renames.set(parts[0]!, parts[1]!);
    }
  }

  config(): ConfigDef {
    return defWith(
      ['exclude', 'LIST', '', 'Fields to exclude. This takes precedence over the fields to include.'],
      ['include', 'LIST', '', 'Fields to include. If specified, only these fields will be used.'],
      ['renames', 'LIST', '', 'Field rename mappings.'],
    );
  }

  private keep(name: string): boolean {
    return !this.exclude.includes(name) && (this.include.length === 0 || this.include.includes(name));
  }

  private renamed(name: string): string {
    return this.renames.get(name) ?? name;
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    if (value === null) return r;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(requireMap(value, 'field replacement')))
      if (this.keep(k)) out[this.renamed(k)] = v;
    return this.replace(r, null, out);
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    if (value === null) return r;
    const struct = requireStruct(value, 'field replacement');
    const kept = schema.fields().filter((f) => this.keep(f.name));
    const b = copySchemaBasics(schema);
    for (const f of kept) b.field(this.renamed(f.name), f.schema);
    const next = new Struct(b.build());
    for (const f of kept) next.put(this.renamed(f.name), struct.getWithoutDefault(f.name) ?? null);
    return this.replace(r, next.schema, next);
  }
}

// ---- MaskField ------------------------------------------------------------------------------------------

function maskOf(schema: Schema | null, value: unknown, replacement: string | null): unknown {
  const type = schema?.type ?? jsType(value);
  if (replacement !== null)
    return castValue(replacement, schema?.name === Decimal.LOGICAL_NAME ? 'decimal' : type, 'MaskField');
  if (schema?.name === Decimal.LOGICAL_NAME || value instanceof BigDecimal)
    return new BigDecimal(0n, (value as BigDecimal).scale);
  if (value instanceof Date) return new Date(0);
  switch (type) {
    case 'boolean':
      return false;
    case 'string':
      return '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'array':
      return [];
    case 'map':
      return schema === null ? {} : new Map();
    case 'int64':
      return typeof value === 'bigint' ? 0n : 0;
    case 'struct':
      throw new DataException('Cannot mask value of type Struct');
    default:
      return 0;
  }
}

function jsType(value: unknown): SchemaType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'string';
  if (Buffer.isBuffer(value)) return 'bytes';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (typeof value === 'bigint') return 'int64';
  if (value instanceof Struct) return 'struct';
  return 'map';
}

export class MaskField extends KeyOrValueTransform {
  private fields: string[] = [];
  private replacement: string | null = null;

  configure(props: Readonly<Record<string, string>>): void {
    this.fields = listProp(props, 'fields');
    if (this.fields.length === 0)
      throw new ConfigException('Missing required configuration "fields" which has no default value.');
    this.replacement = props.replacement ?? null;
  }

  config(): ConfigDef {
    return defWith(
      ['fields', 'LIST', undefined, 'Names of fields to mask.'],
      ['replacement', 'STRING', '', 'Custom value replacement.'],
    );
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    if (value === null) return r;
    const out = { ...requireMap(value, 'mask fields') };
    for (const f of this.fields)
      if (f in out && out[f] !== null) out[f] = maskOf(null, out[f], this.replacement);
    return this.replace(r, null, out);
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    if (value === null) return r;
    const struct = requireStruct(value, 'mask fields');
    const next = new Struct(schema);
    for (const f of schema.fields()) {
      const v = struct.getWithoutDefault(f.name) ?? null;
      next.put(
        f.name,
        this.fields.includes(f.name) && v !== null ? maskOf(f.schema, v, this.replacement) : v,
      );
    }
    return this.replace(r, schema, next);
  }
}

// ---- ExtractField ---------------------------------------------------------------------------------------

export class ExtractField extends KeyOrValueTransform {
  private field = '';

  configure(props: Readonly<Record<string, string>>): void {
    this.field = (props.field ?? '').trim();
    if (this.field === '')
      throw new ConfigException('Missing required configuration "field" which has no default value.');
  }

  config(): ConfigDef {
    return defWith(['field', 'STRING', undefined, 'Field name to extract.']);
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    if (value === null) return this.replace(r, null, null);
    return this.replace(r, null, requireMap(value, 'field extraction')[this.field] ?? null);
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    const field = schema.type === 'struct' ? schema.field(this.field) : undefined;
    if (field === undefined) throw new DataException(`Unknown field: ${this.field}`);
    if (value === null) return this.replace(r, field.schema, null);
    return this.replace(r, field.schema, requireStruct(value, 'field extraction').get(this.field));
  }
}

// ---- HoistField -----------------------------------------------------------------------------------------

export class HoistField extends KeyOrValueTransform {
  private field = '';

  configure(props: Readonly<Record<string, string>>): void {
    this.field = (props.field ?? '').trim();
    if (this.field === '')
      throw new ConfigException('Missing required configuration "field" which has no default value.');
  }

  config(): ConfigDef {
    return defWith([
      'field',
      'STRING',
      undefined,
      'Field name for the single field that will be created in the resulting Struct or Map.',
    ]);
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    return this.replace(r, null, { [this.field]: value });
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    const hoisted = SchemaBuilder.struct().field(this.field, schema).build();
    return this.replace(r, hoisted, new Struct(hoisted).put(this.field, value));
  }
}

// ---- Flatten --------------------------------------------------------------------------------------------

export class Flatten extends KeyOrValueTransform {
  private delimiter = '.';

  configure(props: Readonly<Record<string, string>>): void {
    this.delimiter = props.delimiter ?? '.';
  }

  config(): ConfigDef {
    return defWith([
      'delimiter',
      'STRING',
      '.',
      'Delimiter to insert between field names from the input record when generating field names for the output record',
    ]);
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    if (value === null) return r;
    const out: Record<string, unknown> = {};
    const walk = (obj: Record<string, unknown>, prefix: string) => {
      for (const [k, v] of Object.entries(obj)) {
        const name = prefix === '' ? k : `${prefix}${this.delimiter}${k}`;
        if (
          v !== null &&
          typeof v === 'object' &&
          !Array.isArray(v) &&
          !Buffer.isBuffer(v) &&
          !(v instanceof Date) &&
          !(v instanceof BigDecimal)
        ) {
          walk(v instanceof Map ? Object.fromEntries(v) : (v as Record<string, unknown>), name);
        } else out[name] = v;
      }
    };
    walk(requireMap(value, 'flattening'), '');
    return this.replace(r, null, out);
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    const b = copySchemaBasics(schema);
    const leaves: { name: string; path: string[] }[] = [];
    const walk = (s: Schema, prefix: string, path: string[], optional: boolean) => {
      for (const f of s.fields()) {
        const name = prefix === '' ? f.name : `${prefix}${this.delimiter}${f.name}`;
        if (f.schema.type === 'struct')
          walk(f.schema, name, [...path, f.name], optional || f.schema.optional);
        else {
          b.field(name, optional && !f.schema.optional ? f.schema.with({ optional: true }) : f.schema);
          leaves.push({ name, path: [...path, f.name] });
        }
      }
    };
    walk(schema, '', [], schema.optional);
    const flat = b.build();
    if (value === null) return this.replace(r, flat, null);
    const next = new Struct(flat);
    for (const leaf of leaves) {
      let v: unknown = requireStruct(value, 'flattening');
      for (const step of leaf.path) v = v === null ? null : (v as Struct).get(step);
      next.put(leaf.name, v ?? null);
    }
    return this.replace(r, flat, next);
  }
}

// ---- Cast -----------------------------------------------------------------------------------------------

const CAST_TYPES = [
  'int8',
  'int16',
  'int32',
  'int64',
  'float32',
  'float64',
  'boolean',
  'string',
  'bytes',
] as const;
type CastType = (typeof CAST_TYPES)[number];

function castValue(v: unknown, type: string, who: string): unknown {
  if (v === null || v === undefined) return null;
  const asNumber = (): number => {
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v instanceof BigDecimal) return v.toNumber();
    if (v instanceof Date) return v.getTime();
    const n = Number(typeof v === 'bigint' ? v.toString() : v);
    if (Number.isNaN(n)) throw new DataException(`${who}: cannot cast ${String(v)} to ${type}`);
    return n;
  };
  switch (type) {
    case 'int8':
    case 'int16':
    case 'int32': {
      const bits = type === 'int8' ? 8 : type === 'int16' ? 16 : 32;
      const n = Math.trunc(asNumber());
      return (n << (32 - bits)) >> (32 - bits);
    }
    case 'int64':
      if (typeof v === 'bigint') return v;
      if (typeof v === 'string' && /^[+-]?\d+$/.test(v.trim())) {
        const b = BigInt(v.trim());
        return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
      }
      return Math.trunc(asNumber());
    case 'float32':
      return Math.fround(asNumber());
    case 'float64':
      return asNumber();
    case 'boolean':
      if (typeof v === 'string') return v.trim().toLowerCase() === 'true';
      return asNumber() !== 0;
    case 'string':
      if (v instanceof Date) return v.toISOString();
      if (Buffer.isBuffer(v)) return v.toString('base64');
      return String(v);
    case 'bytes':
      if (Buffer.isBuffer(v)) return v;
      if (typeof v === 'string') return Buffer.from(v, 'base64');
      throw new DataException(`${who}: cannot cast ${typeof v} to bytes`);
    case 'decimal':
      return BigDecimal.parse(String(v));
    default:
      throw new DataException(`${who}: unsupported type ${type}`);
  }
}

export class Cast extends KeyOrValueTransform {
  private whole: CastType | null = null;
  private fields = new Map<string, CastType>();

  configure(props: Readonly<Record<string, string>>): void {
    const spec = listProp(props, 'spec');
    if (spec.length === 0) throw new ConfigException('Must specify at least one field to cast.');
    for (const item of spec) {
      const parts = item.split(':');
      const type = (parts.length === 1 ? parts[0]! : parts[1]!).trim().toLowerCase() as CastType;
      if (!CAST_TYPES.includes(type))
        throw ConfigException.invalid('spec', props.spec, `Invalid type found in casting spec: ${type}`);
      if (parts.length === 1) {
        if (spec.length > 1)
          throw ConfigException.invalid(
            'spec',
            props.spec,
            'Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec',
          );
        this.whole = type;
      } else if (parts.length === 2) this.fields.set(parts[0]!.trim(), type);
      else throw ConfigException.invalid('spec', props.spec, `Invalid cast mapping: ${item}`);
    }
  }

  config(): ConfigDef {
    return defWith([
      'spec',
      'LIST',
      undefined,
      'List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value.',
    ]);
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    if (value === null) return r;
    if (this.whole !== null) return this.replace(r, null, castValue(value, this.whole, 'Cast'));
    const out = { ...requireMap(value, 'cast types') };
    for (const [f, t] of this.fields) if (f in out) out[f] = castValue(out[f], t, 'Cast');
    return this.replace(r, null, out);
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    if (this.whole !== null) {
      const s = SchemaBuilder.type(this.whole);
      if (schema.optional) s.optional();
      return this.replace(r, s.build(), castValue(value, this.whole, 'Cast'));
    }
    const b = copySchemaBasics(schema);
    for (const f of schema.fields()) {
      const t = this.fields.get(f.name);
      if (t === undefined) b.field(f.name, f.schema);
      else {
        const s = SchemaBuilder.type(t);
        if (f.schema.optional) s.optional();
        b.field(f.name, s.build());
      }
    }
    const next = b.build();
    if (value === null) return this.replace(r, next, null);
    const struct = requireStruct(value, 'cast types');
    const out = new Struct(next);
    for (const f of schema.fields()) {
      const t = this.fields.get(f.name);
      const v = struct.getWithoutDefault(f.name) ?? null;
      out.put(f.name, t === undefined ? v : castValue(v, t, 'Cast'));
    }
    return this.replace(r, next, out);
  }
}

// ---- ValueToKey -----------------------------------------------------------------------------------------

export class ValueToKey implements Transformation {
  private fields: string[] = [];

  configure(props: Readonly<Record<string, string>>): void {
    this.fields = listProp(props, 'fields');
    if (this.fields.length === 0)
      throw new ConfigException('Missing required configuration "fields" which has no default value.');
  }

  config(): ConfigDef {
    return defWith([
      'fields',
      'LIST',
      undefined,
      'Field names on the record value to extract as the record key.',
    ]);
  }

  close(): void {}

  apply<R extends AnyRecord>(r: R): R | null {
    if (r.value === null) return r;
    if (r.valueSchema === null) {
      const value = requireMap(r.value, 'copying fields from value to key');
      const key: Record<string, unknown> = {};
      for (const f of this.fields) key[f] = value[f] ?? null;
      return r.newRecord({ keySchema: null, key }) as R;
    }
    const struct = requireStruct(r.value, 'copying fields from value to key');
    const b = SchemaBuilder.struct();
    for (const f of this.fields) {
      const field = r.valueSchema.field(f);
      if (field === undefined) throw new DataException(`Field does not exist: ${f}`);
      b.field(f, field.schema);
    }
    const keySchema = b.build();
    const key = new Struct(keySchema);
    for (const f of this.fields) key.put(f, struct.get(f));
    return r.newRecord({ keySchema, key }) as R;
  }
}

/** The `$Key` and `$Value` classes of a transform that works on either part of a record. */
export function keyAndValue(ctor: new (which: Which) => Transformation): {
  Key: new () => Transformation;
  Value: new () => Transformation;
} {
  const bound = (which: Which) =>
    // A constructor that returns an object makes `new` give that object: the transform bound to its part.
    class {
      constructor() {
        // biome-ignore lint/correctness/noConstructorReturn: binds the part of the record, see above.
        return new ctor(which);
      }
    } as unknown as new () => Transformation;
  return { Key: bound('key'), Value: bound('value') };
}
