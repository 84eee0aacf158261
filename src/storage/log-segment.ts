// One segment of a partition's log: the .log file of record batches and its .index, .timeindex and .txnindex.
//
// The segment appends bytes exactly as given (offsets already assigned), keeps the sparse indexes, and answers
// "where does offset N start" and "which batch first reaches timestamp T" by index lookup plus a short header
// scan. `size` is the number of bytes known to hold whole batches: readers never see past it, so a partly
// written batch is never served.
//
// Appends come in two forms. `append` writes synchronously. The queued form is split in three steps driven by
// the Log: `reserve` claims the file range (so offsets and roll decisions are made at once), `writeAt` writes
// the bytes off the event loop, and `commitAppend` then makes them visible: index entries, `size`, `nextOffset`.
// Until the commit, readers (fetch, followers, lookups) cannot reach the bytes, since every read is bounded by
// `size`; `reservedSize` is what roll decisions count.
//
// Lifecycle: created empty (create) or opened from disk (open, then either `loadIndexes` succeeds or `recover`
// rebuilds them). The active segment takes appends; `onRoll` writes its final time index entry and trims the
// preallocated indexes. Deletion renames the files to `.deleted` and closes/unlinks them later, so reads and
// writes that already hold the file descriptor finish. Owned by one Log; all methods but the I/O ones are
// synchronous.

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  read as fsRead,
  fstatSync,
  writev as fsWritev,
  type fsync,
  fsyncSync,
  ftruncateSync,
  futimesSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { assert } from '../common/assert.js';
import type { FramePool } from '../common/frame-pool.js';
import { BATCH_HEADER_BYTES, batchHeader } from '../protocol/records/batch-header.js';
import { type BatchInfo, checkBatch, type HeaderSource, scanHeaders } from './batch-scan.js';
import { MasterKeyError } from './encryption/master-key-provider.js';
import {
  ENC_CHUNK_BYTES,
  IndexFileKind,
  SegmentCipher,
  SegmentIntegrityError,
  type SegmentKeys,
} from './encryption/segment-cipher.js';
import {
  DELETED_SUFFIX,
  ENC_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  segmentFilePath,
  TIME_INDEX_SUFFIX,
  TXN_INDEX_SUFFIX,
} from './file-names.js';
import type { InlineReadGate } from './inline-reads.js';
import { type LogConfig, maxSegmentMs, STORAGE_LIMITS } from './log-config.js';
import { OffsetIndex } from './offset-index.js';
import { TimeIndex } from './time-index.js';
import { TxnIndex } from './txn-index.js';

/**
 * Where an asynchronous read may take its buffer: from `pool`, its reference pushed to `pins` once the read has
 * completed (a fetch response gives it back after the socket took the bytes; see TailCache.read).
 */
export interface PooledRead {
  readonly pool: FramePool;
  readonly pins: Buffer[];
}

/** Where a batch is in the segment file. */
export interface BatchLocation {
  readonly position: number;
  readonly sizeInBytes: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
}

/** Whole batches read from a segment: `records` can be sent in a fetch response as they are. */
export interface SegmentRead {
  readonly records: Buffer;
  readonly firstOffset: number;
  /** One past the last offset in `records` (firstOffset when empty). */
  readonly nextOffset: number;
}

/** Called for every valid batch during recovery, with the whole batch in buf[pos, pos + info.sizeInBytes). */
export type RecoveredBatchVisitor = (buf: Buffer, pos: number, info: BatchInfo) => void;

const RECOVERY_CHUNK_BYTES = 1024 * 1024;
/** An encrypted read of more than this many chunks goes in pieces (see readPlannedEncrypted)... */
const ENC_READ_PIECE_CHUNKS_MIN = 4;
/** ...at most this many, so that one fetch takes at most the thread pool's default four threads. */
const ENC_READ_PIECES_MAX = 4;

/**
 * Ciphertext buffers of encrypted reads, reused: a fetch's ciphertext is only read into and decrypted from,
 * never kept, and a fresh megabyte per fetch is external memory that V8 collects late and whose pages fault in.
 * Reads larger than the buffers, or more at once than are kept, take fresh ones.
 */
class CipherReadBuffers {
  private readonly spare: Buffer[] = [];

  constructor(
    private readonly bytes: number,
    private readonly keep: number,
  ) {}

  acquire(length: number): Buffer {
    if (length > this.bytes) return Buffer.allocUnsafe(length);
    return (this.spare.pop() ?? Buffer.allocUnsafe(this.bytes)).subarray(0, length);
  }

  release(buf: Buffer): void {
    if (buf.buffer.byteLength !== this.bytes || buf.byteOffset !== 0) return;
    if (this.spare.length < this.keep) this.spare.push(Buffer.from(buf.buffer, 0, this.bytes));
  }
}

const cipherReadBuffers = new CipherReadBuffers(1024 * 1024 + 2 * ENC_CHUNK_BYTES, 4);

