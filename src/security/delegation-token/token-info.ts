// A delegation token (KIP-48) as Kafka describes one (TokenInformation) and stores it in ZooKeeper: the JSON of
// /delegation_token/tokens/<tokenId>, version 3, with principals sanitized as Kafka's Sanitizer does
// ("User:alice" is "User%3Aalice"). The token's secret part, its HMAC, is never stored: every broker computes it
// from the token id and delegation.token.secret.key (HMAC-SHA512), which is why the key must be the same on all.

import { createHmac, randomUUID } from 'node:crypto';
import { desanitizeUser, sanitizeUser } from '../sasl/scram-credential.js';

export interface TokenInformation {
  readonly tokenId: string;
  /** "User:alice". */
  readonly owner: string;
  /** Who asked for the token (KIP-373: may differ from the owner). */
  readonly tokenRequester: string;
  readonly renewers: readonly string[];
  readonly issueTimestampMs: number;
  readonly maxTimestampMs: number;
  /** Moves with each renewal (and expiry request), never past maxTimestampMs. */
  readonly expiryTimestampMs: number;
}

/** The version Kafka 3.3+ writes (with tokenRequester); versions 1 and 2 are read too. */
export const TOKEN_JSON_VERSION = 3;

/** Kafka's CoreUtils.generateUuidAsBase64: a random UUID's 16 bytes, URL-safe base64 without padding (22 chars). */
export function newTokenId(): string {
  return Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
}

/** HMAC-SHA512 of the token id's UTF-8 bytes, keyed with the secret's UTF-8 bytes, as Kafka's createHmac. */
export function tokenHmac(tokenId: string, secretKey: string): Buffer {
  return createHmac('sha512', Buffer.from(secretKey, 'utf8')).update(tokenId, 'utf8').digest();
}

/** Owners, requesters and renewers may describe a token (Kafka's TokenInformation.ownerOrRenewer). */
export function ownerOrRenewer(token: TokenInformation, principal: string): boolean {
  return (
    token.owner === principal || token.tokenRequester === principal || token.renewers.includes(principal)
  );
}

/** Only the owner and the renewers may renew or expire a token (Kafka's allowedToRenew). */
export function allowedToRenew(token: TokenInformation, principal: string): boolean {
  return token.owner === principal || token.renewers.includes(principal);
}

/** The name part of "Type:name" (the first colon splits, as Kafka's SecurityUtils.parseKafkaPrincipal). */
export function principalName(principal: string): string {
  const colon = principal.indexOf(':');
  return colon < 0 ? principal : principal.slice(colon + 1);
}

export function principalType(principal: string): string {
  const colon = principal.indexOf(':');
  return colon < 0 ? '' : principal.slice(0, colon);
}

export function encodeToken(token: TokenInformation): Uint8Array {
  return Buffer.from(
    JSON.stringify({
      version: TOKEN_JSON_VERSION,
      owner: sanitizeUser(token.owner),
      tokenRequester: sanitizeUser(token.tokenRequester),
      renewers: token.renewers.map(sanitizeUser),
      issueTimestamp: token.issueTimestampMs,
      maxTimestamp: token.maxTimestampMs,
      expiryTimestamp: token.expiryTimestampMs,
      tokenId: token.tokenId,
    }),
    'utf8',
  );
}

function isPrincipal(value: unknown): value is string {
  return typeof value === 'string' && value.includes(':');
}

/** A stored token, or null when the data is not a token Kafka would read (logged by the caller). */
export function decodeToken(data: Uint8Array): TokenInformation | null {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null) return null;
  const version = doc.version;
  if (typeof version !== 'number' || version < 1 || version > TOKEN_JSON_VERSION) return null;
  const text = (v: unknown) => (typeof v === 'string' ? safeDesanitize(v) : null);
  const owner = text(doc.owner);
  const requester = version >= 3 ? text(doc.tokenRequester) : owner;
  const renewers = Array.isArray(doc.renewers) ? doc.renewers.map(text) : null;
  const times = [doc.issueTimestamp, doc.maxTimestamp, doc.expiryTimestamp];
  if (
    !isPrincipal(owner) ||
    !isPrincipal(requester) ||
    renewers === null ||
    !renewers.every(isPrincipal) ||
    typeof doc.tokenId !== 'string' ||
    doc.tokenId === '' ||
    !times.every((t) => typeof t === 'number' && Number.isSafeInteger(t))
  ) {
    return null;
  }
  return {
    tokenId: doc.tokenId,
    owner,
    tokenRequester: requester,
    renewers: renewers as string[],
    issueTimestampMs: doc.issueTimestamp as number,
    maxTimestampMs: doc.maxTimestamp as number,
    expiryTimestampMs: doc.expiryTimestamp as number,
  };
}

function safeDesanitize(value: string): string | null {
  try {
    return desanitizeUser(value);
  } catch {
    return null;
  }
}
