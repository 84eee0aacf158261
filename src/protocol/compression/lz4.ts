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

import lz4 from 'lz4-napi';
import { CompressionError, corrupt, tooLarge } from './compression-error.js';
import { xxhash32 } from './xxhash32.js';

const CODEC = 'lz4';
const FRAME_MAGIC = 0x184d2204;
const FLG_VERSION_MASK = 0xc0;
const FLG_VERSION_01 = 0x40;
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
  return { start, end: pos, outputBytesMax, hcPosition, hcValid, hcBroken };
}

export interface Lz4DecompressOptions {
  /** Accept Kafka's broken header checksum (messages of magic 0 and 1 may carry it). */
  allowBrokenChecksum?: boolean;
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