export class LogSegment {
  private fd: number;
  private sizeBytes: number;
  /** Bytes reserved by queued appends, written or not: sizeBytes plus what is still on its way to the file. */
  private reservedBytes: number;
  /** preallocate when the file was made or opened: its .log may be longer than its bytes until the roll. */
  private readonly preallocated: boolean;
  private bytesSinceLastIndexEntry = 0;
  private maxTimestampSoFarMs = -1;
  private offsetOfMaxTimestamp: number;
  private nextOffsetValue: number;
  /** Max timestamp of the first batch: segment.ms counts from it, as Kafka's rollingBasedTimestamp. */
  private firstBatchTimestampMs: number | null = null;
  /** Bumped by truncation, so an asynchronous read can tell its bytes may have changed under it. */
  generation = 0;
  /**
   * The batch just after the last read's whole batches, taken from that read's own bytes (the part of it cut off),
   * and the generation it was read in. A consumer catching up fetches next from exactly there: its offset lookup
   * is answered from this without the offset index (an open, a binary search of small reads and a close when its
   * entries are not the cached tail) and without the header read after it. Null when the last read ended on the
   * bytes' end.
   */
  private nextBatch: { readonly generation: number; readonly location: BatchLocation } | null = null;
  private deleted = false;
  /** Reads and writes holding the descriptor: it is closed only once they are done. */
  private ioInFlight = 0;
  private closeWhenIdle = false;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    /** The Log replaces it when the topic's config changes. */
    public config: LogConfig,
    fd: number,
    size: number,
    public offsetIndex: OffsetIndex,
    public timeIndex: TimeIndex,
    readonly txnIndex: TxnIndex,
    readonly createdMs: number,
    readonly rollJitterMs: number,
    /** Set when the .log is encrypted (see encryption/segment-cipher.ts); null for a plaintext segment. */
    readonly cipher: SegmentCipher | null = null,
  ) {
    this.fd = fd;
    this.sizeBytes = size;
    this.reservedBytes = size;
    this.preallocated = config.preallocate;
    this.offsetOfMaxTimestamp = baseOffset;
    this.nextOffsetValue = baseOffset;
  }

  static create(
    dir: string,
    baseOffset: number,
    config: LogConfig,
    nowMs: number,
    rollJitterMs: number,
    /** Encrypts the new segment with a fresh data key when given. */
    keys: SegmentKeys | null = null,
  ): LogSegment {
    const encPath = segmentFilePath(dir, baseOffset, ENC_SUFFIX);
    // The key file first: a .log never exists without the key that reads it.
    const cipher = keys === null ? null : SegmentCipher.create(encPath, baseOffset, keys);
    if (cipher === null) safeUnlink(encPath);
    const fd = openSync(segmentFilePath(dir, baseOffset, LOG_SUFFIX), 'w+');
    if (config.preallocate) ftruncateSync(fd, config.segmentBytes);
    const offsetIndex = OffsetIndex.create(
      segmentFilePath(dir, baseOffset, INDEX_SUFFIX),
      baseOffset,
      config.segmentIndexBytes,
      cipher?.indexCrypt(IndexFileKind.offset) ?? null,
    );
    const timeIndex = TimeIndex.create(
      segmentFilePath(dir, baseOffset, TIME_INDEX_SUFFIX),
      baseOffset,
      config.segmentIndexBytes,
      cipher?.indexCrypt(IndexFileKind.time) ?? null,
    );
    const txnIndex = new TxnIndex(
      segmentFilePath(dir, baseOffset, TXN_INDEX_SUFFIX),
      cipher?.indexCrypt(IndexFileKind.txn) ?? null,
    );
    txnIndex.reset();
    safeUnlink(txnIndex.path);
    return new LogSegment(
      dir,
      baseOffset,
      config,
      fd,
      0,
      offsetIndex,
      timeIndex,
      txnIndex,
      nowMs,
      rollJitterMs,
      cipher,
    );
  }

  /**
   * Opens an existing segment. Its indexes are opened if their shape is sane, else recreated empty and
   * `needsIndexRebuild` is set; the caller then runs `rebuildIndexes` or `recover`. `size` starts as the file
   * length; `recover` or `loadTail` establishes how much of it is whole batches.
   */
  static open(
    dir: string,
    baseOffset: number,
    config: LogConfig,
    nowMs: number,
    rollJitterMs: number,
    keys: SegmentKeys | null = null,
  ): {
    segment: LogSegment;
    needsIndexRebuild: boolean;
    /** An encrypted segment whose .log does not match its tags: a crash left bytes past them, or it was cut. */
    integrityNote?: string;
  } {
    const logPath = segmentFilePath(dir, baseOffset, LOG_SUFFIX);
    const cipher = openCipher(segmentFilePath(dir, baseOffset, ENC_SUFFIX), baseOffset, keys);
    const fd = openSync(logPath, 'r+');
    let size = fstatSync(fd).size;
    let integrityNote: string | undefined;
    if (cipher !== null) {
      const authenticated = cipher.authenticatedLength();
      if (authenticated > size) {
        integrityNote = `${logPath}: ${size} bytes, but its tags cover ${authenticated}: the encrypted log was truncated`;
      } else if (authenticated < size && !cipher.sealed && !config.preallocate) {
        // Bytes no tag covers were never acknowledged (tags are written at commit); recovery cuts them.
        integrityNote = `${logPath}: ${size - authenticated} bytes past the authenticated end`;
      }
      // Readers never go past what the tags vouch for.
      size = Math.min(size, authenticated);
    }
    const indexPath = segmentFilePath(dir, baseOffset, INDEX_SUFFIX);
    const timePath = segmentFilePath(dir, baseOffset, TIME_INDEX_SUFFIX);
    let needsIndexRebuild = integrityNote !== undefined;
    let offsetIndex = openIfPresent(() =>
      OffsetIndex.open(
        indexPath,
        baseOffset,
        config.segmentIndexBytes,
        size,
        cipher?.indexCrypt(IndexFileKind.offset) ?? null,
      ),
    );
    let timeIndex = openIfPresent(() =>
      TimeIndex.open(
        timePath,
        baseOffset,
        config.segmentIndexBytes,
        cipher?.indexCrypt(IndexFileKind.time) ?? null,
      ),
    );
    if (offsetIndex === null || timeIndex === null) {
      offsetIndex?.file.close();
      timeIndex?.file.close();
      offsetIndex = OffsetIndex.create(
        indexPath,
        baseOffset,
        config.segmentIndexBytes,
        cipher?.indexCrypt(IndexFileKind.offset) ?? null,
      );
      timeIndex = TimeIndex.create(
        timePath,
        baseOffset,
        config.segmentIndexBytes,
        cipher?.indexCrypt(IndexFileKind.time) ?? null,
      );
      needsIndexRebuild = true;
    }
    const txnIndex = new TxnIndex(
      segmentFilePath(dir, baseOffset, TXN_INDEX_SUFFIX),
      cipher?.indexCrypt(IndexFileKind.txn) ?? null,
    );
    const segment = new LogSegment(
      dir,
      baseOffset,
      config,
      fd,
      size,
      offsetIndex,
      timeIndex,
      txnIndex,
      nowMs,
      rollJitterMs,
      cipher,
    );
    return integrityNote === undefined
      ? { segment, needsIndexRebuild }
      : { segment, needsIndexRebuild, integrityNote };
  }

  /** Bytes of whole batches written and visible to readers. */
  get size(): number {
    return this.sizeBytes;
  }

  /** `size` plus the bytes of queued appends not yet committed (what roll decisions and emptiness count). */
  get reservedSize(): number {
    return this.reservedBytes;
  }

  /** One past the last offset stored here; equal to baseOffset when the segment is empty. */
  get nextOffset(): number {
    return this.nextOffsetValue;
  }

  get maxTimestampMs(): number {
    return this.maxTimestampSoFarMs;
  }

  /**
   * What retention.ms ages the segment by (Kafka's LogSegment.largestTimestamp): its largest batch timestamp, or,
   * when no batch carries one (records stored without timestamps, as a v0 client's are), the last modification
   * time of its .log file, so that such records expire too.
   */
  get largestTimestampMs(): number {
    return this.maxTimestampSoFarMs >= 0 ? this.maxTimestampSoFarMs : this.lastModifiedMs;
  }

  /** The .log file's last modification time (Kafka's LogSegment.lastModified). */
  get lastModifiedMs(): number {
    return Math.floor(fstatSync(this.fd).mtimeMs);
  }

  /**
   * Sets the .log file's modification time (Kafka's setLastModified): a cleaned segment takes the time of the
   * last segment it replaces, so cleaning does not make untimestamped records look younger to retention.ms.
   */
  setLastModified(ms: number): void {
    futimesSync(this.fd, fstatSync(this.fd).atime, new Date(ms));
  }

  get offsetOfMaxTimestampMs(): number {
    return this.offsetOfMaxTimestamp;
  }

  /** An encrypted segment sealed against further bytes (rolled, or cut by recovery); never true unencrypted. */
  get isSealed(): boolean {
    return this.cipher?.sealed === true;
  }

  get isDeleted(): boolean {
    return this.deleted;
  }

  /** The file descriptor of the .log file, for callers that send byte ranges themselves. */
  get logFd(): number {
    return this.fd;
  }

  /**
   * fsync or fdatasync of the .log file off the event loop, then `done`. Counted as I/O in flight like writes
   * and reads, so the descriptor stays open until the sync finishes even if the segment is deleted or closed
   * meanwhile (a closed descriptor could be reused by another file, which would be synced instead). A segment
   * deleted or closed while its sync ran answers without error: its bytes no longer matter to the log.
   */
  syncLog(sync: typeof fsync, done: (err: Error | null) => void): void {
    if (this.fd < 0 || this.deleted) {
      done(null);
      return;
    }
    this.ioInFlight++;
    const finish = (err: Error | null): void => {
      this.ioInFlight--;
      const gone = this.deleted || this.closeWhenIdle;
      if (this.ioInFlight === 0 && this.closeWhenIdle) this.finishDelete();
      done(gone ? null : err);
    };
    // An encrypted segment's tags are part of its data: without them the bytes cannot be read back.
    const cipher = this.cipher;
    sync(this.fd, (err) => {
      if (err !== null || cipher === null || cipher.fd < 0) finish(err);
      else sync(cipher.fd, finish);
    });
  }

  /** Whether an append of `bytes` ending at `lastOffset`, at time `nowMs`, must go to a new segment first. */
  shouldRoll(bytes: number, lastOffset: number, maxTimestampMs: number, nowMs: number): boolean {
    // A sealed encrypted segment takes no more bytes (see encryption/segment-cipher.ts): even empty, it is
    // replaced by one with a new data key.
    if (this.cipher?.sealed === true) return true;
    if (this.reservedBytes === 0) return false;
    if (this.reservedBytes > this.config.segmentBytes - bytes) return true;
    if (lastOffset - this.baseOffset > 0x7fffffff) return true;
    if (this.offsetIndex.isFull || this.timeIndex.isFull) return true;
    const waitedMs =
      this.firstBatchTimestampMs !== null && this.firstBatchTimestampMs >= 0
        ? maxTimestampMs - this.firstBatchTimestampMs
        : nowMs - this.createdMs;
    return waitedMs > maxSegmentMs(this.config) - this.rollJitterMs;
  }

  /**
   * Appends whole batches (buf[start, end)); their offsets must be at least nextOffset and increasing. Writes the
   * bytes first and the index entries after, so an index never points past the log.
   */
  append(buf: Buffer, start: number, end: number): void {
    assert(!this.deleted, 'append to a deleted segment');
    assert(this.reservedBytes === this.sizeBytes, 'a synchronous append behind queued ones');
    let written = 0;
    const length = end - start;
    const bytes =
      this.cipher === null
        ? buf
        : this.cipher.encryptForWrite(buf, start, end, this.sizeBytes, this.fd, this.sizeBytes);
    const from = this.cipher === null ? start : 0;
    try {
      while (written < length) {
        written += writeSync(this.fd, bytes, from + written, length - written, this.sizeBytes + written);
      }
    } catch (err) {
      // Leave no partial batch behind for a reader or a restart to trip over.
      ftruncateSync(this.fd, this.sizeBytes);
      this.cipher?.dropPending();
      this.cipher?.seal();
      throw err;
    }
    this.cipher?.commit(this.fd, buf, start, end, this.sizeBytes);
    let position = this.sizeBytes;
    for (let pos = start; pos < end; ) {
      const size = batchHeader.sizeInBytes(buf, pos);
      this.indexBatch(position, size, batchHeader.lastOffset(buf, pos), batchHeader.maxTimestamp(buf, pos));
      position += size;
      pos += size;
    }
    this.sizeBytes = position;
    this.reservedBytes = position;
  }

  /**
   * Claims the next `length` bytes of the file for a queued append and returns where they start. The bytes are
   * written by `writeAt` and become visible with `commitAppend`, in reservation order.
   */
  reserve(length: number, firstBatchMaxTimestampMs: number): number {
    assert(!this.deleted, 'append to a deleted segment');
    const position = this.reservedBytes;
    this.reservedBytes += length;
    // segment.ms counts from the first batch, committed or not.
    if (this.firstBatchTimestampMs === null) this.firstBatchTimestampMs = firstBatchMaxTimestampMs;
    return position;
  }

  /**
   * Writes `buffers` at `position` of the .log file off the event loop (one writev, continued if the kernel
   * takes less), then calls `done`. The descriptor stays open until it finishes, even if the segment is
   * deleted meanwhile. Nothing changes in the segment's state: the caller commits after success.
   */
  writeAt(buffers: Buffer[], position: number, done: (err: Error | null) => void): void {
    this.ioInFlight++;
    const finish = (err: Error | null): void => {
      this.ioInFlight--;
      if (this.ioInFlight === 0 && this.closeWhenIdle) this.finishDelete();
      done(err);
    };
    const step = (bufs: Buffer[], at: number): void => {
      fsWritev(this.fd, bufs, at, (err, written) => {
        if (err !== null) return finish(err);
        let rest = written;
        let i = 0;
        while (i < bufs.length && rest >= bufs[i]!.length) rest -= bufs[i++]!.length;
        if (i === bufs.length) return finish(null);
        const remaining = bufs.slice(i);
        remaining[0] = remaining[0]!.subarray(rest);
        step(remaining, at + written);
      });
    };
    if (this.cipher === null) {
      step(buffers, position);
      return;
    }
    const encrypted: Buffer[] = [];
    let at = position;
    try {
      for (const b of buffers) {
        encrypted.push(this.cipher.encryptForWrite(b, 0, b.length, at, this.fd, this.sizeBytes));
        at += b.length;
      }
    } catch (err) {
      // A damaged tail chunk (see SegmentCipher.encryptForWrite): the write fails as an I/O error would, later.
      queueMicrotask(() => finish(err as Error));
      return;
    }
    step(encrypted, position);
  }

  /** Writes buf[start, end) at `position` synchronously (a queued append completed on the event loop). */
  writeSyncAt(buf: Buffer, start: number, end: number, position: number): void {
    const bytes =
      this.cipher === null
        ? buf
        : this.cipher.encryptForWrite(buf, start, end, position, this.fd, this.sizeBytes);
    const from = this.cipher === null ? start : 0;
    let written = 0;
    while (written < end - start) {
      written += writeSync(this.fd, bytes, from + written, end - start - written, position + written);
    }
  }

  /**
   * Makes a written queued append visible: index entries, `size` and `nextOffset` move past its batches. Must
   * be called in reservation order, for the append that starts at `size`.
   */
  commitAppend(buf: Buffer, start: number, end: number, position: number): void {
    assert(position === this.sizeBytes, 'queued appends commit in order');
    this.cipher?.commit(this.fd, buf, start, end, position);
    for (let pos = start; pos < end; ) {
      const size = batchHeader.sizeInBytes(buf, pos);
      this.indexBatch(position, size, batchHeader.lastOffset(buf, pos), batchHeader.maxTimestamp(buf, pos));
      position += size;
      pos += size;
    }
    this.sizeBytes = position;
  }

  /**
   * After a truncation, a write that was already running when its append was completed synchronously may have
   * put stale bytes past the visible end: cut them. Only called while no write of this log runs, so reserved
   * bytes past `size` are not in the file yet.
   */
  cutPastSize(): void {
    if (this.fd >= 0 && !this.deleted) {
      ftruncateSync(this.fd, this.sizeBytes);
    }
  }

  /**
   * `dropReserved` after a failed write: a failing disk may refuse the truncation as well, which must not throw
   * out of the write's completion. The log refuses appends from then on; what the failed write left past the
   * visible bytes is recovery's when the log is opened again (a torn batch is cut there).
   */
  dropReservedAfterWriteFailure(): void {
    try {
      this.dropReserved();
    } catch {
      // See above: nothing more to do here.
    }
  }

  /**
   * Forgets reserved bytes that will not be committed (a failed write or a cancelled append): later appends
   * go where the visible bytes end, and whatever a failed write left past them is cut.
   */
  dropReserved(): void {
    if (this.reservedBytes === this.sizeBytes) return;
    this.reservedBytes = this.sizeBytes;
    if (this.fd >= 0) ftruncateSync(this.fd, this.sizeBytes);
    // Bytes past the end may have reached the file: their keystream must not encrypt other bytes.
    if (this.cipher !== null && this.fd >= 0) {
      this.cipher.dropPending();
      this.cipher.seal();
    }
  }

  /** Index bookkeeping for one batch at `position`, shared by append and recovery (Kafka's order of steps). */
  private indexBatch(position: number, size: number, lastOffset: number, maxTimestampMs: number): void {
    if (this.firstBatchTimestampMs === null) this.firstBatchTimestampMs = maxTimestampMs;
    if (maxTimestampMs > this.maxTimestampSoFarMs) {
      this.maxTimestampSoFarMs = maxTimestampMs;
      this.offsetOfMaxTimestamp = lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.config.indexIntervalBytes) {
      this.offsetIndex.append(lastOffset, position);
      this.timeIndex.maybeAppend(this.maxTimestampSoFarMs, this.offsetOfMaxTimestamp);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += size;
    this.nextOffsetValue = lastOffset + 1;
  }

  /**
   * Establishes next offset, max timestamp and the index interval count of a segment whose indexes are trusted,
   * by scanning the headers after the last index entry. Returns false when the tail does not parse as whole
   * batches, or the last index entry does not point at its batch (the caller then recovers the segment).
   */
  loadTail(): boolean {
    const last = this.offsetIndex.entries > 0 ? this.offsetIndex.lookup(Number.MAX_SAFE_INTEGER) : null;
    const end = this.sizeBytes;
    let ok = true;
    this.resetBookkeeping();
    const lastTime = this.timeIndex.lastEntry;
    if (lastTime !== null) {
      this.maxTimestampSoFarMs = lastTime.timestamp;
      this.offsetOfMaxTimestamp = lastTime.offset;
    }
    if (last !== null) this.nextOffsetValue = last.offset + 1;
    if (end >= BATCH_HEADER_BYTES) {
      try {
        const header = this.readBytes(0, BATCH_HEADER_BYTES);
        this.firstBatchTimestampMs = batchHeader.maxTimestamp(header, 0);
      } catch (err) {
        // A damaged first chunk of an encrypted segment: served as KAFKA_STORAGE_ERROR when read, not cut here.
        if (!(err instanceof SegmentIntegrityError)) throw err;
      }
    }
    let stopped: number;
    try {
      stopped = this.scanTail(last, end, () => {
        ok = false;
      });
    } catch (err) {
      // The tail fails authentication: recovered (cut) as a torn tail would be.
      if (!(err instanceof SegmentIntegrityError)) throw err;
      return false;
    }
    // Appends continue the interval count from the last indexed batch, as if they had never stopped.
    this.bytesSinceLastIndexEntry = end - (last?.position ?? 0);
    try {
      return ok && stopped === end && this.timeIndexTailMatches();
    } catch (err) {
      if (!(err instanceof SegmentIntegrityError)) throw err;
      return false;
    }
  }

  private scanTail(last: { offset: number; position: number } | null, end: number, bad: () => void): number {
    return scanHeaders(this.headerSource, last?.position ?? 0, end, (info) => {
      const badEntry = last !== null && info.position === last.position && info.lastOffset !== last.offset;
      if (badEntry || info.position + info.sizeInBytes > end || info.lastOffset < this.nextOffsetValue - 1) {
        bad();
        return false;
      }
      if (info.maxTimestamp > this.maxTimestampSoFarMs) {
        this.maxTimestampSoFarMs = info.maxTimestamp;
        this.offsetOfMaxTimestamp = info.lastOffset;
      }
      this.nextOffsetValue = info.lastOffset + 1;
      return true;
    });
  }

  /** The last time index entry must name a batch of this segment with exactly that max timestamp. */
  private timeIndexTailMatches(): boolean {
    const lastTime = this.timeIndex.lastEntry;
    if (lastTime === null) return true;
    if (lastTime.offset >= this.nextOffsetValue) return false;
    const batch = this.translateOffset(lastTime.offset, true);
    return (
      batch !== null && batch.lastOffset === lastTime.offset && batch.maxTimestamp === lastTime.timestamp
    );
  }

  /** Drops both indexes and rebuilds them from the batch headers (no CRC checks: the log is trusted here). */
  rebuildIndexes(): void {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    this.offsetIndex.file.preallocate();
    this.timeIndex.file.preallocate();
    this.resetBookkeeping();
    scanHeaders(this.headerSource, 0, this.sizeBytes, (info) => {
      this.indexBatch(info.position, info.sizeInBytes, info.lastOffset, info.maxTimestamp);
      return true;
    });
  }

  private resetBookkeeping(): void {
    this.bytesSinceLastIndexEntry = 0;
    this.maxTimestampSoFarMs = -1;
    this.offsetOfMaxTimestamp = this.baseOffset;
    this.nextOffsetValue = this.baseOffset;
    this.firstBatchTimestampMs = null;
  }

  /**
   * Re-reads every batch, checking framing, offsets and CRC32C, rebuilds the indexes, and cuts the file at the
   * first byte that is not part of a valid batch. Offsets must increase from `minOffset` on; gaps are accepted,
   * as Kafka does, since compaction leaves them. Returns the number of bytes cut.
   */
  recover(
    minOffset: number,
    batchBytesMax: number,
    visit: RecoveredBatchVisitor,
    onIntegrityFailure?: (note: string) => void,
  ): number {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    // The transaction index is rebuilt by the Log from producer state as it replays this segment.
    this.txnIndex.closeAndDelete();
    this.txnIndex.reset();
    this.offsetIndex.file.preallocate();
    this.timeIndex.file.preallocate();
    this.resetBookkeeping();
    const actualSize = fstatSync(this.fd).size;
    // An encrypted segment is trusted only as far as its chunks verify; what follows is cut like a torn batch.
    const fileSize = this.cipher === null ? actualSize : this.cipher.verifiedPrefix(this.fd, actualSize);
    if (this.cipher !== null && fileSize < Math.min(actualSize, this.cipher.authenticatedLength())) {
      onIntegrityFailure?.(
        `${segmentFilePath(this.dir, this.baseOffset, LOG_SUFFIX)}: the chunk at byte ${fileSize} fails authentication (tampered or damaged): the segment is cut there`,
      );
    }
    let chunk = Buffer.allocUnsafe(Math.min(RECOVERY_CHUNK_BYTES, Math.max(fileSize, BATCH_HEADER_BYTES)));
    let chunkStart = 0;
    let chunkLength = 0;
    let position = 0;
    let expectOffset = Math.max(minOffset, this.baseOffset);
    let lastEpoch = -1;
    while (position < fileSize) {
      let at = position - chunkStart;
      let check = checkBatch(chunk, at, chunkLength - at, expectOffset, this.baseOffset, batchBytesMax);
      if (!check.ok && check.reason === 'incomplete' && chunkStart + chunkLength < fileSize) {
        // Refill from this batch on, with room for the whole batch when its length field is readable.
        let want = chunk.length;
        if (chunkLength - at >= 12) {
          want = Math.max(want, Math.min(batchHeader.sizeInBytes(chunk, at), batchBytesMax));
        }
        if (want > chunk.length) chunk = Buffer.allocUnsafe(want);
        chunkStart = position;
        chunkLength = this.readAt(chunk, Math.min(want, fileSize - position), position);
        at = 0;
        check = checkBatch(chunk, 0, chunkLength, expectOffset, this.baseOffset, batchBytesMax);
      }
      if (!check.ok) break;
      // Fields outside the CRC (base offset, leader epoch) get what checks they can: offsets increase (checkBatch
      // holds the base offset to at least expectOffset; gaps are legitimate after compaction, whatever the
      // topic's policy now) and leader epochs never go back.
      const epoch = batchHeader.partitionLeaderEpoch(chunk, at);
      if (epoch < lastEpoch) break;
      lastEpoch = epoch;
      const lastOffset = batchHeader.lastOffset(chunk, at);
      const maxTimestamp = batchHeader.maxTimestamp(chunk, at);
      this.indexBatch(position, check.sizeInBytes, lastOffset, maxTimestamp);
      visit(chunk, at, {
        position,
        sizeInBytes: check.sizeInBytes,
        baseOffset: batchHeader.baseOffset(chunk, at),
        lastOffset,
        maxTimestamp,
        partitionLeaderEpoch: batchHeader.partitionLeaderEpoch(chunk, at),
      });
      position += check.sizeInBytes;
      expectOffset = lastOffset + 1;
    }
    const cut = actualSize - position;
    if (cut > 0) ftruncateSync(this.fd, position);
    if (cut > 0 && this.cipher !== null) {
      // Everything below `position` was verified by verifiedPrefix and the batch checks above.
      this.cipher.truncate(this.fd, position, true);
      this.cipher.seal();
    }
    this.sizeBytes = position;
    this.reservedBytes = position;
    this.nextBatch = null;
    return cut;
  }

  /**
   * Location of the first batch whose last offset is >= target, or null when the segment has none. An index
   * entry is checked against the batch it points at; a wrong one means the index is damaged and is rebuilt.
   */
  translateOffset(target: number, rebuilt = false): BatchLocation | null {
    if (target >= this.nextOffsetValue) return null;
    const next = this.nextBatch;
    if (
      next !== null &&
      next.generation === this.generation &&
      target >= next.location.baseOffset &&
      target <= next.location.lastOffset
    )
      return next.location;
    const entry = this.offsetIndex.lookup(target);
    let found: BatchLocation | null = null;
    let damaged = false;
    scanHeaders(this.headerSource, entry?.position ?? 0, this.sizeBytes, (info) => {
      if (entry !== null && info.position === entry.position && info.lastOffset !== entry.offset) {
        damaged = true;
        return false;
      }
      if (info.lastOffset < target) return true;
      found = { ...info };
      return false;
    });
    if (damaged) {
      if (rebuilt) return null;
      this.rebuildIndexes();
      return this.translateOffset(target, true);
    }
    return found;
  }

  /** The first batch holding offsets >= startingOffset whose max timestamp is >= timestampMs, or null. */
  findByTimestamp(timestampMs: number, startingOffset: number): BatchLocation | null {
    if (this.maxTimestampSoFarMs < timestampMs) return null;
    const entry = this.timeIndex.lookup(timestampMs);
    const from = this.translateOffset(Math.max(entry?.offset ?? this.baseOffset, startingOffset));
    if (from === null) return null;
    let found: BatchLocation | null = null;
    scanHeaders(this.headerSource, from.position, this.sizeBytes, (info) => {
      if (info.maxTimestamp < timestampMs) return true;
      found = { ...info };
      return false;
    });
    return found;
  }

  /**
   * Reads whole batches from the first one holding `startOffset`, at most `maxBytes` of them (but always the
   * first batch when `minOneBatch`), stopping before any batch that reaches `maxOffset` (exclusive; the high
   * watermark for consumers). Returns null when the segment has nothing at or after startOffset.
   */
  read(startOffset: number, maxBytes: number, maxOffset: number, minOneBatch: boolean): SegmentRead | null {
    const plan = this.planRead(startOffset, maxBytes, maxOffset, minOneBatch);
    if (plan === null || plan.length === 0) return plan === null ? null : plan.empty;
    if (this.cipher !== null) {
      const plain = this.cipher.readSync(this.fd, plan.position, plan.length);
      return wholeBatches(plain, plain.length, plan.firstOffset, maxOffset);
    }
    const buf = Buffer.allocUnsafe(plan.length);
    const got = readFully(this.fd, buf, plan.length, plan.position);
    return this.noteNextBatch(wholeBatches(buf, got, plan.firstOffset, maxOffset), buf, got, plan.position);
  }

  /**
   * The same as `read`, with the bytes read off the event loop. The segment's descriptor stays open until the
   * read finishes even if the segment is deleted meanwhile; a truncation during the read makes it start over.
   */
  readAsync(
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
  ): Promise<SegmentRead | null> {
    return this.startRead(startOffset, maxBytes, maxOffset, minOneBatch).result;
  }

  /**
   * `readAsync`, also saying at once how many bytes the read takes (an upper bound of what it returns: a batch
   * cut by the length, or reaching maxOffset, is left out), so a fetch can share its byte budget before the
   * bytes arrive. With `inline`, a read it allows runs on the event loop, done when this returns (see
   * inline-reads.ts); never for an encrypted segment.
   */
  startRead(
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
    pooled: PooledRead | null = null,
    inline: InlineReadGate | null = null,
  ): { readonly bytes: number; readonly result: Promise<SegmentRead | null> } {
    const plan = this.planRead(startOffset, maxBytes, maxOffset, minOneBatch);
    if (plan === null || plan.length === 0) {
      return { bytes: 0, result: Promise.resolve(plan === null ? null : plan.empty) };
    }
    return {
      bytes: plan.length,
      result: this.readPlanned(plan, startOffset, maxBytes, maxOffset, minOneBatch, pooled, inline),
    };
  }

  /**
   * Keeps the header of the batch the read cut off (see nextBatch): `read` holds the whole batches of the `got`
   * bytes read at `position` into `buf`, and the next batch starts where they end. Called in the turn the bytes
   * arrive, on a read of this generation (the bytes are the file's as it is now). Answers `read`.
   */
  private noteNextBatch(read: SegmentRead, buf: Buffer, got: number, position: number): SegmentRead {
    const end = read.records.length;
    if (end + BATCH_HEADER_BYTES > got) return read;
    const location: BatchLocation = {
      position: position + end,
      sizeInBytes: batchHeader.sizeInBytes(buf, end),
      baseOffset: batchHeader.baseOffset(buf, end),
      lastOffset: batchHeader.lastOffset(buf, end),
      maxTimestamp: batchHeader.maxTimestamp(buf, end),
    };
    // The batch after the last one returned (offsets may skip ahead in a compacted segment, never go back).
    assert(location.baseOffset >= read.nextOffset, 'the cut batch follows the batches read');
    this.nextBatch = { generation: this.generation, location };
    return read;
  }

  /** Bytes a read would take (see startRead), without reading them. */
  plannedReadBytes(startOffset: number, maxBytes: number, maxOffset: number, minOneBatch: boolean): number {
    return this.planRead(startOffset, maxBytes, maxOffset, minOneBatch)?.length ?? 0;
  }

  private readPlanned(
    plan: { position: number; length: number; firstOffset: number },
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
    pooled: PooledRead | null,
    inline: InlineReadGate | null,
  ): Promise<SegmentRead | null> {
    if (this.cipher !== null)
      return this.readPlannedEncrypted(plan, startOffset, maxBytes, maxOffset, minOneBatch);
    const generation = this.generation;
    // The pool and pins of this read, when its size is one the pool serves; null: a plain buffer.
    const fromPool = pooled?.pool.pools(plan.length) ? pooled : null;
    const buf = fromPool === null ? Buffer.allocUnsafe(plan.length) : fromPool.pool.acquire(plan.length);
    if (inline?.allows(plan.length)) {
      // Nothing can change the file between the plan and this read: it runs in this turn, on the loop.
      if (fromPool !== null) fromPool.pins.push(buf);
      return inline.readInline(
        () => readFully(this.fd, buf, plan.length, plan.position),
        (got) =>
          this.noteNextBatch(wholeBatches(buf, got, plan.firstOffset, maxOffset), buf, got, plan.position),
      );
    }
    this.ioInFlight++;
    return new Promise<SegmentRead | null>((resolve, reject) => {
      fsRead(this.fd, buf, 0, plan.length, plan.position, (err, got) => {
        // Handed over only now: the thread pool no longer writes into it, whatever becomes of the caller.
        if (fromPool !== null) fromPool.pins.push(buf);
        this.ioInFlight--;
        if (this.ioInFlight === 0 && this.closeWhenIdle) this.finishDelete();
        if (err !== null) reject(err);
        else if (generation !== this.generation)
          resolve(this.deleted ? null : this.read(startOffset, maxBytes, maxOffset, minOneBatch));
        else
          resolve(
            this.noteNextBatch(wholeBatches(buf, got, plan.firstOffset, maxOffset), buf, got, plan.position),
          );
      });
    });
  }

  /**
   * `readPlanned` of an encrypted segment: the tags are read now, the covering chunks off the event loop, then
   * verified and decrypted (never from the pool: the plaintext is a new buffer).
   */
  private readPlannedEncrypted(
    plan: { position: number; length: number; firstOffset: number },
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
  ): Promise<SegmentRead | null> {
    const cipher = this.cipher!;
    // Chunks verified just before (by this fetch's offset lookup, or the previous fetch) are not read again.
    const cached = cipher.readCached(plan.position, plan.length);
    if (cached !== null)
      return Promise.resolve(wholeBatches(cached, cached.length, plan.firstOffset, maxOffset));
    const generation = this.generation;
    const encrypted = cipher.planRead(plan.position, plan.length);
    const chunks = SegmentCipher.planChunks(encrypted);
    // A read of several chunks goes in pieces read at once on the thread pool; each piece is verified and
    // decrypted as soon as it is in, while the others are still being read.
    const pieceChunks = Math.max(ENC_READ_PIECE_CHUNKS_MIN, Math.ceil(chunks / ENC_READ_PIECES_MAX));
    const pieces = Math.ceil(chunks / pieceChunks);
    const buf = cipherReadBuffers.acquire(encrypted.cipherLength);
    const out = chunks === 1 ? null : Buffer.allocUnsafe(plan.length);
    this.ioInFlight += pieces;
    return new Promise<SegmentRead | null>((resolve, reject) => {
      let left = pieces;
      let failure: unknown = null;
      let single: Buffer | null = null;
      const finish = (): void => {
        cipherReadBuffers.release(buf);
        if (failure !== null) {
          reject(failure);
          return;
        }
        try {
          if (generation !== this.generation) {
            resolve(this.deleted ? null : this.read(startOffset, maxBytes, maxOffset, minOneBatch));
            return;
          }
          const plain = out ?? single!;
          resolve(wholeBatches(plain, plain.length, plan.firstOffset, maxOffset));
        } catch (e) {
          reject(e);
        }
      };
      const pieceDone = (from: number, to: number, err: Error | null, got: number, want: number): void => {
        this.ioInFlight--;
        if (this.ioInFlight === 0 && this.closeWhenIdle) this.finishDelete();
        if (err !== null) failure ??= err;
        // After a truncation the bytes may be gone: the whole read is done again (finish).
        if (failure === null && generation === this.generation) {
          try {
            if (got < want) {
              // What finishRead says of a cut file, for the bytes this piece should have had.
              cipher.finishRead(encrypted, buf, from * ENC_CHUNK_BYTES + got);
            }
            if (out === null) single = cipher.finishRead(encrypted, buf, encrypted.cipherLength);
            else cipher.finishChunks(encrypted, buf, from, to, out);
          } catch (e) {
            failure = e;
          }
        }
        if (--left === 0) finish();
      };
      for (let p = 0; p < pieces; p++) {
        const from = p * pieceChunks;
        const to = Math.min(chunks, from + pieceChunks);
        const start = from * ENC_CHUNK_BYTES;
        const want = Math.min(encrypted.cipherLength, to * ENC_CHUNK_BYTES) - start;
        const step = (got: number): void => {
          fsRead(this.fd, buf, start + got, want - got, encrypted.cipherStart + start + got, (err, n) => {
            if (err !== null || n === 0 || got + n === want) pieceDone(from, to, err, got + n, want);
            else step(got + n);
          });
        };
        step(0);
      }
    });
  }

  /** Reads `length` bytes at `position` into buf (decrypted and verified when encrypted); returns bytes read. */
  private readAt(buf: Buffer, length: number, position: number): number {
    if (this.cipher === null) return readFully(this.fd, buf, length, position);
    const plain = this.cipher.readSync(this.fd, position, length);
    plain.copy(buf, 0);
    return plain.length;
  }

  /** What header scans read from: the descriptor itself, or a decrypting reader. */
  private get headerSource(): HeaderSource {
    if (this.cipher === null) return this.fd;
    return (buf, length, position) => this.readAt(buf, length, position);
  }

  /** Where a read starts and how many bytes it takes; `length` 0 means the answer is `empty`. */
  private planRead(
    startOffset: number,
    maxBytes: number,
    maxOffset: number,
    minOneBatch: boolean,
  ): { position: number; length: number; firstOffset: number; empty: SegmentRead } | null {
    const first = this.translateOffset(startOffset);
    if (first === null) return null;
    const empty = { records: EMPTY, firstOffset: first.baseOffset, nextOffset: first.baseOffset };
    const plan = { position: first.position, length: 0, firstOffset: first.baseOffset, empty };
    if (first.lastOffset >= maxOffset) return plan;
    // A length field damaged after a clean shutdown must not size an allocation: a batch cannot run past the
    // segment's end nor exceed the batch bound; such a batch is not served.
    const batchBytesMax = Math.max(STORAGE_LIMITS.batchBytesMax, this.config.maxMessageBytes);
    if (first.sizeInBytes > this.sizeBytes - first.position || first.sizeInBytes > batchBytesMax) return plan;
    let want = Math.min(maxBytes, this.sizeBytes - first.position);
    if (want < first.sizeInBytes) {
      if (!minOneBatch) return plan;
      want = first.sizeInBytes;
    }
    plan.length = want;
    return plan;
  }

  /** Reads `length` bytes at `position` of the .log file (whole batches found by an earlier lookup). */
  readBytes(position: number, length: number): Buffer {
    if (this.cipher !== null) return this.cipher.readSync(this.fd, position, length);
    const buf = Buffer.allocUnsafe(length);
    const got = readFully(this.fd, buf, length, position);
    return got === length ? buf : buf.subarray(0, got);
  }

  /** Visits the headers of all batches at or after `position` (used to rebuild producer state). */
  scan(fromPosition: number, visit: (info: BatchInfo, header: Buffer, headerPos: number) => boolean): void {
    scanHeaders(this.headerSource, fromPosition, this.sizeBytes, visit);
  }

  /**
   * Removes every batch with an offset >= `offset`; a batch holding `offset` goes whole, since the log only
   * cuts at batch boundaries (callers truncate to boundaries: epoch end offsets, high watermarks). Returns the
   * bytes removed.
   */
  truncateTo(offset: number): number {
    const from = offset <= this.baseOffset ? null : this.translateOffset(offset);
    let position: number;
    if (offset <= this.baseOffset) position = 0;
    else if (from === null) return 0;
    else position = from.position; // the batch holding `offset` goes whole, as in Kafka
    const removed = this.sizeBytes - position;
    this.offsetIndex.truncateTo(offset);
    this.timeIndex.truncateTo(offset);
    this.txnIndex.truncateTo(offset);
    assert(this.reservedBytes === this.sizeBytes, 'truncation behind queued appends');
    // The cipher first: it verifies the chunk it re-tags while the .log still holds all of it.
    if (this.cipher !== null && removed > 0) {
      this.cipher.truncate(this.fd, position, false);
      this.cipher.seal();
    }
    ftruncateSync(this.fd, position);
    this.sizeBytes = position;
    this.reservedBytes = position;
    this.generation++;
    const tailOk = this.loadTail();
    assert(tailOk, 'a truncated segment must end on a batch boundary');
    return removed;
  }

  /** Called when this segment stops being the active one: final time index entry, indexes trimmed. */
  onRoll(): void {
    this.timeIndex.maybeAppend(this.maxTimestampSoFarMs, this.offsetOfMaxTimestamp, true);
    this.offsetIndex.file.trimToValidSize();
    this.timeIndex.file.trimToValidSize();
    // Whether the file was preallocated, not the current setting: preallocate may have changed since (dynamic).
    if (this.preallocated) ftruncateSync(this.fd, this.sizeBytes);
    this.releaseIndexFiles();
  }

  /** Index descriptors are given back while the segment only serves reads (see IndexFile.release). */
  releaseIndexFiles(): void {
    this.offsetIndex.file.release();
    this.timeIndex.file.release();
  }

  /** fdatasync of the .log only: enough for durability, indexes are rebuilt by recovery. */
  flushLog(): void {
    fdatasyncSync(this.fd);
    this.cipher?.flush();
  }

  /** fsync of the .log and every index: after this the segment can sit below the recovery point. */
  flushAll(): void {
    fsyncSync(this.fd);
    this.cipher?.flush();
    this.offsetIndex.file.flush();
    this.timeIndex.file.flush();
    this.txnIndex.flush();
  }

  /**
   * Renames the files to `<name>.deleted`; the descriptor stays open for reads in flight. The .log first, as
   * Kafka's changeFileSuffixes: a crash part-way leaves files without a .log, which loading removes, never an
   * encrypted .log without its `.enc` (loading would take its ciphertext for plaintext records).
   */
  markDeleted(): void {
    if (this.deleted) return;
    this.deleted = true;
    const logPath = segmentFilePath(this.dir, this.baseOffset, LOG_SUFFIX);
    renameSync(logPath, logPath + DELETED_SUFFIX);
    this.cipher?.renameTo(this.cipher.filePath + DELETED_SUFFIX);
    this.offsetIndex.file.renameTo(this.offsetIndex.file.path + DELETED_SUFFIX);
    this.timeIndex.file.renameTo(this.timeIndex.file.path + DELETED_SUFFIX);
    this.txnIndex.renameTo(this.txnIndex.path + DELETED_SUFFIX);
  }

  /** Closes and removes the files (after markDeleted and file.delete.delay.ms, or at once on truncation). */
  deleteFiles(): void {
    const logPath =
      segmentFilePath(this.dir, this.baseOffset, LOG_SUFFIX) + (this.deleted ? DELETED_SUFFIX : '');
    this.deleted = true;
    safeUnlink(logPath);
    if (this.cipher !== null) safeUnlink(this.cipher.filePath);
    this.offsetIndex.file.closeAndDelete();
    this.timeIndex.file.closeAndDelete();
    this.txnIndex.closeAndDelete();
    // A descriptor closed under a read or write in flight could be reused by another file: wait for them.
    if (this.ioInFlight > 0) this.closeWhenIdle = true;
    else this.finishDelete();
  }

  private finishDelete(): void {
    this.closeWhenIdle = false;
    this.closeFd();
  }

  /** Closes without deleting; active segments are trimmed first so a reopen sees exact index lengths. */
  close(): void {
    if (this.fd < 0) return;
    this.onRoll();
    if (this.ioInFlight > 0) this.closeWhenIdle = true;
    else this.closeFd();
    this.offsetIndex.file.close();
    this.timeIndex.file.close();
    this.txnIndex.close();
  }

  /**
   * Closes the descriptors and writes nothing, leaving the files as a crash would (tests, simulation): index
   * entries still in memory are dropped, not written as close() writes them.
   */
  abandon(): void {
    if (this.ioInFlight > 0) this.closeWhenIdle = true;
    else this.closeFd();
    this.offsetIndex.file.abandon();
    this.timeIndex.file.abandon();
    // The transaction index holds nothing in memory (each entry is written when appended) and no descriptor.
    this.txnIndex.close();
  }

  private closeFd(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.cipher?.close();
  }
}

