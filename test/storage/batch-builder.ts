// Test helper: builds valid RecordBatch v2 bytes (header, minimal records, CRC32C) without the protocol module's
// builder, so storage tests do not depend on work in progress elsewhere.

import { crc32c } from '@node-rs/crc32';
import { CRC_START } from '../../src/protocol/records/batch-header.js';

export interface BatchSpec {
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  /** Values of the records (null: a tombstone); each becomes one record, keyed by `keys`. */
  values?: (Buffer | null)[];
  /** Keys of the records, by index (null or missing: no key). */
  keys?: (Buffer | null)[];
  /** Number of records when `values` is not given (values are then `v<n>`). */
  count?: number;
  baseTimestamp?: number;
  /** Timestamp step between records, so maxTimestamp = baseTimestamp + (count - 1) * step. */
  timestampStepMs?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  /** A transaction marker: 0 = abort, 1 = commit. */
  control?: { type: 0 | 1; coordinatorEpoch: number };
}

function zigzag(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

function pushVarint(out: number[], value: number): void {
  let u = zigzag(value);
  while (u >= 0x80) {
    out.push((u % 0x80) | 0x80);
    u = Math.floor(u / 0x80);
  }
  out.push(u);
}

function encodeRecord(
  offsetDelta: number,
  timestampDelta: number,
  key: Buffer | null,
  value: Buffer | null,
): Buffer {
  const body: number[] = [];
  body.push(0); // attributes
  pushVarint(body, timestampDelta);
  pushVarint(body, offsetDelta);
  if (key === null) pushVarint(body, -1);
  else {
    pushVarint(body, key.length);
    body.push(...key);
  }
  if (value === null) pushVarint(body, -1);
  else {
    pushVarint(body, value.length);
    body.push(...value);
  }
  pushVarint(body, 0); // headers
  const prefix: number[] = [];
  pushVarint(prefix, body.length);
  return Buffer.from([...prefix, ...body]);
}

export function buildBatch(spec: BatchSpec = {}): Buffer {
  const baseTimestamp = spec.baseTimestamp ?? 1_700_000_000_000;
  const step = spec.timestampStepMs ?? 1;
  const records: Buffer[] = [];
  let count: number;
  if (spec.control !== undefined) {
    const key = Buffer.alloc(4);
    key.writeInt16BE(0, 0);
    key.writeInt16BE(spec.control.type, 2);
    const value = Buffer.alloc(6);
    value.writeInt16BE(0, 0);
    value.writeInt32BE(spec.control.coordinatorEpoch, 2);
    records.push(encodeRecord(0, 0, key, value));
    count = 1;
  } else {
    const values = spec.values ?? Array.from({ length: spec.count ?? 1 }, (_, i) => Buffer.from(`v${i}`));
    for (const [i, v] of values.entries()) records.push(encodeRecord(i, i * step, spec.keys?.[i] ?? null, v));
    count = values.length;
  }
  const body = Buffer.concat(records);
  const buf = Buffer.alloc(61 + body.length);
  buf.writeBigInt64BE(BigInt(spec.baseOffset ?? 0), 0);
  buf.writeInt32BE(buf.length - 12, 8);
  buf.writeInt32BE(spec.partitionLeaderEpoch ?? 0, 12);
  buf.writeInt8(2, 16);
  let attributes = 0;
  if (spec.transactional === true || spec.control !== undefined) attributes |= 0x10;
  if (spec.control !== undefined) attributes |= 0x20;
  buf.writeInt16BE(attributes, 21);
  buf.writeInt32BE(count - 1, 23);
  buf.writeBigInt64BE(BigInt(baseTimestamp), 27);
  const maxTimestamp = spec.control !== undefined ? baseTimestamp : baseTimestamp + (count - 1) * step;
  buf.writeBigInt64BE(BigInt(maxTimestamp), 35);
  buf.writeBigInt64BE(BigInt(spec.producerId ?? -1), 43);
  buf.writeInt16BE(spec.producerEpoch ?? -1, 51);
  buf.writeInt32BE(spec.baseSequence ?? -1, 53);
  buf.writeInt32BE(count, 57);
  body.copy(buf, 61);
  buf.writeUInt32BE(crc32c(buf.subarray(CRC_START)), 17);
  return buf;
}

/** Deterministic pseudo-random numbers (mulberry32), so a failing seed can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits a buffer of whole batches into the batches. */
export function splitBatches(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let pos = 0; pos < buf.length; ) {
    const size = 12 + buf.readInt32BE(pos + 8);
    out.push(buf.subarray(pos, pos + size));
    pos += size;
  }
  return out;
}
