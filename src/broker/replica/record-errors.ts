// The record-level rules of Kafka's LogValidator, with its answer (KIP-467): each record of a batch is checked
// for a key (a compacted topic keeps the latest record per key, so a keyless record has no place in it) and then
// for its timestamp (CreateTime within message.timestamp.before/after.max.ms of the broker's clock; a producer
// may not claim LogAppendTime). Every bad record of the batch is named by its index in the batch; the partition
// is answered INVALID_TIMESTAMP when any of them has a bad timestamp, else INVALID_RECORD, with Kafka's summary
// message, and nothing of the request is appended.
//
// Records are read only when a rule can fail: a compacted topic, finite timestamp limits, or a batch flagged
// LogAppendTime by its producer, from the records section the caller already decompressed when it has one.
// Control batches are written by brokers and skipped.

import { ErrorCode } from '../../protocol/errors.js';
import type { ProduceResponseBatchIndexAndErrorMessage } from '../../protocol/messages/00-produce.js';
import { BatchFaultError } from '../../protocol/records/batch-fault.js';
import { Attribute, batchHeader, NO_TIMESTAMP } from '../../protocol/records/batch-header.js';
import { iterateRecords } from '../../protocol/records/batch-records.js';
import { LONG_AS_NUMBER_MAX } from '../config/parsed-config.js';
import type { TopicLogSettings } from '../config/topic-log-settings.js';

export type RecordError = ProduceResponseBatchIndexAndErrorMessage;

export interface RecordErrorsResult {
  readonly errorCode: number;
  readonly errorMessage: string;
  /** Empty when the batch itself could not be read (a fault of its bytes, not of one record). */
  readonly recordErrors: readonly RecordError[];
}

/** Kafka's ProduceResponse.RecordError.toString, which its summary message lists. */
function describe(e: RecordError): string {
  const message = e.batchIndexErrorMessage === null ? 'null' : `'${e.batchIndexErrorMessage}'`;
  return `RecordError(batchIndex=${e.batchIndex}, message=${message})`;
}

/** Whether checkRecords has anything to look at for this batch, decided from the header alone. */
function mayHaveRecordErrors(batch: Buffer, settings: TopicLogSettings, fromClient: boolean): boolean {
  if (batchHeader.isControl(batch, 0)) return false;
  if (settings.cleanupPolicy.includes('compact')) return true;
  if (fromClient && (batchHeader.attributes(batch, 0) & Attribute.TimestampTypeLogAppend) !== 0) return true;
  return (
    settings.messageTimestampType === 'CreateTime' &&
    (settings.messageTimestampBeforeMaxMs < LONG_AS_NUMBER_MAX ||
      settings.messageTimestampAfterMaxMs < LONG_AS_NUMBER_MAX)
  );
}

/**
 * Null when every record of the (validated, v2) batch passes; otherwise the partition's answer. `topicPartition`
 * ("name-index") goes into the messages, as in Kafka's; `section` is the batch's records section when the caller
 * has read it already (else it is read here when a rule needs it).
 */
export function checkRecords(
  batch: Buffer,
  settings: TopicLogSettings,
  nowMs: number,
  topicPartition: string,
  fromClient = true,
  section?: Buffer,
): RecordErrorsResult | null {
  if (!mayHaveRecordErrors(batch, settings, fromClient)) return null;
  const compacted = settings.cleanupPolicy.includes('compact');
  const createTime = settings.messageTimestampType === 'CreateTime';
  const flaggedLogAppendTime =
    fromClient && (batchHeader.attributes(batch, 0) & Attribute.TimestampTypeLogAppend) !== 0;
  const earliest = nowMs - settings.messageTimestampBeforeMaxMs;
  const latest = nowMs + settings.messageTimestampAfterMaxMs;
  const errors: RecordError[] = [];
  let badTimestamp = false;
  let index = 0;
  try {
    for (const record of iterateRecords(batch, 0, { section })) {
      if (compacted && record.key === null) {
        errors.push({
          batchIndex: index,
          batchIndexErrorMessage: `Compacted topic cannot accept message without key in topic partition ${topicPartition}`,
        });
      } else if (createTime && record.timestamp !== NO_TIMESTAMP) {
        if (record.timestamp < earliest || record.timestamp > latest) {
          badTimestamp = true;
          errors.push({
            batchIndex: index,
            batchIndexErrorMessage: `Timestamp ${record.timestamp} of message with offset ${record.offset} is out of range. The timestamp should be within [${earliest}, ${latest}]`,
          });
        }
      } else if (flaggedLogAppendTime) {
        badTimestamp = true;
        errors.push({
          batchIndex: index,
          batchIndexErrorMessage: `Invalid timestamp type in message at offset ${record.offset}. Producer should not set timestamp type to LogAppendTime.`,
        });
      }
      index++;
    }
  } catch (err) {
    if (err instanceof BatchFaultError) {
      return { errorCode: err.fault.errorCode, errorMessage: err.fault.message, recordErrors: [] };
    }
    throw err;
  }
  if (errors.length === 0) return null;
  if (badTimestamp) {
    return {
      errorCode: ErrorCode.INVALID_TIMESTAMP,
      errorMessage: 'One or more records have been rejected due to invalid timestamp',
      recordErrors: errors,
    };
  }
  return {
    errorCode: ErrorCode.INVALID_RECORD,
    errorMessage: `One or more records have been rejected due to ${errors.length} record errors in total, and only showing the first three errors at most: [${errors.slice(0, 3).map(describe).join(', ')}]`,
    recordErrors: errors,
  };
}
