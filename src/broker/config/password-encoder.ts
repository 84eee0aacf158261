// Dynamic password configs in the metadata store, encrypted as Kafka's PasswordEncoder writes them in ZooKeeper
// mode: a key derived from password.encoder.secret with PBKDF2 (a fresh 256-byte salt per value) encrypts the
// value with password.encoder.cipher.algorithm, and the stored text is Kafka's CSV map of everything needed to
// decrypt it: keyFactoryAlgorithm, cipherAlgorithm, keyLength, salt, iterations, encryptedPassword, passwordLength
// and initializationVector (with authenticationTagLength for GCM). The parameters come from the stored value
// when decoding, so a value encoded under other settings still decodes.
//
// Crypto from node:crypto only: pbkdf2Sync and AES-CBC / AES-GCM ciphers.

import { createCipheriv, createDecipheriv, pbkdf2Sync, randomBytes } from 'node:crypto';
import { ConfigError } from './config-error.js';

const SALT_BYTES = 256;
const GCM_TAG_BITS = 128;

/** Kafka's password.encoder.* settings (its defaults when unset). */
export interface PasswordEncoderSettings {
  readonly secret: string;
  /** null: PBKDF2WithHmacSHA512, as Kafka where the JVM has it. */
  readonly keyFactoryAlgorithm: string | null;
  readonly cipherAlgorithm: string;
  /** Bits. */
  readonly keyLength: number;
  readonly iterations: number;
}

export const PASSWORD_ENCODER_DEFAULTS = {
  cipherAlgorithm: 'AES/CBC/PKCS5Padding',
  keyLength: 128,
  iterations: 4096,
} as const;

const DIGESTS: Readonly<Record<string, string>> = {
  PBKDF2WithHmacSHA512: 'sha512',
  PBKDF2WithHmacSHA256: 'sha256',
  PBKDF2WithHmacSHA1: 'sha1',
};

/** Java's cipher name to node's, for the AES modes Kafka's encoder handles (CBC with an IV, GCM). */
function nodeCipher(cipherAlgorithm: string, keyLength: number): { name: string; gcm: boolean } {
  const match = /^AES\/(CBC|GCM)\/(PKCS5Padding|NoPadding)$/.exec(cipherAlgorithm);
  if (match === null || ![128, 192, 256].includes(keyLength)) {
    throw new ConfigError(
      'password.encoder.cipher.algorithm',
      cipherAlgorithm,
      'Brook encodes passwords with AES/CBC/PKCS5Padding or AES/GCM/NoPadding and a key length of 128, 192 or 256',
    );
  }
  const gcm = match[1] === 'GCM';
  return { name: `aes-${keyLength}-${gcm ? 'gcm' : 'cbc'}`, gcm };
}

function deriveKey(
  secret: string,
  algorithm: string,
  salt: Buffer,
  iterations: number,
  keyLength: number,
): Buffer {
  const digest = DIGESTS[algorithm];
  if (digest === undefined) {
    throw new ConfigError(
      'password.encoder.keyfactory.algorithm',
      algorithm,
      'unknown key factory algorithm',
    );
  }
  return pbkdf2Sync(Buffer.from(secret, 'utf8'), salt, iterations, keyLength / 8, digest);
}

