// Turns a network request into a handler call and the handler's answer into response bytes. Decoding the header
// and body, checking the version against the handler table, and encoding the response header happen here once,
// so handlers deal only in typed bodies.
//
// Kafka's rules, followed here: an ApiVersions request of a version newer than the broker knows is answered
// with UNSUPPORTED_VERSION in a v0 body that lists what the broker supports (the client then retries with a
// version it shares); after a SaslHandshake v1, while the client should be authenticating, that v0 answer is
// ILLEGAL_SASL_STATE with no APIs and the connection closes, as Kafka's authenticator answers it. Any other
// unsupported version, or an unknown API key, closes the connection: there is no body layout to answer it with.

import type { Logger } from '../common/logger.js';
import type { Connection } from '../network/connection.js';
import type { Request, RequestHandler, Response } from '../network/request.js';
import { ErrorCode } from '../protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader, type RequestHeader } from '../protocol/headers.js';
import type { FetchRequest } from '../protocol/messages/01-fetch.js';
import { DecodeError, Reader, Writer } from '../protocol/primitives/index.js';
import { ApiKey, findApi } from '../protocol/registry.js';
import type { ApiHandler, RequestContext } from './api-handler.js';
import type { BrokerServices } from './broker-services.js';
import { advertisedApiVersions } from './handlers/18-api-versions.js';
import { principalName } from './quota/quota-entity.js';
import { applyThrottle, REQUEST_QUOTA_EXEMPT } from './quota/throttle.js';
import { interceptRequest, type RequestInterception } from './request-interceptor.js';

export function createRequestDispatcher(
  handlers: readonly ApiHandler[],
  services: BrokerServices,
  logger: Logger,
  /** Tests' hook (request-interceptor.ts); null in production. */
  interception: RequestInterception | null = null,
): RequestHandler {
  const table: (ApiHandler | undefined)[] = [];
  for (const h of handlers) table[h.apiKey] = h;

  return (request: Request): Response | Promise<Response> => {
    const handler = table[request.apiKey];
    const api = findApi(request.apiKey);
    if (handler === undefined || api === undefined) {
      throw new DecodeError('unknown-api-key', `API key ${request.apiKey} is not supported`);
    }
    const version = request.apiVersion;
    if (version < handler.minVersion || version > handler.maxVersion) {
      if (request.apiKey === ApiKey.API_VERSIONS && version > handler.maxVersion) {
        if (services.sasl.refusesDuringAuthentication(request.connection, 'ApiVersions')) {
          return services.sasl
            .failureDelay()
            .then(() => apiVersionsV0Response(request.correlationId, ILLEGAL_SASL_STATE_ANSWER));
        }
        return apiVersionsV0Response(request.correlationId, {
          errorCode: ErrorCode.UNSUPPORTED_VERSION,
          apiKeys: advertisedApiVersions(handlers),
        });
      }
      throw new DecodeError(
        'unsupported-version',
        `${api.name} version ${version} is not supported (${handler.minVersion}-${handler.maxVersion})`,
      );
    }
    const reader = new Reader(request.frame);
    const { header } = decodeRequestHeader(reader);
    const body = api.decodeRequest(reader, version);
    if (request.apiKey === ApiKey.FETCH && isFollowerFetch(body as FetchRequest, version)) {
      request.markFollowerFetch();
    }
    const context = new DispatchedContext(header, version, request, services);
    // request_percentage counts the handler's own time; measured only once some request quota exists.
    const timed = services.quotas.request.quotasEnabled && !REQUEST_QUOTA_EXEMPT.has(request.apiKey);
    const startMs = timed ? performance.now() : 0;
    const interceptor = interception?.current ?? null;
    let result: unknown;
    if (interceptor === null) {
      result = handler.handle(context, body);
    } else {
      const runHandler = () => handler.handle(context, body);
      const answer = interceptRequest(
        interceptor,
        { apiKey: request.apiKey, apiVersion: version, header, listenerName: context.listenerName, body },
        runHandler,
      );
      if (answer instanceof Promise) request.markWaiting();
      result = answer === undefined ? runHandler() : answer;
    }
    const handlerMs = timed ? performance.now() - startMs : -1;
    const encode = (response: unknown): Response | Promise<Response> => {
      const throttleTimeMs = context.finalThrottleTimeMs(handlerMs);
      if (response === null) {
        // acks=0 produce: no response to carry the throttle time, the connection is still muted (as Kafka).
        if (throttleTimeMs > 0) request.connection.throttle(throttleTimeMs);
        return null;
      }
      if (throttleTimeMs > 0) setThrottleTime(response, throttleTimeMs);
      const w = new Writer(1024);
      encodeResponseHeader(w, request.apiKey, version, request.correlationId);
      api.encodeResponse(w, version, response);
      const bytes = w.chunksOut();
      return throttleTimeMs > 0 ? applyThrottle(request, bytes, throttleTimeMs) : bytes;
    };
    if (result instanceof Promise) {
      return result.then(encode, (error: unknown) => {
        logger.error(
          `${api.name} v${version} failed: ${error instanceof Error ? error.stack : String(error)}`,
        );
        throw error;
      });
    }
    return encode(result);
  };
}

