// Requests from one worker to another's REST API (forwarded requests, task configs and fencing requests to the
// leader), over http or https: for https the worker's own REST trust store and key store (rest-tls.ts), so that
// workers with certificates from a private CA reach each other.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TlsOptions } from 'node:tls';

export interface RestAnswer {
  status: number;
  type: string | undefined;
  /** The Location header of a 201 (a created connector). */
  location: string | undefined;
  body: Buffer;
}

export function restRequest(
  url: URL,
  method: string,
  headers: Record<string, string | number>,
  body: Buffer | string | null,
  tls: TlsOptions | null,
  timeoutMs: number,
): Promise<RestAnswer> {
  return new Promise((resolve, reject) => {
    const options = { method, headers, timeout: timeoutMs };
    const onAnswer = (answer: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () =>
        resolve({
          status: answer.statusCode ?? 500,
          type: answer.headers['content-type'],
          location: answer.headers.location,
          body: Buffer.concat(chunks),
        }),
      );
      answer.on('error', reject);
    };
    const out =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...options, ...(tls ?? {}) }, onAnswer)
        : httpRequest(url, options, onAnswer);
    out.on('timeout', () => out.destroy(new Error(`no answer from ${url.origin} within ${timeoutMs} ms`)));
    out.on('error', reject);
    out.end(body ?? undefined);
  });
}

/** Kafka's answer to a request that would need a third hop between workers (or MirrorMaker processes). */
export const FORWARD_CONFLICT_MESSAGE =
  'Cannot complete request because of a conflicting operation (e.g. worker rebalance)';

/**
 * The `forward` flag a request another worker must serve goes on with, by the rules of Kafka's
 * HerderRequestHandler.completeOrForwardRequest: a client's request (no flag) goes on with forward=true, one that
 * came with forward=true (forwarded once) with forward=false; one that came with forward=false gets null, logged
 * here, and its caller answers 409 FORWARD_CONFLICT_MESSAGE instead of sending it on: at most two hops. The flag is
 * read as Java's Boolean.valueOf, as Jersey reads it: "true" in any case, else false.
 */
export function nextForwardFlag(
  method: string | undefined,
  url: URL,
  log: { error(message: string): void },
): boolean | null {
  const flag = url.searchParams.get('forward');
  if (flag === null) return true;
  if (flag.toLowerCase() === 'true') return false;
  log.error(
    `Request '${method} ${url.pathname}' failed because it couldn't find the target Connect worker within two hops (between workers).`,
  );
  return null;
}