/** Encrypts one password value for the metadata store. */
export function encodePassword(settings: PasswordEncoderSettings, password: string): string {
  const keyFactoryAlgorithm = settings.keyFactoryAlgorithm ?? 'PBKDF2WithHmacSHA512';
  const cipher = nodeCipher(settings.cipherAlgorithm, settings.keyLength);
  const salt = randomBytes(SALT_BYTES);
  const key = deriveKey(settings.secret, keyFactoryAlgorithm, salt, settings.iterations, settings.keyLength);
  const iv = randomBytes(cipher.gcm ? 12 : 16);
  const encrypting = createCipheriv(cipher.name, key, iv);
  const parts: Buffer[] = [encrypting.update(password, 'utf8'), encrypting.final()];
  // Java's GCM output carries the tag after the ciphertext.
  if (cipher.gcm)
    parts.push((encrypting as ReturnType<typeof createCipheriv> & { getAuthTag(): Buffer }).getAuthTag());
  const fields: [string, string][] = [
    ['keyFactoryAlgorithm', keyFactoryAlgorithm],
    ['cipherAlgorithm', settings.cipherAlgorithm],
    ['keyLength', String(settings.keyLength)],
    ['salt', salt.toString('base64')],
    ['iterations', String(settings.iterations)],
    ['encryptedPassword', Buffer.concat(parts).toString('base64')],
    ['passwordLength', String(password.length)],
    ['initializationVector', iv.toString('base64')],
  ];
  if (cipher.gcm) fields.push(['authenticationTagLength', String(GCM_TAG_BITS)]);
  return fields.map(([k, v]) => `${k}:${v}`).join(',');
}

/** Decrypts a stored password value; throws ConfigError when it cannot (another secret, damaged text). */
export function decodePassword(secret: string, encoded: string): string {
  const params = new Map<string, string>();
  for (const entry of encoded.split(',')) {
    const colon = entry.indexOf(':');
    if (colon > 0) params.set(entry.slice(0, colon).trim(), entry.slice(colon + 1).trim());
  }
  const field = (name: string): string => {
    const value = params.get(name);
    if (value === undefined)
      throw ConfigError.rule('password.encoder.secret', `Password could not be decoded: no ${name}`);
    return value;
  };
  const keyLength = Number(field('keyLength'));
  const cipher = nodeCipher(field('cipherAlgorithm'), keyLength);
  const key = deriveKey(
    secret,
    field('keyFactoryAlgorithm'),
    Buffer.from(field('salt'), 'base64'),
    Number(field('iterations')),
    keyLength,
  );
  const iv = Buffer.from(field('initializationVector'), 'base64');
  let data = Buffer.from(field('encryptedPassword'), 'base64');
  let password: string;
  try {
    const decrypting = createDecipheriv(cipher.name, key, iv);
    if (cipher.gcm) {
      const tagBytes = Number(field('authenticationTagLength')) / 8;
      (decrypting as ReturnType<typeof createDecipheriv> & { setAuthTag(t: Buffer): void }).setAuthTag(
        data.subarray(data.length - tagBytes),
      );
      data = data.subarray(0, data.length - tagBytes);
    }
    password = Buffer.concat([decrypting.update(data), decrypting.final()]).toString('utf8');
  } catch {
    throw ConfigError.rule('password.encoder.secret', 'Password could not be decoded');
  }
  if (password.length !== Number(field('passwordLength'))) {
    throw ConfigError.rule(
      'password.encoder.secret',
      'Password could not be decoded, sanity check of length failed',
    );
  }
  return password;
}

/** The encoder settings of a broker's static config (server.properties), or null without password.encoder.secret. */
export function passwordEncoderSettings(
  staticConfig: ReadonlyMap<string, string>,
): PasswordEncoderSettings | null {
  const secret = staticConfig.get('password.encoder.secret');
  if (secret === undefined || secret === '') return null;
  const number = (key: string, fallback: number) => {
    const text = staticConfig.get(key);
    return text === undefined ? fallback : Number(text);
  };
  return {
    secret,
    keyFactoryAlgorithm: staticConfig.get('password.encoder.keyfactory.algorithm') ?? null,
    cipherAlgorithm:
      staticConfig.get('password.encoder.cipher.algorithm') ?? PASSWORD_ENCODER_DEFAULTS.cipherAlgorithm,
    keyLength: number('password.encoder.key.length', PASSWORD_ENCODER_DEFAULTS.keyLength),
    iterations: number('password.encoder.iterations', PASSWORD_ENCODER_DEFAULTS.iterations),
  };
}
