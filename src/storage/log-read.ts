// The read path of one log (Kafka's LocalLog.read): whole batches from the one holding a fetch offset, from the
// tail cache when it has them, else from the segment holding the offset; the bytes a read would take (a waiting
// fetch's fetch.min.bytes check); and the aborted transactions a read_committed fetch needs.
//
// Ownership: one LogReader per Log, made by it. It holds no offsets of its own: each call reads the log's segments
// and bounds at that moment through ReadSource, so a truncation, a roll or retention between calls is seen by the
// next one. It changes no file and no offset. What a failed read means for the log (a storage failure reported
// once, the directory taken offline) is the Log's decision, asked through `failed`.

import { StorageErrorCode } from './error-codes.js';
import type { InlineReadGate } from './inline-reads.js';
import type { LogSegment } from './log-segment.js';
import type { CachedRead, TailCache } from './tail-cache.js';
import type { AbortedTxn } from './txn-index.js';

/** A read's answer: whole batches, or why there are none. */
export type ReadResult =
  | {
      readonly errorCode: typeof StorageErrorCode.None;
      /** Whole batches, ready for a fetch response. Empty when nothing is readable yet. */
      readonly records: Buffer;
      readonly firstOffset: number;
      readonly nextOffset: number;
    }
  | { readonly errorCode: typeof StorageErrorCode.OffsetOutOfRange }
  /** Stored bytes failed authentication (an encrypted segment tampered with or damaged): nothing is served. */
  | { readonly errorCode: typeof StorageErrorCode.KafkaStorageError; readonly reason: string };

/** What the read path sees of the log: its segments (oldest first) and its readable bounds, now. */
export interface ReadSource {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  segmentList(): readonly LogSegment[];
}

/** Reads of one log's batches; see the file header. */
export class LogReader {
  constructor(
    private readonly log: ReadSource,
    private readonly tailCache: TailCache | null,
    /** The answer to a read that threw (an I/O error, bytes failing authentication); see Log.readFailed. */
    private readonly failed: (err: unknown) => ReadResult,
  ) {}

  /**
   * Reads whole batches from the one holding `startOffset`, up to `maxBytes` (the first batch is returned whole
   * even when larger, if `minOneBatch`), and never a batch reaching `maxOffset` (exclusive: the high watermark for
   * consumers, the last stable offset for read_committed, the log end offset for followers).
   * OFFSET_OUT_OF_RANGE when startOffset is below the log start or above the log end.
   */
  read(startOffset: number, maxBytes: number, maxOffset: number, minOneBatch: boolean): ReadResult {
    const logEndOffset = this.log.logEndOffset;
    if (startOffset < this.log.logStartOffset || startOffset > logEndOffset) {
      return { errorCode: StorageErrorCode.OffsetOutOfRange };
    }
    if (startOffset >= maxOffset || startOffset === logEndOffset) return emptyRead(startOffset);
    const cached = this.tailCache?.read(startOffset, maxBytes, maxOffset, minOneBatch);
    if (cached != null) return cachedResult(cached);
    const segments = this.log.segmentList();
    try {
      for (let i = floorSegmentIndex(segments, startOffset); i < segments.length; i++) {
        const read = segments[i]!.read(startOffset, maxBytes, maxOffset, minOneBatch);
        if (read !== null) return { errorCode: StorageErrorCode.None, ...read };
      }
    } catch (err) {
      return this.failed(err);
    }
    return emptyRead(startOffset);
  }

