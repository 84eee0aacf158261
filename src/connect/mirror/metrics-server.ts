// The dedicated mode's metrics listener (`brook.metrics.listener=http://host:port`, the key the broker uses):
// GET /metrics answers MirrorSourceConnector's per-partition metrics in Prometheus text (metrics.ts); anything
// else is 404, a method other than GET 405. Plain HTTP for a Prometheus server on a trusted network.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigException } from '../errors.js';
import { mirrorMetrics } from './metrics.js';

const LISTENER = /^http:\/\/(\[[^\]]*\]|[^:/]+):(\d+)$/;
/** Connections at once (more are closed on accept): the endpoint is for one scraper or two. */
const CONNECTIONS_MAX = 16;

export async function startMetricsServer(
  listener: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const m = LISTENER.exec(listener.trim());
  if (m === null || Number(m[2]) > 65535)
    throw ConfigException.invalid('brook.metrics.listener', listener, 'expected http://host:port');
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET') {
      res
        .writeHead(405, { allow: 'GET', 'content-type': 'application/json' })
        .end('{"error":"method not allowed"}');
      return;
    }
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(mirrorMetrics.prometheus());
  });
  server.maxConnections = CONNECTIONS_MAX;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(m[2]), host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
