// Master key providers: where the keys that wrap Brook's key-encryption keys live. One interface, three
// implementations (a local key file, an environment variable, an external key service over HTTP), chosen by
// brook.encryption.key.provider. A provider never sees record data: it only wraps and unwraps 32-byte keys.
//
// Local keys (file, env) are text: entries separated by newlines or commas, each `<id>:<key>` or a bare
// `<key>`, the key a 256-bit value written as 64 hex digits or as base64. A bare key's id is its fingerprint
// (`fp-` and 16 hex digits of SHA-256 of the key), so a different key under the same place never passes for the
// old one. The LAST entry is the current key: new wraps use it, the others only unwrap (rotation appends a line).
// Local wraps are AES-256-GCM with a random 96-bit IV, the key id as additional data: iv(12) ct tag(16).

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** A wrapped key and the id of the master key that wrapped it. */
export interface WrappedKey {
  readonly keyId: string;
  readonly wrapped: Buffer;
}

export interface MasterKeyProvider {
  /** What the provider is, for messages ("key file /etc/brook/master.key"). */
  readonly description: string;
  /** Wraps `plaintext` with the provider's current master key. */
  wrap(plaintext: Buffer): Promise<WrappedKey>;
  /** Unwraps with master key `keyId`; rejects with MasterKeyError when the key is unknown or the bytes wrong. */
  unwrap(keyId: string, wrapped: Buffer): Promise<Buffer>;
  /** Re-reads the keys where that means something (a key file); resolves with nothing to say otherwise. */
  refresh(): Promise<void>;
  /** The ids of the keys it holds, or null when it cannot tell (a key service). */
  keyIds(): readonly string[] | null;
}

/** A master key is missing, malformed or wrong: a configuration error, never a bug. */
export class MasterKeyError extends Error {
  override readonly name = 'MasterKeyError';
}

export const MASTER_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** Parses key text (see the file header) into id → key, in order; the last is current. */
export function parseMasterKeys(text: string, where: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const raw of text.split(/[\n,]/)) {
    const entry = raw.trim();
    if (entry === '' || entry.startsWith('#')) continue;
    const colon = entry.indexOf(':');
    const id = colon >= 0 ? entry.slice(0, colon).trim() : null;
    const key = decodeKey(colon >= 0 ? entry.slice(colon + 1).trim() : entry, where);
    const keyId = id ?? fingerprint(key);
    if (!KEY_ID_PATTERN.test(keyId)) {
      throw new MasterKeyError(`${where}: key id '${keyId}' is not 1-64 characters of [A-Za-z0-9._-]`);
    }
    // Re-adding moves the entry last, so a repeated id is the current key as written.
    keys.delete(keyId);
    keys.set(keyId, key);
  }
  if (keys.size === 0) throw new MasterKeyError(`${where} holds no master key`);
  return keys;
}

function decodeKey(text: string, where: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    const key = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    if (key.length === MASTER_KEY_BYTES) return key;
  }
  throw new MasterKeyError(`${where}: a master key must be 256 bits, as 64 hex digits or base64`);
}

export function fingerprint(key: Buffer): string {
  return `fp-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** Wrapping with keys held in memory: the file and env providers. */
export abstract class LocalKeyProvider implements MasterKeyProvider {
  protected keys = new Map<string, Buffer>();
  /** Keys dropped from the source while still needed: kept so that what they wrap stays readable. */
  private readonly retained = new Map<string, Buffer>();

  abstract readonly description: string;
  abstract refresh(): Promise<void>;

  protected replaceKeys(next: Map<string, Buffer>): void {
    for (const [id, key] of this.keys) if (!next.has(id)) this.retained.set(id, key);
    for (const id of next.keys()) this.retained.delete(id);
    this.keys = next;
  }

  keyIds(): readonly string[] {
    return [...this.keys.keys()];
  }

  /** Forgets a key removed from the source once nothing depends on it (see KeyStore's retirement check). */
  forgetRetained(keyId: string): void {
    this.retained.delete(keyId);
  }

  async wrap(plaintext: Buffer): Promise<WrappedKey> {
    const keyId = [...this.keys.keys()].at(-1)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(keyId)!, iv);
    cipher.setAAD(Buffer.from(keyId));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { keyId, wrapped: Buffer.concat([iv, body, cipher.getAuthTag()]) };
  }

  async unwrap(keyId: string, wrapped: Buffer): Promise<Buffer> {
    const key = this.keys.get(keyId) ?? this.retained.get(keyId);
    if (key === undefined) throw new MasterKeyError(`${this.description} has no master key '${keyId}'`);
    if (wrapped.length < IV_BYTES + TAG_BYTES) throw new MasterKeyError(`wrapped key too short`);
    const decipher = createDecipheriv('aes-256-gcm', key, wrapped.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(keyId));
    decipher.setAuthTag(wrapped.subarray(wrapped.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(wrapped.subarray(IV_BYTES, wrapped.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new MasterKeyError(
        `master key '${keyId}' of ${this.description} does not unwrap this key (wrong key)`,
      );
    }
  }
}