/** A follower's Fetch names its replica id (0 or more); a consumer's is -1 (or an observer's -2). */
function isFollowerFetch(body: FetchRequest, version: number): boolean {
  return (version >= 15 ? body.replicaState.replicaId : body.replicaId) >= 0;
}

/** What a handler sees of its request: one object per request, whose methods pass on to the network layer. */
class DispatchedContext implements RequestContext {
  readonly connection: Connection;
  readonly listenerName: string;
  readonly requestBytes: number;
  private apiThrottleTimeMs = 0;
  private requestQuotaExempt = false;

  constructor(
    readonly header: RequestHeader,
    readonly apiVersion: number,
    private readonly request: Request,
    readonly services: BrokerServices,
  ) {
    this.connection = request.connection;
    this.listenerName = request.connection.listenerName;
    // Kafka's request.sizeInBytes: the header and the body, without the size prefix.
    this.requestBytes = request.frame.length;
  }

  markWaiting(): void {
    this.request.markWaiting();
  }

  allowFrameReuse(): void {
    this.request.allowFrameReuse();
  }

  releaseAfterResponse(views: Buffer[]): void {
    this.request.releaseAfterResponse(views);
  }

  get quotaUser(): string {
    return principalName(this.connection.security.principal);
  }

  get clientId(): string {
    return this.header.clientId ?? '';
  }

  throttle(throttleTimeMs: number): void {
    if (throttleTimeMs <= this.apiThrottleTimeMs) return;
    this.apiThrottleTimeMs = throttleTimeMs;
    // Muted at once, not only when the response leaves: Kafka reads a connection's next request only after
    // answering this one, so requests a client pipelined behind a throttled one wait too.
    this.connection.throttle(throttleTimeMs);
  }

  exemptFromRequestQuota(): void {
    this.requestQuotaExempt = true;
  }

  /**
   * The throttle time the response carries: the largest of what the handler's quotas gave and the request quota
   * for `handlerMs` of handler time (-1: not measured). As in Kafka, a request's time counts as a percentage of
   * one thread: 1 ms is 0.1.
   */
  finalThrottleTimeMs(handlerMs: number): number {
    let throttleTimeMs = this.apiThrottleTimeMs;
    if (handlerMs >= 0 && !this.requestQuotaExempt) {
      const quotas = this.services.quotas;
      const fromRequest = Math.min(
        quotas.request.recordAndGetThrottleTimeMs(
          this.quotaUser,
          this.clientId,
          handlerMs / 10,
          this.services.clock.nowMs(),
        ),
        quotas.requestThrottleMaxMs,
      );
      if (fromRequest > throttleTimeMs) throttleTimeMs = fromRequest;
    }
    return throttleTimeMs;
  }
}

function setThrottleTime(response: unknown, throttleTimeMs: number): void {
  const body = response as { throttleTimeMs?: number };
  if (typeof body.throttleTimeMs === 'number') body.throttleTimeMs = throttleTimeMs;
}

/** The v0 answer during SASL authentication (see the file comment). */
const ILLEGAL_SASL_STATE_ANSWER = { errorCode: ErrorCode.ILLEGAL_SASL_STATE, apiKeys: [] };

/** The v0 ApiVersions answer to a version newer than the broker's. */
function apiVersionsV0Response(
  correlationId: number,
  answer: { errorCode: number; apiKeys: ReturnType<typeof advertisedApiVersions> },
): Response {
  const api = findApi(ApiKey.API_VERSIONS)!;
  const w = new Writer(512);
  encodeResponseHeader(w, ApiKey.API_VERSIONS, 0, correlationId);
  api.encodeResponse(w, 0, {
    ...answer,
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
  });
  return w.chunksOut();
}
