// CRC32C (Castagnoli) of a v2 batch: it covers the bytes from the attributes to the end of the batch, so the
// broker can assign baseOffset and partitionLeaderEpoch without recomputing it. Anything that changes the
// attributes, timestamps, producer fields or records must call writeBatchCrc afterwards.

import { BATCH_LENGTH, CRC, CRC_START, LOG_OVERHEAD } from './batch-header.js';
import { crc32cRange } from './crc32c.js';

/** Computes the CRC32C of the batch at pos; the batch must lie within buf (validate the length first). */
export function computeBatchCrc(buf: Buffer, pos = 0): number {
  const end = pos + LOG_OVERHEAD + buf.readInt32BE(pos + BATCH_LENGTH);
  return crc32cRange(buf, pos + CRC_START, end);
}

export function isBatchCrcValid(buf: Buffer, pos = 0): boolean {
  return computeBatchCrc(buf, pos) === buf.readUInt32BE(pos + CRC);
}

export function writeBatchCrc(buf: Buffer, pos = 0): void {
  buf.writeUInt32BE(computeBatchCrc(buf, pos), pos + CRC);
}
