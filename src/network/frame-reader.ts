// FrameReader: turns the chunks a socket delivers into Kafka frames (int32 size prefix, then that many bytes).
//
// It is pull-based: the connection pushes chunks and pulls frames one at a time, so it can stop between two
// frames of the same chunk when a bound is reached and continue later. A frame that lies inside one chunk is
// returned as a view of that chunk (no copy); a frame that spans chunks is copied, piece by piece as its chunks
// arrive, into one buffer allocated from its size prefix, so no chunk is held past its turn and every byte is
// copied once. Bytes held for an incomplete frame never exceed its size prefix, which is checked against the
// request size bound before anything of the body is kept. With a FramePool, that buffer comes from the pool
// (held once, for the request; see common/frame-pool.ts).
//
// Reads into frames (plain sockets with buffers of their own, see own-reads.ts): instead of being pushed the
// chunks Node allocates (a fresh 64 KiB ArrayBuffer per read, which V8 counts as external memory and collects
// with full mark-compacts), the reader says where the next read should land (`readBuffer()`) and is told how
// many bytes arrived there (`received()`). Once a large frame's size prefix is read and its bytes granted, reads
// land straight in the frame's own buffer, so its body is copied once, by the kernel. Between frames they land
// in a scratch buffer shared by every connection of the server: a frame found whole in it is copied out (it is
// small), and bytes left in it when the connection stops are copied out before it is handed to another read,
// so nothing handed on ever points into the scratch.
//
// Owned by one connection; not shared.

import { assert } from '../common/assert.js';
import type { FramePool } from '../common/frame-pool.js';

export type FrameErrorKind = 'negative-size' | 'oversized';

/** The peer sent a size prefix that cannot be served; the connection must close. */
export class FrameError extends Error {
  override name = 'FrameError';
  constructor(
    readonly kind: FrameErrorKind,
    readonly size: number,
    message: string,
  ) {
    super(message);
  }
}

const SIZE_PREFIX_BYTES = 4;
/**
 * Size of the scratch buffer reads land in between frames (see the header). Small, since a large frame's first
 * read is copied from it into the frame and the rest is read into the frame directly; larger than any request
 * but a produce request's, so that pipelined small requests still come in few reads.
 */
export const SCRATCH_READ_BYTES = 16 * 1024;
/** Whole chunks waiting to be framed; the connection pauses its socket long before this is reached. */
const PENDING_CHUNKS_MAX = 1024;

export class FrameReader {
  /** Chunks pushed but not yet fully consumed, oldest first; `current` is the one being read. */
  private readonly pending: Buffer[] = [];
  private current: Buffer | null = null;
  private position = 0;
  /** Whether `current` lies in the shared scratch buffer: frames in it are copied out, never handed as views. */
  private currentBorrowed = false;
  /** The rest of the gathered frame, when the last readBuffer() pointed a read there; else null. */
  private directTarget: Buffer | null = null;
  /** A size prefix split across chunks is assembled here. */
  private readonly prefix = Buffer.alloc(SIZE_PREFIX_BYTES);
  private prefixFilled = 0;
  /** Size of the frame being read, or -1 while its prefix is incomplete. */
  private frameSize = -1;
  /** The frame that spans chunks, allocated at its size once its first piece arrives, and its bytes so far. */
  private gathered: Buffer | null = null;
  private piecesBytes = 0;

  /** Whether the frame being read has been granted its bytes by `reserve` (always, without one). */
  private frameReserved = false;

  /**
   * `reserve`, when given, is asked for a frame's bytes as soon as its size prefix is read, before any of its
   * body is taken (Kafka allocates from its request memory pool at the same point). While it refuses, next()
   * returns null with `awaitingReservation` set, and the caller should stop reading until it may ask again.
   */
  /** Bound on a frame's size; the connection lowers it to sasl.server.max.receive.size until authentication. */
  frameBytesMax: number;
  /** The config key of the bound in force, for the error message. */
  frameBoundKey = 'socket.request.max.bytes';

