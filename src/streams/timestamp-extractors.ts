// Kafka Streams' timestamp extractors, for `default.timestamp.extractor` (by Kafka's class names) and
// `Consumed.withTimestampExtractor`. A task takes the timestamp an extractor answers as the record's time; a
// negative answer makes it skip the record (with a log line), as Kafka's RecordQueue drops it.
//
// The extractors of a record's own timestamp differ only in what they do with a negative one (a record written
// without a timestamp, by a producer older than 0.10): Kafka's default, FailOnInvalidTimestamp, fails the
// processing so that no record is lost unseen; LogAndSkipOnInvalidTimestamp lets the task skip it;
// UsePartitionTimeOnInvalidTimestamp takes the time processing has reached instead.

import { StreamsConfigError, StreamsError } from './errors.js';
import type { TimestampExtractor } from './topology.js';

type ExtractedRecord = Parameters<TimestampExtractor>[0];

function where(record: ExtractedRecord): string {
  return `${record.topic}-${record.partition} at offset ${record.offset}`;
}

/** Kafka's default: a negative timestamp fails the processing with a StreamsException. */
export const FailOnInvalidTimestamp: TimestampExtractor = (record) => {
  if (record.timestamp < 0)
    throw new StreamsError(
      `Input record of ${where(record)} has invalid (negative) timestamp ${record.timestamp}. Possibly because a ` +
        'pre-0.10 producer client was used to write this record to Kafka without embedding a timestamp, or ' +
        'because the input topic was created before upgrading the Kafka cluster to 0.10+. Use a different ' +
        'TimestampExtractor to process this data.',
    );
  return record.timestamp;
};

/** A negative timestamp is answered as it is: the task skips the record and logs it. */
export const LogAndSkipOnInvalidTimestamp: TimestampExtractor = (record) => record.timestamp;

/** A negative timestamp is replaced by the time processing has reached; when none is known yet, it fails. */
export const UsePartitionTimeOnInvalidTimestamp: TimestampExtractor = (record, partitionTime) => {
  if (record.timestamp >= 0) return record.timestamp;
  if (partitionTime < 0)
    throw new StreamsError(
      `Could not infer new timestamp for input record of ${where(record)} because partition time is unknown.`,
    );
  return partitionTime;
};

/** Every record gets the wall-clock time at which it is processed (processing-time semantics). */
export const WallclockTimestampExtractor: TimestampExtractor = () => Date.now();

const BY_NAME: Record<string, TimestampExtractor> = {
  FailOnInvalidTimestamp,
  LogAndSkipOnInvalidTimestamp,
  UsePartitionTimeOnInvalidTimestamp,
  WallclockTimestampExtractor,
};

/** default.timestamp.extractor: a function, or one of Kafka's extractors by class name (package optional). */
export function timestampExtractorOf(raw: unknown): TimestampExtractor {
  if (raw === undefined || raw === null) return FailOnInvalidTimestamp;
  if (typeof raw === 'function') return raw as TimestampExtractor;
  const name = String(raw).replace(/^org\.apache\.kafka\.streams\.processor\./, '');
  const extractor = BY_NAME[name];
  if (extractor === undefined)
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration default.timestamp.extractor: one of ${Object.keys(BY_NAME).join(', ')} or a function expected`,
    );
  return extractor;
}
