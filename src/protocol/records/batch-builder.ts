// Building v2 batches: Brook's producer, the broker's transaction markers, tests and the benchmark generator
// all create batches here. The result is one Buffer with the CRC filled in; the broker later overwrites
// baseOffset and partitionLeaderEpoch, which the CRC does not cover.
//
// Timestamps follow Kafka's builder: baseTimestamp is the first record's timestamp (or the delete horizon when
// one is set), maxTimestamp the largest record timestamp, or the append time for a LogAppendTime batch.

import { assert } from '../../common/assert.js';
import { compress } from '../compression/codecs.js';
import { isCompressionType } from '../compression/compression-type.js';
import { writeBatchCrc } from './batch-crc.js';
import {
  ATTRIBUTES,
  Attribute,
  BASE_OFFSET,
  BASE_SEQUENCE,
  BASE_TIMESTAMP,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH,
  CompressionType,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAGIC,
  MAX_TIMESTAMP,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  PARTITION_LEADER_EPOCH,
  PRODUCER_EPOCH,
  PRODUCER_ID,
  RECORDS_COUNT,
} from './batch-header.js';
import { ControlRecordType, encodeControlKey, encodeEndTxnMarker } from './control-record.js';
import { type RecordToWrite, recordBodySize, writeRecord } from './record.js';
import { varintSize } from './varint.js';

export type BytesInput = Uint8Array | string | null | undefined;

export interface RecordInput {
  key?: BytesInput;
  value?: BytesInput;
  headers?: ReadonlyArray<{ key: string; value?: BytesInput }>;
  /** Milliseconds since the epoch; defaults to the batch's `timestamp` option. */
  timestamp?: number;
  /** Offset relative to the batch; defaults to the record's index. Must increase. */
  offsetDelta?: number;
}

export interface BatchOptions {
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  compression?: number;
  compressionLevel?: number;
  /** Mark the batch LogAppendTime; maxTimestamp is then `logAppendTimeMs`. */
  logAppendTimeMs?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  /** Sets the delete-horizon bit and stores the horizon in baseTimestamp (compaction, KIP-534). */
  deleteHorizonMs?: number;
  /** Timestamp of records that carry none; defaults to the current time. */
  timestamp?: number;
  /** For an empty batch (compaction keeps them for producer state), the offset range it covers. */
  lastOffsetDelta?: number;
}

function toBytes(input: BytesInput): Uint8Array | null {
  if (input === null || input === undefined) return null;
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
}

function byteLength(input: BytesInput): number {
  if (input === null || input === undefined) return 0;
  return typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length;
}

/** Varint bytes reserved for a length, count or delta whose value is not known yet (the most a varint takes). */
const VARINT_BYTES_MAX = 5;
const VARLONG_BYTES_MAX = 10;

/**
 * An upper bound on the bytes `input` takes in an uncompressed batch, whatever its offset and timestamp delta:
 * what a producer adds up to decide when a batch is full (batch.size) before building it.
 */
export function estimateRecordBytes(input: RecordInput): number {
  let size = VARINT_BYTES_MAX + 1 + VARLONG_BYTES_MAX + VARINT_BYTES_MAX;
  size += VARINT_BYTES_MAX + byteLength(input.key) + VARINT_BYTES_MAX + byteLength(input.value);
  size += VARINT_BYTES_MAX;
  for (const h of input.headers ?? []) {
    size += VARINT_BYTES_MAX + Buffer.byteLength(h.key, 'utf8') + VARINT_BYTES_MAX + byteLength(h.value);
  }
  return size;
}

interface Prepared {
  records: RecordToWrite[];
  bodySizes: number[];
  bytes: number;
  baseTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
}

function prepare(inputs: readonly RecordInput[], options: BatchOptions): Prepared {
  const defaultTimestamp = options.timestamp ?? Date.now();
  const timestamps = inputs.map((r) => r.timestamp ?? defaultTimestamp);
  const baseTimestamp = options.deleteHorizonMs ?? (timestamps.length > 0 ? timestamps[0]! : NO_TIMESTAMP);
  let maxTimestamp = NO_TIMESTAMP;
  const records: RecordToWrite[] = [];
  const bodySizes: number[] = [];
  let bytes = 0;
  let lastOffsetDelta = -1;
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    const offsetDelta = input.offsetDelta ?? i;
    assert(offsetDelta > lastOffsetDelta, `offset deltas must increase (record ${i})`);
    assert(offsetDelta <= 0x7fff_ffff, `offset delta ${offsetDelta} does not fit in int32`);
    lastOffsetDelta = offsetDelta;
    maxTimestamp = Math.max(maxTimestamp, timestamps[i]!);
    const record: RecordToWrite = {
      timestampDelta: timestamps[i]! - baseTimestamp,
      offsetDelta,
      key: toBytes(input.key),
      value: toBytes(input.value),
      headers: (input.headers ?? []).map((h) => ({
        key: Buffer.from(h.key, 'utf8'),
        value: toBytes(h.value),
      })),
    };
    const body = recordBodySize(record);
    records.push(record);
    bodySizes.push(body);
    bytes += varintSize(body) + body;
  }
  if (inputs.length === 0) lastOffsetDelta = options.lastOffsetDelta ?? 0;
  if (options.logAppendTimeMs !== undefined) maxTimestamp = options.logAppendTimeMs;
  return { records, bodySizes, bytes, baseTimestamp, maxTimestamp, lastOffsetDelta };
}

