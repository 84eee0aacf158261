// Cross-origin access to the worker's REST API, for browser consoles (kafka-connect-ui and the like) served from
// another origin: Kafka's worker settings access.control.allow.origin and access.control.allow.methods, applied
// with the rules of the Jetty CrossOriginFilter that Kafka's RestServer installs when the origin setting is not
// blank (its defaults: methods GET,POST,HEAD; headers X-Requested-With,Content-Type,Accept,Origin; credentials
// allowed; a preflight answer cached 1800 s). The filter only adds headers: the request itself is then served
// (a preflight OPTIONS by the REST server's OPTIONS answer), so a refused origin gets no CORS headers, never an error.

import type { IncomingMessage, ServerResponse } from 'node:http';

const DEFAULT_ALLOWED_METHODS = ['GET', 'POST', 'HEAD'];
const ALLOWED_HEADERS = ['X-Requested-With', 'Content-Type', 'Accept', 'Origin'];
const SIMPLE_METHODS = ['GET', 'POST', 'HEAD'];
const PREFLIGHT_MAX_AGE_S = 1800;

export interface CorsPolicy {
  /** "*" for any origin; else origins, each exact or with "*" wildcards. */
  readonly anyOrigin: boolean;
  readonly origins: readonly RegExp[];
  readonly methods: readonly string[];
}

/** The policy of the two worker settings, or null (no cross-origin headers) when the origin setting is blank. */
export function corsPolicy(allowOrigin: string, allowMethods: string): CorsPolicy | null {
  if (allowOrigin.trim() === '') return null;
  const origins = csv(allowOrigin);
  const methods = allowMethods.trim() === '' ? DEFAULT_ALLOWED_METHODS : csv(allowMethods);
  if (origins.includes('*')) return { anyOrigin: true, origins: [], methods };
  return { anyOrigin: false, origins: origins.map(originPattern), methods };
}

/** Adds the CORS headers a request from an allowed origin gets (Jetty CrossOriginFilter.handle). */
export function applyCors(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse): void {
  const origin = header(req, 'origin');
  if (origin === undefined || isWebSocketUpgrade(req) || !originAllowed(policy, origin)) return;
  const requestedMethod = header(req, 'access-control-request-method');
  const simple = SIMPLE_METHODS.includes(req.method ?? '') && requestedMethod === undefined;
  const preflight = req.method === 'OPTIONS' && requestedMethod !== undefined;
  if (simple || !preflight) {
    allowOrigin(policy, res, origin);
    return;
  }
  // A preflight: the headers only when the method and every requested header are allowed.
  if (!policy.methods.includes(requestedMethod)) return;
  const requestedHeaders = csv(header(req, 'access-control-request-headers') ?? '');
  const allowed = ALLOWED_HEADERS.map((h) => h.toLowerCase());
  if (!requestedHeaders.every((h) => allowed.includes(h.toLowerCase()))) return;
  allowOrigin(policy, res, origin);
  res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_S));
  res.setHeader('Access-Control-Allow-Methods', policy.methods.join(','));
  res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS.join(','));
}

function allowOrigin(policy: CorsPolicy, res: ServerResponse, origin: string): void {
  res.setHeader('Access-Control-Allow-Origin', origin);
  if (!policy.anyOrigin) res.appendHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Allow-Credentials', 'true');
}

/** The Origin header may list several origins, space separated; one allowed is enough (as Jetty's). */
function originAllowed(policy: CorsPolicy, originList: string): boolean {
  if (policy.anyOrigin) return true;
  return originList
    .split(' ')
    .filter((o) => o.trim() !== '')
    .some((o) => policy.origins.some((p) => p.test(o)));
}

/** An allowed origin as Jetty matches it: exact, or with "*" for any characters (dots literal). */
function originPattern(allowed: string): RegExp {
  const escaped = allowed.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return (
    /(^|,)\s*upgrade\s*(,|$)/i.test(header(req, 'connection') ?? '') &&
    /^websocket$/i.test(header(req, 'upgrade') ?? '')
  );
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function csv(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
