// The Connect data model: schemas, structs, logical types and value checks (loaded together so that the schema
// builder's default check is installed).
export { BigDecimal } from './big-decimal.js';
export { ConnectDate, ConnectTime, ConnectTimestamp, Decimal, LOGICAL_NAMES } from './logical.js';
export {
  type Field,
  isPrimitive,
  SCHEMA_TYPES,
  Schema,
  SchemaBuilder,
  Schemas,
  type SchemaType,
} from './schema.js';
export { Struct, valuesEqual } from './struct.js';
export { validateValue } from './values.js';
