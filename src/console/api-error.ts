// Errors the console's API answers with, and the deadline every call to the cluster runs under. A broker that is
// slow or gone must give the page an error in bounded time, never a request that hangs: the client's own
// timeouts and retries bound most calls, and `withDeadline` bounds the whole call whatever it does inside.

import { KafkaClientError, KafkaProtocolError } from '../client/errors.js';
import { settleWithin } from '../common/deadline.js';
import { ErrorCode } from '../protocol/errors.js';

/** An error with the HTTP status to answer it with. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Kafka error codes that mean the request was wrong or conflicts with the cluster's state, not a failure. */
const CLIENT_ERRORS: Record<number, number> = {
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: 404,
  [ErrorCode.GROUP_ID_NOT_FOUND]: 404,
  [ErrorCode.TOPIC_ALREADY_EXISTS]: 409,
  [ErrorCode.NON_EMPTY_GROUP]: 409,
  [ErrorCode.UNKNOWN_MEMBER_ID]: 409,
  [ErrorCode.REBALANCE_IN_PROGRESS]: 409,
  [ErrorCode.INVALID_PARTITIONS]: 400,
  [ErrorCode.INVALID_REPLICATION_FACTOR]: 400,
  [ErrorCode.INVALID_TOPIC_EXCEPTION]: 400,
  [ErrorCode.INVALID_CONFIG]: 400,
  [ErrorCode.INVALID_REQUEST]: 400,
  [ErrorCode.POLICY_VIOLATION]: 400,
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED]: 403,
  [ErrorCode.GROUP_AUTHORIZATION_FAILED]: 403,
  [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]: 403,
  [ErrorCode.TOPIC_DELETION_DISABLED]: 409,
  [ErrorCode.SECURITY_DISABLED]: 409,
};

/** A Kafka error code as an HttpError (4xx for the caller's mistakes, 502 for the cluster's failures). */
export function kafkaError(code: number, message: string): HttpError {
  const error = new KafkaProtocolError(code, message);
  return new HttpError(CLIENT_ERRORS[code] ?? 502, error.message, error.type);
}

/** Any error thrown by a handler, as the status and body to answer with. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof KafkaProtocolError)
    return new HttpError(CLIENT_ERRORS[error.code] ?? 502, error.message, error.type);
  // Connection refused, request timed out, no broker reachable: the cluster's trouble, reported as a bad gateway.
  if (error instanceof KafkaClientError) return new HttpError(502, error.message);
  return new HttpError(500, error instanceof Error ? error.message : String(error));
}

/**
 * Runs `work` and fails with 504 when it has not settled within `timeoutMs`. The work itself goes on (a client
 * call cannot be cancelled) and its late result is dropped; the client's own request timeouts end it.
 */
export function withDeadline<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return settleWithin(
    work,
    timeoutMs,
    () => new HttpError(504, `${what}: no answer from the cluster within ${timeoutMs} ms`),
  );
}
