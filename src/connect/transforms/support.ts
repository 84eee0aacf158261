// What the built-in transforms share: working on a record's key or value (Kafka's `$Key` and `$Value`
// variants), with a schema (Struct) or without (a plain object, Kafka's Map), and Kafka's messages for data
// of the wrong shape.

import { ConfigDef } from '../api/config-def.js';
import type { ConnectRecordFields } from '../api/records.js';
import { type Schema, SchemaBuilder } from '../data/schema.js';
import { Struct } from '../data/struct.js';
import { DataException } from '../errors.js';
import type { AnyRecord, Transformation } from './transformation.js';

export type Which = 'key' | 'value';

export abstract class KeyOrValueTransform implements Transformation {
  constructor(protected readonly which: Which) {}

  abstract configure(props: Readonly<Record<string, string>>): void;
  abstract config(): ConfigDef;
  close(): void {}

  protected schemaOf(r: AnyRecord): Schema | null {
    return this.which === 'key' ? r.keySchema : r.valueSchema;
  }

  protected valueOf(r: AnyRecord): unknown {
    return this.which === 'key' ? r.key : r.value;
  }

  protected replace<R extends AnyRecord>(r: R, schema: Schema | null, value: unknown): R {
    const changes: Partial<ConnectRecordFields> =
      this.which === 'key' ? { keySchema: schema, key: value } : { valueSchema: schema, value };
    return r.newRecord(changes) as R;
  }

  apply<R extends AnyRecord>(record: R): R | null {
    const value = this.valueOf(record);
    const schema = this.schemaOf(record);
    if (schema === null) return this.applySchemaless(record, value);
    return this.applyWithSchema(record, schema, value);
  }

  protected abstract applySchemaless<R extends AnyRecord>(record: R, value: unknown): R | null;
  protected abstract applyWithSchema<R extends AnyRecord>(
    record: R,
    schema: Schema,
    value: unknown,
  ): R | null;
}

export function requireMap(value: unknown, purpose: string): Record<string, unknown> {
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    value instanceof Struct ||
    Buffer.isBuffer(value)
  ) {
    throw new DataException(
      `Only Map objects supported in absence of schema for [${purpose}], found: ${typeName(value)}`,
    );
  }
  if (value instanceof Map) return Object.fromEntries(value);
  return value as Record<string, unknown>;
}

export function requireStruct(value: unknown, purpose: string): Struct {
  if (!(value instanceof Struct)) {
    throw new DataException(`Only Struct objects supported for [${purpose}], found: ${typeName(value)}`);
  }
  return value;
}

export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Buffer.isBuffer(value)) return 'byte[]';
  if (Array.isArray(value)) return 'java.util.ArrayList';
  if (value instanceof Struct) return 'org.apache.kafka.connect.data.Struct';
  if (typeof value === 'string') return 'java.lang.String';
  if (typeof value === 'number') return 'java.lang.Number';
  if (typeof value === 'boolean') return 'java.lang.Boolean';
  return (value as object).constructor?.name ?? typeof value;
}

/** A builder with a schema's own properties (name, version, doc, optional, parameters) and no fields yet. */
export function copySchemaBasics(schema: Schema): SchemaBuilder {
  const b = SchemaBuilder.struct();
  if (schema.name !== null) b.name(schema.name);
  if (schema.version !== null) b.version(schema.version);
  if (schema.doc !== null) b.doc(schema.doc);
  if (schema.optional) b.optional();
  for (const [k, v] of Object.entries(schema.parameters ?? {})) b.parameter(k, v);
  return b;
}

export function listProp(props: Readonly<Record<string, string>>, key: string): string[] {
  const v = props[key];
  if (v === undefined) return [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function defWith(
  ...keys: [name: string, type: 'STRING' | 'LIST', defaultValue: string | undefined, doc: string][]
): ConfigDef {
  const def = new ConfigDef();
  for (const [name, type, defaultValue, documentation] of keys) {
    if (defaultValue === undefined) def.define({ name, type, importance: 'HIGH', documentation });
    else def.define({ name, type, defaultValue, importance: 'MEDIUM', documentation });
  }
  return def;
}
