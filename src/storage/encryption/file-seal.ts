// Whole-file encryption of a log's small files that are rewritten as a whole: producer `.snapshot` files and the
// `leader-epoch-checkpoint`. They hold producer ids, epochs, sequences, offsets and timestamps, which an encrypted
// topic does not leave readable on disk.
//
// Layout: magic "BRKF" | version u8 (2) | kind length u8 | kind (ASCII) | KEK id length u8 | KEK id (ASCII) |
// nonce (12 random bytes) | AES-256-GCM ciphertext of the plaintext file | tag (16). The additional data is every
// byte before the nonce followed by the partition (topic, NUL, partition number; not stored), so a file cannot pass
// for another kind nor for another partition's file, which the same KEK seals. Version 1 (earlier Brook versions)
// had no partition in the additional data. The key is HKDF-SHA256 of the KEK (info "brook file seal 1"): a KEK
// wraps keys and is not used on data itself. Random nonces are safe here: a KEK seals at most a few files per
// segment roll, far below GCM's 2^32 messages per key.
//
// Reading, while the partition encrypts (`enabled`): only a version 2 file of this partition is trusted. A file
// without the magic, or of version 1 (not bound to its partition), is an UntrustedFileError: anyone who can write
// the directory can put one there, yet it is also what a partition holds when its topic has just turned encryption
// on, or after an upgrade; its reader then does without it (a snapshot is skipped for an older one and a replay, the
// epoch cache is rebuilt from the log) and the next write seals it. While the partition does not encrypt, plaintext
// and version 1 files are read as they are. A sealed file that fails authentication (damaged, tampered with, or
// another partition's) or names an unknown KEK is a StorageFormatError, as a damaged plaintext file is, so its
// reader falls back as it always did (an older snapshot and a log replay; a damaged epoch checkpoint takes the
// directory offline).

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { StorageFormatError } from '../atomic-file.js';
import type { SegmentKeys } from './segment-cipher.js';

const MAGIC = Buffer.from('BRKF');
const VERSION = 2;
/** Written by earlier versions: no partition in the additional data. */
const VERSION_UNBOUND = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_INFO = Buffer.from('brook file seal 1');

export type SealedFileKind = 'producer-snapshot' | 'leader-epoch-checkpoint';

/**
 * A file an encrypting partition does not trust (not sealed, or sealed without its partition): not damage, which
 * takes a directory offline, but a file to do without. A StorageFormatError, so readers that only skip damage skip it.
 */
export class UntrustedFileError extends StorageFormatError {}

export function isSealedFile(bytes: Buffer): boolean {
  return bytes.length >= MAGIC.length && bytes.subarray(0, MAGIC.length).equals(MAGIC);
}

export class FileSeal {
  private readonly derived = new Map<string, Buffer>();

  private readonly partition: Buffer;

  /**
   * `enabled` says, at each write and read, whether the partition encrypts (the topic's brook.encryption.enable);
   * `topicPartition` is the partition whose files these are.
   */
  constructor(
    private readonly keys: SegmentKeys,
    private readonly enabled: () => boolean,
    topicPartition: { readonly topic: string; readonly partition: number },
  ) {
    this.partition = Buffer.from(`${topicPartition.topic}\u0000${topicPartition.partition}`);
  }

  /** The bytes to write for `plain`: sealed under the current KEK when enabled, else `plain` itself. */
  seal(kind: SealedFileKind, plain: Buffer): Buffer {
    if (!this.enabled()) return plain;
    const kek = this.keys.current();
    const header = buildHeader(kind, kek.id);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.fileKey(kek.id, kek.key), nonce);
    cipher.setAAD(Buffer.concat([header, this.partition]));
    const body = cipher.update(plain);
    cipher.final();
    return Buffer.concat([header, nonce, body, cipher.getAuthTag()]);
  }

  /**
   * The plaintext of a file read from `path`: StorageFormatError if damaged or another partition's, and
   * UntrustedFileError for a file this partition does not trust while it encrypts (see the file header).
   */
  open(path: string, kind: SealedFileKind, bytes: Buffer): Buffer {
    if (!isSealedFile(bytes)) {
      if (this.enabled()) throw new UntrustedFileError(path, 'not encrypted, in a partition that encrypts');
      return bytes;
    }
    const version = bytes[MAGIC.length];
    if (version === VERSION_UNBOUND && this.enabled()) {
      throw new UntrustedFileError(path, 'encrypted by an earlier version, not bound to its partition');
    }
    const boundTo = version === VERSION_UNBOUND ? Buffer.alloc(0) : this.partition;
    return openSealed(path, kind, bytes, boundTo, (id) => this.keyFor(id));
  }

  private keyFor(kekId: string): Buffer | undefined {
    const kek = this.keys.kek(kekId);
    return kek === undefined ? undefined : this.fileKey(kekId, kek);
  }

  private fileKey(kekId: string, kek: Buffer): Buffer {
    let key = this.derived.get(kekId);
    if (key === undefined) {
      key = Buffer.from(hkdfSync('sha256', kek, Buffer.alloc(0), HKDF_INFO, 32));
      this.derived.set(kekId, key);
    }
    return key;
  }
}

/** A sealed file without a key store to open it with: a clear format error. */
export function openWithoutKeys(path: string, bytes: Buffer): Buffer {
  if (!isSealedFile(bytes)) return bytes;
  throw new StorageFormatError(path, 'encrypted, and no key provider is configured');
}

function buildHeader(kind: string, kekId: string): Buffer {
  const header = Buffer.alloc(MAGIC.length + 3 + kind.length + kekId.length);
  MAGIC.copy(header, 0);
  let at = MAGIC.length;
  header[at++] = VERSION;
  header[at++] = kind.length;
  at += header.write(kind, at, 'ascii');
  header[at++] = kekId.length;
  header.write(kekId, at, 'ascii');
  return header;
}

/** Opens a sealed file of version 1 or 2; `boundTo` follows the header in the additional data (empty for 1). */
function openSealed(
  path: string,
  kind: SealedFileKind,
  bytes: Buffer,
  boundTo: Buffer,
  keyFor: (kekId: string) => Buffer | undefined,
): Buffer {
  let at = MAGIC.length;
  if (bytes.length < at + 3 || (bytes[at] !== VERSION && bytes[at] !== VERSION_UNBOUND)) {
    throw new StorageFormatError(path, 'not an encrypted file of version 1 or 2');
  }
  at++;
  const kindLength = bytes[at++]!;
  const storedKind = bytes.toString('ascii', at, at + kindLength);
  at += kindLength;
  const kekIdLength = bytes[at++] ?? 0;
  const kekId = bytes.toString('ascii', at, at + kekIdLength);
  at += kekIdLength;
  if (storedKind !== kind) throw new StorageFormatError(path, `encrypted ${storedKind}, not ${kind}`);
  if (bytes.length < at + NONCE_BYTES + TAG_BYTES) throw new StorageFormatError(path, 'encrypted file cut');
  const key = keyFor(kekId);
  if (key === undefined) {
    throw new StorageFormatError(path, `encrypted with key-encryption key ${kekId}, not in the key store`);
  }
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(at, at + NONCE_BYTES));
  decipher.setAAD(Buffer.concat([bytes.subarray(0, at), boundTo]));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  const plain = decipher.update(bytes.subarray(at + NONCE_BYTES, bytes.length - TAG_BYTES));
  try {
    decipher.final();
  } catch {
    throw new StorageFormatError(path, "fails authentication: tampered, damaged or another partition's");
  }
  return plain;
}
