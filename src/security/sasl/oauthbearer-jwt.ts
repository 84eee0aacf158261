// Signed OAUTHBEARER tokens (KIP-768), as Kafka's OAuthBearerValidatorCallbackHandler checks them: a JWT signed by
// a key of the JWKS at sasl.oauthbearer.jwks.endpoint.url (https:, http: or a file: URL), with exp and iat
// required, the expected audience and issuer when configured, sasl.oauthbearer.clock.skew.seconds of tolerance,
// the principal in sasl.oauthbearer.sub.claim.name and the scope in sasl.oauthbearer.scope.claim.name.
// Signatures and claims are checked by jose; nothing cryptographic is written here.
//
// What an unauthenticated peer can make the broker do is bounded: a token naming a key id the cached JWKS lacks
// makes jose fetch the JWKS again at most once per cooldown (sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms),
// each fetch has a timeout, and tokens are at most sasl.server.max.receive.size bytes. Only asymmetric
// algorithms are accepted: a JWKS is public, so an HMAC key in it would let anyone sign.

import { readFileSync } from 'node:fs';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { type OAuthBearerToken, TokenInvalid, type TokenValidator } from './oauthbearer.js';
import { scopeOf } from './oauthbearer-unsecured.js';

export interface JwtValidatorOptions {
  readonly jwksEndpointUrl: string;
  /** sasl.oauthbearer.jwks.endpoint.refresh.ms: how long a fetched JWKS is used before it is fetched again. */
  readonly jwksRefreshMs: number;
  /** sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms: least time between fetches for an unknown key id. */
  readonly jwksCooldownMs: number;
  readonly expectedAudience: readonly string[];
  readonly expectedIssuer: string | null;
  readonly clockSkewSeconds: number;
  readonly scopeClaimName: string;
  readonly subClaimName: string;
}

const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
/** A JWKS fetch that has not answered in this long fails the authentication waiting for it. */
const JWKS_FETCH_TIMEOUT_MS = 5000;

/** The key set of a JWKS URL; a file is read now, and a bad one throws an Error saying what is wrong. */
export function jwksKeys(options: JwtValidatorOptions): JWTVerifyGetKey {
  let url: URL;
  try {
    url = new URL(options.jwksEndpointUrl);
  } catch {
    throw new Error(`not a URL: ${options.jwksEndpointUrl}`);
  }
  if (url.protocol === 'file:') {
    let jwks: JSONWebKeySet;
    try {
      jwks = JSON.parse(readFileSync(url, 'utf8')) as JSONWebKeySet;
    } catch (err) {
      throw new Error(`cannot read the JWKS file ${url.pathname}: ${(err as Error).message}`);
    }
    if (!Array.isArray(jwks?.keys)) throw new Error(`the JWKS file ${url.pathname} has no "keys" list`);
    return createLocalJWKSet(jwks);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`the JWKS URL must be https:, http: or file:, not ${url.protocol}`);
  }
  return createRemoteJWKSet(url, {
    cacheMaxAge: options.jwksRefreshMs,
    cooldownDuration: options.jwksCooldownMs,
    timeoutDuration: JWKS_FETCH_TIMEOUT_MS,
  });
}

export class JwtValidator implements TokenValidator {
  private readonly keys: JWTVerifyGetKey;

  constructor(private readonly options: JwtValidatorOptions) {
    this.keys = jwksKeys(options);
  }

  async validate(token: string): Promise<OAuthBearerToken> {
    const { expectedAudience, expectedIssuer, clockSkewSeconds, subClaimName, scopeClaimName } = this.options;
    let payload: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, this.keys, {
        algorithms: ALGORITHMS,
        clockTolerance: clockSkewSeconds,
        requiredClaims: ['exp', 'iat'],
        ...(expectedAudience.length > 0 ? { audience: [...expectedAudience] } : {}),
        ...(expectedIssuer !== null ? { issuer: expectedIssuer } : {}),
      });
      payload = verified.payload as Record<string, unknown>;
    } catch (err) {
      throw new TokenInvalid(`Could not validate the access token: ${(err as Error).message}`);
    }
    const sub = payload[subClaimName];
    if (typeof sub !== 'string' || sub.trim() === '') {
      throw new TokenInvalid(`${subClaimName} value must be a non-blank string`);
    }
    const scope = scopeOf(payload[scopeClaimName]);
    if (scope === null || new Set(scope).size !== scope.length) {
      throw new TokenInvalid(`${scopeClaimName} value must be a list of distinct strings or a string`);
    }
    return { principalName: sub.trim(), expiresAtMs: (payload.exp as number) * 1000, scope };
  }
}
