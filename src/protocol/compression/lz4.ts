// lz4 (codec id 3) in the LZ4 frame format, through lz4-napi (synchronous in both directions).
//
//   magic   uint32 LE 0x184D2204
//   FLG     version (bits 7-6, must be 01), block independence, block checksum, content size, content
//           checksum, dictionary id
//   BD      block maximum size (bits 6-4: 4 = 64 KiB ... 7 = 4 MiB)
//   [content size uint64 LE] [dictionary id uint32 LE]
//   HC      (xxHash32 of the descriptor >> 8) & 0xff
//   blocks  uint32 LE size (high bit set: stored uncompressed), data, [block checksum]; size 0 ends the frame
//   [content checksum uint32 LE]
//
// Kafka's quirk (KAFKA-3160): before message format v1, Kafka computed HC over the magic *and* the descriptor,
// i.e. bytes [0, HC) instead of [4, HC). Java still writes that broken HC for magic 0 and ignores HC when reading
// magic 0. lz4-napi checks HC, so for legacy messages Brook recognises the broken HC and patches a copy of the
// frame with the correct one before decoding; when writing magic 0 it writes the broken HC as Kafka does.
//
// Bounding: lz4-napi's frame decoder cannot be told a maximum, so the frames are walked first. Every block
// decodes to at most the frame's block maximum (the decoder enforces it) and an LZ4 block cannot expand more
// than 255 times, so the sum of min(blockMax, 255 * size) over the blocks is a true upper bound on the output.
// When that bound passes the limit the input is refused before anything is decoded. Encoders fill every block
// but the last, so the bound is tight to within one block for real data.
//
// Decoding: frames of independent blocks without a dictionary (what Kafka's Java client and librdkafka write; Kafka's
// own reader accepts nothing else) are decoded block by block through lz4-napi's block call, into one buffer of the
// bound: its frame decoder ran at a sixth of that rate (0.46 against 2.3-3.1 GB/s for 128 KiB of text in a probe).
// A block checksum is checked when the frame has them, as Kafka's Lz4BlockInputStream checks it; the content
// checksum is not, as Kafka's reader skips it too (the batch's CRC covers these bytes already). Other frames (linked
// blocks, a dictionary id) go through the frame decoder as before.

import lz4 from 'lz4-napi';
import { CompressionError, corrupt, tooLarge } from './compression-error.js';
import { TransientOutput } from './transient-output.js';
import { xxhash32 } from './xxhash32.js';

const CODEC = 'lz4';
const FRAME_MAGIC = 0x184d2204;
const FLG_VERSION_MASK = 0xc0;
const FLG_VERSION_01 = 0x40;
const FLG_BLOCK_INDEPENDENCE = 0x20;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_DICTIONARY_ID = 0x01;
const BLOCK_UNCOMPRESSED = 0x80000000;
/** The largest output one input byte of an LZ4 block can produce (a run of 0xff match-length bytes). */
const EXPANSION_MAX = 255;

export interface Lz4FrameInfo {
  /** Position of the frame's magic. */
  start: number;
  /** Position just after this frame. */
  end: number;
  /** Upper bound on the decoded size of this frame. */
  outputBytesMax: number;
  /** Position of the HC byte. */
  hcPosition: number;
  hcValid: boolean;
  /** True when HC is Kafka's broken variant (computed over the magic too). */
  hcBroken: boolean;
  /** Independent blocks and no dictionary: the blocks can be decoded one by one (decodeBlocks). */
  blocksIndependent: boolean;
  /** Each block is followed by the xxHash32 of its stored bytes. */
  blockChecksums: boolean;
  /** The largest a block may decode to. */
  blockMax: number;
  /** Position of the first block's size word. */
  blocksStart: number;
}

function fail(message: string): CompressionError {
  return new CompressionError('corrupt', CODEC, message);
}

/** Walks one frame at `pos` without decoding it. */
export function scanLz4Frame(buf: Buffer, pos: number): Lz4FrameInfo {
  const start = pos;
  if (buf.length - pos < 7) throw fail('truncated frame header');
  if (buf.readUInt32LE(pos) !== FRAME_MAGIC) throw fail('not an LZ4 frame (bad magic)');
  const flg = buf[pos + 4]!;
  const bd = buf[pos + 5]!;
  if ((flg & FLG_VERSION_MASK) !== FLG_VERSION_01)
    throw fail(`unsupported frame version in FLG 0x${flg.toString(16)}`);
  const blockSizeId = (bd >> 4) & 0x07;
  if (blockSizeId < 4) throw fail(`bad block maximum size id ${blockSizeId}`);
  const blockMax = 1 << (2 * blockSizeId + 8);
  const hcPosition = pos + 6 + (flg & FLG_CONTENT_SIZE ? 8 : 0) + (flg & FLG_DICTIONARY_ID ? 4 : 0);
  if (hcPosition >= buf.length) throw fail('truncated frame descriptor');
  const hc = buf[hcPosition]!;
  const hcValid = hc === headerChecksum(buf, start + 4, hcPosition);
  const hcBroken = !hcValid && hc === headerChecksum(buf, start, hcPosition);
  pos = hcPosition + 1;
  const checksumBytes = flg & FLG_BLOCK_CHECKSUM ? 4 : 0;
  let outputBytesMax = 0;
  for (;;) {
    if (buf.length - pos < 4) throw fail('truncated block size');
    const word = buf.readUInt32LE(pos);
    pos += 4;
    if (word === 0) break;
    const size = word & ~BLOCK_UNCOMPRESSED;
    if (size > blockMax) throw fail(`block of ${size} bytes exceeds the frame's maximum ${blockMax}`);
    if (buf.length - pos < size + checksumBytes) throw fail('truncated block');
    outputBytesMax += (word & BLOCK_UNCOMPRESSED) !== 0 ? size : Math.min(blockMax, size * EXPANSION_MAX);
    pos += size + checksumBytes;
  }
  if (flg & FLG_CONTENT_CHECKSUM) {
    if (buf.length - pos < 4) throw fail('truncated content checksum');
    pos += 4;
  }
  return {
    start,
    end: pos,
    outputBytesMax,
    hcPosition,
    hcValid,
    hcBroken,
    blocksIndependent: (flg & FLG_BLOCK_INDEPENDENCE) !== 0 && (flg & FLG_DICTIONARY_ID) === 0,
    blockChecksums: checksumBytes !== 0,
    blockMax,
    blocksStart: hcPosition + 1,
  };
}

