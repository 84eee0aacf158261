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
/** Whole chunks waiting to be framed; the connection pauses its socket long before this is reached. */
const PENDING_CHUNKS_MAX = 1024;

export class FrameReader {
  /** Chunks pushed but not yet fully consumed, oldest first; `current` is the one being read. */
  private readonly pending: Buffer[] = [];
  private current: Buffer | null = null;
  private position = 0;
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
    } else {
      this.pending.push(chunk);
    }
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
      // The common case: the whole frame is inside this chunk, so hand out a view.
      const frame = chunk.subarray(this.position, this.position + needed);
      this.position += needed;
      this.frameSize = -1;
      this.frameReserved = false;
      return frame;
    }
    const take = Math.min(needed, available);
    if (take === 0) return null;
    // Not from Node's shared pool: the frame is handed on whole and may be kept (appended to a log queue).
    this.gathered ??= this.pool?.acquire(this.frameSize) ?? Buffer.allocUnsafeSlow(this.frameSize);
    chunk.copy(this.gathered, this.piecesBytes, this.position, this.position + take);
    this.piecesBytes += take;
    this.position += take;
    if (this.piecesBytes < this.frameSize) return null;
    const frame = this.gathered;
    this.gathered = null;
    this.piecesBytes = 0;
    this.frameSize = -1;
    this.frameReserved = false;
    return frame;
  }
}