  /**
   * `read` with the file bytes read off the event loop, also saying at once how many bytes the read takes (at
   * most; see LogSegment.startRead). The segment and range are chosen now, synchronously; only the bytes arrive
   * later. With `pins`, the bytes may be pooled memory (a view of a cached request frame, or a pooled buffer the
   * cache or the file is read into), with a pool reference pushed there for the caller to give back once done
   * with them (see TailCache.read, LogSegment.startRead); without, they never are. With `inline`, a file read it
   * allows runs on the event loop (inline-reads.ts).
   */
  startRead(
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
    pins: Buffer[] | null,
    inline: InlineReadGate | null = null,
  ): { readonly bytes: number; readonly result: Promise<ReadResult> } {
    const found = this.readSegment(startOffset, maxOffset);
    if (found === null) return { bytes: 0, result: Promise.resolve(OUT_OF_RANGE) };
    if (found === EMPTY_SEGMENT) {
      return { bytes: 0, result: Promise.resolve(emptyRead(startOffset)) };
    }
    const cached = this.tailCache?.read(startOffset, maxBytes, maxOffset, minOneBatch, pins);
    if (cached != null) return { bytes: cached.bytes, result: Promise.resolve(cachedResult(cached)) };
    const pool = this.tailCache?.pool ?? null;
    const pooled = pins !== null && pool !== null ? { pool, pins } : null;
    let read: ReturnType<LogSegment['startRead']>;
    try {
      read = found.startRead(startOffset, maxBytes, maxOffset, minOneBatch, pooled, inline);
    } catch (err) {
      return { bytes: 0, result: Promise.resolve(this.failed(err)) };
    }
    return {
      bytes: read.bytes,
      result: read.result.then(
        (r): ReadResult => (r === null ? emptyRead(startOffset) : { errorCode: StorageErrorCode.None, ...r }),
        (err: unknown) => this.failed(err),
      ),
    };
  }

  /** Bytes a read would take now (at most), without reading them: a waiting fetch checks fetch.min.bytes. */
  readableBytes(startOffset: number, maxBytes: number, maxOffset: number, minOneBatch: boolean): number {
    const found = this.readSegment(startOffset, maxOffset);
    if (found === null || found === EMPTY_SEGMENT) return 0;
    const cached = this.tailCache?.readableBytes(startOffset, maxBytes, maxOffset, minOneBatch) ?? -1;
    if (cached >= 0) return cached;
    return found.plannedReadBytes(startOffset, maxBytes, maxOffset, minOneBatch);
  }

  /** The segment an asynchronous read of startOffset uses; null when out of range, EMPTY_SEGMENT for nothing. */
  private readSegment(startOffset: number, maxOffset: number): LogSegment | null | typeof EMPTY_SEGMENT {
    const logEndOffset = this.log.logEndOffset;
    if (startOffset < this.log.logStartOffset || startOffset > logEndOffset) return null;
    if (startOffset >= maxOffset || startOffset === logEndOffset) return EMPTY_SEGMENT;
    const segments = this.log.segmentList();
    for (let i = floorSegmentIndex(segments, startOffset); i < segments.length; i++) {
      const segment = segments[i]!;
      // An empty segment (one the cleaner emptied keeps its base offset) has nothing to read: its nextOffset is
      // its base, which can lie above startOffset. `read` steps over it the same way.
      if (segment.nextOffset > startOffset && segment.size > 0) return segment;
    }
    return EMPTY_SEGMENT;
  }

  /**
   * Aborted transactions overlapping [fetchOffset, upperBoundOffset), for read_committed fetches. An aborted
   * transaction is indexed in the segment of its ABORT marker, which can lie well past the fetched range (a large
   * transaction spans segments, and its marker comes after all its data), so the search goes on through later
   * segments until an entry's last stable offset reaches the upper bound: every transaction with data below the
   * upper bound had completed when that entry's transaction did, so none is indexed in a later segment. This is
   * Kafka's collectAbortedTransactions; a search that finds no such entry reads every later segment's (in-memory)
   * index.
   */
  collectAbortedTxns(fetchOffset: number, upperBoundOffset: number): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    const segments = this.log.segmentList();
    for (let i = floorSegmentIndex(segments, fetchOffset); i < segments.length; i++) {
      if (segments[i]!.txnIndex.collect(fetchOffset, upperBoundOffset, out)) break;
    }
    return out;
  }
}

/** Index of the segment with the largest base offset <= offset (0 when offset precedes them all). */
export function floorSegmentIndex(segments: readonly LogSegment[], offset: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (segments[mid]!.baseOffset <= offset) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

const EMPTY = Buffer.alloc(0);
const EMPTY_SEGMENT = Symbol('no segment to read');
const OUT_OF_RANGE: ReadResult = { errorCode: StorageErrorCode.OffsetOutOfRange };

function cachedResult(read: CachedRead): ReadResult {
  return {
    errorCode: StorageErrorCode.None,
    records: read.records,
    firstOffset: read.firstOffset,
    nextOffset: read.nextOffset,
  };
}

function emptyRead(startOffset: number): ReadResult {
  return {
    errorCode: StorageErrorCode.None,
    records: EMPTY,
    firstOffset: startOffset,
    nextOffset: startOffset,
  };
}
