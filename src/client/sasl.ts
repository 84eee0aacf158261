// The client side of SASL: SaslHandshake v1 then SaslAuthenticate, with PLAIN (RFC 4616) or SCRAM-SHA-256/512
// (RFC 5802, RFC 7677). Run once per connection, after ApiVersions and before any other request.

import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ApiKey } from '../protocol/registry.js';
import { ConnectionError } from './errors.js';
import type { SaslOptions } from './options.js';

/** What the SASL exchange needs of a connection: one request, one response. */
export type SaslRequest = <T>(apiKey: number, body: unknown) => Promise<T>;

interface AuthenticateResponse {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
}

function saslName(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

async function exchange(request: SaslRequest, token: Buffer): Promise<Buffer> {
  const res = await request<AuthenticateResponse>(ApiKey.SASL_AUTHENTICATE, { authBytes: token });
  if (res.errorCode !== ErrorCode.NONE) {
    throw new ConnectionError(
      `SASL authentication failed: ${errorName(res.errorCode)}: ${res.errorMessage ?? ''}`,
    );
  }
  return res.authBytes;
}

async function scram(request: SaslRequest, sasl: SaslOptions, hash: 'sha256' | 'sha512'): Promise<void> {
  const clientNonce = randomBytes(24).toString('base64url');
  const firstBare = `n=${saslName(sasl.username)},r=${clientNonce}`;
  const serverFirst = (await exchange(request, Buffer.from(`n,,${firstBare}`))).toString('utf8');
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
    await exchange(request, Buffer.from(`${finalWithoutProof},p=${proof.toString('base64')}`))
  ).toString('utf8');
  const expected = hmac(hmac(salted, 'Server Key'), authMessage);
  const verifier = Buffer.from(serverFinal.startsWith('v=') ? serverFinal.slice(2) : '', 'base64');
  if (verifier.length !== expected.length || !timingSafeEqual(verifier, expected)) {
    throw new ConnectionError('SASL authentication failed: the broker did not prove it knows the credential');
  }
}

export async function authenticate(request: SaslRequest, sasl: SaslOptions): Promise<void> {
  const mechanism = sasl.mechanism.toUpperCase();
  const handshake = await request<{ errorCode: number; mechanisms: string[] }>(ApiKey.SASL_HANDSHAKE, {
    mechanism,
  });
  if (handshake.errorCode !== ErrorCode.NONE) {
    throw new ConnectionError(
      `SASL handshake failed: ${errorName(handshake.errorCode)} (the broker offers ${handshake.mechanisms.join(', ')})`,
    );
  }
  if (mechanism === 'PLAIN') {
    await exchange(request, Buffer.from(`\0${sasl.username}\0${sasl.password}`, 'utf8'));
    return;
  }
  await scram(request, sasl, mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512');
}
