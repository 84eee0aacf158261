// JsonConverter (org.apache.kafka.connect.json.JsonConverter) with Kafka's wire format, so that records it
// writes read the same with Kafka's own converter and back:
// - schemas.enable=true (default): {"schema": <schema as JSON>, "payload": <value>}; a schema written as
//   {"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"x"}.
// - schemas.enable=false: the value alone; reading gives schemaless data (objects, arrays, numbers, strings).
// - bytes are base64 text; Decimal is base64 of the unscaled two's complement bytes, or a JSON number with
//   decimal.format=NUMERIC; Date, Time and Timestamp are their int32/int64 encodings.
// - replace.null.with.default (default true): a null with a schema default is written as the default.

import type { ConfigDef } from '../api/config-def.js';
import { BigDecimal } from '../data/big-decimal.js';
import { ConnectDate, ConnectTime, ConnectTimestamp, Decimal } from '../data/logical.js';
import { type Field, SCHEMA_TYPES, Schema, type SchemaType } from '../data/schema.js';
import { Struct } from '../data/struct.js';
import { validateValue } from '../data/values.js';
import { ConfigException, DataException } from '../errors.js';
import type { Converter, SchemaAndValue } from './converter.js';
import { jsonConverterConfigDef } from './converter-configs.js';
import { parseJson, RawJsonNumber, stringifyJson } from './json-text.js';

type Json = unknown;

export interface JsonConverterConfig {
  schemasEnable: boolean;
  decimalFormat: 'BASE64' | 'NUMERIC';
  replaceNullWithDefault: boolean;
}

export class JsonConverter implements Converter {
  private c: JsonConverterConfig = {
    schemasEnable: true,
    decimalFormat: 'BASE64',
    replaceNullWithDefault: true,
  };

  config(): ConfigDef {
    return jsonConverterConfigDef();
  }

  configure(configs: Readonly<Record<string, string>>, _isKey?: boolean): void {
    this.c = {
      schemasEnable: parseBool(configs, 'schemas.enable', true),
      decimalFormat: parseDecimalFormat(configs['decimal.format']),
      replaceNullWithDefault: parseBool(configs, 'replace.null.with.default', true),
    };
  }

  get schemasEnabled(): boolean {
    return this.c.schemasEnable;
  }

  fromConnectData(_topic: string, schema: Schema | null, value: unknown): Buffer | null {
    if (schema === null && (value === null || value === undefined)) return null;
    const payload = this.toJson(schema, value);
    const json = this.c.schemasEnable
      ? { schema: schema === null ? null : asJsonSchema(schema), payload }
      : payload;
    return Buffer.from(stringifyJson(json));
  }

  toConnectData(_topic: string, value: Buffer | null): SchemaAndValue {
    if (value === null) return { schema: null, value: null };
    let json: Json;
    try {
      json = parseJson(value.toString('utf8'));
    } catch (err) {
      throw new DataException(
        `Converting byte[] to Kafka Connect data failed due to serialization error: ${(err as Error).message}`,
      );
    }
    if (this.c.schemasEnable) {
      if (!isObject(json) || Object.keys(json).length !== 2 || !('schema' in json) || !('payload' in json)) {
        throw new DataException(
          'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. ' +
            'If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.',
        );
      }
      const schema = json.schema === null ? null : asConnectSchema(json.schema);
      return { schema, value: toConnect(schema, json.payload) };
    }
    return { schema: null, value: toConnect(null, json) };
  }

  /** Connect data as a JSON tree (bigints and RawJsonNumbers for exact numbers). */
  toJson(schema: Schema | null, value: unknown): Json {
    if (value === null || value === undefined) {
      if (schema === null) return null;
      if (schema.hasDefault() && schema.defaultValue !== null && this.c.replaceNullWithDefault) {
        return this.toJson(schema, schema.defaultValue);
      }
      if (schema.optional) return null;
      throw new DataException(
        'Conversion error: null value for field that is required and has no default value',
      );
    }
    if (schema === null) return this.schemalessToJson(value);
    validateValue(schema, value);
    switch (schema.name) {
      case Decimal.LOGICAL_NAME: {
        const d = value as BigDecimal;
        if (this.c.decimalFormat === 'NUMERIC')
          return new RawJsonNumber(d.setScale(Decimal.scaleOf(schema)).toString());
        return Decimal.fromLogical(schema, d).toString('base64');
      }
      case ConnectDate.LOGICAL_NAME:
        return ConnectDate.fromLogical(schema, value as Date);
      case ConnectTime.LOGICAL_NAME:
        return ConnectTime.fromLogical(schema, value as Date);
      case ConnectTimestamp.LOGICAL_NAME:
        return ConnectTimestamp.fromLogical(schema, value as Date);
    }
    switch (schema.type) {
      case 'bytes':
        return (value as Buffer).toString('base64');
      case 'array':
        return (value as unknown[]).map((v) => this.toJson(schema.valueSchema, v));
      case 'map': {
        const entries = value instanceof Map ? [...value] : Object.entries(value as object);
        if (schema.keySchema!.type === 'string') {
          const out: Record<string, Json> = {};
          for (const [k, v] of entries) out[k as string] = this.toJson(schema.valueSchema, v);
          return out;
        }
        return entries.map(([k, v]) => [
          this.toJson(schema.keySchema, k),
          this.toJson(schema.valueSchema, v),
        ]);
      }
      case 'struct': {
        const struct = value as Struct;
        const out: Record<string, Json> = {};
        for (const f of schema.fields())
          out[f.name] = this.toJson(f.schema, struct.getWithoutDefault(f.name) ?? null);
        return out;
      }
      default:
        return value;
    }
  }

