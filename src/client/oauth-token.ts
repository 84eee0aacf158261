// OAUTHBEARER token providers for SaslOptions.token, as Kafka's login callback handlers get tokens:
//
// - clientCredentialsTokenProvider: the OAuth 2 client credentials grant against a token endpoint (Kafka's
//   OAuthBearerLoginCallbackHandler with sasl.oauthbearer.token.endpoint.url), or a file: URL whose file holds the
//   token. A token is reused until shortly before it expires, so re-authentications do not ask for a new one
//   each time.
// - unsecuredTokenProvider: an unsigned JWS (`alg: none`) naming the principal, for a development broker running
//   Kafka's unsecured validator (Kafka's OAuthBearerUnsecuredLoginCallbackHandler).

import { readFile } from 'node:fs/promises';
import { ConnectionError } from './errors.js';

/** Settings of the OAuth client credentials grant for SASL/OAUTHBEARER (Kafka's sasl.oauthbearer.* keys). */
export interface ClientCredentialsOptions {
  /** sasl.oauthbearer.token.endpoint.url: https:, http:, or file: (a file holding the token). */
  tokenEndpointUrl: string;
  /** The JAAS options clientId and clientSecret. */
  clientId?: string;
  clientSecret?: string;
  /** The JAAS option scope: sent as the scope form field when set. */
  scope?: string;
  /** A token is fetched again once it has less than this left (default 60000, or half its lifetime if shorter). */
  refreshBufferMs?: number;
  /** How long a token request may take (default 10000). */
  requestTimeoutMs?: number;
}

/** The exp claim of a compact JWT, in epoch ms, or null when it has none readable. */
export function jwtExpiresAtMs(token: string): number | null {
  const payload = token.split('.')[1];
  if (payload === undefined) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

/** Kafka's form encoding of client credentials in the Basic authorization header. */
function basicAuthorization(clientId: string, clientSecret: string): string {
  const credentials = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}

async function requestToken(
  options: ClientCredentialsOptions,
): Promise<{ token: string; expiresAtMs: number | null }> {
  const url = new URL(options.tokenEndpointUrl);
  if (url.protocol === 'file:') {
    const token = (await readFile(url, 'utf8')).trim();
    return { token, expiresAtMs: jwtExpiresAtMs(token) };
  }
  if (options.clientId === undefined || options.clientSecret === undefined) {
    throw new ConnectionError('OAUTHBEARER: the client credentials grant needs clientId and clientSecret');
  }
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (options.scope !== undefined) form.set('scope', options.scope);
  const requestedAtMs = Date.now();
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: basicAuthorization(options.clientId, options.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
      signal: AbortSignal.timeout(options.requestTimeoutMs ?? 10_000),
    });
  } catch (err) {
    throw new ConnectionError(
      `OAUTHBEARER: token request to ${url.origin} failed: ${(err as Error).message}`,
    );
  }
  const body = await response.text();
  if (!response.ok) {
    throw new ConnectionError(
      `OAUTHBEARER: token endpoint answered ${response.status}: ${body.slice(0, 200)}`,
    );
  }
  let parsed: { access_token?: unknown; expires_in?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    throw new ConnectionError('OAUTHBEARER: the token endpoint did not answer JSON');
  }
  if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
    throw new ConnectionError('OAUTHBEARER: the token endpoint answer has no access_token');
  }
  const expiresIn = typeof parsed.expires_in === 'number' ? requestedAtMs + parsed.expires_in * 1000 : null;
  return { token: parsed.access_token, expiresAtMs: jwtExpiresAtMs(parsed.access_token) ?? expiresIn };
}

