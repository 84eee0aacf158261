// Kafka's unsecured OAUTHBEARER validator (OAuthBearerUnsecuredValidatorCallbackHandler), for development only:
// the token is an unsigned JWS (`alg: none`, empty signature) whose claims are checked but whose origin is not.
// Anyone can mint one, so the broker logs a warning at startup on every listener that uses it. Options come from
// the listener's OAuthBearerLoginModule JAAS entry, with Kafka's names and defaults:
//
//   unsecuredValidatorPrincipalClaimName (sub), unsecuredValidatorScopeClaimName (scope),
//   unsecuredValidatorRequiredScope (space-separated, none), unsecuredValidatorAllowableClockSkewMs (0)

import { type OAuthBearerToken, TokenInvalid, type TokenValidator } from './oauthbearer.js';

export interface UnsecuredValidatorOptions {
  readonly principalClaimName: string;
  readonly scopeClaimName: string;
  readonly requiredScope: readonly string[];
  readonly allowableClockSkewMs: number;
}

/** The validator's options from JAAS options; throws Error with a message naming the option at fault. */
export function unsecuredValidatorOptions(options: ReadonlyMap<string, string>): UnsecuredValidatorOptions {
  const skewText = options.get('unsecuredValidatorAllowableClockSkewMs') ?? '0';
  const skew = Number(skewText);
  if (!/^\d+$/.test(skewText.trim()) || !Number.isSafeInteger(skew)) {
    throw new Error(`unsecuredValidatorAllowableClockSkewMs must be a non-negative integer: ${skewText}`);
  }
  const claim = (option: string, fallback: string) => {
    const value = (options.get(option) ?? fallback).trim();
    if (value === '') throw new Error(`${option} must not be blank`);
    return value;
  };
  return {
    principalClaimName: claim('unsecuredValidatorPrincipalClaimName', 'sub'),
    scopeClaimName: claim('unsecuredValidatorScopeClaimName', 'scope'),
    requiredScope: (options.get('unsecuredValidatorRequiredScope') ?? '').split(' ').filter((s) => s !== ''),
    allowableClockSkewMs: skew,
  };
}

function part(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new TokenInvalid(`the unsecured JWS ${what} is not base64url JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenInvalid(`the unsecured JWS ${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A scope claim: a space-separated string or a list of strings. */
export function scopeOf(claim: unknown): string[] | null {
  if (claim === undefined) return [];
  if (typeof claim === 'string') return claim.split(' ').filter((s) => s !== '');
  if (Array.isArray(claim) && claim.every((s) => typeof s === 'string')) return claim as string[];
  return null;
}

export class UnsecuredJwsValidator implements TokenValidator {
  constructor(
    private readonly options: UnsecuredValidatorOptions,
    private readonly nowMs: () => number = Date.now,
  ) {}

  async validate(token: string): Promise<OAuthBearerToken> {
    if (token.includes('..')) throw new TokenInvalid("Malformed compact serialization contains '..'");
    const splits = token.split('.');
    if (splits.length !== 3) throw new TokenInvalid('an unsecured JWS has three dot-separated parts');
    const header = part(splits[0] as string, 'header');
    const claims = part(splits[1] as string, 'claims');
    if (header.alg !== 'none') throw new TokenInvalid("Unsecured JWS must have 'none' for an algorithm");
    if (splits[2] !== '') throw new TokenInvalid('Unsecured JWS must not contain a digital signature');
    const { principalClaimName, scopeClaimName, requiredScope, allowableClockSkewMs } = this.options;
    const principal = claims[principalClaimName];
    if (typeof principal !== 'string' || principal.trim() === '') {
      throw new TokenInvalid(`No principal name in JWT claim: ${principalClaimName}`);
    }
    const exp = claims.exp;
    if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new TokenInvalid('No expiration time in JWT');
    const iat = claims.iat;
    if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat))) {
      throw new TokenInvalid('The iat claim is not a number');
    }
    const now = this.nowMs();
    const expiresAtMs = Math.round(exp * 1000);
    if (typeof iat === 'number' && iat * 1000 > now + allowableClockSkewMs) {
      throw new TokenInvalid('The indicated time is in the future (iat)');
    }
    if (now >= expiresAtMs + allowableClockSkewMs) throw new TokenInvalid('The token has expired (exp)');
    if (typeof iat === 'number' && expiresAtMs <= iat * 1000) {
      throw new TokenInvalid('The expiration time is not after the issued-at time');
    }
    const scope = scopeOf(claims[scopeClaimName]);
    if (scope === null) throw new TokenInvalid(`The ${scopeClaimName} claim is neither a string nor a list`);
    const missing = requiredScope.filter((s) => !scope.includes(s));
    if (missing.length > 0) {
      throw new TokenInvalid(
        `The token lacks the required scope ${missing.join(' ')}`,
        'insufficient_scope',
        requiredScope.join(' '),
      );
    }
    return { principalName: principal, expiresAtMs, scope };
  }
}
