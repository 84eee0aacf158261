// FrameSplitter: for test servers and proxies that read a Kafka byte stream, the complete size-prefixed frames
// (int32 size, then that many bytes) in the chunks a socket delivers. Chunks are kept as they come and joined
// only when a frame, or the size prefix, spans them, so a large request arriving in many chunks is copied once
// rather than on every chunk.
//
// It is deliberately not the broker's FrameReader (src/network/frame-reader.ts): the tests that use it watch the
// bytes the code under test sends, and should not read them through that code. A size prefix that is negative
// or larger than the bound throws: in a test that is a bug in what is being tested (or in the test), to be seen
// at once rather than read as a frame that never completes.
//
// One per direction of one connection; not shared.

import { limits } from '../../src/common/limits.js';

const SIZE_PREFIX_BYTES = 4;

export interface FrameSplitterOptions {
  /** Whether frames handed out begin with their 4-byte size prefix (to forward them as they are) or not. */
  readonly sizePrefix: 'keep' | 'strip';
  /** Largest size prefix accepted; default the largest frame any decoder accepts. */
  readonly frameBytesMax?: number;
}

export class FrameSplitter {
  /** Bytes pushed and not yet handed out as frames, oldest first. */
  private chunks: Buffer[] = [];
  private bytes = 0;
  private readonly keepPrefix: boolean;
  private readonly frameBytesMax: number;

  constructor(options: FrameSplitterOptions) {
    this.keepPrefix = options.sizePrefix === 'keep';
    this.frameBytesMax = options.frameBytesMax ?? limits.frameBytesMax;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /** The next complete frame, or null while more bytes are needed. Throws RangeError on a bad size prefix. */
  next(): Buffer | null {
    if (this.bytes < SIZE_PREFIX_BYTES) return null;
    const size = this.head(SIZE_PREFIX_BYTES).readInt32BE(0);
    if (size < 0 || size > this.frameBytesMax) {
      throw new RangeError(`frame size ${size} is outside 0..${this.frameBytesMax}`);
    }
    const frameBytes = SIZE_PREFIX_BYTES + size;
    if (this.bytes < frameBytes) return null;
    const head = this.head(frameBytes);
    const frame = head.subarray(this.keepPrefix ? 0 : SIZE_PREFIX_BYTES, frameBytes);
    if (head.length === frameBytes) this.chunks.shift();
    else this.chunks[0] = head.subarray(frameBytes);
    this.bytes -= frameBytes;
    return frame;
  }

  /** The complete frames buffered now, each taken as it is reached (stopping early leaves the rest buffered). */
  *frames(): Generator<Buffer, void, undefined> {
    for (let frame = this.next(); frame !== null; frame = this.next()) yield frame;
  }

  /** Bytes pushed and not yet handed out as frames. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  /** The first `bytes` bytes not yet handed out (the start of the next frame), or null while fewer are buffered. */
  peek(bytes: number): Buffer | null {
    return this.bytes < bytes ? null : this.head(bytes).subarray(0, bytes);
  }

  /** Hands out every byte not yet handed out, and forgets them: for a test that stops framing the stream. */
  takeBuffered(): Buffer {
    const rest = this.head(this.bytes);
    this.chunks = [];
    this.bytes = 0;
    return rest;
  }

  /** The first chunk, after joining as many chunks into it as it takes to hold `bytes` (at most this.bytes). */
  private head(bytes: number): Buffer {
    if (this.chunks.length === 0) return Buffer.alloc(0);
    if (this.chunks[0]!.length < bytes) {
      let joined = 0;
      let count = 0;
      while (joined < bytes) joined += this.chunks[count++]!.length;
      this.chunks.splice(0, count, Buffer.concat(this.chunks.slice(0, count), joined));
    }
    return this.chunks[0]!;
  }
}
