// Requests from one worker to another's REST API (forwarded requests, task configs and fencing requests to the
// leader), over http or https: for https the worker's own REST trust store and key store (rest-tls.ts), so that
// workers with certificates from a private CA reach each other.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TlsOptions } from 'node:tls';

export interface RestAnswer {
  status: number;
  type: string | undefined;
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
