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
import { IndexFileKind, SegmentCipher, type SegmentKeys } from '../encryption/segment-cipher.js';
import {
  ENC_SUFFIX,
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
 * Whole batches of one segment's first `size` bytes, read a chunk at a time, the next chunk read while the
 * batches of the current one are filtered. The descriptor is opened at the first `next()`, so the caller
 * checks the segment is live in the same turn. Each yielded view stays valid (chunks are not reused).
 */
export async function* segmentBatches(
  segment: LogSegment,
  size: number,
  chunkBytes: number,
  batchBytesMax: number,
): AsyncGenerator<{ buf: Buffer; pos: number }, void, undefined> {
  const fd = openSync(segmentFilePath(segment.dir, segment.baseOffset, LOG_SUFFIX), 'r');
  // Opened in the same turn as the .log, with its own descriptor for the same reason.
  const cipher = segment.cipher?.reader() ?? null;
  const chunkSize = Math.max(chunkBytes, BATCH_HEADER_BYTES);
  let filePosition = 0;
  const readNext = (): Promise<Buffer> | null => {
    if (filePosition >= size) return null;
    const length = Math.min(chunkSize, size - filePosition);
    const at = filePosition;
    filePosition += length;
    return cipher === null ? readChunk(fd, length, at) : readDecrypted(cipher, fd, length, at);
  };
  let next = readNext();
  const checkSize = (batchSize: number, where: number): number => {
    if (batchSize < BATCH_HEADER_BYTES || batchSize > batchBytesMax) {
      throw new AssertionError(`segment ${segment.baseOffset}: batch of ${batchSize} bytes at ${where}`);
    }
    return batchSize;
  };
  try {
    // The start of a batch that the previous chunk cut. Only that batch is copied to make it whole, never the
    // chunk that follows it.
    let carry: Buffer = EMPTY;
    let chunkPosition = 0;
    while (next !== null) {
      const chunk = await next;
      next = readNext();
      let at = 0;
      if (carry.length > 0) {
        const head =
          carry.length >= BATCH_HEADER_BYTES
            ? carry
            : Buffer.concat([carry, chunk.subarray(0, BATCH_HEADER_BYTES - carry.length)]);
        const batchSize =
          head.length < BATCH_HEADER_BYTES
            ? Number.POSITIVE_INFINITY
            : checkSize(batchHeader.sizeInBytes(head, 0), chunkPosition - carry.length);
        const need = batchSize - carry.length;
        if (need > chunk.length) {
          // A batch longer than a chunk: gather it across chunks.
          carry = Buffer.concat([carry, chunk]);
          chunkPosition += chunk.length;
          continue;
        }
        yield { buf: Buffer.concat([carry, chunk.subarray(0, need)], batchSize), pos: 0 };
        at = need;
        carry = EMPTY;
      }
      while (at + BATCH_HEADER_BYTES <= chunk.length) {
        const batchSize = checkSize(batchHeader.sizeInBytes(chunk, at), chunkPosition + at);
        if (at + batchSize > chunk.length) break;
        yield { buf: chunk, pos: at };
        at += batchSize;
      }
      carry = chunk.subarray(at);
      chunkPosition += chunk.length;
    }
    if (carry.length > 0) throw new AssertionError(`segment ${segment.baseOffset}: ends inside a batch`);
  } finally {
    // A read still in flight must finish before its descriptor is closed (and its number reused).
    await next?.catch(() => {});
    close(fd, () => {});
    cipher?.close();
  }
}

const EMPTY = Buffer.alloc(0);

/** `readChunk` of an encrypted segment: the covering chunks are read, verified and the range decrypted. */
async function readDecrypted(
  cipher: SegmentCipher,
  fd: number,
  length: number,
  position: number,
): Promise<Buffer> {
  const plan = cipher.planRead(position, length);
  const buf = await readChunk(fd, plan.cipherLength, plan.cipherStart);
  return cipher.finishRead(plan, buf, buf.length);
}

/** Reads exactly `length` bytes at `position` into a new buffer (the file is not shorter: sizes are checked). */
async function readChunk(fd: number, length: number, position: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await readAt(fd, buf, done, length - done, position + done);
    if (bytesRead === 0) throw new AssertionError(`short read at ${position + done}`);
    done += bytesRead;
  }
  return buf;
}

