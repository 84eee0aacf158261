// Checks a value against a schema (Kafka's ConnectSchema.validateValue), with Kafka's messages, so that a
// connector's bad record fails where it is made rather than in a converter or a database.

import { DataException } from '../errors.js';
import { BigDecimal } from './big-decimal.js';
import { ConnectDate, ConnectTime, ConnectTimestamp, Decimal } from './logical.js';
import { type Schema, setDefaultValidator } from './schema.js';
import { Struct } from './struct.js';

const INT_RANGES: Record<string, [number, number]> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
};
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function validateValue(schema: Schema, value: unknown, field?: string): void {
  const where = field === undefined ? '' : ` for field: "${field}"`;
  if (value === null || value === undefined) {
    if (!schema.optional && !schema.hasDefault()) {
      throw new DataException(
        `Invalid value: null used for required field: "${field ?? ''}", schema type: ${schema.type.toUpperCase()}`,
      );
    }
    return;
  }
  const fail = (): never => {
    throw new DataException(
      `Invalid Java object for schema "${schema.name ?? schema.type.toUpperCase()}" with type ${schema.type.toUpperCase()}: ${describe(value)}${where}`,
    );
  };
  switch (schema.name) {
    case Decimal.LOGICAL_NAME:
      if (!(value instanceof BigDecimal)) fail();
      return;
    case ConnectDate.LOGICAL_NAME:
    case ConnectTime.LOGICAL_NAME:
    case ConnectTimestamp.LOGICAL_NAME:
      if (!(value instanceof Date)) fail();
      return;
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32': {
      const [lo, hi] = INT_RANGES[schema.type]!;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < lo || value > hi) fail();
      return;
    }
    case 'int64':
      if (typeof value === 'number' ? !Number.isSafeInteger(value) : typeof value !== 'bigint') fail();
      if (typeof value === 'bigint' && (value < INT64_MIN || value > INT64_MAX)) fail();
      return;
    case 'float32':
    case 'float64':
      if (typeof value !== 'number') fail();
      return;
    case 'boolean':
      if (typeof value !== 'boolean') fail();
      return;
    case 'string':
      if (typeof value !== 'string') fail();
      return;
    case 'bytes':
      if (!Buffer.isBuffer(value)) fail();
      return;
    case 'array':
      if (!Array.isArray(value)) fail();
      for (const item of value as unknown[]) validateValue(schema.valueSchema!, item, field);
      return;
    case 'map': {
      const entries =
        value instanceof Map
          ? [...value]
          : typeof value === 'object' && !Array.isArray(value)
            ? Object.entries(value as object)
            : fail();
      for (const [k, v] of entries) {
        validateValue(schema.keySchema!, k, field);
        validateValue(schema.valueSchema!, v, field);
      }
      return;
    }
    case 'struct': {
      if (!(value instanceof Struct)) fail();
      const struct = value as Struct;
      if (!struct.schema.equals(schema)) throw new DataException('Struct schemas do not match.');
      for (const f of schema.fields()) validateValue(f.schema, struct.get(f.name), f.name);
      return;
    }
  }
}

function describe(value: unknown): string {
  if (Buffer.isBuffer(value)) return 'Buffer';
  if (value instanceof Date) return 'Date';
  if (Array.isArray(value)) return 'Array';
  return typeof value === 'object' ? ((value as object).constructor?.name ?? 'object') : typeof value;
}

setDefaultValidator((schema, value) => validateValue(schema, value));
