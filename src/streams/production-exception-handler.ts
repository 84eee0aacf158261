// default.production.exception.handler (Kafka Streams 3.9, KIP-210, KIP-399 and the context form of KIP-1033):
// what happens to a record a task could not write. Two failures reach it: a sink's serializer that throws
// (handleSerializationException, before the record is sent) and a send the producer failed for a reason no retry
// or task migration can cure (handle, e.g. MESSAGE_TOO_LARGE, Kafka's RecordTooLargeException). CONTINUE skips
// the record (counted as dropped) and the task goes on; FAIL stops the thread with a StreamsException. The task
// applies the serialization form (runtime/task.ts), the stream thread the send form (runtime/stream-thread.ts);
// this module owns the types, Kafka's built-in handler, the reading of the config value and which send errors
// the handler is asked about at all (Kafka's RecordCollectorImpl.recordSendError).

import {
  ClientStateError,
  DeliveryTimeoutError,
  KafkaClientError,
  KafkaProtocolError,
  RequestTimeoutError,
} from '../client/errors.js';
import { ErrorCode } from '../protocol/errors.js';
import { StreamsConfigError } from './errors.js';
import type { ErrorHandlerContext } from './processing-exception-handler.js';
import type { Header } from './processor.js';

export type ProductionHandlerResponse = 'CONTINUE' | 'FAIL';

/** Which half of the record its serializer failed on (Kafka's SerializationExceptionOrigin). */
export type SerializationExceptionOrigin = 'KEY' | 'VALUE';

/**
 * Kafka's ErrorHandlerContext as RecordCollectorImpl builds it: the place of the record being processed when the
 * sink sent it, `processorNodeId` the sink's name. A changelog write has no record context in Kafka (topic null,
 * partition and offset -1, no headers, no node, timestamp -1).
 */
export interface ProductionErrorHandlerContext extends Omit<ErrorHandlerContext, 'processorNodeId'> {
  readonly processorNodeId: string | null;
}

/** Kafka's ProducerRecord as the handler sees it: serialized (Buffer) for a send error, as given for a serialization error. */
export interface ProducedRecord<K, V> {
  readonly topic: string;
  /** The partition the sink chose; null: the producer's partitioner picks it. */
  readonly partition: number | null;
  readonly timestamp: number;
  readonly key: K;
  readonly value: V;
  readonly headers: readonly Header[];
}

/** Kafka's ProductionExceptionHandler, its KIP-1033 context form; a plain function is taken as `handle`. */
export interface ProductionExceptionHandler {
  handle(
    context: ProductionErrorHandlerContext,
    record: ProducedRecord<Buffer | null, Buffer | null>,
    error: Error,
  ): ProductionHandlerResponse;
  /** Absent: FAIL, as the default method of Kafka's interface. */
  handleSerializationException?(
    context: ProductionErrorHandlerContext,
    record: ProducedRecord<unknown, unknown>,
    error: Error,
    origin: SerializationExceptionOrigin,
  ): ProductionHandlerResponse;
}

/** Kafka's DefaultProductionExceptionHandler (the default): FAIL on either kind of error. */
export const defaultProductionExceptionHandler: ProductionExceptionHandler = { handle: () => 'FAIL' };

const BY_NAME: { readonly [name: string]: ProductionExceptionHandler } = {
  DefaultProductionExceptionHandler: defaultProductionExceptionHandler,
};

/**
 * The handler of default.production.exception.handler: an object with `handle` (and optionally
 * `handleSerializationException`), a function taken as `handle`, or Kafka's DefaultProductionExceptionHandler by
 * (fully qualified) class name.
 */
export function productionExceptionHandlerOf(raw: unknown): ProductionExceptionHandler {
  if (raw === undefined || raw === null) return defaultProductionExceptionHandler;
  if (typeof raw === 'function') return { handle: raw as ProductionExceptionHandler['handle'] };
  if (typeof raw === 'object' && typeof (raw as ProductionExceptionHandler).handle === 'function')
    return raw as ProductionExceptionHandler;
  const name = String(raw).replace(/^org\.apache\.kafka\.streams\.errors\./, '');
  const handler = Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : undefined;
  if (handler === undefined)
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration default.production.exception.handler: Class ${String(raw)} could not be found.`,
    );
  return handler;
}

/**
 * Codes of Kafka's isFatalException (security errors, InvalidTopic, UnknownServerError, OffsetMetadataTooLarge):
 * no handler can make them pass, so the thread stops without asking it.
 */
const FATAL_CODES = new Set<number>([
  ErrorCode.UNKNOWN_SERVER_ERROR,
  ErrorCode.OFFSET_METADATA_TOO_LARGE,
  ErrorCode.INVALID_TOPIC_EXCEPTION,
  ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  ErrorCode.GROUP_AUTHORIZATION_FAILED,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
  ErrorCode.SECURITY_DISABLED,
  ErrorCode.SASL_AUTHENTICATION_FAILED,
]);

/** Kafka's ProducerFenced, InvalidPidMapping, InvalidProducerEpoch and OutOfOrderSequence: a task migration. */
const FENCED_CODES = new Set<number>([
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  ErrorCode.INVALID_PRODUCER_EPOCH,
  ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
]);

/**
 * What a failed send is, in Kafka's RecordCollectorImpl.recordSendError order: `fatal` (isFatalException, or a
 * client-side state error: Kafka's IllegalStateException), `fenced` (a task migration), `retriable` (Kafka's
 * RetriableException, a timeout included, which marks the task corrupted) or `handled`: the only kind the
 * production exception handler is asked about.
 */
export function sendErrorKind(e: Error): 'fatal' | 'fenced' | 'retriable' | 'handled' {
  if (e instanceof KafkaProtocolError) {
    if (FATAL_CODES.has(e.code)) return 'fatal';
    if (FENCED_CODES.has(e.code)) return 'fenced';
    return e.retriable ? 'retriable' : 'handled';
  }
  // A delivery timeout is Kafka's TimeoutException, a RetriableException.
  if (e instanceof RequestTimeoutError || e instanceof DeliveryTimeoutError) return 'retriable';
  if (e instanceof KafkaClientError) {
    if (e.retriable) return 'retriable';
    return e instanceof ClientStateError ? 'fatal' : 'handled';
  }
  return 'fatal';
}