  private schemalessToJson(value: unknown): Json {
    if (value === null || value === undefined) return null;
    if (Buffer.isBuffer(value)) return value.toString('base64');
    if (value instanceof Struct) return this.toJson(value.schema, value);
    if (value instanceof BigDecimal) return new RawJsonNumber(value.toString());
    if (value instanceof Date) return value.getTime();
    if (Array.isArray(value)) return value.map((v) => this.schemalessToJson(v));
    if (value instanceof Map) {
      const entries = [...value];
      if (entries.every(([k]) => typeof k === 'string')) {
        return Object.fromEntries(entries.map(([k, v]) => [k, this.schemalessToJson(v)]));
      }
      return entries.map(([k, v]) => [this.schemalessToJson(k), this.schemalessToJson(v)]);
    }
    if (typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.schemalessToJson(v)]));
    }
    return value;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJsonNumber);
}

function parseBool(configs: Readonly<Record<string, string>>, key: string, dflt: boolean): boolean {
  const v = configs[key];
  if (v === undefined) return dflt;
  const t = v.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw ConfigException.invalid(key, v, 'Expected value to be either true or false');
}

function parseDecimalFormat(v: string | undefined): 'BASE64' | 'NUMERIC' {
  if (v === undefined) return 'BASE64';
  const t = v.trim().toUpperCase();
  if (t === 'BASE64' || t === 'NUMERIC') return t;
  throw ConfigException.invalid(
    'decimal.format',
    v,
    'String must be one of (case insensitive): BASE64, NUMERIC',
  );
}

/** A schema as Kafka's JsonConverter writes it (key order as Kafka's: type, fields/items/keys, optional, ...). */
export function asJsonSchema(schema: Schema): Record<string, Json> {
  const out: Record<string, Json> = { type: schema.type };
  if (schema.type === 'struct') {
    out.fields = schema.fields().map((f) => ({ ...asJsonSchema(f.schema), field: f.name }));
  } else if (schema.type === 'array') {
    out.items = asJsonSchema(schema.valueSchema!);
  } else if (schema.type === 'map') {
    out.keys = asJsonSchema(schema.keySchema!);
    out.values = asJsonSchema(schema.valueSchema!);
  }
  out.optional = schema.optional;
  if (schema.hasDefault()) {
    out.default = new JsonConverter().toJson(
      schema.with({ defaultValue: undefined, optional: true }),
      schema.defaultValue,
    );
  }
  if (schema.name !== null) out.name = schema.name;
  if (schema.version !== null) out.version = schema.version;
  if (schema.doc !== null) out.doc = schema.doc;
  if (schema.parameters !== null) out.parameters = { ...schema.parameters };
  return out;
}

/** Reads a schema written as JSON (the envelope's "schema"). */
export function asConnectSchema(json: Json): Schema {
  if (!isObject(json)) throw new DataException('Schema must be a JSON object');
  const type = json.type;
  if (typeof type !== 'string') throw new DataException("Schema must contain 'type' field");
  if (!SCHEMA_TYPES.includes(type as SchemaType)) throw new DataException(`Unknown schema type: ${type}`);
  let fields: Field[] | undefined;
  let keySchema: Schema | null = null;
  let valueSchema: Schema | null = null;
  if (type === 'struct') {
    if (!Array.isArray(json.fields))
      throw new DataException('Struct schema\'s "fields" argument is not an array.');
    fields = json.fields.map((f, index) => {
      if (!isObject(f) || typeof f.field !== 'string') {
        throw new DataException("Struct schema's field name not specified properly");
      }
      return { name: f.field, index, schema: asConnectSchema(f) };
    });
  } else if (type === 'array') {
    if (json.items === undefined || json.items === null)
      throw new DataException('Array schema did not specify the element type');
    valueSchema = asConnectSchema(json.items);
  } else if (type === 'map') {
    if (json.keys === undefined || json.values === undefined)
      throw new DataException('Map schema did not specify the key and value types');
    keySchema = asConnectSchema(json.keys);
    valueSchema = asConnectSchema(json.values);
  }
  // As Kafka: a schema is optional only when it says so.
  const optional = json.optional === true;
  if (json.optional !== undefined && typeof json.optional !== 'boolean') {
    throw new DataException('Schema\'s "optional" field must be a boolean');
  }
  const parameters = isObject(json.parameters)
    ? Object.fromEntries(Object.entries(json.parameters).map(([k, v]) => [k, String(v)]))
    : null;
  let schema = new Schema({
    type: type as SchemaType,
    optional,
    name: typeof json.name === 'string' ? json.name : null,
    version: typeof json.version === 'number' ? json.version : null,
    doc: typeof json.doc === 'string' ? json.doc : null,
    parameters,
    fields,
    keySchema,
    valueSchema,
  });
  if (json.default !== undefined) {
    schema = schema.with({ defaultValue: toConnect(schema.with({ optional: true }), json.default) });
  }
  return schema;
}

