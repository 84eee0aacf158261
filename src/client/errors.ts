// Errors the client raises. Kafka error codes arrive as values in responses; the client turns the ones it cannot
// handle into KafkaProtocolError, which carries the code, its name and whether a retry can succeed. Transport
// failures (connection refused or lost, a request that timed out) are retriable too: the request can go again on
// a new connection, perhaps to a new leader after a metadata refresh.

import { ErrorCode, errorByCode, errorName, isRetriable } from '../protocol/errors.js';

/** The base of the client's errors; `retriable` says whether trying again may succeed. */
export class KafkaClientError extends Error {
  /** Whether the same request may succeed later (a leader moved, a broker restarts), as Kafka's RetriableException. */
  readonly retriable: boolean;
  constructor(message: string, retriable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KafkaClientError';
    this.retriable = retriable;
  }
}

/** A Kafka error code returned by a broker. */
export class KafkaProtocolError extends KafkaClientError {
  /** The Kafka error code, to compare with ErrorCode values. */
  readonly code: number;
  /** Kafka's name of the error (NOT_LEADER_OR_FOLLOWER), searchable in Kafka's documentation. */
  readonly type: string;
  constructor(code: number, detail?: string | null, options?: { cause?: unknown }) {
    const known = errorByCode(code);
    const text = detail ? `${detail}` : (known?.message ?? 'unknown error');
    super(`${errorName(code)}: ${text}`, isRetriable(code), options);
    this.name = 'KafkaProtocolError';
    this.code = code;
    this.type = errorName(code);
  }
}

/** A partition's offset with the leader epoch that goes with it (Kafka's OffsetAndMetadata without metadata). */
export interface OffsetWithEpoch {
  topic: string;
  partition: number;
  offset: number;
  leaderEpoch: number;
}

/**
 * Kafka's OffsetOutOfRangeException: a fetch position is out of the partition's log (below its start or past its
 * end) and auto.offset.reset is none, so the consumer does not move it. `offsetOutOfRangePartitions` holds the
 * positions by `topic-partition`; seek() to resume.
 */
export class OffsetOutOfRangeError extends KafkaProtocolError {
  /** The positions out of range, by `topic-partition` (Kafka's offsetOutOfRangePartitions). */
  readonly offsetOutOfRangePartitions: ReadonlyMap<string, number>;
  constructor(message: string, offsetOutOfRangePartitions: ReadonlyMap<string, number>) {
    super(ErrorCode.OFFSET_OUT_OF_RANGE, message);
    this.name = 'OffsetOutOfRangeError';
    this.offsetOutOfRangePartitions = offsetOutOfRangePartitions;
  }
}

/**
 * Kafka's NoOffsetForPartitionException: partitions without a committed offset (or with a position to reset) when
 * auto.offset.reset is none. `partitions` names them as `topic-partition`.
 */
export class NoOffsetForPartitionError extends KafkaClientError {
  /** The partitions without an offset, as `topic-partition` (Kafka's partitions()). */
  readonly partitions: readonly string[];
  constructor(partitions: readonly string[]) {
    super(`Undefined offset with no reset policy for partitions: [${partitions.join(', ')}]`, false);
    this.name = 'NoOffsetForPartitionError';
    this.partitions = partitions;
  }
}

/**
 * Kafka's LogTruncationException (an OffsetOutOfRangeException, so OFFSET_OUT_OF_RANGE here): validating a position
 * with OffsetsForLeaderEpoch found the leader's log ends the position's epoch below it, and auto.offset.reset is
 * none. `offsetOutOfRangePartitions` holds the positions that were checked, `divergentOffsets` the offset (and
 * epoch) where each log diverges, keyed by `topic-partition`; seek() to it to resume without the lost records.
 */
export class LogTruncationError extends OffsetOutOfRangeError {
  /** Where each log diverges, when its leader knew the epoch (Kafka's divergentOffsets). */
  readonly divergentOffsets: ReadonlyMap<string, OffsetWithEpoch>;
  constructor(
    fetchOffsets: ReadonlyMap<string, number>,
    divergentOffsets: ReadonlyMap<string, OffsetWithEpoch>,
  ) {
    const listed = [...divergentOffsets].map(([k, o]) => `${k}: offset ${o.offset} epoch ${o.leaderEpoch}`);
    super(`Truncated partitions detected with divergent offsets {${listed.join(', ')}}`, fetchOffsets);
    this.name = 'LogTruncationError';
    this.divergentOffsets = divergentOffsets;
  }
}

/** The socket could not be opened, or closed with requests outstanding. */
export class ConnectionError extends KafkaClientError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, true, options);
    this.name = 'ConnectionError';
  }
}

/**
 * No response within request.timeout.ms, or a call that did not succeed within its own timeout (Kafka's
 * TimeoutException; `cause` is then the last retriable failure).
 */
export class RequestTimeoutError extends KafkaClientError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, true, options);
    this.name = 'RequestTimeoutError';
  }
}

/** A call that reached its deadline (Kafka's admin TimeoutException "timed out ... after N attempt(s)"). */
export class CallTimeoutError extends RequestTimeoutError {
  constructor(attempts: number, cause: unknown) {
    const last = cause instanceof Error ? `: ${cause.message}` : '';
    super(`Call timed out after ${attempts} attempt(s)${last}`, { cause });
    this.name = 'CallTimeoutError';
  }
}

/**
 * delivery.timeout.ms passed before the record had an outcome (Kafka's producer fails the send with a
 * TimeoutException, "Expiring N record(s) for topic-partition: X ms has passed since batch creation"). The
 * record may still have been written if its batch had been sent. Not retriable: the producer gave up on it.
 */
export class DeliveryTimeoutError extends KafkaClientError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, false, options);
    this.name = 'DeliveryTimeoutError';
  }
}

/** A record of a transaction that was aborted before it was sent (Kafka's TransactionAbortedException). */
export class TransactionAbortedError extends KafkaClientError {
  constructor(message: string) {
    super(message, false);
    this.name = 'TransactionAbortedError';
  }
}

/** A client-side bound was reached or a call came after close(). Not retriable. */
export class ClientStateError extends KafkaClientError {
  constructor(message: string) {
    super(message, false);
    this.name = 'ClientStateError';
  }
}

/**
 * Options that cannot work together or a value out of range, found when a client is constructed (Kafka's
 * ConfigException). A TypeError, as a wrong argument is, so that callers who caught TypeError still do; tools
 * catch this class alone to print its message as a usage error.
 */
export class ConfigError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Throws KafkaProtocolError for a non-zero error code. */
export function throwIfError(code: number, detail?: string | null): void {
  if (code !== 0) throw new KafkaProtocolError(code, detail);
}

export function isRetriableError(err: unknown): boolean {
  return err instanceof KafkaClientError && err.retriable;
}
