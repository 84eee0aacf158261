// SCRAM credentials as Kafka stores them: `/config/users/<sanitized user>` in the metadata store holds
// {"version":1,"config":{"SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=4096"}}.
// The broker keeps only the stored and server keys (RFC 5802), never the password or the salted password.

import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface ScramCredential {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

/** Kafka's bounds on iterations (ScramMechanism.minIterations / maxIterations). */
export const SCRAM_ITERATIONS_MIN = 4096;
export const SCRAM_ITERATIONS_MAX = 16384;

/** The wire number of each mechanism in AlterUserScramCredentials / DescribeUserScramCredentials. */
export const SCRAM_MECHANISM_TYPES: Readonly<Record<number, ScramMechanism>> = {
  1: 'SCRAM-SHA-256',
  2: 'SCRAM-SHA-512',
};

export function hashOf(mechanism: ScramMechanism): 'sha256' | 'sha512' {
  return mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
}

export function hmac(mechanism: ScramMechanism, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(hashOf(mechanism), key).update(data).digest();
}

export function hash(mechanism: ScramMechanism, data: Buffer): Buffer {
  return createHash(hashOf(mechanism)).update(data).digest();
}

export function saltedPassword(
  mechanism: ScramMechanism,
  password: string,
  salt: Buffer,
  iterations: number,
): Buffer {
  const length = mechanism === 'SCRAM-SHA-256' ? 32 : 64;
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, length, hashOf(mechanism));
}

/** Stored and server keys from a salted password (what AlterUserScramCredentials sends). */
export function credentialFromSalted(
  mechanism: ScramMechanism,
  salt: Buffer,
  salted: Buffer,
  iterations: number,
): ScramCredential {
  const clientKey = hmac(mechanism, salted, 'Client Key');
  return {
    salt,
    storedKey: hash(mechanism, clientKey),
    serverKey: hmac(mechanism, salted, 'Server Key'),
    iterations,
  };
}

export function formatCredential(c: ScramCredential): string {
  return `salt=${c.salt.toString('base64')},stored_key=${c.storedKey.toString('base64')},server_key=${c.serverKey.toString('base64')},iterations=${c.iterations}`;
}

export function parseCredential(text: string): ScramCredential | null {
  const fields = new Map<string, string>();
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const salt = fields.get('salt');
  const storedKey = fields.get('stored_key');
  const serverKey = fields.get('server_key');
  const iterations = Number(fields.get('iterations'));
  if (
    salt === undefined ||
    storedKey === undefined ||
    serverKey === undefined ||
    !Number.isInteger(iterations)
  ) {
    return null;
  }
  return {
    salt: Buffer.from(salt, 'base64'),
    storedKey: Buffer.from(storedKey, 'base64'),
    serverKey: Buffer.from(serverKey, 'base64'),
    iterations,
  };
}

/** Kafka's Sanitizer: a user name as a store path segment (URL encoding, space as %20, '*' as %2A). */
export function sanitizeUser(name: string): string {
  return [...Buffer.from(name, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9._-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

export function desanitizeUser(segment: string): string {
  return decodeURIComponent(segment);
}

export function userConfigPath(name: string): string {
  return `/config/users/${sanitizeUser(name)}`;
}
