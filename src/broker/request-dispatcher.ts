// Turns a network request into a handler call and the handler's answer into response bytes. Decoding the header
// and body, checking the version against the handler table, and encoding the response header happen here once,
// so handlers deal only in typed bodies.
//
// Kafka's rules, followed here: an ApiVersions request of a version newer than the broker knows is answered
// with UNSUPPORTED_VERSION in a v0 body that lists what the broker supports (the client then retries with a
// version it shares). Any other unsupported version, or an unknown API key, closes the connection: there is no
// body layout to answer it with.

import type { Logger } from '../common/logger.js';
import type { Connection } from '../network/connection.js';
import type { Request, RequestHandler, Response } from '../network/request.js';
import { ErrorCode } from '../protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader, type RequestHeader } from '../protocol/headers.js';
import { DecodeError, Reader, Writer } from '../protocol/primitives/index.js';
import { ApiKey, findApi } from '../protocol/registry.js';
import type { ApiHandler, RequestContext } from './api-handler.js';
import type { BrokerServices } from './broker-services.js';
import { advertisedApiVersions } from './handlers/18-api-versions.js';

export function createRequestDispatcher(
  handlers: readonly ApiHandler[],
  services: BrokerServices,
  logger: Logger,
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
        return unsupportedApiVersionsResponse(request.correlationId, handlers);
      }
      throw new DecodeError(
        'unsupported-version',
        `${api.name} version ${version} is not supported (${handler.minVersion}-${handler.maxVersion})`,
      );
    }
    const reader = new Reader(request.frame);
    const { header } = decodeRequestHeader(reader);
    const body = api.decodeRequest(reader, version);
    const context = new DispatchedContext(header, version, request, services);
    const result = handler.handle(context, body);
    const encode = (response: unknown): Response => {
      if (response === null) return null;
      const w = new Writer(1024);
      encodeResponseHeader(w, request.apiKey, version, request.correlationId);
      api.encodeResponse(w, version, response);
      return w.chunksOut();
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

/** What a handler sees of its request: one object per request, whose methods pass on to the network layer. */
class DispatchedContext implements RequestContext {
  readonly connection: Connection;
  readonly listenerName: string;

  constructor(
    readonly header: RequestHeader,
    readonly apiVersion: number,
    private readonly request: Request,
    readonly services: BrokerServices,
  ) {
    this.connection = request.connection;
    this.listenerName = request.connection.listenerName;
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
}

function unsupportedApiVersionsResponse(correlationId: number, handlers: readonly ApiHandler[]): Response {
  const api = findApi(ApiKey.API_VERSIONS)!;
  const w = new Writer(512);
  encodeResponseHeader(w, ApiKey.API_VERSIONS, 0, correlationId);
  api.encodeResponse(w, 0, {
    errorCode: ErrorCode.UNSUPPORTED_VERSION,
    apiKeys: advertisedApiVersions(handlers),
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
  });
  return w.chunksOut();
}
