// The encryption of one segment's .log file: AES-256-CTR at the file position, authenticated per 16 KiB chunk
// by HMAC-SHA256, with the segment's own random data key. Its `.enc` side file holds the wrapped data key and
// one tag record per chunk.
//
// Why this shape. CTR keeps ciphertext and plaintext the same length at the same position, so every offset,
// index entry, size and truncation point of the plaintext log stays valid, and a read of any byte range decrypts
// just that range (random access: a fetch decrypts only what it serves). Chunk tags authenticate: a read
// verifies the chunks it touches before decrypting, so a changed or missing byte is an error, never data. An
// append-only file grows its last chunk; its tag is extended incrementally (the inner SHA-256 state of the HMAC
// is kept and copied), so an append costs its own bytes, not the chunk's.
//
// A CTR keystream must never encrypt two different plaintexts at one position. Bytes past the visible end are
// only ever rewritten with the same plaintext (a queued append completed again synchronously), except after a
// truncation, a recovery cut or a failed write: then the segment is sealed (a header flag) and takes no more
// appends; the log rolls to a new segment with a new data key.
//
// Tags are written when an append is committed (after its bytes are in the file, before it is acknowledged),
// so after a process crash the tags cover exactly the acknowledged bytes; bytes past them are cut by recovery.
//
// `.enc` layout (big-endian):
//   header, 512 bytes: magic "BRKE" | version u8 (1) | chunk shift u8 (14) | 2 reserved | sealed u8 |
//     3 reserved | kek id length u8 | kek id (ASCII, at most 64) | padding to 80 | wrapped key length u16 |
//     wrapped data key (AES-256-GCM by the KEK: iv 12, 64 key bytes, tag 16) | zeros | crc32c of bytes 0..507
//   then one 32-byte record per chunk k at 512 + 32k: covered length u32 | 4 reserved | tag (24 bytes).
// tag(k) = HMAC-SHA256(mac key, "BRKT" | segment base offset i64 | k u64 | ciphertext of the chunk's first
// `length` bytes), first 24 bytes. The data key is 64 bytes: the AES key, then the MAC key. CTR counter block
// for file position p: the 128-bit big-endian number floor(p / 16).

