// The internal REST server of dedicated mode (KIP-710, `dedicated.mode.enable.internal.rest=true`): only the
// endpoints Connect workers call on each other, each under its flow's `/<source>/<target>` prefix, so that one
// listener serves every flow of the process. A follower running a connector hands its task configs to the flow's
// leader (POST .../connectors/<name>/tasks) and asks it to fence zombie tasks before starting exactly-once tasks
// (PUT .../connectors/<name>/fence). Every other path is 404: dedicated mode has no public REST API.
//
// A request reaching a process that does not lead the flow (a leader change under way) is forwarded to the leader
// the flow's herder names, as Kafka's InternalMirrorResource does through HerderRequestHandler.completeOrForwardRequest:
// a request with no `forward` flag (a worker's own) goes on with forward=true, one with forward=true with
// forward=false, and one with forward=false is refused with 409, so a request makes at most two hops between
// processes. The leader's answer, error included, is relayed with its status; a leader that cannot be reached is
// Kafka's 500 "IO Error trying to forward REST request". The signature headers go along (Kafka's RestClient sends
// only Authorization, so its leader refuses a forwarded internal request as unsigned when validation is on; Brook's
// public REST server forwards them too).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TlsOptions } from 'node:tls';
import type { Logger } from '../../common/logger.js';
import type { TaskConfig } from '../api/connector.js';
import { RequestTargetError, RestError } from '../errors.js';
import type { DistributedHerder } from '../runtime/distributed/distributed-herder.js';
import { SIGNATURE_ALGORITHM_HEADER, SIGNATURE_HEADER } from '../runtime/distributed/request-signature.js';
import { FORWARD_CONFLICT_MESSAGE, nextForwardFlag, restRequest } from '../runtime/rest-client.js';
import { closeHttp, listenHttp, REST_REQUEST_TIMEOUT_MS } from '../runtime/rest-server.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const PATH = /^\/([^/]+)\/([^/]+)\/connectors\/([^/]+)\/(tasks|fence)\/?$/;

export class MirrorRestServer {
  private server: Server | null = null;
  private readonly herders = new Map<string, DistributedHerder>();
  /** The TLS settings of this process's requests to the others' servers (forwarded requests). */
  private clientTls: TlsOptions | null = null;

  constructor(private readonly log: Logger) {}

  /** Serves `/<source>/<target>/...` from this flow's herder. */
  addFlow(source: string, target: string, herder: DistributedHerder): void {
    this.herders.set(`${source}\u0000${target}`, herder);
  }

  /** Stops serving the flow (a flow that could not start). */
  removeFlow(source: string, target: string): void {
    this.herders.delete(`${source}\u0000${target}`);
  }

