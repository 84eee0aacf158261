export { ByteArrayConverter } from './byte-array-converter.js';
export {
  type Converter,
  type ConverterClass,
  NULL_SCHEMA_AND_VALUE,
  type SchemaAndValue,
  withPrefixStripped,
} from './converter.js';
export { asConnectSchema, asJsonSchema, JsonConverter } from './json-converter.js';
export { parseJson, stringifyJson } from './json-text.js';
export { StringConverter } from './string-converter.js';
