// Mapping between PostgreSQL column types and the Connect data model, both ways, with the JDBC connectors'
// choices: int2/int4/int8 as INT16/INT32/INT64, real/double as FLOAT32/FLOAT64, numeric as Decimal (or with
// numeric.mapping=best_fit an integer or double when precision allows), date/time/timestamp(tz) as the logical
// Date/Time/Timestamp, bytea as BYTES, everything else (text, varchar, uuid, json...) as STRING.
// Values travel as PostgreSQL's text in both directions (connection.ts turns pg's parsing off).

import { BigDecimal } from '../../data/big-decimal.js';
import { ConnectDate, ConnectTime, ConnectTimestamp, Decimal } from '../../data/logical.js';
import { type Schema, SchemaBuilder } from '../../data/schema.js';
import { DataException } from '../../errors.js';

export interface ColumnInfo {
  name: string;
  /** information_schema data_type, e.g. "integer", "numeric", "timestamp without time zone". */
  dataType: string;
  nullable: boolean;
  numericPrecision: number | null;
  numericScale: number | null;
}

export function columnSchema(c: ColumnInfo, numericMapping: 'none' | 'best_fit'): Schema {
  const b = builderFor(c, numericMapping);
  if (c.nullable) b.optional();
  return b.build();
}

function builderFor(c: ColumnInfo, numericMapping: 'none' | 'best_fit'): SchemaBuilder {
  switch (c.dataType) {
    case 'smallint':
      return SchemaBuilder.int16();
    case 'integer':
      return SchemaBuilder.int32();
    case 'bigint':
      return SchemaBuilder.int64();
    case 'real':
      return SchemaBuilder.float32();
    case 'double precision':
      return SchemaBuilder.float64();
    case 'boolean':
      return SchemaBuilder.bool();
    case 'bytea':
      return SchemaBuilder.bytes();
    case 'numeric': {
      // An unconstrained NUMERIC has no scale to give a Decimal schema: its exact text is kept as a string.
      if (c.numericScale === null) return SchemaBuilder.string();
      const scale = c.numericScale;
      const precision = c.numericPrecision;
      if (numericMapping === 'best_fit' && precision !== null) {
        if (scale === 0 && precision < 3) return SchemaBuilder.int8();
        if (scale === 0 && precision < 5) return SchemaBuilder.int16();
        if (scale === 0 && precision < 10) return SchemaBuilder.int32();
        if (scale === 0 && precision < 19) return SchemaBuilder.int64();
        if (scale > 0 && precision < 19) return SchemaBuilder.float64();
      }
      return Decimal.builder(scale);
    }
    case 'date':
      return ConnectDate.builder();
    case 'time without time zone':
      return ConnectTime.builder();
    case 'timestamp without time zone':
    case 'timestamp with time zone':
      return ConnectTimestamp.builder();
    default:
      return SchemaBuilder.string();
  }
}

/** A column's text (or bytea Buffer) as a Connect value of its schema. */
export function fromText(schema: Schema, text: unknown): unknown {
  if (text === null || text === undefined) return null;
  if (Buffer.isBuffer(text)) return text;
  const s = String(text);
  switch (schema.name) {
    case Decimal.LOGICAL_NAME:
      return BigDecimal.parse(s).setScale(Decimal.scaleOf(schema));
    case ConnectDate.LOGICAL_NAME:
      return new Date(`${s}T00:00:00Z`);
    case ConnectTime.LOGICAL_NAME:
      return new Date(`1970-01-01T${s}Z`);
    case ConnectTimestamp.LOGICAL_NAME:
      return parseTimestamp(s).date;
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
    case 'float32':
    case 'float64':
      return Number(s);
    case 'int64': {
      const n = Number(s);
      return Number.isSafeInteger(n) ? n : BigInt(s);
    }
    case 'boolean':
      return s === 't' || s === 'true';
    default:
      return s;
  }
}

/**
 * PostgreSQL's timestamp text ("2024-02-29 12:34:56.123456" or with "+00"), in UTC: the Date (milliseconds) and
 * the nanoseconds within the second, which the source keeps in its offsets so that no row is read twice.
 */
