// snappy (codec id 2). Kafka's Java client writes snappy in the framing of the xerial snappy-java library:
//
//   magic   8 bytes  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
//   version int32    1
//   compat  int32    1 (oldest reader version that can read the stream)
//   blocks  int32 compressed length (big endian), then one raw snappy block of up to 32 KiB of input
//
// librdkafka and others write one raw snappy block instead, so the reader accepts both, telling them apart by
// the magic. Brook writes the xerial framing, as Java does, because every client reads it.
//
// Bounding: a raw snappy block starts with its uncompressed length as a varint. The limit is checked against
// the sum of those lengths before anything is decompressed, and the library refuses a block whose content does
// not match its declared length, so output can never pass the limit. A length the block could not produce
// even at snappy's best ratio is refused before the library allocates it. Both directions are synchronous.
//
// Every call passes `copyOutputData`: the library then returns its output copied into an ordinary Buffer instead
// of handing V8 its own allocation as an external buffer with a finalizer. The copy costs far less than the
// external buffer's bookkeeping and the collections it brings: a 32 KiB block decompresses in about a third of
// the CPU time (bench `produce-prepare-ab`, bench/README.md "snappy without external buffers").
//
// The library cannot decode into a buffer it is given, so a stream of several xerial blocks is decoded block by
// block and copied into one output; a transient caller (codecs.ts, DecompressOptions.transient) gets that output
// in the buffer the codec keeps (transient-output.ts) rather than in fresh pages faulted in per batch.

import snappy from 'snappy';
import { CompressionError, corrupt, tooLarge } from './compression-error.js';
import { TransientOutput } from './transient-output.js';

const CODEC = 'snappy';
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
const XERIAL_VERSION = 1;
const XERIAL_COMPATIBLE_VERSION = 1;
/** snappy-java's default block size, which Kafka's Java client uses. */
const XERIAL_BLOCK_BYTES = 32 * 1024;
/**
 * snappy's best case is a 3-byte copy element producing 64 bytes, so no block decodes to more than about 22
 * times its size. A preamble that claims more is a lie, refused before the library allocates what it claims.
 */
const EXPANSION_MAX = 22;
/** The library's output copied into a Buffer of V8's own rather than lent as an external one (see above). */
const COPIED_OUTPUT = { copyOutputData: true } as const;
const COPIED_BUFFER = { asBuffer: true, copyOutputData: true } as const;
/** The output of several blocks, kept for transient callers (transient-output.ts). */
const output = new TransientOutput();

function isXerialHeaderAt(data: Uint8Array, pos: number): boolean {
  if (data.length - pos < XERIAL_HEADER_BYTES) return false;
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (data[pos + i] !== XERIAL_MAGIC[i]) return false;
  return true;
}

/** The uncompressed length a raw snappy block declares in its varint preamble. */
export function snappyDeclaredLength(data: Uint8Array, start = 0, end = data.length): number {
  let result = 0;
  for (let i = 0; i < 5; i++) {
    if (start + i >= end) throw new CompressionError('corrupt', CODEC, 'truncated length preamble');
    const byte = data[start + i]!;
    result += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return result;
  }
  throw new CompressionError('corrupt', CODEC, 'length preamble longer than 5 bytes');
}

function rawBlock(data: Uint8Array): Buffer {
  if (snappyDeclaredLength(data) > data.length * EXPANSION_MAX) {
    throw new CompressionError('corrupt', CODEC, 'declared length is more than the block can hold');
  }
  try {
    return snappy.uncompressSync(data, COPIED_BUFFER) as Buffer;
  } catch (err) {
    throw corrupt(CODEC, err);
  }
}

/**
 * Decompresses a raw block or a xerial stream into at most `maxBytes`. With `transient` the result may be a view of
 * a buffer the next transient call overwrites: the caller must be done with it before then.
 */
export function snappyDecompress(data: Uint8Array, maxBytes: number, transient = false): Buffer {
  if (!isXerialHeaderAt(data, 0)) {
    if (snappyDeclaredLength(data) > maxBytes) throw tooLarge(CODEC, maxBytes);
    return rawBlock(data);
  }
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  // First pass: frame the blocks and add up their declared lengths, decompressing nothing yet.
  const blocks: Buffer[] = [];
  let total = 0;
  let pos = 0;
  while (pos < view.length) {
    // snappy-java reads concatenated streams, each with its own header; so does Brook.
    if (isXerialHeaderAt(view, pos)) {
      if (view.readInt32BE(pos + 12) > XERIAL_VERSION) {
        throw new CompressionError('corrupt', CODEC, 'xerial stream needs a newer reader');
      }
      pos += XERIAL_HEADER_BYTES;
      continue;
    }
    if (view.length - pos < 4) throw new CompressionError('corrupt', CODEC, 'truncated xerial block length');
    const length = view.readInt32BE(pos);
    pos += 4;
    if (length < 0 || length > view.length - pos) {
      throw new CompressionError('corrupt', CODEC, `xerial block length ${length} exceeds the input`);
    }
    const block = view.subarray(pos, pos + length);
    total += snappyDeclaredLength(block);
    if (total > maxBytes) throw tooLarge(CODEC, maxBytes);
    blocks.push(block);
    pos += length;
  }
  if (blocks.length === 1) return rawBlock(blocks[0]!);
  const out = output.take(total, transient);
  let at = 0;
  for (const block of blocks) {
    const part = rawBlock(block);
    part.copy(out, at);
    at += part.length;
  }
  return out;
}

/** Compresses in the xerial framing, as Kafka's Java client does. */
export function snappyCompress(data: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.allocUnsafe(XERIAL_HEADER_BYTES);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(XERIAL_VERSION, 8);
  header.writeInt32BE(XERIAL_COMPATIBLE_VERSION, 12);
  parts.push(header);
  for (let pos = 0; pos < data.length; pos += XERIAL_BLOCK_BYTES) {
    const input = data.subarray(pos, Math.min(data.length, pos + XERIAL_BLOCK_BYTES));
    const block = snappy.compressSync(input, COPIED_OUTPUT);
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(block.length, 0);
    parts.push(length, block);
  }
  return Buffer.concat(parts);
}

/** One raw snappy block, as librdkafka writes it; for tests and for peers that want it. */
export function snappyCompressRaw(data: Uint8Array): Buffer {
  return snappy.compressSync(data, COPIED_OUTPUT);
}
