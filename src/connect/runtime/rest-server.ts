// Kafka Connect's REST API over node:http (node:https for an https listener), with its paths, status codes and JSON shapes, so that the curl
// commands of Kafka's documentation and operator scripts work unchanged. Errors are {"error_code": <status>,
// "message": "..."}: 404 for an unknown connector, task or path, 405 for a method a path does not take, 409 for
// a name in use, 400 for an invalid config, malformed JSON or a body of the wrong shape, 413 for a body over
// REST_BODY_BYTES_MAX, 415 for a body that is not JSON; 500 for a plain ConnectException (an unknown connector
// class, as Kafka's ConnectExceptionMapper), for anything unexpected (its message only; the trace goes to the
// worker's log) and for a request not answered within REST_REQUEST_TIMEOUT_MS.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TlsOptions } from 'node:tls';
import type { Logger } from '../../common/logger.js';
import { ConnectException, RebalanceNeededException, RequestTargetError, RestError } from '../errors.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { invalidConfigError } from './abstract-herder.js';
import {
  type RequestSignature,
  SIGNATURE_ALGORITHM_HEADER,
  SIGNATURE_HEADER,
} from './distributed/request-signature.js';
import type { ConfigInfos, ConnectorOffset, Herder } from './herder.js';
import { log4jLevel } from './loggers.js';
import { FORWARD_CONFLICT_MESSAGE, nextForwardFlag, restRequest } from './rest-client.js';
import { applyCors, type CorsPolicy } from './rest-cors.js';
import { applyResponseHeaders, type ResponseHeaderRule } from './rest-response-headers.js';
import type { RestTls } from './rest-tls.js';
import type { TargetState } from './status.js';

/** The largest request body accepted (connector configs are a few KiB; this leaves room for big ones). */
export const REST_BODY_BYTES_MAX = 1024 * 1024;

/** Binds an HTTP(S) server (every interface for an empty host) and resolves with the address it got. */
export async function listenHttp(
  server: Server,
  host: string,
  port: number,
): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host === '' ? undefined : host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return { host: address.address, port: address.port };
}

/** Closes a server together with the connections it holds open (keep-alive ones would hold close() back). */
export async function closeHttp(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}
/**
 * How long the worker may take to answer a request (Kafka's RestServer.DEFAULT_REST_REQUEST_TIMEOUT_MS, which no
 * worker config changes), and how long a request forwarded to another worker may take.
 */
export const REST_REQUEST_TIMEOUT_MS = 90_000;
const FORWARD_TIMEOUT_MS = REST_REQUEST_TIMEOUT_MS;

/** How long GET /health waits for the herder (Kafka's RestServer.DEFAULT_HEALTH_CHECK_TIMEOUT_MS). */
export const HEALTH_CHECK_TIMEOUT_MS = 10_000;

export interface RestServerOptions {
  /** Tests only: a shorter REST_REQUEST_TIMEOUT_MS (Kafka's tests lower it the same way). */
  requestTimeoutMs?: number;
  /** Tests only: a shorter HEALTH_CHECK_TIMEOUT_MS. */
  healthCheckTimeoutMs?: number;
  /** The worker's topic.tracking.enable and topic.tracking.allow.reset (both true unless given). */
  topicTracking?: { enabled: boolean; allowReset: boolean };
  /** The worker's access.control.allow.* settings (rest-cors.ts); null or absent: no cross-origin headers. */
  cors?: CorsPolicy | null;
  /** The worker's response.http.headers.config rules (rest-response-headers.ts). */
  responseHeaders?: readonly ResponseHeaderRule[];
}

type Handler = (req: Request) => Promise<Reply>;

interface Request {
  params: string[];
  query: URLSearchParams;
  body: () => Promise<unknown>;
  /** The signature headers and the exact body bytes of an internal request (request-signature.ts). */
  signature: () => Promise<RequestSignature>;
}

/** A request's body, read once: parsed for the handler, the text kept for forwarding. */
class BodyOnce {
  private read: Promise<{ text: string; json: unknown }> | null = null;

