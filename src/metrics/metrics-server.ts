// The HTTP listener of `brook.metrics.listener`: GET /metrics (Prometheus text format), GET /healthz (the process
// answers: 200), GET /readyz (200 when readiness.ts says ready, else 503 with what is missing). Anything else:
// unknown paths 404, other methods 405, malformed or oversized requests 4xx, each with a JSON error body.
//
// Bounded like the Kafka listeners: at most CONNECTIONS_MAX connections (more are closed on accept), request
// headers at most HEADER_BYTES_MAX (431), no request body (413), a request must arrive within
// REQUEST_TIMEOUT_MS (408) and an idle keep-alive connection is closed after KEEP_ALIVE_MS.
//
// Lifecycle: start() binds (port 0: the system chooses), stop() closes the listener and every connection.

import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../common/logger.js';
import type { MetricsListener } from './metrics-listener.js';
import type { Readiness } from './readiness.js';

/** A Prometheus server or two and a probe or two; more is a misconfiguration or an attack. */
const CONNECTIONS_MAX = 32;
const HEADER_BYTES_MAX = 8 * 1024;
const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_MS = 30_000;
const REQUESTS_PER_CONNECTION_MAX = 1_000;

export interface MetricsServerHandlers {
  /** The exposition text and its content type. */
  scrape(): Promise<{ body: string; contentType: string }>;
  readiness(): Readiness;
}

export class MetricsServer {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly listener: MetricsListener,
    private readonly handlers: MetricsServerHandlers,
    private readonly logger: Logger,
  ) {
    this.server = http.createServer(
      {
        maxHeaderSize: HEADER_BYTES_MAX,
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        keepAliveTimeout: KEEP_ALIVE_MS,
      },
      (request, response) => this.handle(request, response),
    );
    this.server.maxConnections = CONNECTIONS_MAX;
    this.server.maxRequestsPerSocket = REQUESTS_PER_CONNECTION_MAX;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
      this.clientError(error, socket),
    );
  }

  start(): Promise<MetricsListener> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.listener.port, this.listener.host, () => {
        this.server.off('error', reject);
        const address = this.server.address() as AddressInfo;
        resolve({ host: address.address, port: address.port });
      });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    if (request.method !== 'GET') {
      response.setHeader('allow', 'GET');
      this.json(response, 405, { error: `method ${request.method ?? ''} not allowed, only GET` }, true);
      return;
    }
    // A GET has no body here; one that announces a body is refused rather than read.
    const length = request.headers['content-length'];
    if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined) {
      this.json(response, 413, { error: 'a request body is not accepted' }, true);
      return;
    }
    const path = (request.url ?? '').split('?', 1)[0];
    if (path === '/metrics') {
      this.metrics(response);
    } else if (path === '/healthz') {
      this.json(response, 200, { status: 'alive' });
    } else if (path === '/readyz') {
      const readiness = this.handlers.readiness();
      if (readiness.ready) this.json(response, 200, { status: 'ready' });
      else
        this.json(response, 503, {
          status: 'not ready',
          missing: readiness.missing,
          partitionsNotInIsr: readiness.partitionsNotInIsr,
        });
    } else {
      this.json(response, 404, { error: 'not found', paths: ['/metrics', '/healthz', '/readyz'] });
    }
  }

  private metrics(response: http.ServerResponse): void {
    this.handlers.scrape().then(
      ({ body, contentType }) => {
        response.writeHead(200, { 'content-type': contentType });
        response.end(body);
      },
      (error: unknown) => {
        // A collector that fails is a bug; the scraper sees a 500 and the log says why.
        this.logger.error(`metrics scrape failed: ${error instanceof Error ? error.stack : String(error)}`);
        this.json(response, 500, { error: 'collecting metrics failed' });
      },
    );
  }

  private json(response: http.ServerResponse, status: number, body: object, close = false): void {
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
    if (close) headers.connection = 'close';
    response.writeHead(status, headers);
    response.end(`${JSON.stringify(body)}\n`);
  }

  /** Malformed requests, oversized headers and timeouts: answered when the socket still can be, then closed. */
  private clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    const [status, reason] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout']
          : [400, 'Bad Request'];
    if (socket.writable) {
      const body = `${JSON.stringify({ error: reason.toLowerCase() })}\n`;
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      );
    } else {
      socket.destroy();
    }
  }
}
