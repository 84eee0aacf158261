// zstd (codec id 4) through zstd-napi's native binding, synchronous in both directions.
//
// Bounding: when every frame declares its content size (librdkafka and zstd-jni's one-shot API do), the sizes
// are added up and checked against the limit first, then the input is decoded in one call into a buffer of
// exactly that size; the library fails rather than write past it. When a frame does not declare its size (a
// streaming encoder, as Java's ZstdOutputStream), the streaming decoder runs into fixed-size chunks and stops
// as soon as the output passes the limit, so a bomb costs at most the limit plus one chunk.
//
// One compression and one decompression context are kept per process and reused: creating a context costs
// more than decoding a small batch, and every call here runs to completion on the one JavaScript thread.
//
// A caller that uses the decompressed bytes only until its next call here (the leader validating a producer's
// batch: `transient`) gets them in the output buffer the codec keeps (transient-output.ts).

import binding from 'zstd-napi/binding.js';
import { CompressionError, corrupt, tooLarge } from './compression-error.js';
import { TransientOutput } from './transient-output.js';

const CODEC = 'zstd';
/** Kafka's default compression.zstd.level. */
export const ZSTD_DEFAULT_LEVEL = 3;
const STREAM_CHUNK_BYTES = 128 * 1024;
/**
 * zstd's best case is a 4-byte RLE block producing a full 128 KiB block. A frame that declares more content
 * than that ratio allows is a lie, refused before a buffer of the declared size is allocated.
 */
const EXPANSION_MAX = 32 * 1024;

let cctx: InstanceType<typeof binding.CCtx> | undefined;
let dctx: InstanceType<typeof binding.DCtx> | undefined;
const output = new TransientOutput();

export function zstdCompress(data: Uint8Array, level = ZSTD_DEFAULT_LEVEL): Buffer {
  cctx ??= new binding.CCtx();
  const out = Buffer.allocUnsafe(binding.compressBound(data.length));
  const written = cctx.compress(out, data, level);
  // Copy out of the worst-case-sized buffer when most of it is unused, so callers do not hold on to it.
  return written < out.length / 2 ? Buffer.from(out.subarray(0, written)) : out.subarray(0, written);
}

/** Sum of the declared content sizes of all frames, or null when a frame does not declare its size. */
function declaredContentBytes(data: Uint8Array): number | null {
  let total = 0;
  let frame = data;
  while (frame.length > 0) {
    const size = binding.getFrameContentSize(frame);
    if (size === null) return null;
    const frameBytes = binding.findFrameCompressedSize(frame);
    if (size > frameBytes * EXPANSION_MAX) {
      throw new CompressionError('corrupt', CODEC, 'declared content size is more than the frame can hold');
    }
    total += size;
    frame = frame.subarray(frameBytes);
  }
  return total;
}

/**
 * Decompresses all frames of `data` into at most `maxBytes`. With `transient` the result may be a view of a buffer
 * the next transient call overwrites: the caller must be done with it before then.
 */
export function zstdDecompress(data: Uint8Array, maxBytes: number, transient = false): Buffer {
  dctx ??= new binding.DCtx();
  if (data.length === 0) throw new CompressionError('corrupt', CODEC, 'empty input');
  try {
    const declared = declaredContentBytes(data);
    if (declared !== null) {
      if (declared > maxBytes) throw tooLarge(CODEC, maxBytes);
      const out = output.take(declared, transient);
      const written = dctx.decompress(out, data);
      if (written !== declared) throw new CompressionError('corrupt', CODEC, 'content size mismatch');
      return out;
    }
    return streamDecompress(dctx, data, maxBytes);
  } catch (err) {
    if (err instanceof CompressionError) throw err;
    throw corrupt(CODEC, err);
  }
}

function streamDecompress(
  ctx: InstanceType<typeof binding.DCtx>,
  data: Uint8Array,
  maxBytes: number,
): Buffer {
  ctx.reset(binding.ResetDirective.sessionOnly);
  const chunks: Buffer[] = [];
  let total = 0;
  let input = data;
  let pending = 1;
  while (input.length > 0 || pending !== 0) {
    const chunk = Buffer.allocUnsafe(STREAM_CHUNK_BYTES);
    const [hint, produced, consumed] = ctx.decompressStream(chunk, input);
    if (produced === 0 && consumed === 0) throw new CompressionError('corrupt', CODEC, 'truncated frame');
    total += produced;
    if (total > maxBytes) throw tooLarge(CODEC, maxBytes);
    if (produced > 0) chunks.push(chunk.subarray(0, produced));
    input = input.subarray(consumed);
    pending = hint;
  }
  return Buffer.concat(chunks, total);
}
