// gzip (codec id 1) through node:zlib. Both directions are synchronous. Decompression is bounded by zlib's own
// `maxOutputLength`, which stops inflating as soon as the output would pass the limit, so a bomb costs at most
// the limit in memory and never more.

import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { CompressionError, corrupt, tooLarge } from './compression-error.js';

const CODEC = 'gzip';

/** Kafka's default (compression.gzip.level = -1) is zlib's default level, 6. */
export function gzipCompress(data: Uint8Array, level: number = constants.Z_DEFAULT_COMPRESSION): Buffer {
  if (!Number.isInteger(level) || level < -1 || level > 9) {
    throw new RangeError(`gzip level ${level} is not between -1 and 9`);
  }
  return gzipSync(data, { level });
}

export function gzipDecompress(data: Uint8Array, maxBytes: number): Buffer {
  try {
    // maxOutputLength must be at least 1; an empty result is still allowed when maxBytes is 0.
    const out = gunzipSync(data, { maxOutputLength: Math.max(1, maxBytes) });
    if (out.length > maxBytes) throw tooLarge(CODEC, maxBytes);
    return out;
  } catch (err) {
    if (err instanceof CompressionError) throw err;
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(CODEC, maxBytes);
    throw corrupt(CODEC, err);
  }
}
