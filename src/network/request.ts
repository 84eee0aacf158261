// The contract between the network layer and the broker: what a request looks like when it is handed over,
// what a handler returns, and the fixed 8-byte prefix every request header version starts with.

import type { Connection } from './connection.js';

/** apiKey int16, apiVersion int16, correlationId int32: the same position in every request header version. */
export const REQUEST_PREFIX_BYTES = 8;

export interface Request {
  readonly connection: Connection;
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  /**
   * The whole frame without its size prefix, header included (the broker decodes the full header version).
   * Often a view of the socket's read buffer: keep it only as long as the request lives, or copy it.
   */
  readonly frame: Buffer;
  /**
   * Tells the network layer that this request now waits for an event (a long-poll fetch or an acks=all produce
   * parked in purgatory) rather than for work. It then stops counting against queued.max.requests, so that idle
   * long polls cannot stop the broker from reading; it still counts against its connection's in-flight bound
   * and queued.max.request.bytes. Calling it more than once, or after the response, does nothing.
   */
  markWaiting(): void;
  /**
   * Tells the network layer that nothing refers to `frame` any more once the response is written, except through
   * frame-pool references (the log holds one while a queued append is written, the tail cache one per cached
   * append). The frame's memory may then be reused for a later request once the last of them is given back (see
   * common/frame-pool.ts). Without this call it never is.
   */
  allowFrameReuse(): void;
  /**
   * Hands over `views`, an array the handler fills with views it took a frame-pool reference for
   * (FramePool.retain) while it builds the response: one reference per element is given back once the response
   * has been written to the socket or the connection has closed, so pooled memory that a response sends by
   * reference is not reused while the socket may still read it. Elements pushed after that are never given
   * back, which only keeps their memory out of the pool.
   */
  releaseAfterResponse(views: Buffer[]): void;
  /**
   * Says that this is a Fetch from a follower replica, not from a consumer: its times are then also reported as
   * Kafka's FetchFollower rather than FetchConsumer (RequestObserver's `followerFetch`).
   */
  markFollowerFetch(): void;
}

/**
 * Thrown by a handler that cannot serve yet (the broker is still starting): the connection is closed as for
 * malformed input, but logged at debug, because nothing is wrong with the request or its sender.
 */
export class NotReadyError extends Error {
  override name = 'NotReadyError';
}

/** A handler returns this when the request gets no response at all (Produce with acks=0). */
export const NO_RESPONSE = null;

/**
 * A response is the encoded response header and body as a list of chunks (so record batches read from the log
 * can be sent without copying), or NO_RESPONSE. The network layer adds the size prefix.
 */
export type Response = readonly Buffer[] | typeof NO_RESPONSE;

/**
 * Called once per request, synchronously and in request order for each connection. Work that must follow
 * request order (appending a producer's batches) belongs before the handler's first await; waiting work
 * (acks=all, long-poll fetch) may complete later, and responses still leave in request order.
 * Throwing (or rejecting with) a DecodeError closes the connection as malformed input, a NotReadyError closes it
 * quietly; any other error is a bug and closes the connection with an error log line.
 */
export type RequestHandler = (request: Request) => Response | Promise<Response>;

/**
 * Told once per request when its response has been taken by the socket (or, without a response, when its turn
 * to be written came), with where its time went, in milliseconds (Kafka's RequestMetrics):
 * - queue: from the read that completed its frame until its handler was called (the connection was held back
 *   by a bound meanwhile; a frame completed by an earlier read than the last one counts from the last);
 * - local: from the handler call until the response was ready, or until it said it waits (markWaiting);
 * - remote: from markWaiting until the response was ready (long polls, acks=all), else 0;
 * - responseQueue: from ready until written, waiting for the responses before it on the connection;
 * - send: from the write until the socket took all of it;
 * - total: the sum, from the read to the socket;
 * - followerFetch: a Fetch the dispatcher marked as a follower's (Request.markFollowerFetch).
 * Called with numbers only, so that timing allocates nothing per request.
 */
export interface RequestObserver {
  requestDone(
    apiKey: number,
    queueMs: number,
    localMs: number,
    remoteMs: number,
    responseQueueMs: number,
    sendMs: number,
    totalMs: number,
    followerFetch: boolean,
  ): void;
}
