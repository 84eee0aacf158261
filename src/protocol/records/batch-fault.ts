// What is wrong with a batch or message, and the Kafka error code a produce response answers with.
// Validators return a BatchFault (or null when the batch is good) instead of throwing, because a bad batch is
// an operating error the broker reports per partition, not a bug.

import { ErrorCode } from '../errors.js';

/** The Kafka error codes that record validation produces, a subset of protocol/errors.ts. */
export const RecordErrorCode = {
  CORRUPT_MESSAGE: ErrorCode.CORRUPT_MESSAGE,
  MESSAGE_TOO_LARGE: ErrorCode.MESSAGE_TOO_LARGE,
  INVALID_TIMESTAMP: ErrorCode.INVALID_TIMESTAMP,
  UNSUPPORTED_COMPRESSION_TYPE: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  INVALID_RECORD: ErrorCode.INVALID_RECORD,
  UNKNOWN_SERVER_ERROR: ErrorCode.UNKNOWN_SERVER_ERROR,
} as const;
export type RecordErrorCode = (typeof RecordErrorCode)[keyof typeof RecordErrorCode];

export type BatchFaultKind =
  /** The bytes end before the batch does. */
  | 'truncated'
  /** The length field is smaller than any batch or message of that magic can be. */
  | 'length-too-small'
  /** Magic outside 0..2, or not the magic the caller requires. */
  | 'bad-magic'
  | 'crc-mismatch'
  | 'unsupported-compression'
  /** recordsCount negative, above limits.recordsPerBatchMax, or more than the bytes can hold. */
  | 'records-count'
  /** lastOffsetDelta disagrees with recordsCount, or records' offset deltas disagree with the header. */
  | 'offset-range'
  /** A client may not write control batches. */
  | 'control-from-client'
  /** Producer id, epoch, sequence or the transactional bit do not go together. */
  | 'producer-fields'
  /** A record inside the batch (or an inner message) is malformed. */
  | 'records-framing'
  /** The compressed payload does not decompress. */
  | 'decompression'
  /** The payload decompresses beyond the configured limit. */
  | 'too-large'
  /** A legacy compressed message holds another compressed message, or inner and outer magic differ. */
  | 'bad-inner-message'
  /** An offset or timestamp beyond 2^53, which Brook's numbers cannot hold exactly (src/common/ids.ts). */
  | 'offset-out-of-range'
  | 'timestamp-out-of-range';

export interface BatchFault {
  kind: BatchFaultKind;
  errorCode: RecordErrorCode;
  message: string;
  /** Position in the input where the faulty batch or message starts. */
  position: number;
}

const CODE_OF: { [K in BatchFaultKind]: RecordErrorCode } = {
  truncated: RecordErrorCode.CORRUPT_MESSAGE,
  'length-too-small': RecordErrorCode.CORRUPT_MESSAGE,
  'bad-magic': RecordErrorCode.CORRUPT_MESSAGE,
  'crc-mismatch': RecordErrorCode.CORRUPT_MESSAGE,
  'unsupported-compression': RecordErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  'records-count': RecordErrorCode.INVALID_RECORD,
  'offset-range': RecordErrorCode.INVALID_RECORD,
  'control-from-client': RecordErrorCode.INVALID_RECORD,
  'producer-fields': RecordErrorCode.INVALID_RECORD,
  'records-framing': RecordErrorCode.CORRUPT_MESSAGE,
  // Kafka's codecs wrap a stream that does not decompress in a plain KafkaException (GzipCompression.wrapForInput,
  // DefaultRecordBatch's StreamRecordIterator), which a produce answers UNKNOWN_SERVER_ERROR. Unlike the retriable
  // CORRUPT_MESSAGE, meant for bytes damaged on the way, it is final: the producer would only send the same bytes
  // again until its delivery timeout.
  decompression: RecordErrorCode.UNKNOWN_SERVER_ERROR,
  // The Java producer answers MESSAGE_TOO_LARGE by splitting the batch, which is the useful reaction here.
  'too-large': RecordErrorCode.MESSAGE_TOO_LARGE,
  'bad-inner-message': RecordErrorCode.INVALID_RECORD,
  'offset-out-of-range': RecordErrorCode.INVALID_RECORD,
  'timestamp-out-of-range': RecordErrorCode.INVALID_TIMESTAMP,
};

export function batchFault(
  kind: BatchFaultKind,
  message: string,
  position: number,
  errorCode: RecordErrorCode = CODE_OF[kind],
): BatchFault {
  return { kind, errorCode, message, position };
}

/** Thrown by functions that must return records or bytes and so cannot return a fault. */
export class BatchFaultError extends Error {
  override name = 'BatchFaultError';
  constructor(readonly fault: BatchFault) {
    super(`${fault.kind}: ${fault.message} (at byte ${fault.position})`);
  }
}
