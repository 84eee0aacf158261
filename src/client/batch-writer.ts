// The producer's open batch: records are encoded into one buffer as they are appended, behind room reserved for
// the 61-byte v2 batch header, so that closing the batch writes the header and the CRC32C in place and sends the
// buffer as it is (no per-record objects kept, no second copy). Only an uncompressed records section lives here;
// a compressed batch is compressed once when it is finished.
//
// Offsets deltas are the records' indexes; timestamp deltas are relative to the first record's timestamp, as
// Kafka's builder writes them. Owned by one producer partition queue; not shared.

import { compress } from '../protocol/compression/codecs.js';
import { writeBatchCrc } from '../protocol/records/batch-crc.js';
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
  PARTITION_LEADER_EPOCH,
  PRODUCER_EPOCH,
  PRODUCER_ID,
  RECORDS_COUNT,
} from '../protocol/records/batch-header.js';
import { varintSize, writeVarint } from '../protocol/records/varint.js';
import type { BufferPool } from './buffer-pool.js';

/** A record header with its key already in bytes. */
export interface EncodedHeader {
  key: Buffer;
  value: Buffer | null;
}

/** Zigzag varint of a value that fits in int32 (lengths, counts, offset deltas): the common, fast case. */
function writeSmallVarint(buf: Buffer, pos: number, v: number): number {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  while (u >= 0x80) {
    buf[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[pos++] = u;
  return pos;
}

function smallVarintSize(v: number): number {
  const u = ((v << 1) ^ (v >> 31)) >>> 0;
  return u < 0x80 ? 1 : u < 0x4000 ? 2 : u < 0x200000 ? 3 : u < 0x10000000 ? 4 : 5;
}

const EMPTY = Buffer.alloc(0);

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

function anyVarintSize(v: number): number {
  return v >= INT32_MIN && v <= INT32_MAX ? smallVarintSize(v) : varintSize(v);
}

function writeAnyVarint(buf: Buffer, pos: number, v: number): number {
  return v >= INT32_MIN && v <= INT32_MAX ? writeSmallVarint(buf, pos, v) : writeVarint(buf, pos, v);
}

export interface FinishOptions {
  compression: number;
  compressionLevel: number | undefined;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  /** A transactional producer's batch (attribute bit 4): read_committed consumers wait for its transaction's end. */
  transactional?: boolean;
}

export class BatchWriter {
  private buf: Buffer;
  /** Bytes used, header room included. */
  private end = BATCH_HEADER_BYTES;
  count = 0;
  private baseTimestamp = 0;
  private maxTimestamp = -1;

  /**
   * `capacity` bytes of records fit at first; past them the buffer grows once, straight to `growTo` bytes (only
   * the pages written are touched), rather than doubling through copies of fresh memory. With a `pool`, buffers
   * come from it (a spare one may already be large enough never to grow) and go back to it on release().
   */
  constructor(
    capacity: number,
    private readonly growTo = capacity,
    private readonly pool: BufferPool | null = null,
  ) {
    const bytes = BATCH_HEADER_BYTES + capacity;
    this.buf = pool === null ? Buffer.allocUnsafe(bytes) : pool.take(bytes);
  }

  /** Bytes of the batch so far, header included. */
  get sizeInBytes(): number {
    return this.end;
  }

  /** Encodes one record at the end of the batch. */
  append(
    key: Buffer | null,
    value: Buffer | null,
    headers: EncodedHeader[] | undefined,
    timestamp: number,
  ): void {
    if (this.count === 0) this.baseTimestamp = timestamp;
    if (timestamp > this.maxTimestamp) this.maxTimestamp = timestamp;
    const timestampDelta = timestamp - this.baseTimestamp;
    const offsetDelta = this.count;
    let body = 1 + anyVarintSize(timestampDelta) + smallVarintSize(offsetDelta);
    body += key === null ? 1 : smallVarintSize(key.length) + key.length;
    body += value === null ? 1 : smallVarintSize(value.length) + value.length;
    const headerCount = headers === undefined ? 0 : headers.length;
    body += smallVarintSize(headerCount);
    for (let i = 0; i < headerCount; i++) {
      const h = headers![i]!;
      body += smallVarintSize(h.key.length) + h.key.length;
      body += h.value === null ? 1 : smallVarintSize(h.value.length) + h.value.length;
    }
    this.ensure(5 + body);
    const buf = this.buf;
    let pos = writeSmallVarint(buf, this.end, body);
    buf[pos++] = 0; // attributes
    pos = writeAnyVarint(buf, pos, timestampDelta);
    pos = writeSmallVarint(buf, pos, offsetDelta);
    pos = this.writeBytes(pos, key);
    pos = this.writeBytes(pos, value);
    pos = writeSmallVarint(buf, pos, headerCount);
    for (let i = 0; i < headerCount; i++) {
      const h = headers![i]!;
      pos = this.writeBytes(pos, h.key);
      pos = this.writeBytes(pos, h.value);
    }
    this.end = pos;
    this.count++;
  }

  private writeBytes(pos: number, bytes: Buffer | null): number {
    if (bytes === null) {
      this.buf[pos] = 1; // zigzag(-1)
      return pos + 1;
    }
    pos = writeSmallVarint(this.buf, pos, bytes.length);
    // Small fields are copied byte by byte: cheaper than a native copy call for a few dozen bytes.
    if (bytes.length < 64) {
      for (let i = 0; i < bytes.length; i++) this.buf[pos + i] = bytes[i]!;
    } else {
      this.buf.set(bytes, pos);
    }
    return pos + bytes.length;
  }

  private ensure(bytes: number): void {
    if (this.end + bytes <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, BATCH_HEADER_BYTES + this.growTo);
    while (size < this.end + bytes) size *= 2;
    const next = this.pool === null ? Buffer.allocUnsafe(size) : this.pool.take(size);
    this.buf.copy(next, 0, 0, this.end);
    this.pool?.give(this.buf);
    this.buf = next;
  }

  /**
   * Gives the buffer back to the pool: the batch is done and nothing reads what finish() returned any more. The
   * writer must not be used after this.
   */
  release(): void {
    if (this.buf === EMPTY) return;
    this.pool?.give(this.buf);
    this.buf = EMPTY;
    this.end = 0;
  }

  /**
   * The batch as sent: header and CRC written. Uncompressed, a view of this writer's buffer, so finishing again
   * (new producer id or sequence on a retry) rewrites it in place; compressed, a new buffer each time. Call it
   * again only once no request carries the previous result (the one that did has settled: see connection.ts).
   */
  finish(o: FinishOptions): Buffer {
    let out: Buffer;
    if (o.compression === CompressionType.None) {
      out = this.buf.subarray(0, this.end);
    } else {
      const packed = compress(o.compression, this.buf.subarray(BATCH_HEADER_BYTES, this.end), {
        level: o.compressionLevel,
      });
      out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + packed.length);
      packed.copy(out, BATCH_HEADER_BYTES);
    }
    out.writeInt32BE(0, BASE_OFFSET);
    out.writeInt32BE(0, BASE_OFFSET + 4);
    out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH);
    out.writeInt32BE(NO_PARTITION_LEADER_EPOCH, PARTITION_LEADER_EPOCH);
    out[MAGIC] = CURRENT_MAGIC;
    out.writeInt16BE(o.compression | (o.transactional === true ? Attribute.Transactional : 0), ATTRIBUTES);
    out.writeInt32BE(this.count - 1, LAST_OFFSET_DELTA);
    out.writeBigInt64BE(BigInt(this.baseTimestamp), BASE_TIMESTAMP);
    out.writeBigInt64BE(BigInt(this.maxTimestamp), MAX_TIMESTAMP);
    out.writeBigInt64BE(BigInt(o.producerId), PRODUCER_ID);
    out.writeInt16BE(o.producerEpoch, PRODUCER_EPOCH);
    out.writeInt32BE(o.baseSequence, BASE_SEQUENCE);
    out.writeInt32BE(this.count, RECORDS_COUNT);
    writeBatchCrc(out, 0);
    return out;
  }
}