  constructor(
    frameBytesMax: number,
    private readonly reserve: ((frameBytes: number) => boolean) | null = null,
    private readonly pool: FramePool | null = null,
    /** Where reads land between frames when the socket reads into buffers of ours (shared; see the header). */
    private readonly scratch: Buffer | null = null,
  ) {
    assert(
      Number.isInteger(frameBytesMax) && frameBytesMax >= 0,
      'frame bound must be a non-negative integer',
    );
    this.frameBytesMax = frameBytesMax;
  }

  /** True when a size prefix has been read and its reservation was refused; call next() again to retry. */
  get awaitingReservation(): boolean {
    return this.frameSize >= 0 && !this.frameReserved;
  }

  /** Bytes reserved for a frame not yet returned (to give back if the connection closes mid-frame). */
  get reservedBytes(): number {
    return this.frameReserved && this.reserve !== null ? this.frameSize : 0;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    assert(
      this.pending.length < PENDING_CHUNKS_MAX,
      'frame reader fed while its connection should be paused',
    );
    if (this.current === null) {
      this.current = chunk;
      this.position = 0;
      this.currentBorrowed = false;
    } else {
      this.pending.push(chunk);
    }
  }

  /**
   * Where the next socket read should land: the rest of a large frame whose body is being read and whose bytes
   * were granted, else the scratch buffer. Bytes still unread in the scratch are first copied out, so the read
   * cannot overwrite them. Needs a scratch buffer (the constructor's last argument).
   */
  readBuffer(): Buffer {
    const scratch = this.scratch;
    assert(scratch !== null, 'readBuffer() needs a scratch buffer');
    this.detachBorrowed();
    this.directTarget = null;
    if (this.current === null && this.frameSize > scratch.length && this.frameReserved) {
      this.gathered ??= this.allocateFrame(this.frameSize);
      this.directTarget = this.gathered.subarray(this.piecesBytes, this.frameSize);
      return this.directTarget;
    }
    return scratch;
  }

  /**
   * `bytes` bytes were read into `buffer`, the buffer of the last readBuffer() (or any other one, as a chunk).
   * True when they landed straight in a frame.
   */
  received(bytes: number, buffer: Buffer): boolean {
    if (bytes <= 0) return false;
    assert(bytes <= buffer.length, 'a read reported more bytes than its buffer holds');
    if (buffer === this.directTarget) {
      this.directTarget = null;
      this.piecesBytes += bytes;
      return true;
    }
    this.directTarget = null;
    if (buffer !== this.scratch) {
      this.push(buffer.subarray(0, bytes));
      return false;
    }
    if (this.current === null) {
      this.current = buffer.subarray(0, bytes);
      this.position = 0;
      this.currentBorrowed = true;
    } else {
      // Unreachable while the scratch is only handed out with nothing buffered, but never keep a view of it.
      this.push(Buffer.from(buffer.subarray(0, bytes)));
    }
    return false;
  }

  /** Copies what is left unread of a scratch chunk into memory of its own (the scratch is about to be reused). */
  private detachBorrowed(): void {
    if (!this.currentBorrowed || this.current === null) return;
    this.current = Buffer.from(this.current.subarray(this.position));
    this.position = 0;
    this.currentBorrowed = false;
  }

  /** Bytes received and not yet returned as frames (unread chunks and a partial frame). */
  get bufferedBytes(): number {
    let bytes = this.piecesBytes + this.prefixFilled;
    if (this.current !== null) bytes += this.current.length - this.position;
    for (const chunk of this.pending) bytes += chunk.length;
    return bytes;
  }

  /** True when a frame has started (prefix or body bytes) but is not complete. */
  get midFrame(): boolean {
    return this.prefixFilled > 0 || this.frameSize >= 0;
  }

