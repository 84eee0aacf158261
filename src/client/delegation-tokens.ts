// Delegation tokens from the client (Kafka's Admin createDelegationToken, renewDelegationToken,
// expireDelegationToken, describeDelegationToken): any broker answers, since every broker knows every token.
// Errors come back as KafkaProtocolError (DELEGATION_TOKEN_OWNER_MISMATCH and the like).

import { ErrorCode } from '../protocol/errors.js';
import type { CreateDelegationTokenResponse } from '../protocol/messages/38-create-delegation-token.js';
import type { RenewDelegationTokenResponse } from '../protocol/messages/39-renew-delegation-token.js';
import type { ExpireDelegationTokenResponse } from '../protocol/messages/40-expire-delegation-token.js';
import type { DescribeDelegationTokenResponse } from '../protocol/messages/41-describe-delegation-token.js';
import { ApiKey } from '../protocol/registry.js';
import type { Admin } from './admin.js';
import { KafkaProtocolError } from './errors.js';

/** A token as Kafka's DelegationToken: its information and its HMAC (the password it authenticates with). */
export interface DelegationToken {
  readonly tokenId: string;
  readonly hmac: Buffer;
  /** "User:alice". */
  readonly owner: string;
  readonly tokenRequester: string;
  readonly renewers: string[];
  readonly issueTimestampMs: number;
  readonly expiryTimestampMs: number;
  readonly maxTimestampMs: number;
}

function split(principal: string): { principalType: string; principalName: string } {
  const colon = principal.indexOf(':');
  if (colon <= 0) throw new Error(`principal '${principal}' is not of the form Type:name`);
  return { principalType: principal.slice(0, colon), principalName: principal.slice(colon + 1) };
}

function check(errorCode: number): void {
  if (errorCode !== ErrorCode.NONE) throw new KafkaProtocolError(errorCode);
}

export interface CreateDelegationTokenOptions {
  /** Renewer principals ("User:bob"). */
  renewers?: string[];
  /** At most the broker's delegation.token.max.lifetime.ms; -1 (default): that maximum. */
  maxLifetimeMs?: number;
  /** Another owner than the caller (KIP-373; needs CREATE_TOKENS on that User resource). */
  owner?: string;
}

export async function createDelegationToken(
  admin: Admin,
  options: CreateDelegationTokenOptions = {},
): Promise<DelegationToken> {
  const owner = options.owner === undefined ? null : split(options.owner);
  const res = await admin.cluster.withRetry(() =>
    admin.cluster.sendAny<CreateDelegationTokenResponse>(ApiKey.CREATE_DELEGATION_TOKEN, {
      ownerPrincipalType: owner?.principalType ?? null,
      ownerPrincipalName: owner?.principalName ?? null,
      renewers: (options.renewers ?? []).map(split),
      maxLifetimeMs: BigInt(options.maxLifetimeMs ?? -1),
    }),
  );
  check(res.errorCode);
  const ownerText = `${res.principalType}:${res.principalName}`;
  return {
    tokenId: res.tokenId,
    hmac: Buffer.from(res.hmac),
    owner: ownerText,
    // Before v3 the broker does not say; the requester is then the owner.
    tokenRequester:
      res.tokenRequesterPrincipalName === ''
        ? ownerText
        : `${res.tokenRequesterPrincipalType}:${res.tokenRequesterPrincipalName}`,
    renewers: [...(options.renewers ?? [])],
    issueTimestampMs: Number(res.issueTimestampMs),
    expiryTimestampMs: Number(res.expiryTimestampMs),
    maxTimestampMs: Number(res.maxTimestampMs),
  };
}

/** Answers the new expiry timestamp. A negative period means the broker's delegation.token.expiry.time.ms. */
export async function renewDelegationToken(admin: Admin, hmac: Buffer, renewPeriodMs = -1): Promise<number> {
  const res = await admin.cluster.withRetry(() =>
    admin.cluster.sendAny<RenewDelegationTokenResponse>(ApiKey.RENEW_DELEGATION_TOKEN, {
      hmac,
      renewPeriodMs: BigInt(renewPeriodMs),
    }),
  );
  check(res.errorCode);
  return Number(res.expiryTimestampMs);
}

/** Answers the new expiry timestamp. A negative period (the default) ends the token at once. */
export async function expireDelegationToken(
  admin: Admin,
  hmac: Buffer,
  expiryTimePeriodMs = -1,
): Promise<number> {
  const res = await admin.cluster.withRetry(() =>
    admin.cluster.sendAny<ExpireDelegationTokenResponse>(ApiKey.EXPIRE_DELEGATION_TOKEN, {
      hmac,
      expiryTimePeriodMs: BigInt(expiryTimePeriodMs),
    }),
  );
  check(res.errorCode);
  return Number(res.expiryTimestampMs);
}

/** The tokens of these owners (or renewers) the caller may see; none given: every token it may see. */
export async function describeDelegationTokens(admin: Admin, owners?: string[]): Promise<DelegationToken[]> {
  const res = await admin.cluster.withRetry(() =>
    admin.cluster.sendAny<DescribeDelegationTokenResponse>(ApiKey.DESCRIBE_DELEGATION_TOKEN, {
      owners: owners === undefined || owners.length === 0 ? null : owners.map(split),
    }),
  );
  check(res.errorCode);
  return res.tokens.map((t) => {
    const owner = `${t.principalType}:${t.principalName}`;
    return {
      tokenId: t.tokenId,
      hmac: Buffer.from(t.hmac),
      owner,
      tokenRequester:
        t.tokenRequesterPrincipalName === ''
          ? owner
          : `${t.tokenRequesterPrincipalType}:${t.tokenRequesterPrincipalName}`,
      renewers: t.renewers.map((r) => `${r.principalType}:${r.principalName}`),
      issueTimestampMs: Number(t.issueTimestamp),
      expiryTimestampMs: Number(t.expiryTimestamp),
      maxTimestampMs: Number(t.maxTimestamp),
    };
  });
}