import {
  createCipheriv,
  createDecipheriv,
  createHash,
  type Hash,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import { assert } from '../../common/assert.js';
import { MasterKeyError } from './master-key-provider.js';

export const ENC_HEADER_BYTES = 512;
// 16 KiB: a small fetch verifies at most two chunks (at most twice its bytes), while the per-chunk cost (one HMAC
// object, one 32-byte record) stays far below the hashing of the chunk itself.
export const ENC_CHUNK_SHIFT = 14;
export const ENC_CHUNK_BYTES = 1 << ENC_CHUNK_SHIFT;
export const TAG_RECORD_BYTES = 32;
const TAG_BYTES = 24;
const MAGIC = Buffer.from('BRKE');
const TAG_DOMAIN = Buffer.from('BRKT');
const SEALED_AT = 8;
const KEK_ID_AT = 12;
const WRAPPED_AT = 80;
const CRC_AT = 508;
const DATA_KEY_BYTES = 64;

/** What a segment needs of the key store: the KEK to wrap new data keys with, and KEKs by id to unwrap. */
export interface SegmentKeys {
  current(): { readonly id: string; readonly key: Buffer };
  kek(id: string): Buffer | undefined;
}

/** Stored bytes that fail authentication or do not match their tags: damage or tampering, never served. */
export class SegmentIntegrityError extends Error {
  override readonly name = 'SegmentIntegrityError';
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

export class SegmentCipher {
  private encFd: number;
  private sealedValue: boolean;
  /**
   * SHA-256 states after the HMAC key's inner and outer pads: every tag copies them rather than keying an HMAC
   * object, which costs as much as hashing a chunk (measured: half the verify rate at 16 KiB chunks).
   */
  private readonly innerBase: Hash;
  private readonly outerBase: Hash;
  /** Writer state: the file position the running chunk hash has reached (-1: to be rebuilt). */
  private macEnd = -1;
  private chunkHash: Hash | null = null;
  /** Ciphertext handed to the file but not committed yet, by position (see encryptForWrite). */
  private readonly pending = new Map<number, Buffer>();

  private constructor(
    private path: string,
    readonly baseOffset: number,
    encFd: number,
    private readonly header: Buffer,
    private readonly encKey: Buffer,
    private readonly macKey: Buffer,
    readonly kekId: string,
  ) {
    this.encFd = encFd;
    this.sealedValue = header[SEALED_AT] === 1;
    const ipad = Buffer.alloc(64, 0x36);
    const opad = Buffer.alloc(64, 0x5c);
    for (let i = 0; i < macKey.length; i++) {
      ipad[i]! ^= macKey[i]!;
      opad[i]! ^= macKey[i]!;
    }
    this.innerBase = createHash('sha256').update(ipad);
    this.outerBase = createHash('sha256').update(opad);
  }

  /** A new `.enc` with a fresh data key wrapped by the store's current KEK (replaces any file there). */
  static create(path: string, baseOffset: number, keys: SegmentKeys): SegmentCipher {
    const kek = keys.current();
    const dataKey = randomBytes(DATA_KEY_BYTES);
    const header = buildHeader(kek.id, wrapDataKey(kek.key, kek.id, dataKey));
    const fd = openSync(path, 'w+');
    writeFully(fd, header, 0);
    return new SegmentCipher(
      path,
      baseOffset,
      fd,
      header,
      dataKey.subarray(0, 32),
      dataKey.subarray(32),
      kek.id,
    );
  }

  /** Opens an existing `.enc`: header checked, data key unwrapped (MasterKeyError when its KEK is unknown). */
  static open(path: string, baseOffset: number, keys: SegmentKeys): SegmentCipher {
    const fd = openSync(path, 'r+');
    try {
      const header = Buffer.alloc(ENC_HEADER_BYTES);
      const got = readSync(fd, header, 0, ENC_HEADER_BYTES, 0);
      if (got !== ENC_HEADER_BYTES) throw new SegmentIntegrityError(path, 'header cut');
      if (!header.subarray(0, 4).equals(MAGIC) || header[4] !== 1 || header[5] !== ENC_CHUNK_SHIFT) {
        throw new SegmentIntegrityError(path, 'not an encryption header of version 1');
      }
      if (crc32c(header.subarray(0, CRC_AT)) !== header.readUInt32BE(CRC_AT)) {
        throw new SegmentIntegrityError(path, 'header checksum mismatch');
      }
      const kekId = header.toString('ascii', KEK_ID_AT + 1, KEK_ID_AT + 1 + header[KEK_ID_AT]!);
      const wrapped = header.subarray(WRAPPED_AT + 2, WRAPPED_AT + 2 + header.readUInt16BE(WRAPPED_AT));
      const kek = keys.kek(kekId);
      if (kek === undefined)
        throw new MasterKeyError(`${path}: key-encryption key ${kekId} is not in the key store`);
      const dataKey = unwrapDataKey(kek, kekId, wrapped, path);
      return new SegmentCipher(
        path,
        baseOffset,
        fd,
        header,
        dataKey.subarray(0, 32),
        dataKey.subarray(32),
        kekId,
      );
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /**
   * A second reader of the same segment on its own descriptor, for a reader that must outlive the segment's
   * deletion (the cleaner): only planRead, finishRead, readSync and close are meant for it.
   */
  reader(): SegmentCipher {
    const fd = openSync(this.path, 'r');
    return new SegmentCipher(
      this.path,
      this.baseOffset,
      fd,
      this.header,
      this.encKey,
      this.macKey,
      this.kekId,
    );
  }

  /** Sealed: no more appends (a truncation or cut happened; see the file header). */
  get sealed(): boolean {
    return this.sealedValue;
  }

  seal(): void {
    if (this.sealedValue) return;
    this.sealedValue = true;
    this.header[SEALED_AT] = 1;
    this.header.writeUInt32BE(crc32c(this.header.subarray(0, CRC_AT)), CRC_AT);
    writeFully(this.encFd, this.header, 0);
  }

  /** CTR encryption of plain[start, end), which sits at file position `position`. */
  encrypt(plain: Buffer, start: number, end: number, position: number): Buffer {
    const skip = position & 15;
    const cipher = createCipheriv('aes-256-ctr', this.encKey, counterBlock(position));
    if (skip === 0) return cipher.update(plain.subarray(start, end));
    cipher.update(ZEROS.subarray(0, skip));
    return cipher.update(plain.subarray(start, end));
  }

  /** Encrypts bytes about to be written at `position`, keeping the ciphertext for their commit. */
  encryptForWrite(plain: Buffer, start: number, end: number, position: number): Buffer {
    assert(!this.sealedValue, 'write to a sealed encrypted segment');
    const existing = this.pending.get(position);
    if (existing !== undefined && existing.length === end - start) return existing;
    const out = this.encrypt(plain, start, end, position);
    this.pending.set(position, out);
    return out;
  }

  /**
   * Makes the bytes at `position` (written before) authenticated: extends the running chunk tag and writes the
   * tag records they touch. Called in file order, once per append, before the bytes become visible.
   */
  commit(logFd: number, plain: Buffer, start: number, end: number, position: number): void {
    let ciphertext = this.pending.get(position);
    this.pending.delete(position);
    if (ciphertext === undefined || ciphertext.length !== end - start) {
      ciphertext = this.encrypt(plain, start, end, position);
    }
    if (this.macEnd !== position) this.rebuildChunkHash(logFd, position);
    if (ciphertext.length === 0) return;
    const firstChunk = Math.floor(position / ENC_CHUNK_BYTES);
    const lastChunk = Math.floor((position + ciphertext.length - 1) / ENC_CHUNK_BYTES);
    const records = Buffer.alloc((lastChunk - firstChunk + 1) * TAG_RECORD_BYTES);
    let at = 0;
    let pos = position;
    while (at < ciphertext.length) {
      const chunk = Math.floor(pos / ENC_CHUNK_BYTES);
      const room = (chunk + 1) * ENC_CHUNK_BYTES - pos;
      const n = Math.min(room, ciphertext.length - at);
      this.chunkHash!.update(ciphertext.subarray(at, at + n));
      at += n;
      pos += n;
      const covered = pos - chunk * ENC_CHUNK_BYTES;
      const record = records.subarray((chunk - firstChunk) * TAG_RECORD_BYTES);
      record.writeUInt32BE(covered, 0);
      this.finishTag(this.chunkHash!.copy()).copy(record, 8, 0, TAG_BYTES);
      if (covered === ENC_CHUNK_BYTES) this.chunkHash = this.startChunk(chunk + 1);
    }
    this.macEnd = pos;
    writeFully(this.encFd, records, ENC_HEADER_BYTES + firstChunk * TAG_RECORD_BYTES);
  }

  /** Forgets ciphertext of appends that will not commit (a failed or cancelled write). */
  dropPending(): void {
    this.pending.clear();
  }

  /** Bytes of the .log the tag records vouch for: what a load may trust of the file. */
  authenticatedLength(): number {
    const records = Math.floor((fstatSync(this.encFd).size - ENC_HEADER_BYTES) / TAG_RECORD_BYTES);
    if (records <= 0) return 0;
    const last = Buffer.alloc(4);
    readSync(this.encFd, last, 0, 4, ENC_HEADER_BYTES + (records - 1) * TAG_RECORD_BYTES);
    return (records - 1) * ENC_CHUNK_BYTES + last.readUInt32BE(0);
  }

  /**
   * The longest prefix of the .log (of `fileSize` bytes) whose chunks verify, for recovery after a crash: the
   * first chunk that fails or is not covered ends it.
   */
  verifiedPrefix(logFd: number, fileSize: number): number {
    const authenticated = Math.min(this.authenticatedLength(), fileSize);
    let position = 0;
    while (position < authenticated) {
      const length = Math.min(ENC_CHUNK_BYTES, authenticated - position);
      try {
        this.readSync(logFd, position, length);
      } catch (err) {
        if (err instanceof SegmentIntegrityError) return position;
        throw err;
      }
      position += length;
    }
    return position;
  }

  /** Reads, verifies and decrypts `length` bytes at `position` of the .log. */
  readSync(logFd: number, position: number, length: number): Buffer {
    if (length === 0) return EMPTY;
    const plan = this.planRead(position, length);
    const buf = Buffer.allocUnsafe(plan.cipherLength);
    let done = 0;
    while (done < plan.cipherLength) {
      const n = readSync(logFd, buf, done, plan.cipherLength - done, plan.cipherStart + done);
      if (n === 0) break;
      done += n;
    }
    return this.finishRead(plan, buf, done);
  }

  /**
   * The file range a read of [position, position + length) must fetch (whole covered chunks) and the tag
   * records to check it against, read now: bytes a tag covers are in the file before the tag is written.
   */
  planRead(position: number, length: number): EncryptedReadPlan {
    const firstChunk = Math.floor(position / ENC_CHUNK_BYTES);
    const lastChunk = Math.floor((position + length - 1) / ENC_CHUNK_BYTES);
    const tags = Buffer.alloc((lastChunk - firstChunk + 1) * TAG_RECORD_BYTES);
    const got = readSync(this.encFd, tags, 0, tags.length, ENC_HEADER_BYTES + firstChunk * TAG_RECORD_BYTES);
    if (got < tags.length) {
      throw new SegmentIntegrityError(
        this.path,
        `no tag for chunk ${firstChunk + Math.floor(got / TAG_RECORD_BYTES)} (ciphertext cut or tag file truncated)`,
      );
    }
    const lastCovered = tags.readUInt32BE(tags.length - TAG_RECORD_BYTES);
    const cipherStart = firstChunk * ENC_CHUNK_BYTES;
    const cipherLength = lastChunk * ENC_CHUNK_BYTES + lastCovered - cipherStart;
    if (cipherStart + cipherLength < position + length) {
      throw new SegmentIntegrityError(
        this.path,
        `read of ${position}+${length} past the authenticated end ${cipherStart + cipherLength}`,
      );
    }
    return { position, length, firstChunk, cipherStart, cipherLength, tags };
  }

  /** Verifies every chunk of `buf` (the plan's range, `got` bytes read) and returns the requested plaintext. */
  finishRead(plan: EncryptedReadPlan, buf: Buffer, got: number): Buffer {
    if (got < plan.cipherLength) {
      throw new SegmentIntegrityError(
        this.path,
        `log file ends at ${plan.cipherStart + got}, its tags cover ${plan.cipherStart + plan.cipherLength} (truncated)`,
      );
    }
    const chunks = plan.tags.length / TAG_RECORD_BYTES;
    for (let i = 0; i < chunks; i++) {
      const record = plan.tags.subarray(i * TAG_RECORD_BYTES, (i + 1) * TAG_RECORD_BYTES);
      const covered = record.readUInt32BE(0);
      const from = i * ENC_CHUNK_BYTES;
      if ((i < chunks - 1 && covered !== ENC_CHUNK_BYTES) || covered === 0 || covered > ENC_CHUNK_BYTES) {
        throw new SegmentIntegrityError(
          this.path,
          `tag of chunk ${plan.firstChunk + i} covers ${covered} bytes`,
        );
      }
      const tag = this.tagOf(plan.firstChunk + i, buf.subarray(from, from + covered));
      if (!timingSafeEqual(tag, record.subarray(8, 8 + TAG_BYTES))) {
        throw new SegmentIntegrityError(
          this.path,
          `chunk ${plan.firstChunk + i} (bytes ${(plan.firstChunk + i) * ENC_CHUNK_BYTES}..) fails authentication: tampered or damaged`,
        );
      }
    }
    const at = plan.position - plan.cipherStart;
    const skip = plan.position & 15;
    const decipher = createDecipheriv('aes-256-ctr', this.encKey, counterBlock(plan.position));
    const out = decipher.update(buf.subarray(at - skip, at + plan.length));
    return skip === 0 ? out : out.subarray(skip);
  }

  /**
   * Cuts the authenticated length to `position` (a truncation): the chunk holding it is re-tagged over its bytes
   * below `position`. Unless the caller has just verified them (recovery), the chunk is verified first, while the
   * .log still holds all of it: a changed byte there loses the chunk's tag (reads of it then fail) rather than
   * getting a fresh tag that would vouch for it.
   */
  truncate(logFd: number, position: number, verified: boolean): void {
    this.pending.clear();
    const chunk = Math.floor(position / ENC_CHUNK_BYTES);
    let keep = position % ENC_CHUNK_BYTES === 0 ? chunk : chunk + 1;
    if (keep > chunk && !verified) {
      const from = chunk * ENC_CHUNK_BYTES;
      const to = Math.min(from + ENC_CHUNK_BYTES, this.authenticatedLength());
      try {
        if (to > from) this.readSync(logFd, from, to - from);
      } catch (err) {
        if (!(err instanceof SegmentIntegrityError)) throw err;
        keep = chunk;
      }
    }
    ftruncateSync(this.encFd, ENC_HEADER_BYTES + keep * TAG_RECORD_BYTES);
    this.macEnd = -1;
    if (keep > chunk) this.rebuildChunkHash(logFd, position, true);
  }

  flush(): void {
    fsyncSync(this.encFd);
  }

  renameTo(path: string): void {
    renameSync(this.path, path);
    this.path = path;
  }

  /** The `.enc` descriptor (-1 once closed), for an fsync off the event loop. */
  get fd(): number {
    return this.encFd;
  }

  get filePath(): string {
    return this.path;
  }

  close(): void {
    if (this.encFd >= 0) closeSync(this.encFd);
    this.encFd = -1;
  }

  closeAndDelete(): void {
    this.close();
    try {
      unlinkSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  /** Rebuilds the running hash of the chunk holding `position` from the file (first append after open or cut). */
  private rebuildChunkHash(logFd: number, position: number, writeRecord = false): void {
    const chunk = Math.floor(position / ENC_CHUNK_BYTES);
    const from = chunk * ENC_CHUNK_BYTES;
    this.chunkHash = this.startChunk(chunk);
    if (position > from) {
      const bytes = Buffer.allocUnsafe(position - from);
      let done = 0;
      while (done < bytes.length) {
        const n = readSync(logFd, bytes, done, bytes.length - done, from + done);
        if (n === 0) throw new SegmentIntegrityError(this.path, `log file ends inside chunk ${chunk}`);
        done += n;
      }
      this.chunkHash.update(bytes);
      if (writeRecord) {
        const record = Buffer.alloc(TAG_RECORD_BYTES);
        record.writeUInt32BE(position - from, 0);
        this.finishTag(this.chunkHash.copy()).copy(record, 8, 0, TAG_BYTES);
        writeFully(this.encFd, record, ENC_HEADER_BYTES + chunk * TAG_RECORD_BYTES);
      }
    }
    this.macEnd = position;
  }

  private startChunk(chunk: number): Hash {
    return this.innerBase.copy().update(tagPrefix(this.baseOffset, chunk));
  }

  /** HMAC-SHA256 from an inner state that has taken the message: the outer hash over its digest. */
  private finishTag(inner: Hash): Buffer {
    return this.outerBase.copy().update(inner.digest()).digest();
  }

  private tagOf(chunk: number, ciphertext: Buffer): Buffer {
    return this.finishTag(this.startChunk(chunk).update(ciphertext)).subarray(0, TAG_BYTES);
  }
}

export interface EncryptedReadPlan {
  readonly position: number;
  readonly length: number;
  readonly firstChunk: number;
  readonly cipherStart: number;
  readonly cipherLength: number;
  readonly tags: Buffer;
}

const EMPTY = Buffer.alloc(0);
const ZEROS = Buffer.alloc(16);

function counterBlock(position: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(Math.floor(position / 16)), 8);
  return iv;
}

function tagPrefix(baseOffset: number, chunk: number): Buffer {
  const prefix = Buffer.alloc(20);
  TAG_DOMAIN.copy(prefix, 0);
  prefix.writeBigInt64BE(BigInt(baseOffset), 4);
  prefix.writeBigUInt64BE(BigInt(chunk), 12);
  return prefix;
}

function buildHeader(kekId: string, wrapped: Buffer): Buffer {
  assert(kekId.length <= 64 && wrapped.length <= CRC_AT - WRAPPED_AT - 2, 'key fields fit the header');
  const header = Buffer.alloc(ENC_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[4] = 1;
  header[5] = ENC_CHUNK_SHIFT;
  header[KEK_ID_AT] = kekId.length;
  header.write(kekId, KEK_ID_AT + 1, 'ascii');
  header.writeUInt16BE(wrapped.length, WRAPPED_AT);
  wrapped.copy(header, WRAPPED_AT + 2);
  header.writeUInt32BE(crc32c(header.subarray(0, CRC_AT)), CRC_AT);
  return header;
}

const WRAP_AAD = Buffer.from('brook segment data key ');

function wrapDataKey(kek: Buffer, kekId: string, dataKey: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.concat([WRAP_AAD, Buffer.from(kekId)]));
  const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function unwrapDataKey(kek: Buffer, kekId: string, wrapped: Buffer, path: string): Buffer {
  if (wrapped.length !== 12 + DATA_KEY_BYTES + 16)
    throw new SegmentIntegrityError(path, 'wrapped data key has the wrong length');
  const decipher = createDecipheriv('aes-256-gcm', kek, wrapped.subarray(0, 12));
  decipher.setAAD(Buffer.concat([WRAP_AAD, Buffer.from(kekId)]));
  decipher.setAuthTag(wrapped.subarray(12 + DATA_KEY_BYTES));
  try {
    return Buffer.concat([decipher.update(wrapped.subarray(12, 12 + DATA_KEY_BYTES)), decipher.final()]);
  } catch {
    throw new SegmentIntegrityError(path, 'data key fails authentication under its key-encryption key');
  }
}

function writeFully(fd: number, buf: Buffer, position: number): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, position + done);
}