  /** The next complete frame, or null when more bytes are needed. Throws FrameError on a bad size prefix. */
  next(): Buffer | null {
    for (;;) {
      // Asked before looking for bytes, so a refused reservation is retried even when no chunk is waiting.
      if (this.frameSize >= 0 && !this.frameReserved) {
        if (this.reserve !== null && !this.reserve(this.frameSize)) return null;
        this.frameReserved = true;
      }
      if (this.frameSize === 0) {
        // An empty frame is complete as soon as its prefix is read, whether or not more bytes follow.
        this.frameSize = -1;
        this.frameReserved = false;
        return Buffer.alloc(0);
      }
      // A frame whose last bytes were read straight into it.
      if (this.gathered !== null && this.piecesBytes === this.frameSize) return this.finishGathered();
      const chunk = this.current;
      if (chunk === null) return null;
      if (this.position === chunk.length) {
        this.advanceChunk();
        continue;
      }
      if (this.frameSize < 0) {
        this.readPrefix(chunk);
        continue;
      }
      const frame = this.readBody(chunk);
      if (frame !== null) return frame;
    }
  }

  private advanceChunk(): void {
    this.current = this.pending.length > 0 ? this.pending.shift()! : null;
    this.position = 0;
    this.currentBorrowed = false;
  }

  /** Reads the size prefix from `chunk`, or as much of it as the chunk holds. */
  private readPrefix(chunk: Buffer): void {
    let size: number;
    if (this.prefixFilled === 0 && chunk.length - this.position >= SIZE_PREFIX_BYTES) {
      size = chunk.readInt32BE(this.position);
      this.position += SIZE_PREFIX_BYTES;
    } else {
      const take = Math.min(SIZE_PREFIX_BYTES - this.prefixFilled, chunk.length - this.position);
      chunk.copy(this.prefix, this.prefixFilled, this.position, this.position + take);
      this.prefixFilled += take;
      this.position += take;
      if (this.prefixFilled < SIZE_PREFIX_BYTES) return;
      size = this.prefix.readInt32BE(0);
      this.prefixFilled = 0;
    }
    if (size < 0) throw new FrameError('negative-size', size, `negative frame size ${size}`);
    if (size > this.frameBytesMax) {
      throw new FrameError(
        'oversized',
        size,
        `frame size ${size} exceeds ${this.frameBoundKey} ${this.frameBytesMax}`,
      );
    }
    this.frameSize = size;
  }

  /** Reads body bytes of the current frame from `chunk`; the frame once complete, else null. */
  private readBody(chunk: Buffer): Buffer | null {
    const available = chunk.length - this.position;
    const needed = this.frameSize - this.piecesBytes;
    if (this.piecesBytes === 0 && available >= needed) {
      // The common case: the whole frame is inside this chunk, so hand out a view (a copy, from the scratch).
      const end = this.position + needed;
      const frame = this.currentBorrowed
        ? Buffer.from(chunk.subarray(this.position, end))
        : chunk.subarray(this.position, end);
      this.position = end;
      this.frameSize = -1;
      this.frameReserved = false;
      return frame;
    }
    const take = Math.min(needed, available);
    if (take === 0) return null;
    this.gathered ??= this.allocateFrame(this.frameSize);
    chunk.copy(this.gathered, this.piecesBytes, this.position, this.position + take);
    this.piecesBytes += take;
    this.position += take;
    if (this.piecesBytes < this.frameSize) return null;
    return this.finishGathered();
  }

  /** Not from Node's shared pool: the frame is handed on whole and may be kept (appended to a log queue). */
  private allocateFrame(size: number): Buffer {
    return this.pool?.acquire(size) ?? Buffer.allocUnsafeSlow(size);
  }

  private finishGathered(): Buffer {
    const frame = this.gathered!;
    this.gathered = null;
    this.directTarget = null;
    this.piecesBytes = 0;
    this.frameSize = -1;
    this.frameReserved = false;
    return frame;
  }
}