  constructor(private readonly req: IncomingMessage) {}

  get(): Promise<{ text: string; json: unknown }> {
    this.read ??= readJsonBody(this.req);
    return this.read;
  }

  /** The text to forward: the body if the handler read it, else whatever the client sent. */
  async text(): Promise<string | null> {
    if (this.read !== null) return (await this.read).text;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.req) {
      size += (chunk as Buffer).length;
      if (size > REST_BODY_BYTES_MAX)
        throw new RestError(413, `Request body is larger than the limit of ${REST_BODY_BYTES_MAX} bytes`);
      chunks.push(chunk as Buffer);
    }
    return chunks.length === 0 ? null : Buffer.concat(chunks).toString('utf8');
  }
}

interface Reply {
  status: number;
  body?: unknown;
  /** The path of what a 201 created; sent as the absolute Location header (Jersey's Response.created). */
  createdPath?: string;
}

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

const SEGMENT = '([^/]+)';

const HEALTHY_MESSAGE = 'Worker has completed startup and is ready to handle requests.';

export class RestServer {
  private server: Server | null = null;
  private readonly routes: Route[] = [];

  constructor(
    private readonly herder: Herder,
    /** The worker's RestServer logger (loggers.ts). */
    private readonly log: Logger,
    /** https listener options (rest-tls.ts); null for http. */
    private readonly tls: RestTls | null = null,
    options: RestServerOptions = {},
  ) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? REST_REQUEST_TIMEOUT_MS;
    this.healthCheckTimeoutMs = options.healthCheckTimeoutMs ?? HEALTH_CHECK_TIMEOUT_MS;
    this.topicTracking = options.topicTracking ?? { enabled: true, allowReset: true };
    this.cors = options.cors ?? null;
    this.responseHeaders = options.responseHeaders ?? [];
    this.defineRoutes();
  }

  private readonly responseHeaders: readonly ResponseHeaderRule[];

  private readonly cors: CorsPolicy | null;

  private readonly topicTracking: { enabled: boolean; allowReset: boolean };

  private readonly requestTimeoutMs: number;
  private readonly healthCheckTimeoutMs: number;

  private get clientTls(): TlsOptions | null {
    return this.tls?.client ?? null;
  }

  async start(host: string, port: number): Promise<{ host: string; port: number }> {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err) => {
        this.log.error(`REST request failed: ${(err as Error).stack ?? String(err)}`);
        if (!res.headersSent) send(res, 500, { error_code: 500, message: (err as Error).message });
        else res.destroy();
      });
    };
    const server = this.tls === null ? createServer(listener) : createHttpsServer(this.tls.server, listener);
    this.server = server;
    return listenHttp(server, host, port);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server !== null) await closeHttp(server);
  }

  private route(method: string, path: string, handler: Handler): void {
    const pattern = new RegExp(`^${path.replace(/\{[a-z]+\}/g, SEGMENT)}/?$`);
    this.routes.push({ method, pattern, handler });
  }

  private defineRoutes(): void {
    const h = this.herder;
    this.route('GET', '/', async () => ({
      status: 200,
      body: { version: BROOK_CONNECT_VERSION, commit: 'brook', kafka_cluster_id: await h.kafkaClusterId() },
    }));
    this.route('GET', '/health', () => this.health());
    this.route('GET', '/connectors', async (r) => {
      const expand = r.query.getAll('expand');
      const names = h.connectors();
      if (expand.length === 0) return { status: 200, body: names };
      const out: Record<string, Record<string, unknown>> = {};
      for (const name of names) {
        try {
          const item: Record<string, unknown> = {};
          if (expand.includes('status')) item.status = h.connectorStatus(name);
          if (expand.includes('info')) item.info = h.connectorInfo(name);
          out[name] = item;
        } catch (err) {
          // As Kafka's listConnectors: a connector with no status yet (between its creation and the first status
          // its worker writes) or just deleted is left out, so UIs polling the list are not failed by one entry.
          if (!(err instanceof RestError && err.statusCode === 404)) throw err;
        }
      }
      return { status: 200, body: out };
    });
    this.route('POST', '/connectors', async (r) => {
      const body = objectBody(await r.body());
      const config = configBody(body.config ?? {});
      const nulls = nullValuedKeys(body.config);
      // As Kafka's ConnectorsResource.createConnector, the name is the body's, trimmed, and a missing one is empty:
      // the config validation refuses an empty name with its message, and a config.name beside a missing name is a
      // mismatch with the empty name (400), never taken as the connector's name.
      const connectorName = typeof body.name === 'string' ? body.name.trim() : '';
      checkNameMatches(connectorName, config);
      await refuseNullValues(h, config, nulls);
      const initial = initialState(body.initial_state);
      const { info } = await h.putConnectorConfig(connectorName, config, false, initial);
      return { status: 201, body: info, createdPath: connectorPath(connectorName) };
    });
    // Kafka checks for an expected rebalance in these reads too, and answers them through its exception mapper:
    // a 500 with the RebalanceNeededException's message (a ConnectException here).
    this.route('GET', '/connectors/{name}', async (r) => {
      h.checkRebalanceNeeded?.();
      return { status: 200, body: h.connectorInfo(r.params[0]!) };
    });
    this.route('GET', '/connectors/{name}/config', async (r) => {
      h.checkRebalanceNeeded?.();
      return { status: 200, body: h.connectorConfig(r.params[0]!) };
    });
    this.route('PUT', '/connectors/{name}/config', async (r) => {
      const name = r.params[0]!;
      const config = configBody(await r.body());
      checkNameMatches(name, config);
      await refuseNullValues(h, config, nullValuedKeys(await r.body()));
      const { created, info } = await h.putConnectorConfig(name, config, true);
      return created
        ? { status: 201, body: info, createdPath: connectorPath(name) }
        : { status: 200, body: info };
    });
    this.route('PATCH', '/connectors/{name}/config', async (r) => {
      // KIP-477: keys given replace, null removes; the result is validated as a whole.
      const name = r.params[0]!;
      const patch = objectBody(await r.body());
      const merged = h.connectorConfig(name);
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete merged[k];
        else merged[k] = configBody({ [k]: v })[k]!;
      }
      // No name check here: Kafka's ConnectorsResource makes it for PUT and POST only, and its
      // patchConnectorConfig puts the merged config, a "name" of the body included, as it is.
      const { info } = await h.putConnectorConfig(name, merged, true);
      return { status: 200, body: info };
    });
    this.route('GET', '/connectors/{name}/tasks-config', async (r) => {
      h.checkRebalanceNeeded?.();
      const out: Record<string, Record<string, string>> = {};
      for (const t of h.taskConfigs(r.params[0]!)) out[`${t.id.connector}-${t.id.task}`] = t.config;
      return { status: 200, body: out };
    });
    this.route('GET', '/connectors/{name}/status', async (r) => ({
      status: 200,
      body: h.connectorStatus(r.params[0]!),
    }));
    // Kafka's ConnectorsResource answers 403 when the worker's topic.tracking.* settings turn these off.
    this.route('GET', '/connectors/{name}/topics', async (r) => {
      if (!this.topicTracking.enabled) throw new RestError(403, 'Topic tracking is disabled.');
      return { status: 200, body: { [r.params[0]!]: { topics: h.connectorActiveTopics(r.params[0]!) } } };
    });
    this.route('PUT', '/connectors/{name}/topics/reset', async (r) => {
      if (!this.topicTracking.enabled) throw new RestError(403, 'Topic tracking is disabled.');
      if (!this.topicTracking.allowReset) throw new RestError(403, 'Topic tracking reset is disabled.');
      h.resetConnectorActiveTopics(r.params[0]!);
      return { status: 202 };
    });
    this.route('POST', '/connectors/{name}/restart', async (r) => {
      conflictIfRebalanceNeeded(h);
      const plan = await h.restartConnector(r.params[0]!, {
        includeTasks: booleanParam(r.query, 'includeTasks', false),
        onlyFailed: booleanParam(r.query, 'onlyFailed', false),
      });
      return plan === null ? { status: 204 } : { status: 202, body: plan };
    });
    this.route('PUT', '/connectors/{name}/pause', async (r) => {
      await h.pauseConnector(r.params[0]!);
      return { status: 202 };
    });
    this.route('PUT', '/connectors/{name}/resume', async (r) => {
      await h.resumeConnector(r.params[0]!);
      return { status: 202 };
    });
    this.route('PUT', '/connectors/{name}/stop', async (r) => {
      await h.stopConnector(r.params[0]!);
      // Kafka's stop method returns void, which JAX-RS answers with 204 (not the 202 of pause and resume); clients
      // such as Strimzi's operator accept exactly 204.
      return { status: 204 };
    });
    this.route('GET', '/connectors/{name}/tasks', async (r) => {
      h.checkRebalanceNeeded?.();
      return { status: 200, body: h.taskConfigs(r.params[0]!) };
    });
    this.route('POST', '/connectors/{name}/tasks', async (r) => {
      // Internal: a worker running a connector hands its task configs to the leader (distributed mode).
      if (h.putTaskConfigs === undefined)
        throw new RestError(400, 'Task configs are only written through the REST API in distributed mode');
      const body = await r.body();
      if (!Array.isArray(body)) throw new RestError(400, 'Request body must be a JSON array of task configs');
      await h.putTaskConfigs(
        r.params[0]!,
        body.map((c) => configBody(c)),
        await r.signature(),
      );
      return { status: 204 };
    });
    this.route('PUT', '/connectors/{name}/fence', async (r) => {
      // Internal (KIP-618): a worker about to start exactly-once source tasks asks the leader to fence zombies.
      if (h.fenceZombies === undefined)
        throw new RestError(400, 'Zombie fencing is only available in distributed mode');
      await h.fenceZombies(r.params[0]!, await r.signature());
      return { status: 204 };
    });
    this.route('GET', '/connectors/{name}/tasks/{task}/status', async (r) => ({
      status: 200,
      body: h.taskStatus(r.params[0]!, taskNumber(r.params[0]!, r.params[1]!)),
    }));
    this.route('POST', '/connectors/{name}/tasks/{task}/restart', async (r) => {
      conflictIfRebalanceNeeded(h);
      await h.restartTask(r.params[0]!, taskNumber(r.params[0]!, r.params[1]!));
      return { status: 204 };
    });
    this.route('DELETE', '/connectors/{name}', async (r) => {
      await h.deleteConnector(r.params[0]!);
      return { status: 204 };
    });
    this.route('GET', '/connectors/{name}/offsets', async (r) => ({
      status: 200,
      body: { offsets: await h.connectorOffsets(r.params[0]!) },
    }));
    this.route('PATCH', '/connectors/{name}/offsets', async (r) => {
      conflictIfRebalanceNeeded(h);
      const body = objectBody(await r.body());
      // Kafka refuses a request with no partitions rather than answer that offsets were altered.
      if (!Array.isArray(body.offsets) || body.offsets.length === 0)
        throw new RestError(400, 'Partitions / offsets need to be provided for an alter offsets request');
      const offsets: ConnectorOffset[] = body.offsets.map((o: unknown) => {
        const entry = objectBody(o);
        if (
          entry.partition === null ||
          typeof entry.partition !== 'object' ||
          Array.isArray(entry.partition)
        ) {
          throw new RestError(400, 'Each offset entry needs a "partition" object');
        }
        if (entry.offset !== null && (typeof entry.offset !== 'object' || Array.isArray(entry.offset))) {
          throw new RestError(400, 'Each offset entry needs an "offset" object or null');
        }
        return {
          partition: entry.partition as Record<string, unknown>,
          offset: entry.offset as Record<string, unknown> | null,
        };
      });
      return { status: 200, body: { message: await h.alterConnectorOffsets(r.params[0]!, offsets) } };
    });
    this.route('DELETE', '/connectors/{name}/offsets', async (r) => {
      conflictIfRebalanceNeeded(h);
      return { status: 200, body: { message: await h.alterConnectorOffsets(r.params[0]!, null) } };
    });
    this.route('GET', '/admin/loggers', async () => ({ status: 200, body: h.allLoggerLevels() }));
    this.route('GET', '/admin/loggers/{logger}', async (r) => {
      const level = h.loggerLevel(r.params[0]!);
      if (level === null) throw new RestError(404, `Logger ${r.params[0]!} not found.`);
      return { status: 200, body: level };
    });
    this.route('PUT', '/admin/loggers/{logger}', async (r) => {
      // Kafka's LoggingResource: a missing level is 400, an unknown one 404; an unknown scope is the worker's.
      const namespace = r.params[0]!;
      const level = configBody(await r.body()).level;
      if (level === undefined)
        throw new RestError(400, "Desired 'level' parameter was not specified in request.");
      if (log4jLevel(level) === null) throw new RestError(404, `invalid log level '${level}'.`);
      const scope = (r.query.get('scope') ?? 'worker').toLowerCase();
      if (scope === 'cluster') {
        await h.setClusterLoggerLevel(namespace, level);
        return { status: 204 };
      }
      if (scope !== 'worker')
        this.log.warn(
          `Received invalid scope '${r.query.get('scope')}' in request to adjust logging level; will default to worker`,
        );
      return { status: 200, body: h.setWorkerLoggerLevel(namespace, level) };
    });
    this.route('GET', '/connector-plugins', async (r) => ({
      status: 200,
      body: h.connectorPlugins(booleanParam(r.query, 'connectorsOnly', true)),
    }));
    this.route('GET', '/connector-plugins/{plugin}/config', async (r) => ({
      status: 200,
      body: h.pluginConfig(r.params[0]!),
    }));
    this.route('PUT', '/connector-plugins/{plugin}/config/validate', async (r) => {
      const config = configBody(await r.body());
      const plugin = r.params[0]!;
      // A config without connector.class goes on to the validation, which refuses it with Kafka's message.
      const declared = config['connector.class'];
      if (declared !== undefined && !includedTypeMatches(declared, plugin)) {
        throw new RestError(400, `Included connector type ${declared} does not match request type ${plugin}`);
      }
      return { status: 200, body: await validateWithNulls(h, config, nullValuedKeys(await r.body())) };
    });
  }

  /**
   * KIP-1017's GET /health, as Kafka's RootResource.healthCheck: 200 "healthy" once the herder answers within
   * healthCheckTimeoutMs; past it, 503 "starting" while startup is not complete, else 500 "unhealthy" (a work loop
   * that does not answer). Probes (Kubernetes liveness and readiness) read the status code.
   */
  private async health(): Promise<Reply> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.healthCheckTimeoutMs);
      timer.unref();
    });
    const check = this.herder.healthCheck().then(() => 'healthy' as const);
    try {
      if ((await Promise.race([check, timedOut])) === 'healthy')
        return { status: 200, body: { status: 'healthy', message: HEALTHY_MESSAGE } };
    } finally {
      clearTimeout(timer);
    }
    check.catch(() => {});
    if (!this.herder.isReady())
      return { status: 503, body: { status: 'starting', message: 'Worker is still starting up.' } };
    return {
      status: 500,
      body: {
        status: 'unhealthy',
        message: 'Worker was unable to handle this request and may be unable to handle other requests.',
      },
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const pathname = url.pathname.replace(/\/$/, '') || '/';
    // As Kafka's filters, before the request is served: every answer has them, errors included.
    applyResponseHeaders(this.responseHeaders, res);
    if (this.cors !== null) applyCors(this.cors, req, res);
    const candidates = this.routes.filter((r) => r.pattern.test(pathname));
    if (candidates.length === 0) return send(res, 404, { error_code: 404, message: 'HTTP 404 Not Found' });
    // JAX-RS answers OPTIONS on any resource with its methods (a browser's CORS preflight is one), and HEAD as GET
    // without the body (node:http leaves the body of a HEAD answer out).
    if (req.method === 'OPTIONS') return sendAllow(res, candidates);
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = candidates.find((r) => r.method === method);
    if (route === undefined)
      return send(res, 405, { error_code: 405, message: 'HTTP 405 Method Not Allowed' });
    let params: string[];
    try {
      params = route.pattern
        .exec(pathname)!
        .slice(1)
        .map((p) => decodeURIComponent(p));
    } catch {
      return send(res, 400, { error_code: 400, message: 'Malformed percent-encoding in the path' });
    }
    const body = new BodyOnce(req);
    const header = (name: string) => {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    };
    const request: Request = {
      params,
      query: url.searchParams,
      body: async () => (await body.get()).json,
      signature: async () => ({
        signature: header(SIGNATURE_HEADER),
        algorithm: header(SIGNATURE_ALGORITHM_HEADER),
        body: Buffer.from((await body.text()) ?? '', 'utf8'),
      }),
    };
    let reply: Reply;
    try {
      reply = await this.withinRequestTimeout(req, route.handler(request));
    } catch (err) {
      if (err instanceof RequestTargetError) return this.forward(req, res, url, body, err);
      if (err instanceof RestError)
        return send(res, err.statusCode, { error_code: err.statusCode, message: err.message });
      // Kafka's ConnectExceptionMapper answers 500 to anything but its ConnectRestException (RestError here),
      // NotFoundException and AlreadyExistsException: a ConnectException, and a ConfigException too (a setting that
      // does not parse when a client is built). A config refused by validation is a RestError 400 (checkValid).
      if (err instanceof ConnectException) return send(res, 500, { error_code: 500, message: err.message });
      throw err;
    }
    const location = reply.createdPath === undefined ? undefined : this.absoluteUrl(req, reply.createdPath);
    send(res, reply.status, reply.body, location);
  }

  /** A path of this server as the client reached it (Jersey resolves Location against the request's base URI). */
  private absoluteUrl(req: IncomingMessage, path: string): string {
    const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
    return `${this.tls === null ? 'http' : 'https'}://${host}${path}`;
  }

  /**
   * The handler's reply, or Kafka's 500 "Request timed out" once requestTimeoutMs has passed (HerderRequestHandler):
   * an operation waiting on something that does not answer (a connector's start(), an unreachable broker, a
   * rebalance that does not end) must not hold the client, nor its HTTP connection, for ever. The operation goes
   * on, as in Kafka; a failure it ends with after the client was answered goes to the log.
   */
  private async withinRequestTimeout(req: IncomingMessage, work: Promise<Reply>): Promise<Reply> {
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new RestError(500, 'Request timed out'));
      }, this.requestTimeoutMs);
      // A stopping worker does not wait for the answer of a request it is no longer serving.
      timer.unref();
    });
    work.catch((err) => {
      if (timedOut)
        this.log.warn(`${req.method} ${req.url} failed after it timed out: ${(err as Error).message}`);
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends the request on to the worker that must serve it (the leader, or a task's owner) and relays its answer,
   * with the rules of Kafka's HerderRequestHandler.completeOrForwardRequest: a client's request (no `forward` flag)
   * goes on with forward=true, a request with forward=true (forwarded once) with forward=false, and a request with
   * forward=false gets 409 instead of travelling on (workers disagreeing about the leader during a rebalance): at
   * most two hops between workers.
   */
  private async forward(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: BodyOnce,
    target: RequestTargetError,
  ): Promise<void> {
    const next = nextForwardFlag(req.method, url, this.log);
    if (next === null) return send(res, 409, { error_code: 409, message: FORWARD_CONFLICT_MESSAGE });
    const text = await body.text();
    const query = new URLSearchParams(url.searchParams);
    query.set('forward', String(next));
    const to = new URL(`${url.pathname}?${query.toString()}`, target.targetUrl);
    this.log.debug(`Forwarding ${req.method} ${url.pathname} to ${to.origin}: ${target.message}`);
    const answer = await restRequest(
      to,
      req.method ?? 'GET',
      {
        ...(text === null
          ? {}
          : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }),
        // An internal request keeps its signature on its way to the leader.
        ...signatureHeadersOf(req),
      },
      text,
      this.clientTls,
      FORWARD_TIMEOUT_MS,
    ).catch((err: Error) => {
      // Kafka's RestClient: a worker that does not answer is a 500, not a conflict to retry.
      this.log.error(`IO error forwarding REST request to ${to.origin}: ${err.message}`);
      throw new RestError(500, `IO Error trying to forward REST request: ${err.message}`);
    });
    const headers: Record<string, string | number> = { 'content-length': answer.body.length };
    if (answer.type !== undefined) headers['content-type'] = answer.type;
    // Kafka's worker that forwarded a create answers with its own Location, not the leader's address.
    if (answer.location !== undefined)
      headers.location = this.absoluteUrl(req, new URL(answer.location, to).pathname);
    res.writeHead(answer.status, headers);
    res.end(answer.body);
  }
}

function signatureHeadersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [SIGNATURE_HEADER, SIGNATURE_ALGORITHM_HEADER]) {
    const v = req.headers[name.toLowerCase()];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

function send(res: ServerResponse, status: number, body?: unknown, location?: string): void {
  const headers: Record<string, string | number> = location === undefined ? {} : { location };
  if (body === undefined) {
    // An empty 202 carries a length of 0 as Jetty's, not a chunked empty body; a 204 has no length (RFC 9110).
    res.writeHead(status, status === 204 ? headers : { ...headers, 'content-length': 0 });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Jersey's answer to OPTIONS: 200, no body, the path's methods in Allow (HEAD with GET, and OPTIONS itself). */
function sendAllow(res: ServerResponse, routes: readonly Route[]): void {
  const methods = new Set(routes.map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  res.writeHead(200, { allow: [...methods].sort().join(','), 'content-length': 0 });
  res.end();
}

/** /connectors/{name}, the name percent-encoded as in a Location header. */
function connectorPath(name: string): string {
  return `/connectors/${encodeURIComponent(name)}`;
}

async function readJsonBody(req: IncomingMessage): Promise<{ text: string; json: unknown }> {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/(.+\+)?json\b/i.test(type) && !/^\*\/\*/.test(type)) {
    // curl -d without -H sends application/x-www-form-urlencoded; Kafka (Jersey) refuses it with 415.
    throw new RestError(415, `HTTP 415 Unsupported Media Type: expected application/json, got ${type}`);
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > REST_BODY_BYTES_MAX) {
    req.resume();
    throw new RestError(
      413,
      `Request body of ${declared} bytes is larger than the limit of ${REST_BODY_BYTES_MAX} bytes`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > REST_BODY_BYTES_MAX) {
      req.resume();
      throw new RestError(413, `Request body is larger than the limit of ${REST_BODY_BYTES_MAX} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new RestError(400, 'Request body is empty; a JSON document was expected');
  try {
    return { text, json: JSON.parse(text) };
  } catch (err) {
    throw new RestError(400, `Request body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Restarts and offset changes while a rebalance is expected: Kafka's HerderRequestHandler turns the herder's
 * RebalanceNeededException into this 409, which a client may retry.
 */
function conflictIfRebalanceNeeded(h: Herder): void {
  try {
    h.checkRebalanceNeeded?.();
  } catch (err) {
    if (err instanceof RebalanceNeededException)
      throw new RestError(
        409,
        'Cannot complete request momentarily due to stale configuration ' +
          '(typically caused by a concurrent config change)',
      );
    throw err;
  }
}

function objectBody(v: unknown): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new RestError(400, 'Request body must be a JSON object');
  return v as Record<string, unknown>;
}

/** A config object: string values, and numbers or booleans as their text (Jackson coerces them so in Kafka). */
function configBody(v: unknown): Record<string, string> {
  const obj = objectBody(v);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj)) {
    if (typeof x === 'string') out[k] = x;
    else if (typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
    else if (x === null) continue;
    else
      throw new RestError(
        400,
        `Connector config value of "${k}" must be a string, not ${Array.isArray(x) ? 'an array' : 'an object'}`,
      );
  }
  return out;
}

/** The keys of a config body given a JSON null (configBody leaves them out; a PATCH removes them). */
function nullValuedKeys(v: unknown): string[] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [];
  return Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x === null)
    .map(([k]) => k);
}

const NULL_VALUE_ERROR = 'Null value can not be supplied as the configuration value.';

/**
 * A config's validation with Kafka's error for each key given a null value (AbstractHerder.validateConnectorConfig
 * keeps them, and refuses each with NULL_VALUE_ERROR beside the config's other errors). `name` is not one: a null
 * name is replaced by the connector's, as Kafka's checkAndPutConnectorConfigName does.
 */
async function validateWithNulls(
  h: Herder,
  config: Record<string, string>,
  nullKeys: string[],
): Promise<ConfigInfos> {
  const validation = await h.validateConnectorConfig(config);
  let undefinedFirst = 0;
  for (const key of nullKeys.filter((k) => config[k] === undefined)) {
    const entry = validation.configs.find((c) => c.value.name === key);
    if (entry !== undefined) {
      entry.value.value = null;
      entry.value.errors.push(NULL_VALUE_ERROR);
    } else {
      // Kafka's generateResult puts a value of no defined key first, with no definition.
      validation.configs.splice(undefinedFirst++, 0, {
        definition: null,
        value: { name: key, value: null, recommended_values: [], errors: [NULL_VALUE_ERROR], visible: true },
      });
    }
    validation.error_count++;
  }
  return validation;
}

/** A create or update with null values is Kafka's 400 listing them with the config's other errors. */
async function refuseNullValues(
  h: Herder,
  config: Record<string, string>,
  nullKeys: string[],
): Promise<void> {
  if (nullKeys.every((k) => config[k] !== undefined)) return;
  const validation = await validateWithNulls(h, config, nullKeys);
  throw invalidConfigError(validation);
}

function checkNameMatches(name: string, config: Record<string, string>): void {
  // Compared untrimmed, as Kafka's checkAndPutConnectorConfigName: " a " in the config is not the connector "a".
  const inConfig = config.name;
  if (inConfig !== undefined && inConfig !== name) {
    throw new RestError(
      400,
      `Connector name configuration (${inConfig}) doesn't match connector name in the URL (${name})`,
    );
  }
  config.name = name;
}

function initialState(v: unknown): TargetState {
  if (v === undefined || v === null) return 'STARTED';
  const s = String(v).toUpperCase();
  if (s === 'RUNNING') return 'STARTED';
  if (s === 'PAUSED' || s === 'STOPPED') return s;
  throw new RestError(400, `Invalid initial state ${String(v)}; expected RUNNING, PAUSED or STOPPED`);
}

/**
 * A Boolean query parameter as Kafka's Jersey reads it (Boolean.valueOf): "true" in any case is true, any other
 * value false, and an absent one the default. Python's requests, say, writes True and False.
 */
function booleanParam(q: URLSearchParams, name: string, defaultValue: boolean): boolean {
  const v = q.get(name);
  if (v === null) return defaultValue;
  return v.toLowerCase() === 'true';
}

function taskNumber(connector: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new RestError(404, `No status found for task ${connector}-${text}`);
  return Number(text);
}

/**
 * Kafka's ConnectorPluginsResource check: the config's connector.class, without a "Connector" suffix, must end
 * with the path's plugin name without one. So the path may name the class, its simple name or its alias
 * (FileStreamSink), and a config naming the full class matches them all; a config naming only the alias does not
 * match a path naming the full class.
 */
function includedTypeMatches(included: string, plugin: string): boolean {
  const normalized = (name: string) =>
    name.endsWith('Connector') && name.length > 'Connector'.length
      ? name.slice(0, -'Connector'.length)
      : name;
  return normalized(included).endsWith(normalized(plugin));
}
