// The cleaner's file I/O: reading a segment's batches and writing a cleaned segment, both asynchronously and in
// chunks of log.cleaner.io.buffer.size, so that a cleaning never holds the event loop for longer than it takes
// to filter one chunk.
//
// A reader opens its own descriptor on the segment's .log (synchronously, in the same turn that checked the
// segment is live), so the segment may be deleted or swapped meanwhile without the descriptor going away under
// the read. A writer owns the `.cleaned` files of one output segment until `finish` (fsync'ed, closed) or
// `abort` (deleted).

import { close, openSync, read } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { AssertionError } from '../../common/assert.js';
import { BATCH_HEADER_BYTES, batchHeader } from '../../protocol/records/batch-header.js';
import {
  INDEX_SUFFIX,
  LOG_SUFFIX,
  segmentFilePath,
  TIME_INDEX_SUFFIX,
  TXN_INDEX_SUFFIX,
} from '../file-names.js';
import type { LogConfig } from '../log-config.js';
import type { LogSegment } from '../log-segment.js';
import { OffsetIndex } from '../offset-index.js';
import { TimeIndex } from '../time-index.js';
import { type AbortedTxn, TxnIndex } from '../txn-index.js';
import { cleanedPath, deleteCleaned } from './swap-files.js';

/**
 * Whole batches of one segment's first `size` bytes, read a chunk at a time. The descriptor is opened at the
 * first `next()`, so the caller checks the segment is live in the same turn. Each yielded view is valid only
 * until the next one.
 */
export async function* segmentBatches(
  segment: LogSegment,
  size: number,
  chunkBytes: number,
  batchBytesMax: number,
): AsyncGenerator<{ buf: Buffer; pos: number }, void, undefined> {
  const fd = openSync(segmentFilePath(segment.dir, segment.baseOffset, LOG_SUFFIX), 'r');
  try {
    let chunk = Buffer.allocUnsafe(Math.max(chunkBytes, BATCH_HEADER_BYTES));
    let position = 0;
    while (position < size) {
      const want = Math.min(chunk.length, size - position);
      const { bytesRead } = await readAt(fd, chunk, want, position);
      if (bytesRead < Math.min(want, BATCH_HEADER_BYTES))
        throw new AssertionError(`${segment.baseOffset}: short read`);
      let at = 0;
      while (at + BATCH_HEADER_BYTES <= bytesRead) {
        const batchSize = batchHeader.sizeInBytes(chunk, at);
        if (batchSize < BATCH_HEADER_BYTES || batchSize > batchBytesMax) {
          throw new AssertionError(
            `segment ${segment.baseOffset}: batch of ${batchSize} bytes at ${position + at}`,
          );
        }
        if (at + batchSize > bytesRead) break;
        yield { buf: chunk, pos: at };
        at += batchSize;
      }
      if (at === 0) {
        // One batch larger than the chunk: read it whole into a buffer of its size.
        const batchSize = batchHeader.sizeInBytes(chunk, 0);
        chunk = Buffer.allocUnsafe(batchSize);
        continue;
      }
      position += at;
    }
  } finally {
    close(fd, () => {});
  }
}

function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<{ bytesRead: number }> {
  return new Promise((resolve, reject) =>
    read(fd, buf, 0, length, position, (err, bytesRead) =>
      err === null ? resolve({ bytesRead }) : reject(err),
    ),
  );
}

/**
 * Writes one cleaned segment: `.log.cleaned` in chunks off the event loop, its offset and time indexes kept
 * exactly as LogSegment keeps them on append (an entry after more than index.interval.bytes), and its
 * `.txnindex.cleaned` for the aborted transactions whose markers it keeps.
 */
export class CleanedSegmentWriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private position = 0;
  private bytesSinceIndexEntry = 0;
  private maxTimestampSoFar = -1;
  private offsetOfMaxTimestamp: number;
  private finished = false;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    private readonly config: LogConfig,
    private readonly chunkBytes: number,
    private readonly file: FileHandle,
    private readonly offsetIndex: OffsetIndex,
    private readonly timeIndex: TimeIndex,
    private readonly txnIndex: TxnIndex,
  ) {
    this.offsetOfMaxTimestamp = baseOffset;
  }

  static async create(
    dir: string,
    baseOffset: number,
    config: LogConfig,
    chunkBytes: number,
  ): Promise<CleanedSegmentWriter> {
    deleteCleaned(dir, baseOffset);
    const file = await open(cleanedPath(dir, baseOffset, LOG_SUFFIX), 'w');
    const offsetIndex = OffsetIndex.create(
      cleanedPath(dir, baseOffset, INDEX_SUFFIX),
      baseOffset,
      config.segmentIndexBytes,
    );
    const timeIndex = TimeIndex.create(
      cleanedPath(dir, baseOffset, TIME_INDEX_SUFFIX),
      baseOffset,
      config.segmentIndexBytes,
    );
    const txnIndex = new TxnIndex(cleanedPath(dir, baseOffset, TXN_INDEX_SUFFIX));
    return new CleanedSegmentWriter(
      dir,
      baseOffset,
      config,
      chunkBytes,
      file,
      offsetIndex,
      timeIndex,
      txnIndex,
    );
  }

  get size(): number {
    return this.position;
  }

  /** Appends one whole batch (copied: the caller's buffer is reused for the next chunk). */
  async append(batch: Buffer): Promise<void> {
    const size = batch.length;
    const lastOffset = batchHeader.lastOffset(batch, 0);
    const maxTimestamp = batchHeader.maxTimestamp(batch, 0);
    if (maxTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = maxTimestamp;
      this.offsetOfMaxTimestamp = lastOffset;
    }
    if (this.bytesSinceIndexEntry > this.config.indexIntervalBytes && !this.offsetIndex.isFull) {
      this.offsetIndex.append(lastOffset, this.position);
      this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestamp);
      this.bytesSinceIndexEntry = 0;
    }
    this.bytesSinceIndexEntry += size;
    this.pending.push(Buffer.from(batch));
    this.pendingBytes += size;
    this.position += size;
    if (this.pendingBytes >= this.chunkBytes) await this.writePending();
  }

  addAbortedTxn(txn: AbortedTxn): void {
    this.txnIndex.append(txn);
  }

  private async writePending(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const data =
      this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    const at = this.position - this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await this.file.write(data, done, data.length - done, at + done);
      done += bytesWritten;
    }
  }

  /** Writes what is left, the final time index entry, trims and fsyncs every file, and closes them. */
  async finish(): Promise<void> {
    await this.writePending();
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestamp, true);
    for (const index of [this.offsetIndex.file, this.timeIndex.file]) {
      index.trimToValidSize();
      index.flush();
      index.close();
    }
    this.txnIndex.flush();
    await this.file.sync();
    await this.file.close();
    this.finished = true;
  }

  /** Closes and deletes the `.cleaned` files. */
  async abort(): Promise<void> {
    if (!this.finished) {
      this.offsetIndex.file.close();
      this.timeIndex.file.close();
      await this.file.close().catch(() => {});
    }
    deleteCleaned(this.dir, this.baseOffset);
  }
}
