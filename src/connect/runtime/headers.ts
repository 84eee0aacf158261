// Record headers between Kafka and Connect (a simplified SimpleHeaderConverter): Kafka header bytes become
// string headers with an optional string schema; Connect headers become bytes (strings as UTF-8, bytes as is,
// anything else as its JSON or text).

import type { ConnectHeader } from '../api/records.js';
import { JsonConverter } from '../converters/json-converter.js';
import { stringifyJson } from '../converters/json-text.js';
import { Schemas } from '../data/schema.js';
import { Struct } from '../data/struct.js';

export function toConnectHeaders(headers: readonly { key: string; value: Buffer | null }[]): ConnectHeader[] {
  return headers.map((h) => ({
    key: h.key,
    schema: Schemas.OPTIONAL_STRING,
    value: h.value === null ? null : h.value.toString('utf8'),
  }));
}

const plainJson = new JsonConverter();
plainJson.configure({ 'schemas.enable': 'false' });

export function fromConnectHeaders(
  headers: readonly ConnectHeader[],
): Array<{ key: string; value: Buffer | null }> {
  return headers.map((h) => ({ key: h.key, value: headerBytes(h) }));
}

function headerBytes(h: ConnectHeader): Buffer | null {
  const v = h.value;
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return v;
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v instanceof Struct) return plainJson.fromConnectData('', h.schema, v);
  if (typeof v === 'object' && !(v instanceof Date)) return Buffer.from(stringifyJson(v));
  return Buffer.from(v instanceof Date ? String(v.getTime()) : String(v), 'utf8');
}