function attributesOf(options: BatchOptions, codec: number): number {
  let attributes = codec;
  if (options.logAppendTimeMs !== undefined) attributes |= Attribute.TimestampTypeLogAppend;
  if (options.transactional) attributes |= Attribute.Transactional;
  if (options.control) attributes |= Attribute.Control;
  if (options.deleteHorizonMs !== undefined) attributes |= Attribute.DeleteHorizon;
  return attributes;
}

/** Writes every header field but the CRC into buf at pos. */
function writeHeader(buf: Buffer, p: Prepared, options: BatchOptions, codec: number, size: number): void {
  buf.writeBigInt64BE(BigInt(options.baseOffset ?? 0), BASE_OFFSET);
  buf.writeInt32BE(size - LOG_OVERHEAD, BATCH_LENGTH);
  buf.writeInt32BE(options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, PARTITION_LEADER_EPOCH);
  buf.writeInt8(CURRENT_MAGIC, MAGIC);
  buf.writeInt16BE(attributesOf(options, codec), ATTRIBUTES);
  buf.writeInt32BE(p.lastOffsetDelta, LAST_OFFSET_DELTA);
  buf.writeBigInt64BE(BigInt(p.baseTimestamp), BASE_TIMESTAMP);
  buf.writeBigInt64BE(BigInt(p.maxTimestamp), MAX_TIMESTAMP);
  buf.writeBigInt64BE(BigInt(options.producerId ?? NO_PRODUCER_ID), PRODUCER_ID);
  buf.writeInt16BE(options.producerEpoch ?? NO_PRODUCER_EPOCH, PRODUCER_EPOCH);
  buf.writeInt32BE(options.baseSequence ?? NO_SEQUENCE, BASE_SEQUENCE);
  buf.writeInt32BE(p.records.length, RECORDS_COUNT);
}

function writeRecords(buf: Buffer, pos: number, p: Prepared): number {
  for (let i = 0; i < p.records.length; i++) pos = writeRecord(buf, pos, p.records[i]!, p.bodySizes[i]);
  return pos;
}

/** Builds one v2 batch holding `records`. */
export function buildBatch(records: readonly RecordInput[], options: BatchOptions = {}): Buffer {
  const codec = options.compression ?? CompressionType.None;
  assert(isCompressionType(codec), `unknown compression id ${codec}`);
  const p = prepare(records, options);
  let out: Buffer;
  if (codec === CompressionType.None) {
    out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + p.bytes);
    const end = writeRecords(out, BATCH_HEADER_BYTES, p);
    assert(end === out.length, 'record sizes and writes disagree');
  } else {
    const plain = Buffer.allocUnsafe(p.bytes);
    writeRecords(plain, 0, p);
    const packed = compress(codec, plain, { level: options.compressionLevel });
    out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + packed.length);
    packed.copy(out, BATCH_HEADER_BYTES);
  }
  writeHeader(out, p, options, codec, out.length);
  writeBatchCrc(out, 0);
  return out;
}

export interface EndTxnMarkerOptions {
  commit: boolean;
  coordinatorEpoch: number;
  producerId: number;
  producerEpoch: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  timestamp?: number;
}

/** A transaction marker: a transactional control batch with one COMMIT or ABORT control record. */
export function buildEndTxnMarkerBatch(options: EndTxnMarkerOptions): Buffer {
  const type = options.commit ? ControlRecordType.Commit : ControlRecordType.Abort;
  return buildBatch(
    [
      {
        key: encodeControlKey(type),
        value: encodeEndTxnMarker(options.coordinatorEpoch),
        timestamp: options.timestamp,
      },
    ],
    {
      baseOffset: options.baseOffset,
      partitionLeaderEpoch: options.partitionLeaderEpoch,
      producerId: options.producerId,
      producerEpoch: options.producerEpoch,
      baseSequence: NO_SEQUENCE,
      transactional: true,
      control: true,
      timestamp: options.timestamp,
    },
  );
}
