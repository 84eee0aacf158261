// Compacted topics keep the latest record per key, so a record without a key has no place in them: Kafka's
// LogValidator refuses it at produce with INVALID_RECORD ("Compacted topic cannot accept message without key").
// Checking keys means reading the records (decompressing the batch when it is compressed), which Kafka also
// pays for every batch produced to a compacted topic. Control batches are written by the broker and skipped.

import { ErrorCode } from '../../protocol/errors.js';
import { BatchFaultError } from '../../protocol/records/batch-fault.js';
import { batchHeader } from '../../protocol/records/batch-header.js';
import { iterateRecords } from '../../protocol/records/batch-records.js';

/** Null when every record of the batch at `pos` has a key; otherwise the error code and message to answer. */
export function checkCompactedKeys(
  batch: Buffer,
  pos = 0,
): { readonly errorCode: number; readonly message: string } | null {
  if (batchHeader.isControl(batch, pos)) return null;
  try {
    for (const record of iterateRecords(batch, pos)) {
      if (record.key === null) {
        return {
          errorCode: ErrorCode.INVALID_RECORD,
          message: `Compacted topic cannot accept message without key (offset delta ${record.offset - batchHeader.baseOffset(batch, pos)})`,
        };
      }
    }
  } catch (err) {
    if (err instanceof BatchFaultError) return { errorCode: err.fault.errorCode, message: err.fault.message };
    throw err;
  }
  return null;
}
