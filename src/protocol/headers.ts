// Request and response headers, and which header version goes with which (API key, API version). The header
// layouts are generated (messages/request-header.ts, messages/response-header.ts); this file owns the rules
// Kafka applies on top of them:
// - a flexible API version uses request header v2 and response header v1, others request v1 / response v0;
// - ControlledShutdown v0 uses request header v0 (no client id);
// - ApiVersions responses always use response header v0, because a client that sent a version the broker
//   does not know must still be able to read the answer.

import {
  decodeRequestHeader as decodeRequestHeaderBody,
  encodeRequestHeader as encodeRequestHeaderBody,
  type RequestHeader,
} from './messages/request-header.js';
import {
  decodeResponseHeader as decodeResponseHeaderBody,
  encodeResponseHeader as encodeResponseHeaderBody,
  type ResponseHeader,
} from './messages/response-header.js';
import type { Reader, Writer } from './primitives/index.js';
import { ApiKey, getApi, isFlexibleVersion } from './registry.js';

export type { RequestHeader } from './messages/request-header.js';
export type { ResponseHeader } from './messages/response-header.js';

/**
 * The request header version for an API version. Defined for versions beyond the API's maximum too, so that
 * the header of a too-new request can still be read and answered with UNSUPPORTED_VERSION.
 */
export function requestHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 | 2 {
  const api = getApi(apiKey);
  if (apiKey === ApiKey.CONTROLLED_SHUTDOWN && apiVersion === 0) return 0;
  return isFlexibleVersion(api, apiVersion) ? 2 : 1;
}

export function responseHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 {
  const api = getApi(apiKey);
  if (apiKey === ApiKey.API_VERSIONS) return 0;
  return isFlexibleVersion(api, apiVersion) ? 1 : 0;
}

/** The fields every request header version starts with, for logging or answering a request that will not parse. */
export interface RequestPrefix {
  readonly requestApiKey: number;
  readonly requestApiVersion: number;
  readonly correlationId: number;
}

/** Reads the API key, version and correlation id without moving the reader; DecodeError if the frame is shorter. */
export function peekRequestPrefix(r: Reader): RequestPrefix {
  const start = r.pos;
  const prefix = { requestApiKey: r.int16(), requestApiVersion: r.int16(), correlationId: r.int32() };
  r.pos = start;
  return prefix;
}

export interface DecodedRequestHeader {
  readonly header: RequestHeader;
  readonly headerVersion: 0 | 1 | 2;
}

/**
 * Reads a request header from the start of a frame body. The API key and version come first in every header
 * version, so they are peeked to choose the layout. Throws DecodeError for an unknown API key.
 */
export function decodeRequestHeader(r: Reader): DecodedRequestHeader {
  const { requestApiKey, requestApiVersion } = peekRequestPrefix(r);
  const headerVersion = requestHeaderVersion(requestApiKey, requestApiVersion);
  return { header: decodeRequestHeaderBody(r, headerVersion), headerVersion };
}

export function encodeRequestHeader(w: Writer, header: RequestHeader): void {
  encodeRequestHeaderBody(w, requestHeaderVersion(header.requestApiKey, header.requestApiVersion), header);
}

export function decodeResponseHeader(r: Reader, apiKey: number, apiVersion: number): ResponseHeader {
  return decodeResponseHeaderBody(r, responseHeaderVersion(apiKey, apiVersion));
}

export function encodeResponseHeader(
  w: Writer,
  apiKey: number,
  apiVersion: number,
  correlationId: number,
): void {
  encodeResponseHeaderBody(w, responseHeaderVersion(apiKey, apiVersion), { correlationId });
}