/** A JSON tree as Connect data for a schema (or schemaless data for a null schema). */
export function toConnect(schema: Schema | null, json: Json): unknown {
  if (json === null || json === undefined) {
    if (schema === null) return null;
    if (schema.hasDefault()) return schema.defaultValue;
    if (schema.optional) return null;
    throw new DataException(`Invalid null value for required ${schema.type.toUpperCase()} field`);
  }
  if (schema === null) return schemaless(json);
  const mismatch = (): never => {
    throw new DataException(`Invalid value for ${schema.type.toUpperCase()} field: ${stringifyJson(json)}`);
  };
  switch (schema.name) {
    case Decimal.LOGICAL_NAME: {
      if (typeof json === 'string') return Decimal.toLogical(schema, Buffer.from(json, 'base64'));
      if (typeof json === 'number' || typeof json === 'bigint' || json instanceof RawJsonNumber) {
        const text = json instanceof RawJsonNumber ? json.text : String(json);
        return BigDecimal.parse(text).setScale(Decimal.scaleOf(schema));
      }
      return mismatch();
    }
    case ConnectDate.LOGICAL_NAME:
      if (typeof json !== 'number' || !Number.isInteger(json)) mismatch();
      return ConnectDate.toLogical(schema, json as number);
    case ConnectTime.LOGICAL_NAME:
      if (typeof json !== 'number' || !Number.isInteger(json)) mismatch();
      return ConnectTime.toLogical(schema, json as number);
    case ConnectTimestamp.LOGICAL_NAME:
      if (typeof json !== 'number' && typeof json !== 'bigint') mismatch();
      return ConnectTimestamp.toLogical(schema, json as number);
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
      if (typeof json !== 'number' || !Number.isInteger(json)) mismatch();
      validateValue(schema, json);
      return json;
    case 'int64':
      if (typeof json === 'bigint') return json;
      if (typeof json !== 'number' || !Number.isInteger(json)) mismatch();
      return json;
    case 'float32':
    case 'float64':
      if (typeof json === 'bigint') return Number(json);
      if (json instanceof RawJsonNumber) return Number(json.text);
      if (typeof json !== 'number') mismatch();
      return json;
    case 'boolean':
      if (typeof json !== 'boolean') mismatch();
      return json;
    case 'string':
      if (typeof json !== 'string') mismatch();
      return json;
    case 'bytes':
      if (typeof json !== 'string') mismatch();
      return Buffer.from(json as string, 'base64');
    case 'array':
      if (!Array.isArray(json)) mismatch();
      return (json as Json[]).map((v) => toConnect(schema.valueSchema, v));
    case 'map': {
      const out = new Map<unknown, unknown>();
      if (schema.keySchema!.type === 'string') {
        if (!isObject(json)) mismatch();
        for (const [k, v] of Object.entries(json as object)) out.set(k, toConnect(schema.valueSchema, v));
      } else {
        if (!Array.isArray(json)) mismatch();
        for (const pair of json as Json[]) {
          if (!Array.isArray(pair) || pair.length !== 2) {
            throw new DataException('Found invalid map entry instead of array tuple');
          }
          out.set(toConnect(schema.keySchema, pair[0]), toConnect(schema.valueSchema, pair[1]));
        }
      }
      return out;
    }
    case 'struct': {
      if (!isObject(json)) mismatch();
      const struct = new Struct(schema);
      for (const f of schema.fields())
        struct.put(f.name, toConnect(f.schema, (json as Record<string, Json>)[f.name]));
      return struct;
    }
  }
}

/** Schemaless JSON as plain values: exact-text numbers become doubles, as Kafka reads them. */
function schemaless(json: Json): unknown {
  if (json instanceof RawJsonNumber) return Number(json.text);
  if (Array.isArray(json)) return json.map(schemaless);
  if (isObject(json)) return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, schemaless(v)]));
  return json;
}
