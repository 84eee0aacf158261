// The shape of a request handler: one file per API key in handlers/, each exporting an ApiHandler. The handler
// table (handlers/index.ts) is what ApiVersions advertises, so what is advertised is exactly what is handled.

import type { Connection } from '../network/connection.js';
import type { RequestHeader } from '../protocol/headers.js';
import type { BrokerServices } from './broker-services.js';

export interface RequestContext {
  readonly header: RequestHeader;
  readonly apiVersion: number;
  readonly connection: Connection;
  /** The listener the request came in on; metadata answers with endpoints of this listener. */
  readonly listenerName: string;
  readonly services: BrokerServices;
  /**
   * Says that this request now waits for something else (long-poll fetch, acks=all produce, a rebalance) rather
   * than for the broker, so it stops counting against queued.max.requests and cannot starve the sockets.
   */
  markWaiting(): void;
  /** See Request.allowFrameReuse: nothing the handler keeps refers to the request's bytes. */
  allowFrameReuse(): void;
  /** See Request.releaseAfterResponse: pooled views the response sends, held until it is written. */
  releaseAfterResponse(views: Buffer[]): void;
  /** The request's size in bytes (header and body), as producer_byte_rate counts it. */
  readonly requestBytes: number;
  /** The name of the connection's principal (User:alice gives alice), as client quotas measure it. */
  readonly quotaUser: string;
  /** The request header's client id ('' when null), as client quotas measure it. */
  readonly clientId: string;
  /**
   * A client quota's throttle time for this request (KIP-219); the largest one given counts. The dispatcher puts
   * it in the response's throttle_time_ms and mutes the connection for it.
   */
  throttle(throttleTimeMs: number): void;
  /** Replica fetches do not count against request_percentage (as Kafka's sendResponseExemptThrottle). */
  exemptFromRequestQuota(): void;
}

/** What a handler answers: a response body, a promise of one (waiting work), or null for no response at all. */
export type HandlerResult<Response> = Response | null | Promise<Response | null>;

// The table holds handlers of every request type; `any` here is what lets one array hold them all (with
// `unknown`, a handler's typed parameter would not accept the table's element type).
// biome-ignore lint/suspicious/noExplicitAny: heterogeneous handler table, see above.
export interface ApiHandler<Request = any, Response = any> {
  readonly apiKey: number;
  /** The version range Brook implements; within the codec's range. */
  readonly minVersion: number;
  readonly maxVersion: number;
  handle(context: RequestContext, request: Request): HandlerResult<Response>;
}

/** Helps a handler file keep its request and response types without casts. */
export function defineHandler<Request, Response>(
  handler: ApiHandler<Request, Response>,
): ApiHandler<Request, Response> {
  return handler;
}
