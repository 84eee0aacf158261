// Reading record batches from a segment file by their headers only: the framing and CRC32C checks that recovery
// needs, and a cursor over batch headers for lookups. Records are never decoded here.
//
// The checks (framing, magic 2, CRC32C over attributes..end, offsets inside the segment and increasing) are the
// minimum that proves a batch was written whole. The broker validates much more before an append (see
// src/protocol/records); when that module exposes its validator, recovery can call it instead of checkBatch.

import { readSync } from 'node:fs';
import {
  BASE_OFFSET,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH,
  batchHeader,
  CRC_START,
  CURRENT_MAGIC,
  LOG_OVERHEAD,
  MAGIC,
} from '../protocol/records/batch-header.js';
import { crc32cRange } from '../protocol/records/crc32c.js';
import { STORAGE_LIMITS } from './log-config.js';

export type BatchCheck =
  | { readonly ok: true; readonly sizeInBytes: number }
  | { readonly ok: false; readonly reason: 'incomplete' | 'corrupt'; readonly detail: string };

const INCOMPLETE = (detail: string): BatchCheck => ({ ok: false, reason: 'incomplete', detail });
const CORRUPT = (detail: string): BatchCheck => ({ ok: false, reason: 'corrupt', detail });

/**
 * Checks the batch at `pos` of `buf` (which holds `available` bytes from `pos` on): framing, magic, CRC32C,
 * and that its offsets lie in [minOffset, baseOffset + 2^31). 'incomplete' means the bytes end inside the
 * batch; 'corrupt' means the bytes present are not a valid batch.
 */
export function checkBatch(
  buf: Buffer,
  pos: number,
  available: number,
  minOffset: number,
  segmentBaseOffset: number,
  batchBytesMax = STORAGE_LIMITS.batchBytesMax,
): BatchCheck {
  if (available < LOG_OVERHEAD) return INCOMPLETE('header cut');
  const batchLength = buf.readInt32BE(pos + BATCH_LENGTH);
  const size = LOG_OVERHEAD + batchLength;
  if (batchLength < BATCH_HEADER_BYTES - LOG_OVERHEAD || size > batchBytesMax) {
    return CORRUPT(`batch length ${batchLength}`);
  }
  if (available < BATCH_HEADER_BYTES) return INCOMPLETE('header cut');
  if (buf.readInt8(pos + MAGIC) !== CURRENT_MAGIC) return CORRUPT(`magic ${buf.readInt8(pos + MAGIC)}`);
  const baseOffset = buf.readBigInt64BE(pos + BASE_OFFSET);
  if (baseOffset < BigInt(minOffset) || baseOffset > BigInt(Number.MAX_SAFE_INTEGER)) {
    return CORRUPT(`base offset ${baseOffset} below ${minOffset}`);
  }
  const lastOffsetDelta = batchHeader.lastOffsetDelta(buf, pos);
  if (lastOffsetDelta < 0) return CORRUPT(`last offset delta ${lastOffsetDelta}`);
  if (Number(baseOffset) + lastOffsetDelta - segmentBaseOffset > 0x7fffffff)
    return CORRUPT('offset overflow');
  if (available < size) return INCOMPLETE(`batch of ${size} bytes cut at ${available}`);
  const crc = crc32cRange(buf, pos + CRC_START, pos + size);
  if (crc !== batchHeader.crc(buf, pos)) return CORRUPT('crc mismatch');
  return { ok: true, sizeInBytes: size };
}

/** Header fields of one batch, as a scan yields them. `position` is in the file. */
export interface BatchInfo {
  position: number;
  sizeInBytes: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  partitionLeaderEpoch: number;
}

/** A file descriptor, or a reader of (buf, length, position) returning bytes read (a decrypting one). */
export type HeaderSource = number | ((buf: Buffer, length: number, position: number) => number);

const headerChunk = Buffer.allocUnsafe(STORAGE_LIMITS.scanChunkBytes);
/**
 * The first read of a scan. A lookup (a fetch's offset lookup, run on the event loop) usually needs one or two
 * headers, each a read of its own when batches are large: reading a whole chunk for each copied up to 64 KiB
 * for 61 useful bytes. Later reads of the same scan double up to scanChunkBytes, so long scans over small
 * batches still read in large chunks.
 */
const FIRST_READ_BYTES = 4096;

/**
 * Visits the headers of the batches in [start, end) of the file, stopping when `visit` returns false. Reads a
 * chunk at a time and trusts the length fields (use it on data already recovered or written by this process).
 * Returns the position where the scan stopped. Not reentrant: `visit` must not start another scan.
 */
export function scanHeaders(
  source: HeaderSource,
  start: number,
  end: number,
  visit: (info: BatchInfo, header: Buffer, headerPos: number) => boolean,
): number {
  const info: BatchInfo = {
    position: 0,
    sizeInBytes: 0,
    baseOffset: 0,
    lastOffset: 0,
    maxTimestamp: 0,
    partitionLeaderEpoch: 0,
  };
  let chunkStart = -1;
  let chunkLength = 0;
  let readBytes = FIRST_READ_BYTES;
  let position = start;
  while (position + BATCH_HEADER_BYTES <= end) {
    if (chunkStart < 0 || position < chunkStart || position + BATCH_HEADER_BYTES > chunkStart + chunkLength) {
      chunkStart = position;
      const length = Math.min(readBytes, end - position);
      chunkLength =
        typeof source === 'number'
          ? readSync(source, headerChunk, 0, length, position)
          : source(headerChunk, length, position);
      readBytes = Math.min(readBytes * 2, headerChunk.length);
      if (chunkLength < BATCH_HEADER_BYTES) break;
    }
    const at = position - chunkStart;
    info.position = position;
    info.sizeInBytes = batchHeader.sizeInBytes(headerChunk, at);
    info.baseOffset = batchHeader.baseOffset(headerChunk, at);
    info.lastOffset = info.baseOffset + batchHeader.lastOffsetDelta(headerChunk, at);
    info.maxTimestamp = batchHeader.maxTimestamp(headerChunk, at);
    info.partitionLeaderEpoch = batchHeader.partitionLeaderEpoch(headerChunk, at);
    if (info.sizeInBytes < BATCH_HEADER_BYTES) break;
    if (!visit(info, headerChunk, at)) return position;
    position += info.sizeInBytes;
  }
  return position;
}
