// Signed requests between workers (Kafka's `sessioned` Connect protocol, KIP-507): the leader keeps a session key in
// the config topic (`session-key` {"key": <base64>, "algorithm": "HmacSHA256", "creation-timestamp": <ms>}) and
// replaces it every inter.worker.key.ttl.ms; a worker sending an internal request (task configs to the leader, a
// zombie fencing request) signs its body with that key: `X-Connect-Authorization` is the base64 HMAC of the body,
// `X-Connect-Request-Signature-Algorithm` the Java name of the MAC. The leader refuses an internal request without
// a signature or with an algorithm it does not verify with (400) and one whose signature does not match (403).
// HMAC comes from node:crypto; the Java algorithm names map to node's digests.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { RestError } from '../../errors.js';

export const SIGNATURE_HEADER = 'X-Connect-Authorization';
export const SIGNATURE_ALGORITHM_HEADER = 'X-Connect-Request-Signature-Algorithm';

/** Java's Mac / KeyGenerator names, with their node digest and Java's default key size in bytes. */
const HMACS: Record<string, { digest: string; keyBytes: number }> = {
  HmacSHA1: { digest: 'sha1', keyBytes: 64 },
  HmacSHA224: { digest: 'sha224', keyBytes: 28 },
  HmacSHA256: { digest: 'sha256', keyBytes: 32 },
  HmacSHA384: { digest: 'sha384', keyBytes: 48 },
  HmacSHA512: { digest: 'sha512', keyBytes: 64 },
};

export function supportedAlgorithm(name: string): boolean {
  return Object.hasOwn(HMACS, name);
}

export interface SessionKey {
  key: Buffer;
  algorithm: string;
  creationTimestamp: number;
}

/** A new random key for the algorithm; `sizeBits` null for Java's default size. */
export function generateSessionKey(algorithm: string, sizeBits: number | null, now: number): SessionKey {
  const hmac = HMACS[algorithm];
  if (hmac === undefined) throw new Error(`Unsupported key generation algorithm ${algorithm}`);
  const bytes = sizeBits === null ? hmac.keyBytes : Math.ceil(sizeBits / 8);
  return { key: randomBytes(bytes), algorithm, creationTimestamp: now };
}

export function sign(key: Buffer, algorithm: string, body: Buffer): string {
  const hmac = HMACS[algorithm];
  if (hmac === undefined) throw new Error(`Unsupported signature algorithm ${algorithm}`);
  return createHmac(hmac.digest, key).update(body).digest('base64');
}

/** The headers of a signed internal request. */
export function signatureHeaders(key: SessionKey, algorithm: string, body: Buffer): Record<string, string> {
  return { [SIGNATURE_HEADER]: sign(key.key, algorithm, body), [SIGNATURE_ALGORITHM_HEADER]: algorithm };
}

export interface RequestSignature {
  /** The X-Connect-Authorization header, or undefined when absent. */
  signature: string | undefined;
  algorithm: string | undefined;
  body: Buffer;
}

/**
 * Checks an internal request as Kafka's leader does; throws Kafka's 400 or 403. `key` null: this worker has no
 * session key yet, so no signature can be checked (Kafka answers that with a 400-class refusal too).
 */
export function verify(
  request: RequestSignature,
  key: SessionKey | null,
  verificationAlgorithms: string[],
): void {
  if (request.signature === undefined || request.algorithm === undefined)
    throw new RestError(400, 'Internal request missing required signature');
  if (!verificationAlgorithms.includes(request.algorithm)) {
    throw new RestError(
      400,
      `This worker does not support the '${request.algorithm}' key signing algorithm used by other workers. This worker is currently configured to use: [${verificationAlgorithms.join(', ')}]. Check that all workers' configuration files permit the same set of signature algorithms, and correct any misconfigured worker and restart it.`,
    );
  }
  if (key === null) throw new RestError(400, 'Internal request cannot be verified: no session key yet');
  const expected = Buffer.from(sign(key.key, request.algorithm, request.body), 'base64');
  const given = Buffer.from(request.signature, 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new RestError(403, 'Internal request contained invalid signature.');
}