const EMPTY = Buffer.alloc(0);

/** The prefix of buf[0, got) made of whole batches below maxOffset. */
function wholeBatches(buf: Buffer, got: number, firstOffset: number, maxOffset: number): SegmentRead {
  let end = 0;
  let nextOffset = firstOffset;
  while (end + BATCH_HEADER_BYTES <= got) {
    const size = batchHeader.sizeInBytes(buf, end);
    const last = batchHeader.lastOffset(buf, end);
    if (end + size > got || last >= maxOffset) break;
    end += size;
    nextOffset = last + 1;
  }
  return { records: end === buf.length ? buf : buf.subarray(0, end), firstOffset, nextOffset };
}

function readFully(fd: number, buf: Buffer, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** The cipher of an encrypted segment (its `.enc` exists), or null for a plaintext one. */
function openCipher(encPath: string, baseOffset: number, keys: SegmentKeys | null): SegmentCipher | null {
  if (!existsSync(encPath)) return null;
  if (keys === null) {
    throw new MasterKeyError(
      `${encPath}: the segment is encrypted and no key provider is configured (brook.encryption.key.provider)`,
    );
  }
  return SegmentCipher.open(encPath, baseOffset, keys);
}

export { SegmentIntegrityError };

function openIfPresent<T>(open: () => T | null): T | null {
  try {
    return open();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function safeUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