  /** Listens on http, or on https with `tls` (rest-tls.ts: the key store, trust store and client auth). */
  async start(
    host: string,
    port: number,
    tls: TlsOptions | null = null,
    clientTls: TlsOptions | null = null,
  ): Promise<{ host: string; port: number }> {
    this.clientTls = clientTls;
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err) => {
        this.log.error(`Mirror REST request failed: ${(err as Error).message}`);
        if (!res.headersSent) send(res, 500, (err as Error).message);
        else res.destroy();
      });
    };
    const server = tls === null ? createServer(listener) : createHttpsServer(tls, listener);
    // A peer that fails the handshake (no or an untrusted certificate): the connection closes, with a log line.
    server.on('tlsClientError', (err) => this.log.warn(`Mirror REST TLS handshake failed: ${err.message}`));
    this.server = server;
    return listenHttp(server, host, port);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server !== null) await closeHttp(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = PATH.exec(url.pathname);
    if (m === null) return send(res, 404, 'HTTP 404 Not Found');
    let source: string;
    let target: string;
    let name: string;
    try {
      [source, target, name] = [m[1]!, m[2]!, m[3]!].map((s) => decodeURIComponent(s)) as [
        string,
        string,
        string,
      ];
    } catch {
      return send(res, 400, 'Malformed percent-encoding in the path');
    }
    const herder = this.herders.get(`${source}\u0000${target}`);
    if (herder === undefined) return send(res, 404, `No replication flow ${source}->${target}`);
    const wantMethod = m[4] === 'tasks' ? 'POST' : 'PUT';
    if (req.method !== wantMethod) return send(res, 405, 'HTTP 405 Method Not Allowed');
    const body = await readBody(req);
    if (body === null) return send(res, 413, 'Request body too large');
    const header = (h: string) => {
      const v = req.headers[h.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    };
    const signature = {
      signature: header(SIGNATURE_HEADER),
      algorithm: header(SIGNATURE_ALGORITHM_HEADER),
      body,
    };
    try {
      if (m[4] === 'tasks') {
        let configs: unknown;
        try {
          configs = JSON.parse(body.toString('utf8'));
        } catch {
          return send(res, 400, 'Request body is not JSON');
        }
        if (!Array.isArray(configs) || !configs.every(isStringMap))
          return send(res, 400, 'Request body must be a JSON array of task configs');
        await herder.putTaskConfigs(name, configs as TaskConfig[], signature);
        this.log.info(
          `Accepted ${configs.length} task configs of ${name} for ${source}->${target} from another process`,
        );
      } else {
        await herder.fenceZombies(name, signature);
      }
    } catch (err) {
      if (err instanceof RestError) return send(res, err.statusCode, err.message);
      if (err instanceof RequestTargetError)
        return this.forward(req, res, url, `connectors/${m[3]!}/${m[4]!}`, body, err);
      // As Kafka's ConnectExceptionMapper: anything else, a ConnectException or ConfigException included, is 500.
      return send(res, 500, (err as Error).message);
    }
    res.writeHead(204).end();
  }

  /**
   * Sends a request this process cannot serve to the flow's leader and relays the answer (Kafka's
   * completeOrForwardRequest). `path` is the request's path under the flow prefix, still percent-encoded.
   */
  private async forward(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    path: string,
    body: Buffer,
    target: RequestTargetError,
  ): Promise<void> {
    const next = nextForwardFlag(req.method, url, this.log);
    if (next === null) return send(res, 409, FORWARD_CONFLICT_MESSAGE);
    if (target.targetUrl === '') {
      return send(
        res,
        409,
        'Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.',
      );
    }
    // The leader's URL carries its flow prefix (mirror-maker.ts), so the path resolves under it.
    const to = new URL(`${path}?forward=${next}`, target.targetUrl);
    this.log.debug(`Forwarding ${req.method} ${url.pathname} to ${to.href}: ${target.message}`);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': body.length,
    };
    for (const name of ['authorization', SIGNATURE_HEADER, SIGNATURE_ALGORITHM_HEADER]) {
      const v = req.headers[name.toLowerCase()];
      if (typeof v === 'string') headers[name] = v;
    }
    let answer: Awaited<ReturnType<typeof restRequest>>;
    try {
      answer = await restRequest(
        to,
        req.method ?? 'POST',
        headers,
        body,
        this.clientTls,
        REST_REQUEST_TIMEOUT_MS,
      );
    } catch (err) {
      this.log.error(`IO error forwarding REST request to ${to.href}: ${(err as Error).message}`);
      return send(res, 500, `IO Error trying to forward REST request: ${(err as Error).message}`);
    }
    if (answer.status === 204) {
      res.writeHead(204).end();
      return;
    }
    if (answer.status >= 400) {
      // Kafka's RestClient reads the leader's {"error_code", "message"} and its mapper answers with them.
      const error = errorMessageOf(answer.body);
      if (error === null) {
        return send(
          res,
          500,
          `IO Error trying to forward REST request: the answer of ${to.origin} is not an error message`,
        );
      }
      return send(res, answer.status, error);
    }
    if (answer.status >= 200 && answer.status < 300) {
      res.writeHead(answer.status).end();
      return;
    }
    send(res, 500, `Unexpected status code when handling forwarded request: ${answer.status}`);
  }
}

/** The message of a Connect error body `{"error_code": ..., "message": ...}`, or null for anything else. */
function errorMessageOf(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const message = (parsed as { message?: unknown }).message;
    return typeof message === 'string' ? message : message === undefined || message === null ? '' : null;
  } catch {
    return null;
  }
}

function isStringMap(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === 'string')
  );
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error_code: status, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