export interface Lz4DecompressOptions {
  /** Accept Kafka's broken header checksum (messages of magic 0 and 1 may carry it). */
  allowBrokenChecksum?: boolean;
  /**
   * The caller is done with the result before its next transient call (codecs.ts, DecompressOptions.transient):
   * frames decoded block by block go into a buffer the process keeps, as zstd's do.
   */
  transient?: boolean;
}

export function lz4Decompress(
  data: Uint8Array,
  maxBytes: number,
  options: Lz4DecompressOptions = {},
): Buffer {
  let buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const frames: Lz4FrameInfo[] = [];
  let bound = 0;
  for (let pos = 0; pos < buf.length; ) {
    const frame = scanLz4Frame(buf, pos);
    if (!frame.hcValid && !(frame.hcBroken && options.allowBrokenChecksum)) {
      throw fail('frame descriptor checksum mismatch');
    }
    bound += frame.outputBytesMax;
    if (bound > maxBytes) throw tooLarge(CODEC, maxBytes);
    frames.push(frame);
    pos = frame.end;
  }
  if (frames.length === 0) throw fail('empty input');
  if (frames.every((f) => f.blocksIndependent))
    return decodeBlocks(buf, frames, bound, options.transient === true);
  if (frames.some((f) => !f.hcValid)) {
    // Never patch the caller's bytes: they may be a view of a request or of the log.
    buf = Buffer.from(buf);
    for (const f of frames)
      if (!f.hcValid) buf[f.hcPosition] = headerChecksum(buf, f.start + 4, f.hcPosition);
  }
  let out: Buffer;
  try {
    out = lz4.decompressFrameSync(buf);
  } catch (err) {
    throw corrupt(CODEC, err);
  }
  // The bound above makes this impossible; checked anyway, since the bound is an argument, not a guarantee.
  if (out.length > maxBytes) throw tooLarge(CODEC, maxBytes);
  return out;
}

/** A compressed block with the 4-byte size prefix lz4-napi's block call reads: reused, grown to the largest block. */
let prefixed = Buffer.allocUnsafeSlow(0);
/** The output kept for transient callers (transient-output.ts). */
const output = new TransientOutput();

/**
 * The frames (scanned, of independent blocks) decoded block by block into one buffer of `bound` bytes, the sum of
 * their outputs' upper bounds. Each compressed block goes through lz4-napi's block call, told the frame's block
 * maximum as its output size: a block that would decode to more fails there, as the format allows no more.
 */
function decodeBlocks(
  buf: Buffer,
  frames: readonly Lz4FrameInfo[],
  bound: number,
  transient: boolean,
): Buffer {
  const out = output.take(bound, transient);
  let written = 0;
  for (const frame of frames) {
    const checksumBytes = frame.blockChecksums ? 4 : 0;
    for (let pos = frame.blocksStart; ; ) {
      const word = buf.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & ~BLOCK_UNCOMPRESSED;
      if (frame.blockChecksums && xxhash32(buf, pos, pos + size) !== buf.readUInt32LE(pos + size)) {
        throw fail('block checksum mismatch');
      }
      if ((word & BLOCK_UNCOMPRESSED) !== 0) {
        written += buf.copy(out, written, pos, pos + size);
      } else {
        if (prefixed.length < 4 + size)
          prefixed = Buffer.allocUnsafeSlow(Math.max(4 + size, 2 * prefixed.length));
        prefixed.writeUInt32LE(frame.blockMax, 0);
        buf.copy(prefixed, 4, pos, pos + size);
        let block: Buffer;
        try {
          block = lz4.uncompressSync(prefixed.subarray(0, 4 + size));
        } catch (err) {
          throw corrupt(CODEC, err);
        }
        // scanLz4Frame's bound holds for every block the format allows; checked, since it is an argument.
        if (written + block.length > out.length) throw fail('a block decodes past its bound');
        written += block.copy(out, written);
      }
      pos += size + checksumBytes;
    }
  }
  return out.subarray(0, written);
}

function headerChecksum(buf: Uint8Array, from: number, hcPosition: number): number {
  return (xxhash32(buf, from, hcPosition) >>> 8) & 0xff;
}

export interface Lz4CompressOptions {
  /** Write Kafka's broken header checksum, as Java does for message format v0. */
  brokenChecksum?: boolean;
}

/**
 * One frame with independent blocks and no content checksum, which every Kafka client reads (Java's reader
 * refuses dependent blocks).
 */
export function lz4Compress(data: Uint8Array, options: Lz4CompressOptions = {}): Buffer {
  const out = lz4.compressFrameSync(Buffer.from(data.buffer, data.byteOffset, data.byteLength), {
    contentChecksum: false,
    blockChecksums: false,
  });
  if (options.brokenChecksum) {
    const frame = scanLz4Frame(out, 0);
    out[frame.hcPosition] = headerChecksum(out, 0, frame.hcPosition);
  }
  return out;
}
