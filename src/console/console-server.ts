// The console's HTTP listener (node:http): the page's static files (bundled at build time into static/ beside
// this module) and the JSON API that console-api.ts routes. Errors are JSON, `{"error": "...", "code": "..."}`,
// with 4xx for the caller's mistakes (400 bad input, 403 a refused origin or host, 404, 405, 409, 413 a body over
// BODY_BYTES_MAX, 415 a body that is not JSON) and 502/504 when the cluster fails or does not answer in time.
//
// Bounded like Brook's other listeners: CONNECTIONS_MAX connections, HEADER_BYTES_MAX of headers, a request within
// REQUEST_TIMEOUT_MS. A browser on the same machine is the client: changes (POST, DELETE) must be JSON, sent from
// this origin (a cross-site form cannot set that content type, and a cross-site fetch carries its Origin), and on a
// loopback address the Host header must name it, so that a web page elsewhere cannot reach the API through DNS
// rebinding.
//
// Lifecycle: start() binds (port 0: the system chooses), stop() closes the listener and every connection.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { HttpError, toHttpError } from './api-error.js';

const CONNECTIONS_MAX = 64;
const HEADER_BYTES_MAX = 16 * 1024;
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;
const KEEP_ALIVE_MS = 5_000;
/** A produced test message is the largest body; Kafka's default max.request.size is 1 MiB. */
export const BODY_BYTES_MAX = 1024 * 1024;

const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface ApiRequest {
  method: string;
  /** Path segments after /api/, decoded. */
  segments: string[];
  query: URLSearchParams;
  /** The parsed JSON body ({} when there is none). */
  body: unknown;
}

export type ApiHandler = (request: ApiRequest) => Promise<{ status?: number; body: unknown }>;

export class ConsoleServer {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly assets = new Map<string, Buffer>();
  private address: AddressInfo | null = null;

  constructor(
    private readonly api: ApiHandler,
    private readonly log: (line: string) => void,
  ) {
    this.server = http.createServer(
      {
        maxHeaderSize: HEADER_BYTES_MAX,
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        keepAliveTimeout: KEEP_ALIVE_MS,
      },
      (request, response) => {
        this.handle(request, response).catch((error: unknown) => this.fail(response, error));
      },
    );
    this.server.maxConnections = CONNECTIONS_MAX;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('clientError', (_error: Error, socket: Socket) => {
      if (socket.writable)
        socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      else socket.destroy();
    });
  }

  start(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.address = this.server.address() as AddressInfo;
        resolve({ host: this.address.address, port: this.address.port });
      });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    this.checkHost(request);
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    const method = request.method ?? 'GET';
    if (url.pathname.startsWith('/api/')) {
      const body =
        method === 'GET' || method === 'HEAD' ? await this.noBody(request) : await this.jsonBody(request);
      let segments: string[];
      try {
        segments = url.pathname
          .slice('/api/'.length)
          .split('/')
          .filter((s) => s !== '')
          .map(decodeURIComponent);
      } catch {
        throw new HttpError(400, 'malformed path');
      }
      const answer = await this.api({ method, segments, query: url.searchParams, body });
      this.json(response, answer.status ?? 200, answer.body);
      return;
    }
    const asset = STATIC_FILES[url.pathname];
    if (asset === undefined) throw new HttpError(404, `no page at ${url.pathname}`);
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `method ${method} not allowed`);
    await this.noBody(request);
    const content = this.asset(asset.file);
    response.writeHead(200, {
      'content-type': asset.type,
      'content-length': content.length,
      ...SECURITY_HEADERS,
    });
    response.end(method === 'HEAD' ? undefined : content);
  }

  /** The bundled file, read once; a missing bundle is a build that was skipped, said plainly. */
  private asset(file: string): Buffer {
    let content = this.assets.get(file);
    if (content === undefined) {
      try {
        content = readFileSync(`${STATIC_DIR}${file}`);
      } catch {
        throw new HttpError(500, `the console's page is not built (${file} is missing): run npm run build`);
      }
      this.assets.set(file, content);
    }
    return content;
  }

  /** On a loopback listener only the loopback names are accepted as Host (DNS rebinding). */
  private checkHost(request: http.IncomingMessage): void {
    const bound = this.address;
    if (bound === null || !isLoopback(bound.address)) return;
    const host = request.headers.host ?? '';
    const allowed = [`127.0.0.1:${bound.port}`, `localhost:${bound.port}`, `[::1]:${bound.port}`];
    if (!allowed.includes(host.toLowerCase())) throw new HttpError(403, `host '${host}' is not this console`);
  }

  private async noBody(request: http.IncomingMessage): Promise<unknown> {
    const length = request.headers['content-length'];
    if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined) {
      throw new HttpError(413, 'this request takes no body');
    }
    return {};
  }

  private async jsonBody(request: http.IncomingMessage): Promise<unknown> {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) {
      throw new HttpError(403, `requests from origin ${origin} are not accepted`);
    }
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > BODY_BYTES_MAX)
      throw new HttpError(413, `a body of ${length} bytes is over ${BODY_BYTES_MAX}`);
    const type = request.headers['content-type'] ?? '';
    const hasBody = length > 0 || request.headers['transfer-encoding'] !== undefined;
    if (!hasBody) {
      if (request.method === 'DELETE') return {};
      throw new HttpError(415, 'a JSON body is required (content-type: application/json)');
    }
    if (!/^application\/json\b/i.test(type)) {
      throw new HttpError(415, 'the body must be JSON (content-type: application/json)');
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of request as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > BODY_BYTES_MAX) throw new HttpError(413, `the body is over ${BODY_BYTES_MAX} bytes`);
      chunks.push(chunk);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (error) {
      throw new HttpError(400, `malformed JSON: ${(error as Error).message}`);
    }
  }

  private json(response: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      ...SECURITY_HEADERS,
    });
    response.end(text);
  }

  private fail(response: http.ServerResponse, error: unknown): void {
    const e = toHttpError(error);
    if (e.status >= 500) this.log(`console: ${e.status} ${e.message}`);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    // A body left unread (refused before reading) would be parsed as the next request: close the connection.
    if (e.status === 413 || e.status === 415 || e.status === 403) response.setHeader('connection', 'close');
    this.json(
      response,
      e.status,
      e.code === undefined ? { error: e.message } : { error: e.message, code: e.code },
    );
  }
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address === '::ffff:127.0.0.1';
}