/** A token function that fetches with client credentials and reuses the token until it is about to expire. */
export function clientCredentialsTokenProvider(options: ClientCredentialsOptions): () => Promise<string> {
  let current: { token: string; refreshAtMs: number } | null = null;
  let inFlight: Promise<string> | null = null;
  const refreshBufferMs = options.refreshBufferMs ?? 60_000;
  return () => {
    if (current !== null && Date.now() < current.refreshAtMs) return Promise.resolve(current.token);
    // Concurrent connections share one token request.
    inFlight ??= requestToken(options)
      .then(({ token, expiresAtMs }) => {
        const now = Date.now();
        const lifetimeMs = expiresAtMs === null ? 0 : expiresAtMs - now;
        const refreshAtMs = now + Math.max(0, lifetimeMs - Math.min(refreshBufferMs, lifetimeMs / 2));
        current = { token, refreshAtMs };
        return token;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
}

/** Claims of an unsecured (unsigned) token, for development brokers running Kafka's unsecured validator. */
export interface UnsecuredTokenOptions {
  /** The principal's name, in the principal claim. */
  principal: string;
  /** unsecuredLoginPrincipalClaimName (default sub). */
  principalClaimName?: string;
  /** unsecuredLoginLifetimeSeconds, in ms (default 3600000). */
  lifetimeMs?: number;
  /** Scope claim value(s), under unsecuredLoginScopeClaimName (default scope). */
  scope?: string[];
  scopeClaimName?: string;
  /** Further claims (unsecuredLoginStringClaim_<name> and the like). */
  claims?: Record<string, unknown>;
}

/** An unsigned JWS naming the principal, minted afresh at each call (Kafka's unsecured login). */
export function unsecuredToken(options: UnsecuredTokenOptions): string {
  const nowSeconds = Date.now() / 1000;
  const claims: Record<string, unknown> = {
    ...options.claims,
    iat: nowSeconds,
    exp: nowSeconds + (options.lifetimeMs ?? 3_600_000) / 1000,
    [options.principalClaimName ?? 'sub']: options.principal,
  };
  if (options.scope !== undefined) claims[options.scopeClaimName ?? 'scope'] = options.scope;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return `${encode({ alg: 'none' })}.${encode(claims)}.`;
}

/**
 * A token function for `sasl: { mechanism: 'oauthbearer', token }` that mints a fresh unsecured token at each
 * authentication.
 */
export function unsecuredTokenProvider(options: UnsecuredTokenOptions): () => string {
  return () => unsecuredToken(options);
}

/**
 * A token function from the options of an OAuthBearerLoginModule JAAS entry, as Kafka's login handlers read them:
 * with a token endpoint, the client credentials grant (clientId, clientSecret, scope); without one, Kafka's unsecured
 * login (unsecuredLoginStringClaim_<name>, unsecuredLoginNumberClaim_<name>, unsecuredLoginListClaim_<name>,
 * unsecuredLoginPrincipalClaimName, unsecuredLoginLifetimeSeconds). Throws an Error saying what is missing.
 */
export function tokenProviderFromJaas(
  options: ReadonlyMap<string, string>,
  tokenEndpointUrl: string | null,
): () => string | Promise<string> {
  if (tokenEndpointUrl !== null) {
    return clientCredentialsTokenProvider({
      tokenEndpointUrl,
      clientId: options.get('clientId'),
      clientSecret: options.get('clientSecret'),
      scope: options.get('scope'),
    });
  }
  const principalClaimName = options.get('unsecuredLoginPrincipalClaimName') ?? 'sub';
  const claims: Record<string, unknown> = {};
  for (const [key, value] of options) {
    const [kind, name] = key.split('_', 2) as [string, string | undefined];
    if (name === undefined || name === '') continue;
    if (kind === 'unsecuredLoginStringClaim') claims[name] = value;
    else if (kind === 'unsecuredLoginNumberClaim') claims[name] = Number(value);
    // Kafka: the first character of a list claim is the separator of the values that follow.
    else if (kind === 'unsecuredLoginListClaim') claims[name] = value.slice(1).split(value[0] ?? ',');
  }
  const principal = claims[principalClaimName];
  if (typeof principal !== 'string' || principal === '') {
    throw new Error(
      `OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url, or an unsecured token with unsecuredLoginStringClaim_${principalClaimName}`,
    );
  }
  const lifetimeSeconds = Number(options.get('unsecuredLoginLifetimeSeconds') ?? '3600');
  return unsecuredTokenProvider({
    principal,
    principalClaimName,
    lifetimeMs: lifetimeSeconds * 1000,
    claims,
  });
}
