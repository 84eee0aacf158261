// What an append is, before the log takes it: the batches' framing and offsets checked, and their offsets,
// timestamps and counts summed up in one pass over the headers, so the log decides rolls and producer state
// without reading the bytes again.

import { AssertionError, assert } from '../common/assert.js';
import { BATCH_HEADER_BYTES, batchHeader } from '../protocol/records/batch-header.js';

/** The offsets, timestamps and counts of an append: what the log reports back for it (see AppendInfo). */
export interface AppendSummary {
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly maxTimestampMs: number;
  readonly offsetOfMaxTimestamp: number;
  readonly batchCount: number;
  readonly recordCount: number;
}

/** The headers of an append, summed up. */
export interface AppendScan extends AppendSummary {
  /** Producer state and the epoch cache need a walk of the batches (idempotent batches, or a new epoch). */
  readonly stateWalk: boolean;
}

/**
 * Checks the framing and offsets of batches to append (whole batches, offsets increasing from at least the log
 * end: a violation is a bug of the caller, so it throws) and sums up their offsets, timestamps and counts.
 */
export function scanAppend(batches: Buffer, logEndOffset: number, latestEpoch: number): AppendScan {
  assert(batches.length >= BATCH_HEADER_BYTES, 'append of less than one batch');
  const firstOffset = batchHeader.baseOffset(batches, 0);
  if (firstOffset < logEndOffset) {
    throw new AssertionError(`append at ${firstOffset} below log end ${logEndOffset}`);
  }
  let lastOffset = firstOffset - 1;
  let maxTimestampMs = -1;
  let offsetOfMaxTimestamp = firstOffset;
  let batchCount = 0;
  let recordCount = 0;
  // Producer state and the epoch cache need a second pass only for idempotent batches or a new epoch.
  let stateWalk = false;
  for (let pos = 0; pos < batches.length; ) {
    assert(batches.length - pos >= BATCH_HEADER_BYTES, 'append ends inside a batch header');
    const size = batchHeader.sizeInBytes(batches, pos);
    assert(size >= BATCH_HEADER_BYTES && pos + size <= batches.length, 'append ends inside a batch');
    const base = batchHeader.baseOffset(batches, pos);
    assert(base > lastOffset, 'offsets must increase');
    lastOffset = base + batchHeader.lastOffsetDelta(batches, pos);
    const ts = batchHeader.maxTimestamp(batches, pos);
    if (ts > maxTimestampMs) {
      maxTimestampMs = ts;
      offsetOfMaxTimestamp = lastOffset;
    }
    batchCount++;
    recordCount += batchHeader.recordsCount(batches, pos);
    if (!stateWalk) {
      stateWalk =
        batchHeader.producerId(batches, pos) >= 0 ||
        batchHeader.partitionLeaderEpoch(batches, pos) > latestEpoch;
    }
    pos += size;
  }
  return {
    firstOffset,
    lastOffset,
    maxTimestampMs,
    offsetOfMaxTimestamp,
    batchCount,
    recordCount,
    stateWalk,
  };
}
