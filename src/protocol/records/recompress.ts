// Re-compressing a v2 batch with another codec, for a topic whose compression.type differs from what the
// producer sent. The records section is the same bytes whatever the codec, so this decompresses (bounded),
// compresses again and writes a new header with the new codec bits, length and CRC; records are not decoded.
// Offsets, timestamps, producer fields and the other attribute bits are kept.

import { compress } from '../compression/codecs.js';
import { CompressionError } from '../compression/compression-error.js';
import { isCompressionType } from '../compression/compression-type.js';
import { writeBatchCrc } from './batch-crc.js';
import { BatchFaultError, batchFault } from './batch-fault.js';
import {
  ATTRIBUTES,
  Attribute,
  BATCH_HEADER_BYTES,
  BATCH_LENGTH,
  batchHeader,
  LOG_OVERHEAD,
} from './batch-header.js';
import { batchRecordsSection, compressionFault, type ReadRecordsOptions } from './batch-records.js';

export interface RecompressOptions extends ReadRecordsOptions {
  level?: number;
}

/**
 * A new buffer holding the batch at pos with its records compressed by `codec`. When the batch already uses
 * `codec` it is returned as a view, unchanged. Throws BatchFaultError on bad input.
 */
export function recompressBatch(
  buf: Buffer,
  pos: number,
  codec: number,
  options: RecompressOptions = {},
): Buffer {
  const size = batchHeader.sizeInBytes(buf, pos);
  if (batchHeader.compression(buf, pos) === codec) return buf.subarray(pos, pos + size);
  if (!isCompressionType(codec)) {
    throw new BatchFaultError(batchFault('unsupported-compression', `target compression id ${codec}`, pos));
  }
  const section = batchRecordsSection(buf, pos, options);
  let packed: Buffer;
  try {
    packed = compress(codec, section, { level: options.level });
  } catch (err) {
    if (err instanceof CompressionError) throw compressionFault(err, pos);
    throw err;
  }
  const out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + packed.length);
  buf.copy(out, 0, pos, pos + BATCH_HEADER_BYTES);
  packed.copy(out, BATCH_HEADER_BYTES);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH);
  const attributes = batchHeader.attributes(buf, pos);
  out.writeInt16BE((attributes & ~Attribute.CompressionMask) | codec, ATTRIBUTES);
  writeBatchCrc(out, 0);
  return out;
}
