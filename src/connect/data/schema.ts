// The Connect data model's schemas, as Kafka Connect defines them (org.apache.kafka.connect.data.Schema):
// primitive types, array, map and struct, each optional or not, with an optional default, name, version, doc
// and string parameters. Logical types (Decimal, Date, Time, Timestamp; logical.ts) are schemas of a primitive
// type with a well-known name. Schemas are immutable once built; SchemaBuilder builds them.
//
// Values in TypeScript: int8/int16/int32 and float32/float64 are numbers; int64 is a number when it is a safe
// integer and a bigint otherwise (both are accepted); boolean; string; bytes are Buffers; array is an Array;
// map is a Map (or a plain object for string keys); struct is a Struct. Logical types: see logical.ts.

import { ConnectException } from '../errors.js';

export type SchemaType =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float32'
  | 'float64'
  | 'boolean'
  | 'string'
  | 'bytes'
  | 'array'
  | 'map'
  | 'struct';

export const SCHEMA_TYPES: readonly SchemaType[] = [
  'int8',
  'int16',
  'int32',
  'int64',
  'float32',
  'float64',
  'boolean',
  'string',
  'bytes',
  'array',
  'map',
  'struct',
];

export function isPrimitive(type: SchemaType): boolean {
  return type !== 'array' && type !== 'map' && type !== 'struct';
}

export interface Field {
  readonly name: string;
  readonly index: number;
  readonly schema: Schema;
}

export interface SchemaProps {
  type: SchemaType;
  optional?: boolean;
  defaultValue?: unknown;
  name?: string | null;
  version?: number | null;
  doc?: string | null;
  parameters?: Record<string, string> | null;
  fields?: readonly Field[];
  keySchema?: Schema | null;
  valueSchema?: Schema | null;
}

export class Schema {
  readonly type: SchemaType;
  readonly optional: boolean;
  /** undefined when the schema has no default (null is a default for optional schemas). */
  readonly defaultValue: unknown;
  readonly name: string | null;
  readonly version: number | null;
  readonly doc: string | null;
  readonly parameters: Readonly<Record<string, string>> | null;
  private readonly fieldList: readonly Field[];
  private readonly fieldsByName: ReadonlyMap<string, Field>;
  readonly keySchema: Schema | null;
  readonly valueSchema: Schema | null;

  constructor(p: SchemaProps) {
    this.type = p.type;
    this.optional = p.optional ?? false;
    this.defaultValue = p.defaultValue;
    this.name = p.name ?? null;
    this.version = p.version ?? null;
    this.doc = p.doc ?? null;
    this.parameters = p.parameters ?? null;
    this.fieldList = p.fields ?? [];
    this.fieldsByName = new Map(this.fieldList.map((f) => [f.name, f]));
    this.keySchema = p.keySchema ?? null;
    this.valueSchema = p.valueSchema ?? null;
    if (this.type !== 'struct' && this.fieldList.length > 0) {
      throw new ConnectException(`Cannot create fields on type ${this.type}`);
    }
    if (this.type === 'array' && this.valueSchema === null) {
      throw new ConnectException('An array schema needs a value (items) schema');
    }
    if (this.type === 'map' && (this.keySchema === null || this.valueSchema === null)) {
      throw new ConnectException('A map schema needs a key and a value schema');
    }
  }

  fields(): readonly Field[] {
    if (this.type !== 'struct') throw new ConnectException('Cannot list fields on non-struct type');
    return this.fieldList;
  }

  field(name: string): Field | undefined {
    if (this.type !== 'struct') throw new ConnectException('Cannot look up fields on non-struct type');
    return this.fieldsByName.get(name);
  }

  hasDefault(): boolean {
    return this.defaultValue !== undefined;
  }

  /** A copy with other properties (fields, key and value schemas are kept unless given). */
  with(p: Partial<SchemaProps>): Schema {
    return new Schema({
      type: this.type,
      optional: this.optional,
      defaultValue: this.defaultValue,
      name: this.name,
      version: this.version,
      doc: this.doc,
      parameters: this.parameters === null ? null : { ...this.parameters },
      fields: this.fieldList,
      keySchema: this.keySchema,
      valueSchema: this.valueSchema,
      ...p,
    });
  }

  equals(other: Schema | null): boolean {
    if (other === null) return false;
    if (this === other) return true;
    if (
      this.type !== other.type ||
      this.optional !== other.optional ||
      this.name !== other.name ||
      this.version !== other.version ||
      this.doc !== other.doc ||
      JSON.stringify(this.parameters) !== JSON.stringify(other.parameters) ||
      !defaultsEqual(this.defaultValue, other.defaultValue)
    ) {
      return false;
    }
    if (this.type === 'struct') {
      const a = this.fieldList;
      const b = other.fieldList;
      if (a.length !== b.length) return false;
      return a.every((f, i) => f.name === b[i]!.name && f.schema.equals(b[i]!.schema));
    }
    if (this.keySchema !== null && !this.keySchema.equals(other.keySchema)) return false;
    if (this.valueSchema !== null && !this.valueSchema.equals(other.valueSchema)) return false;
    return true;
  }

