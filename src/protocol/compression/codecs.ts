// One entry point for every codec: compress and decompress by Kafka's codec id. Every decompression takes a
// maximum output size; the default is limits.decompressedBatchBytesMax.
//
// All codecs are synchronous (gzip via zlib's *Sync, snappy, lz4-napi and zstd-napi via their native sync
// calls), so a batch can be checked on the request path without an await in the middle of a state change.
// bench/codec measures what that costs.

import { limits } from '../../common/limits.js';
import { CompressionError } from './compression-error.js';
import { CompressionType, isCompressionType } from './compression-type.js';
import { gzipCompress, gzipDecompress } from './gzip.js';
import { lz4Compress, lz4Decompress } from './lz4.js';
import { snappyCompress, snappyDecompress } from './snappy.js';
import { ZSTD_DEFAULT_LEVEL, zstdCompress, zstdDecompress } from './zstd.js';

export interface CompressOptions {
  /** Codec level (gzip -1..9, zstd 1..22); snappy and lz4 have none here. */
  level?: number;
  /** The message format the bytes are for: lz4 writes Kafka's broken header checksum for magic 0. */
  magic?: number;
}

export interface DecompressOptions {
  /** The message format the bytes came in: magic 0 and 1 may carry lz4's broken header checksum. */
  magic?: number;
  /**
   * The caller is done with the result before its next transient decompression (it reads it synchronously and
   * keeps nothing of it), so a codec may decode into a buffer it reuses: zstd, lz4 and snappy's multi-block
   * streams do (zstd.ts, lz4.ts, snappy.ts).
   */
  transient?: boolean;
}

function unsupported(type: number): CompressionError {
  return new CompressionError('unsupported', `codec ${type}`, 'unknown compression type id');
}

export function compress(type: number, data: Uint8Array, options: CompressOptions = {}): Buffer {
  if (!isCompressionType(type)) throw unsupported(type);
  switch (type) {
    case CompressionType.None:
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    case CompressionType.Gzip:
      return gzipCompress(data, options.level);
    case CompressionType.Snappy:
      return snappyCompress(data);
    case CompressionType.Lz4:
      return lz4Compress(data, { brokenChecksum: options.magic === 0 });
    case CompressionType.Zstd:
      return zstdCompress(data, options.level ?? ZSTD_DEFAULT_LEVEL);
  }
}

export function decompress(
  type: number,
  data: Uint8Array,
  maxBytes: number = limits.decompressedBatchBytesMax,
  options: DecompressOptions = {},
): Buffer {
  if (!isCompressionType(type)) throw unsupported(type);
  switch (type) {
    case CompressionType.None:
      if (data.length > maxBytes) throw new CompressionError('too-large', 'none', 'input exceeds the limit');
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    case CompressionType.Gzip:
      return gzipDecompress(data, maxBytes);
    case CompressionType.Snappy:
      return snappyDecompress(data, maxBytes, options.transient);
    case CompressionType.Lz4:
      return lz4Decompress(data, maxBytes, {
        allowBrokenChecksum: options.magic !== undefined && options.magic < 2,
        transient: options.transient,
      });
    case CompressionType.Zstd:
      return zstdDecompress(data, maxBytes, options.transient);
  }
}
