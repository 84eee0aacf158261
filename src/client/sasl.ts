// The client side of SASL: SaslHandshake v1 then SaslAuthenticate, with PLAIN (RFC 4616), SCRAM-SHA-256/512
// (RFC 5802, RFC 7677) or OAUTHBEARER (RFC 7628). Run after ApiVersions and before any other request, and again on
// the same connection before the session lifetime the broker answered runs out (KIP-368 re-authentication).

import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ApiKey } from '../protocol/registry.js';
import { ConnectionError } from './errors.js';
import type { OAuthBearerSaslOptions, PasswordSaslOptions, SaslOptions } from './options.js';

/** What the SASL exchange needs of a connection: one request, one response. */
export type SaslRequest = <T>(apiKey: number, body: unknown) => Promise<T>;

interface AuthenticateResponse {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
  sessionLifetimeMs: bigint;
}

/** What an authentication leaves: the session lifetime the broker granted, 0 when it does not expire. */
export interface SaslSession {
  readonly sessionLifetimeMs: number;
}

function saslName(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

/** Per authentication: the last SaslAuthenticate response's session lifetime. */
class Exchange {
  sessionLifetimeMs = 0;
  constructor(private readonly request: SaslRequest) {}

  async send(token: Buffer): Promise<Buffer> {
    const res = await this.request<AuthenticateResponse>(ApiKey.SASL_AUTHENTICATE, { authBytes: token });
    if (res.errorCode !== ErrorCode.NONE) {
      throw new ConnectionError(
        `SASL authentication failed: ${errorName(res.errorCode)}: ${res.errorMessage ?? ''}`,
      );
    }
    this.sessionLifetimeMs = Number(res.sessionLifetimeMs);
    return res.authBytes;
  }
}

const EXTENSION_KEY = /^[A-Za-z]+$/;
const EXTENSION_VALUE = /^[\x21-\x7E \t\r\n]+$/;

/** RFC 7628 client-first message: `n,,^Aauth=Bearer <token>^A[key=value^A...]^A`. */
export function oauthBearerClientFirst(token: string, extensions: Record<string, string> = {}): Buffer {
  let kv = '';
  for (const [key, value] of Object.entries(extensions)) {
    if (key === 'auth' || !EXTENSION_KEY.test(key) || !EXTENSION_VALUE.test(value)) {
      throw new ConnectionError(`SASL/OAUTHBEARER extension ${key} is not a valid key=value pair`);
    }
    kv += `${key}=${value}\x01`;
  }
  return Buffer.from(`n,,\x01auth=Bearer ${token}\x01${kv}\x01`, 'utf8');
}

async function oauthBearer(exchange: Exchange, sasl: OAuthBearerSaslOptions): Promise<void> {
  const token = await sasl.token();
  const challenge = await exchange.send(oauthBearerClientFirst(token, sasl.extensions));
  if (challenge.length > 0) {
    // An error challenge ({"status":"invalid_token"}); RFC 7628 has the client answer 0x01, and the broker then
    // fails the authentication. Should it not, the client fails it anyway.
    await exchange.send(Buffer.from([0x01]));
    throw new ConnectionError(`SASL authentication failed: ${challenge.toString('utf8')}`);
  }
}

async function scram(
  exchange: Exchange,
  sasl: PasswordSaslOptions,
  hash: 'sha256' | 'sha512',
): Promise<void> {
  const clientNonce = randomBytes(24).toString('base64url');
  // Kafka's extension for delegation tokens goes after the nonce, in the bare message the proof covers.
  const extensions = sasl.tokenauth === true ? ',tokenauth=true' : '';
  const firstBare = `n=${saslName(sasl.username)},r=${clientNonce}${extensions}`;
  const serverFirst = (await exchange.send(Buffer.from(`n,,${firstBare}`))).toString('utf8');
  const attrs = new Map(serverFirst.split(',').map((a) => [a[0], a.slice(2)]));
  const nonce = attrs.get('r') ?? '';
  const salt = Buffer.from(attrs.get('s') ?? '', 'base64');
  const iterations = Number(attrs.get('i'));
  if (!nonce.startsWith(clientNonce) || !Number.isInteger(iterations) || iterations < 1) {
    throw new ConnectionError('SASL authentication failed: bad SCRAM server-first message');
  }
  const hmac = (key: Buffer, data: string) => createHmac(hash, key).update(data).digest();
  const salted = pbkdf2Sync(
    Buffer.from(sasl.password, 'utf8'),
    salt,
    iterations,
    hash === 'sha256' ? 32 : 64,
    hash,
  );
  const clientKey = hmac(salted, 'Client Key');
  const storedKey = createHash(hash).update(clientKey).digest();
  const finalWithoutProof = `c=biws,r=${nonce}`;
  const authMessage = `${firstBare},${serverFirst},${finalWithoutProof}`;
  const signature = hmac(storedKey, authMessage);
  const proof = Buffer.from(clientKey.map((b, i) => b ^ (signature[i] as number)));
  const serverFinal = (
    await exchange.send(Buffer.from(`${finalWithoutProof},p=${proof.toString('base64')}`))
  ).toString('utf8');
  const expected = hmac(hmac(salted, 'Server Key'), authMessage);
  const verifier = Buffer.from(serverFinal.startsWith('v=') ? serverFinal.slice(2) : '', 'base64');
  if (verifier.length !== expected.length || !timingSafeEqual(verifier, expected)) {
    throw new ConnectionError('SASL authentication failed: the broker did not prove it knows the credential');
  }
}

export async function authenticate(request: SaslRequest, sasl: SaslOptions): Promise<SaslSession> {
  const mechanism = sasl.mechanism.toUpperCase();
  const handshake = await request<{ errorCode: number; mechanisms: string[] }>(ApiKey.SASL_HANDSHAKE, {
    mechanism,
  });
  if (handshake.errorCode !== ErrorCode.NONE) {
    throw new ConnectionError(
      `SASL handshake failed: ${errorName(handshake.errorCode)} (the broker offers ${handshake.mechanisms.join(', ')})`,
    );
  }
  const exchange = new Exchange(request);
  if (sasl.mechanism === 'oauthbearer') await oauthBearer(exchange, sasl);
  else if (sasl.mechanism === 'plain') {
    await exchange.send(Buffer.from(`\0${sasl.username}\0${sasl.password}`, 'utf8'));
  } else await scram(exchange, sasl, sasl.mechanism === 'scram-sha-256' ? 'sha256' : 'sha512');
  return { sessionLifetimeMs: exchange.sessionLifetimeMs };
}