  toString(): string {
    return this.name === null
      ? `Schema{${this.type.toUpperCase()}}`
      : `Schema{${this.name}:${this.type.toUpperCase()}}`;
  }
}

function defaultsEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return (
    JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) ===
    JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
  );
}

/** Builds a Schema step by step, as Kafka's SchemaBuilder: `SchemaBuilder.struct().name('x').field('id', Schema.INT32)`. */
export class SchemaBuilder {
  private p: SchemaProps;
  private readonly fieldList: Field[] = [];

  constructor(type: SchemaType) {
    this.p = { type };
  }

  static int8(): SchemaBuilder {
    return new SchemaBuilder('int8');
  }
  static int16(): SchemaBuilder {
    return new SchemaBuilder('int16');
  }
  static int32(): SchemaBuilder {
    return new SchemaBuilder('int32');
  }
  static int64(): SchemaBuilder {
    return new SchemaBuilder('int64');
  }
  static float32(): SchemaBuilder {
    return new SchemaBuilder('float32');
  }
  static float64(): SchemaBuilder {
    return new SchemaBuilder('float64');
  }
  static bool(): SchemaBuilder {
    return new SchemaBuilder('boolean');
  }
  static string(): SchemaBuilder {
    return new SchemaBuilder('string');
  }
  static bytes(): SchemaBuilder {
    return new SchemaBuilder('bytes');
  }
  static struct(): SchemaBuilder {
    return new SchemaBuilder('struct');
  }
  static array(valueSchema: Schema): SchemaBuilder {
    const b = new SchemaBuilder('array');
    b.p.valueSchema = valueSchema;
    return b;
  }
  static map(keySchema: Schema, valueSchema: Schema): SchemaBuilder {
    const b = new SchemaBuilder('map');
    b.p.keySchema = keySchema;
    b.p.valueSchema = valueSchema;
    return b;
  }
  static type(type: SchemaType): SchemaBuilder {
    return new SchemaBuilder(type);
  }

  optional(): this {
    this.p.optional = true;
    return this;
  }
  required(): this {
    this.p.optional = false;
    return this;
  }
  defaultValue(value: unknown): this {
    this.p.defaultValue = value;
    return this;
  }
  name(name: string): this {
    this.p.name = name;
    return this;
  }
  version(version: number): this {
    this.p.version = version;
    return this;
  }
  doc(doc: string): this {
    this.p.doc = doc;
    return this;
  }
  parameter(key: string, value: string): this {
    this.p.parameters = { ...(this.p.parameters ?? {}), [key]: value };
    return this;
  }
  field(name: string, schema: Schema): this {
    if (this.p.type !== 'struct') throw new ConnectException(`Cannot create fields on type ${this.p.type}`);
    if (this.fieldList.some((f) => f.name === name)) {
      throw new ConnectException(`Cannot create field because of field name duplication ${name}`);
    }
    this.fieldList.push({ name, index: this.fieldList.length, schema });
    return this;
  }

  build(): Schema {
    const schema = new Schema({ ...this.p, fields: [...this.fieldList] });
    if (schema.hasDefault() && schema.defaultValue !== null) {
      // Imported lazily in spirit: validation lives in values.ts, which imports this module.
      validateDefault?.(schema, schema.defaultValue);
    }
    return schema;
  }
}

/** Set by values.ts so that a builder checks its default without a circular import at load time. */
let validateDefault: ((schema: Schema, value: unknown) => void) | undefined;
export function setDefaultValidator(fn: (schema: Schema, value: unknown) => void): void {
  validateDefault = fn;
}

function primitive(type: SchemaType, optional: boolean): Schema {
  return new Schema({ type, optional });
}

/** The predefined schemas of Kafka's Schema interface (Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA...). */
export const Schemas = {
  INT8: primitive('int8', false),
  INT16: primitive('int16', false),
  INT32: primitive('int32', false),
  INT64: primitive('int64', false),
  FLOAT32: primitive('float32', false),
  FLOAT64: primitive('float64', false),
  BOOLEAN: primitive('boolean', false),
  STRING: primitive('string', false),
  BYTES: primitive('bytes', false),
  OPTIONAL_INT8: primitive('int8', true),
  OPTIONAL_INT16: primitive('int16', true),
  OPTIONAL_INT32: primitive('int32', true),
  OPTIONAL_INT64: primitive('int64', true),
  OPTIONAL_FLOAT32: primitive('float32', true),
  OPTIONAL_FLOAT64: primitive('float64', true),
  OPTIONAL_BOOLEAN: primitive('boolean', true),
  OPTIONAL_STRING: primitive('string', true),
  OPTIONAL_BYTES: primitive('bytes', true),
} as const;
