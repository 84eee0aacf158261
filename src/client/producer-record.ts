// A record as the producer holds it before it joins a batch: headers in their encoded form, and an upper bound
// on the bytes it takes in a batch, which is what buffer.memory and batch.size count.

import type { EncodedHeader } from './batch-writer.js';
import type { HeadersInput } from './producer.js';

/** Most bytes a varint of a length, count or delta takes; a varlong (timestamp delta) takes at most 10. */
const VARINT_BYTES_MAX = 5;
/** Bound on a record's encoded bytes apart from its key, value and headers: length, attributes, deltas, count. */
const RECORD_OVERHEAD_MAX = VARINT_BYTES_MAX + 1 + 10 + VARINT_BYTES_MAX + 3 * VARINT_BYTES_MAX;

/** Headers as send() takes them (an object or a list, strings or bytes) as the batch writer takes them. */
export function encodeHeaders(h: HeadersInput): EncodedHeader[] {
  const entries = Array.isArray(h) ? h : Object.entries(h).map(([key, value]) => ({ key, value }));
  return entries.map((e) => ({ key: Buffer.from(e.key, 'utf8'), value: headerValue(e.value) }));
}

function headerValue(v: string | Buffer | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

/** An upper bound on the bytes a record takes in a batch, whatever its deltas: what buffer.memory counts. */
export function recordBytesBound(
  key: Buffer | null,
  value: Buffer | null,
  headers: EncodedHeader[] | undefined,
): number {
  let size = RECORD_OVERHEAD_MAX + (key === null ? 0 : key.length) + (value === null ? 0 : value.length);
  if (headers !== undefined) {
    for (const h of headers) size += 2 * VARINT_BYTES_MAX + h.key.length + (h.value?.length ?? 0);
  }
  return size;
}