function readAt(
  fd: number,
  buf: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<{ bytesRead: number }> {
  return new Promise((resolve, reject) =>
    read(fd, buf, offset, length, position, (err, bytesRead) =>
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
  private inFlight: Promise<void> = Promise.resolve();

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    private readonly config: LogConfig,
    private readonly chunkBytes: number,
    private readonly file: FileHandle,
    private readonly offsetIndex: OffsetIndex,
    private readonly timeIndex: TimeIndex,
    private readonly txnIndex: TxnIndex,
    private readonly cipher: SegmentCipher | null,
  ) {
    this.offsetOfMaxTimestamp = baseOffset;
  }

  static async create(
    dir: string,
    baseOffset: number,
    config: LogConfig,
    chunkBytes: number,
    keys: SegmentKeys | null = null,
  ): Promise<CleanedSegmentWriter> {
    deleteCleaned(dir, baseOffset);
    const cipher =
      keys === null ? null : SegmentCipher.create(cleanedPath(dir, baseOffset, ENC_SUFFIX), baseOffset, keys);
    const file = await open(cleanedPath(dir, baseOffset, LOG_SUFFIX), 'w');
    // An encrypted output's indexes are encrypted under its own new data key.
    const offsetIndex = OffsetIndex.create(
      cleanedPath(dir, baseOffset, INDEX_SUFFIX),
      baseOffset,
      config.segmentIndexBytes,
      cipher?.indexCrypt(IndexFileKind.offset) ?? null,
    );
    const timeIndex = TimeIndex.create(
      cleanedPath(dir, baseOffset, TIME_INDEX_SUFFIX),
      baseOffset,
      config.segmentIndexBytes,
      cipher?.indexCrypt(IndexFileKind.time) ?? null,
    );
    const txnIndex = new TxnIndex(
      cleanedPath(dir, baseOffset, TXN_INDEX_SUFFIX),
      cipher?.indexCrypt(IndexFileKind.txn) ?? null,
    );
    return new CleanedSegmentWriter(
      dir,
      baseOffset,
      config,
      chunkBytes,
      file,
      offsetIndex,
      timeIndex,
      txnIndex,
      cipher,
    );
  }

  get size(): number {
    return this.position;
  }

  /** Appends one whole batch (copied: a view would keep the whole chunk it came from alive). */
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
    const bytes =
      this.cipher === null ? data : this.cipher.encryptForWrite(data, 0, data.length, at, this.file.fd, at);
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.file.write(bytes, done, bytes.length - done, at + done);
      done += bytesWritten;
    }
    // Tags after the bytes, as a segment's commit does; the output is written in order, one chunk at a time.
    this.cipher?.commit(this.file.fd, data, 0, data.length, at);
  }

  /** Writes what is left, the final time index entry, trims and fsyncs every file, and closes them. */
  async finish(): Promise<void> {
    await this.writePending();
    await this.inFlight;
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestamp, true);
    const paths: string[] = [];
    for (const index of [this.offsetIndex.file, this.timeIndex.file]) {
      index.trimToValidSize();
      index.close();
      paths.push(index.path);
    }
    if (this.txnIndex.entries.length > 0) paths.push(this.txnIndex.path);
    // fsyncs off the event loop: a cleaned segment is durable before it is swapped in.
    if (this.cipher !== null) {
      paths.push(this.cipher.filePath);
      this.cipher.close();
    }
    for (const path of paths) await fsyncPath(path);
    await this.file.sync();
    await this.file.close();
    this.finished = true;
  }

  /** Closes and deletes the `.cleaned` files. */
  async abort(): Promise<void> {
    if (!this.finished) {
      await this.inFlight.catch(() => {});
      this.offsetIndex.file.close();
      this.timeIndex.file.close();
      this.cipher?.close();
      await this.file.close().catch(() => {});
    }
    deleteCleaned(this.dir, this.baseOffset);
  }
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