export function parseTimestamp(text: string): { date: Date; nanos: number } {
  const m =
    /^(\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([+-]\d\d)(?::?(\d\d))?)?$/.exec(
      text.trim(),
    );
  if (m === null) throw new DataException(`Not a PostgreSQL timestamp: ${text}`);
  const fraction = (m[7] ?? '').padEnd(9, '0');
  const nanos = Number(fraction);
  const offsetMinutes =
    m[8] === undefined ? 0 : Number(m[8]) * 60 + Math.sign(Number(m[8]) || 1) * Number(m[9] ?? 0);
  const ms =
    Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) +
    Math.floor(nanos / 1e6) -
    offsetMinutes * 60_000;
  return { date: new Date(ms), nanos };
}

/** A timestamp as PostgreSQL text in UTC with all nine fraction digits kept (for queries on the offset). */
export function timestampText(ms: number, nanos: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const base = d.toISOString().slice(0, 19).replace('T', ' ');
  return `${base}.${String(nanos).padStart(9, '0').slice(0, 6)}`;
}

/** The SQL type of a column made for a Connect schema (auto.create, auto.evolve). */
export function sqlType(schema: Schema): string {
  switch (schema.name) {
    case Decimal.LOGICAL_NAME:
      return 'DECIMAL';
    case ConnectDate.LOGICAL_NAME:
      return 'DATE';
    case ConnectTime.LOGICAL_NAME:
      return 'TIME';
    case ConnectTimestamp.LOGICAL_NAME:
      return 'TIMESTAMP';
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
      return 'SMALLINT';
    case 'int32':
      return 'INT';
    case 'int64':
      return 'BIGINT';
    case 'float32':
      return 'REAL';
    case 'float64':
      return 'DOUBLE PRECISION';
    case 'boolean':
      return 'BOOLEAN';
    case 'string':
      return 'TEXT';
    case 'bytes':
      return 'BYTEA';
    default:
      throw new DataException(
        `No PostgreSQL type for ${schema.type.toUpperCase()} (schema ${schema.name ?? 'unnamed'})`,
      );
  }
}

/** A Connect value as a query parameter (text, or a Buffer for bytea). */
export function toParam(schema: Schema | null, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof BigDecimal) return value.toString();
  if (value instanceof Date) {
    const iso = value.toISOString();
    if (schema?.name === ConnectDate.LOGICAL_NAME) return iso.slice(0, 10);
    if (schema?.name === ConnectTime.LOGICAL_NAME) return iso.slice(11, 23);
    return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
  }
  if (typeof value === 'bigint') return value.toString();
  if (
    typeof value === 'boolean' ||
    typeof value === 'number' ||
    typeof value === 'string' ||
    Buffer.isBuffer(value)
  )
    return value;
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}

/** Type names of the built-in type OIDs the connectors map; other types are read as text. */
const OID_TYPES: Record<number, string> = {
  16: 'boolean',
  17: 'bytea',
  20: 'bigint',
  21: 'smallint',
  23: 'integer',
  700: 'real',
  701: 'double precision',
  1082: 'date',
  1083: 'time without time zone',
  1114: 'timestamp without time zone',
  1184: 'timestamp with time zone',
  1700: 'numeric',
};

const NUMERIC_OID = 1700;

/** A column known by its type OID and modifier (a query's row description, a pgoutput Relation). */
export function columnOfOid(name: string, oid: number, typeModifier: number, nullable: boolean): ColumnInfo {
  // NUMERIC(p,s) is encoded in the modifier as ((p << 16) | s) + 4; -1 when unconstrained.
  const numeric = oid === NUMERIC_OID && typeModifier >= 4;
  return {
    name,
    dataType: OID_TYPES[oid] ?? 'text',
    nullable,
    numericPrecision: numeric ? ((typeModifier - 4) >> 16) & 0xffff : null,
    numericScale: numeric ? (typeModifier - 4) & 0xffff : null,
  };
}
