// The encryption of one segment's .log file: AES-256-GCM per 16 KiB chunk with the segment's own random data key,
// the growing last chunk authenticated by a GMAC of its ciphertext. The `.enc` side file holds the wrapped data
// key and one tag record per chunk.
//
// Why this shape. GCM encrypts in counter mode, so ciphertext keeps the plaintext's length at the plaintext's
// position: every offset, index entry, size and truncation point of the plaintext log stays valid, and a byte
// range is found where its plaintext would be. A read verifies and decrypts the whole chunks it touches in one
// pass (node:crypto's GCM), never a whole segment. An append-only file grows its last chunk, and GCM cannot
// extend a tag, so a chunk gets its GCM tag when it is full; until then its record holds a GMAC (GCM with the
// ciphertext as additional data and no plaintext) of the bytes it has, recomputed at every append. That costs
// at most one chunk (16 KiB of GHASH, several GB/s) per append, keeps one record per chunk, and lets a crash
// leave the tags covering exactly the committed bytes. Appends encrypt the chunk they fill with one GCM pass
// kept open across appends (node:crypto's GCM is a stream: update() answers every byte it is given), so the
// chunk's tag comes from the same pass that encrypted it once the chunk is full. Where that pass cannot have seen
// every byte of the chunk (a write repeated with other bounds, a commit without its encryption), appends encrypt
// with AES-256-CTR at the chunk's GCM counter (the keystream GCM itself uses), and the full chunk's tag comes from
// a GCM pass over its plaintext kept in memory, checked to give the same bytes. Both write GCM's ciphertext: the
// format is the same either way.
//
// Nonces (12 bytes, all under the data key; the first byte keeps the kinds apart, so no two share a counter
// block): a full chunk k uses 0x01 | 0 0 0 | k u64; the GMAC of chunk k's first `covered` bytes uses
// 0x02 | covered u24 | k u64. Each nonce only ever authenticates one message: bytes at a position are never
// rewritten with other bytes (below), so a chunk's content, and a prefix of it, is fixed once written.
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
//   header, 512 bytes: magic "BRKE" | version u8 (2) | chunk shift u8 (14) | 2 reserved | sealed u8 |
//     3 reserved | kek id length u8 | kek id (ASCII, at most 64) | padding to 80 | wrapped key length u16 |
//     wrapped data key (AES-256-GCM by the KEK: iv 12, 32 key bytes, tag 16) | zeros | at 496 the keystream
//     generations of .index, .timeindex, .txnindex (u32 each, see indexCrypt) | crc32c of bytes 0..507
//   then one 32-byte record per chunk k at 512 + 32k: covered length u32 | 4 reserved | tag (16 bytes) |
//     8 reserved.
// Every tag's additional data starts with "BRKT" | segment base offset i64 | k u64, so a chunk moved to another
// place or another segment's name fails. covered = 16384: the GCM tag of the chunk (the stored bytes are its
// ciphertext). covered < 16384 (only the last chunk): the GMAC over that prefix, then the chunk's first `covered`
// ciphertext bytes. Version 1 (HMAC-SHA256 tags) is refused with a clear error.

import { type CipherGCM, createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
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
export const ENC_FORMAT_VERSION = 2;
// 16 KiB: a small fetch verifies at most two chunks (at most twice its bytes), while the per-chunk cost (one GCM
// object, one 32-byte record) stays below the cipher work on the chunk itself.
export const ENC_CHUNK_SHIFT = 14;
export const ENC_CHUNK_BYTES = 1 << ENC_CHUNK_SHIFT;
export const TAG_RECORD_BYTES = 32;
const TAG_AT = 8;
const TAG_BYTES = 16;
const MAGIC = Buffer.from('BRKE');
const TAG_DOMAIN = Buffer.from('BRKT');
const SEALED_AT = 8;
const KEK_ID_AT = 12;
const WRAPPED_AT = 80;
const CRC_AT = 508;
/** Keystream generations of the segment's index files, u32 each (see indexCrypt), in the header before the CRC. */
const INDEX_GENERATIONS_AT = 496;
const DATA_KEY_BYTES = 32;
const NONCE_FULL = 0x01;
const NONCE_PREFIX = 0x02;
const NONCE_INDEX = 0x03;

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

/** The index files of an encrypted segment, each with its own keystream (see SegmentCipher.indexCrypt). */
export const IndexFileKind = { offset: 0, time: 1, txn: 2 } as const;
export type IndexFileKind = (typeof IndexFileKind)[keyof typeof IndexFileKind];

/**
 * Encryption of one index file of an encrypted segment: AES-256-CTR at the file position, under a keystream
 * generation kept in the segment's `.enc` header. Index entries are hints verified against the (authenticated)
 * log when used, so they are encrypted, not authenticated: a changed entry decrypts to a wrong hint and is
 * caught and rebuilt as in a plaintext log. A position must never be written twice under one generation: the
 * owner calls `rekey` (and rewrites what it keeps) before writing at a position it may have written before.
 */
export interface IndexCrypt {
  /** Whether nothing was ever written under the current generation (a new segment): no rekey needed yet. */
  readonly fresh: boolean;
  /** buf[start, start + length), at file position `position`, XORed with the keystream (a new buffer). */
  apply(buf: Buffer, start: number, length: number, position: number): Buffer;
  /** Moves to a new generation, durable in the `.enc` header before it returns. */
  rekey(): void;
}

export class SegmentCipher {
  private encFd: number;
  private sealedValue: boolean;
  /**
   * Writer state: the last chunk's bytes committed so far, as plaintext (for its GCM tag once full) and as
   * ciphertext (for its GMAC meanwhile), and the file position they reach (-1: to be loaded from the file).
   */
  private tailEnd = -1;
  private tailPlain: Buffer | null = null;
  private tailCipher: Buffer | null = null;
  /** Ciphertext handed to the file but not committed yet, by position (see encryptForWrite). */
  private readonly pending = new Map<number, Buffer>();
  /**
   * The GCM pass of the chunk appends are filling, open while it has encrypted every byte of that chunk so far
   * (`at` bytes), in file order; and the tags such passes gave the chunks they filled, until those commit.
   */
  private stream: { readonly chunk: number; at: number; readonly gcm: CipherGCM } | null = null;
  private readonly streamTags = new Map<number, Buffer>();
  /** Set on a new segment: its index files start under generation 0 with nothing written before. */
  private freshIndexes = false;

  private constructor(
    private path: string,
    readonly baseOffset: number,
    encFd: number,
    private readonly header: Buffer,
    private readonly key: Buffer,
    readonly kekId: string,
  ) {
    this.encFd = encFd;
    this.sealedValue = header[SEALED_AT] === 1;
  }

  /** A new `.enc` with a fresh data key wrapped by the store's current KEK (replaces any file there). */
  static create(path: string, baseOffset: number, keys: SegmentKeys): SegmentCipher {
    const kek = keys.current();
    const dataKey = randomBytes(DATA_KEY_BYTES);
    const header = buildHeader(kek.id, wrapDataKey(kek.key, kek.id, dataKey));
    const fd = openSync(path, 'w+');
    writeFully(fd, header, 0);
    const cipher = new SegmentCipher(path, baseOffset, fd, header, dataKey, kek.id);
    cipher.freshIndexes = true;
    return cipher;
  }

  /** Opens an existing `.enc`: header checked, data key unwrapped (MasterKeyError when its KEK is unknown). */
  static open(path: string, baseOffset: number, keys: SegmentKeys): SegmentCipher {
    const fd = openSync(path, 'r+');
    try {
      const header = Buffer.alloc(ENC_HEADER_BYTES);
      const got = readSync(fd, header, 0, ENC_HEADER_BYTES, 0);
      if (got !== ENC_HEADER_BYTES) throw new SegmentIntegrityError(path, 'header cut');
      if (!header.subarray(0, 4).equals(MAGIC) || header[5] !== ENC_CHUNK_SHIFT) {
        throw new SegmentIntegrityError(path, 'not a segment encryption header');
      }
      if (crc32c(header.subarray(0, CRC_AT)) !== header.readUInt32BE(CRC_AT)) {
        throw new SegmentIntegrityError(path, 'header checksum mismatch');
      }
      if (header[4] !== ENC_FORMAT_VERSION) {
        // Version 1 (HMAC-SHA256 chunk tags) was written only by development builds before version 2.
        throw new SegmentIntegrityError(
          path,
          `segment encryption format version ${header[4]} is not readable by this broker (it reads version ${ENC_FORMAT_VERSION})`,
        );
      }
      const kekId = header.toString('ascii', KEK_ID_AT + 1, KEK_ID_AT + 1 + header[KEK_ID_AT]!);
      const wrapped = header.subarray(WRAPPED_AT + 2, WRAPPED_AT + 2 + header.readUInt16BE(WRAPPED_AT));
      const kek = keys.kek(kekId);
      if (kek === undefined)
        throw new MasterKeyError(`${path}: key-encryption key ${kekId} is not in the key store`);
      const dataKey = unwrapDataKey(kek, kekId, wrapped, path);
      return new SegmentCipher(path, baseOffset, fd, header, dataKey, kekId);
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
    return new SegmentCipher(this.path, this.baseOffset, fd, this.header, this.key, this.kekId);
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
    this.dropTail();
  }

  /** Encryption of plain[start, end), which sits at file position `position`: each chunk at its GCM counter. */
  encrypt(plain: Buffer, start: number, end: number, position: number): Buffer {
    return this.byChunk(plain, start, end, position, (chunk, inChunk, input) =>
      this.ctr(chunk, inChunk, input),
    );
  }

  /**
   * plain[start, end), at file position `position`, cut at chunk boundaries; each piece encrypted by `encryptPiece`
   * (given its chunk, its offset in that chunk and its bytes, answering as many bytes) and the pieces joined.
   */
  private byChunk(
    plain: Buffer,
    start: number,
    end: number,
    position: number,
    encryptPiece: (chunk: number, inChunk: number, input: Buffer) => Buffer,
  ): Buffer {
    const length = end - start;
    let out: Buffer | null = null;
    let at = 0;
    while (at < length) {
      const pos = position + at;
      const chunk = Math.floor(pos / ENC_CHUNK_BYTES);
      const inChunk = pos - chunk * ENC_CHUNK_BYTES;
      const n = Math.min(ENC_CHUNK_BYTES - inChunk, length - at);
      const piece = encryptPiece(chunk, inChunk, plain.subarray(start + at, start + at + n));
      if (n === length) return piece;
      out ??= Buffer.allocUnsafe(length);
      piece.copy(out, at);
      at += n;
    }
    return out ?? EMPTY;
  }

  /**
   * Encrypts bytes about to be written at `position`, keeping the ciphertext for their commit. `committedEnd` is
   * where the authenticated bytes end (the segment's visible size): before the first write after an open, the
   * committed part of the last chunk is read and verified, so a damaged tail fails this append before any byte
   * is written (the segment is then sealed: the log rolls past it, readers of that chunk get errors).
   */
  encryptForWrite(
    plain: Buffer,
    start: number,
    end: number,
    position: number,
    logFd: number,
    committedEnd: number,
  ): Buffer {
    assert(!this.sealedValue, 'write to a sealed encrypted segment');
    if (this.tailEnd < 0) {
      try {
        this.loadTail(logFd, committedEnd);
      } catch (err) {
        if (err instanceof SegmentIntegrityError) this.seal();
        throw err;
      }
    }
    const existing = this.pending.get(position);
    if (existing !== undefined && existing.length === end - start) return existing;
    const out = this.encryptStreaming(plain, start, end, position);
    this.pending.set(position, out);
    return out;
  }

  /**
   * `encrypt` for bytes about to be written, through the open GCM pass of each chunk where it can be: a chunk
   * such a pass fills leaves its tag in streamTags, so its commit takes no second pass over it.
   */
  private encryptStreaming(plain: Buffer, start: number, end: number, position: number): Buffer {
    return this.byChunk(plain, start, end, position, (chunk, inChunk, input) => {
      const stream = this.streamAt(chunk, inChunk);
      if (stream === null) return this.ctr(chunk, inChunk, input);
      const piece = stream.gcm.update(input);
      assert(piece.length === input.length, 'a GCM pass answers every byte it is given');
      stream.at += input.length;
      if (stream.at === ENC_CHUNK_BYTES) {
        stream.gcm.final();
        this.streamTags.set(chunk, stream.gcm.getAuthTag());
        this.stream = null;
      }
      return piece;
    });
  }

  /**
   * The GCM pass that has encrypted exactly chunk's bytes before `inChunk`: the open one, a new one at a chunk's
   * start, or one caught up over the committed plaintext of the last chunk (the first append after an open); null
   * when none can be had (the chunk is then encrypted with CTR and tagged at commit by a pass of its own).
   */
  private streamAt(chunk: number, inChunk: number): { chunk: number; at: number; gcm: CipherGCM } | null {
    const open = this.stream;
    if (open !== null && open.chunk === chunk && open.at === inChunk) return open;
    this.forgetStream(chunk, chunk);
    const chunkStart = chunk * ENC_CHUNK_BYTES;
    if (inChunk > 0 && !(this.tailEnd === chunkStart + inChunk && this.tailPlain !== null)) return null;
    const gcm = createCipheriv('aes-256-gcm', this.key, nonce(NONCE_FULL, 0, chunk));
    gcm.setAAD(tagPrefix(this.baseOffset, chunk));
    if (inChunk > 0) {
      const again = gcm.update(this.tailPlain!.subarray(0, inChunk));
      assert(
        again.equals(this.tailCipher!.subarray(0, inChunk)),
        'the committed bytes are the GCM ciphertext',
      );
    }
    this.stream = { chunk, at: inChunk, gcm };
    return this.stream;
  }

  /** Forgets the GCM passes of chunks [from, to]: their bytes are about to be encrypted another way, or never. */
  private forgetStream(from: number, to: number): void {
    if (this.stream !== null && this.stream.chunk >= from && this.stream.chunk <= to) this.stream = null;
    for (let chunk = from; chunk <= to; chunk++) this.streamTags.delete(chunk);
  }

  /**
   * Makes the bytes at `position` (written before) authenticated: the chunks they fill get their GCM tag, the
   * chunk they end in its GMAC, and those tag records are written. Called in file order, once per append, before
   * the bytes become visible.
   */
  commit(logFd: number, plain: Buffer, start: number, end: number, position: number): void {
    let ciphertext = this.pending.get(position);
    this.pending.delete(position);
    if (ciphertext === undefined || ciphertext.length !== end - start) {
      ciphertext = this.encrypt(plain, start, end, position);
      // No GCM pass saw these bytes: their chunks are tagged by passes of their own (sealChunk).
      if (ciphertext.length > 0) {
        this.forgetStream(
          Math.floor(position / ENC_CHUNK_BYTES),
          Math.floor((position + ciphertext.length - 1) / ENC_CHUNK_BYTES),
        );
      }
    }
    if (ciphertext.length === 0) return;
    if (this.tailEnd !== position) this.loadTail(logFd, position);
    const tailPlain = this.tailPlain!;
    const tailCipher = this.tailCipher!;
    const firstChunk = Math.floor(position / ENC_CHUNK_BYTES);
    const lastChunk = Math.floor((position + ciphertext.length - 1) / ENC_CHUNK_BYTES);
    const records = Buffer.alloc((lastChunk - firstChunk + 1) * TAG_RECORD_BYTES);
    let at = 0;
    let pos = position;
    while (at < ciphertext.length) {
      const chunk = Math.floor(pos / ENC_CHUNK_BYTES);
      const inChunk = pos - chunk * ENC_CHUNK_BYTES;
      const n = Math.min(ENC_CHUNK_BYTES - inChunk, ciphertext.length - at);
      plain.copy(tailPlain, inChunk, start + at, start + at + n);
      ciphertext.copy(tailCipher, inChunk, at, at + n);
      at += n;
      pos += n;
      const covered = inChunk + n;
      const record = records.subarray((chunk - firstChunk) * TAG_RECORD_BYTES);
      record.writeUInt32BE(covered, 0);
      if (covered === ENC_CHUNK_BYTES) this.fullTag(chunk, tailPlain, tailCipher).copy(record, TAG_AT);
      else this.prefixTag(chunk, tailCipher.subarray(0, covered)).copy(record, TAG_AT);
    }
    this.tailEnd = pos;
    writeFully(this.encFd, records, ENC_HEADER_BYTES + firstChunk * TAG_RECORD_BYTES);
  }

  /** Forgets ciphertext of appends that will not commit (a failed or cancelled write). */
  dropPending(): void {
    this.pending.clear();
    this.dropStreams();
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
    const cached = this.readCached(position, length);
    if (cached !== null) return cached;
    const plan = this.planRead(position, length);
    const buf = Buffer.allocUnsafe(plan.cipherLength);
    const done = readFullySync(logFd, buf, plan.cipherStart);
    return this.finishRead(plan, buf, done);
  }

  /**
   * The plaintext of [position, position + length) when every chunk it touches is a full chunk verified lately (a
   * fetch whose offset lookup just read its chunk, or the chunk a previous fetch ended in): no file read, no
   * decryption. Null otherwise.
   */
  readCached(position: number, length: number): Buffer | null {
    const firstChunk = Math.floor(position / ENC_CHUNK_BYTES);
    const lastChunk = Math.floor((position + length - 1) / ENC_CHUNK_BYTES);
    if (lastChunk - firstChunk > 1) return null;
    const first = verifiedChunks.get(this, firstChunk);
    const last = lastChunk === firstChunk ? first : verifiedChunks.get(this, lastChunk);
    if (first === undefined || last === undefined) return null;
    const inChunk = position - firstChunk * ENC_CHUNK_BYTES;
    if (lastChunk === firstChunk) return Buffer.from(first.subarray(inChunk, inChunk + length));
    const out = Buffer.allocUnsafe(length);
    first.copy(out, 0, inChunk);
    last.copy(out, ENC_CHUNK_BYTES - inChunk, 0, length - (ENC_CHUNK_BYTES - inChunk));
    return out;
  }

  /**
   * The file range a read of [position, position + length) must fetch (whole covered chunks) and the tag
   * records to check it against, read now: bytes a tag covers are in the file before the tag is written.
   */
  planRead(position: number, length: number): EncryptedReadPlan {
    const firstChunk = Math.floor(position / ENC_CHUNK_BYTES);
    const lastChunk = Math.floor((position + length - 1) / ENC_CHUNK_BYTES);
    const tags = Buffer.allocUnsafe((lastChunk - firstChunk + 1) * TAG_RECORD_BYTES);
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

  /**
   * Verifies every chunk of `buf` (the plan's range, `got` bytes read) and returns the requested plaintext: full
   * chunks are verified and decrypted in one GCM pass, a last partial chunk is checked by its GMAC and only the
   * requested bytes of it decrypted.
   */
  finishRead(plan: EncryptedReadPlan, buf: Buffer, got: number): Buffer {
    if (got < plan.cipherLength) {
      throw new SegmentIntegrityError(
        this.path,
        `log file ends at ${plan.cipherStart + got}, its tags cover ${plan.cipherStart + plan.cipherLength} (truncated)`,
      );
    }
    const chunks = plan.tags.length / TAG_RECORD_BYTES;
    if (chunks === 1) {
      // One chunk: a partial one decrypts only the bytes asked for, straight into the answer.
      const only = this.openPlanChunk(plan, buf, 0, null);
      if (only !== null) return only;
    }
    const out = Buffer.allocUnsafe(plan.length);
    this.finishChunks(plan, buf, 0, chunks, out);
    return out;
  }

  /**
   * finishRead for the plan's chunks [from, to) only, into `out` (plan.length bytes, the plan's plaintext): for a
   * read whose pieces arrive apart, each verified and decrypted as it comes. buf holds the plan's ciphertext at
   * its place (chunk i at i * ENC_CHUNK_BYTES); the caller has checked that the pieces' bytes were all read.
   */
  finishChunks(plan: EncryptedReadPlan, buf: Buffer, from: number, to: number, out: Buffer): void {
    for (let i = from; i < to; i++) this.openPlanChunk(plan, buf, i, out);
  }

  /** Number of chunks a plan covers. */
  static planChunks(plan: EncryptedReadPlan): number {
    return plan.tags.length / TAG_RECORD_BYTES;
  }

  /**
   * Verifies the plan's chunk i and decrypts what the plan asks of it into `out`; with out null, a partial chunk's
   * bytes come back as a new buffer instead (and a full chunk's are not decrypted: null).
   */
  private openPlanChunk(plan: EncryptedReadPlan, buf: Buffer, i: number, out: Buffer | null): Buffer | null {
    const chunks = plan.tags.length / TAG_RECORD_BYTES;
    const chunk = plan.firstChunk + i;
    const record = plan.tags.subarray(i * TAG_RECORD_BYTES, (i + 1) * TAG_RECORD_BYTES);
    const covered = record.readUInt32BE(0);
    if ((i < chunks - 1 && covered !== ENC_CHUNK_BYTES) || covered === 0 || covered > ENC_CHUNK_BYTES) {
      throw new SegmentIntegrityError(this.path, `tag of chunk ${chunk} covers ${covered} bytes`);
    }
    const tag = record.subarray(TAG_AT, TAG_AT + TAG_BYTES);
    const chunkStart = chunk * ENC_CHUNK_BYTES;
    const ciphertext = buf.subarray(i * ENC_CHUNK_BYTES, i * ENC_CHUNK_BYTES + covered);
    const end = plan.position + plan.length;
    const lo = Math.max(plan.position, chunkStart) - chunkStart;
    const hi = Math.min(end, chunkStart + covered) - chunkStart;
    if (covered === ENC_CHUNK_BYTES) {
      if (out === null) return null;
      // Only a read's first and last chunks are kept verified: the ones an offset lookup or the next fetch
      // shares. Copied out either way (node:crypto decrypts into a buffer of its own).
      const plain = this.openChunk(chunk, ciphertext, tag, i === 0 || i === chunks - 1);
      plain.copy(out, chunkStart + lo - plan.position, lo, hi);
      return null;
    }
    this.checkPrefix(chunk, ciphertext, tag);
    const plain = this.ctr(chunk, lo, ciphertext.subarray(lo, hi));
    if (out === null) return plain;
    plain.copy(out, chunkStart + lo - plan.position);
    return null;
  }

  /**
   * Cuts the authenticated length to `position` (a truncation): the chunk holding it is re-tagged by a GMAC of its
   * bytes below `position`. Unless the caller has just verified them (recovery), the chunk is verified first,
   * while the .log still holds all of it: a changed byte there loses the chunk's tag (reads of it then fail)
   * rather than getting a fresh tag that would vouch for it.
   */
  truncate(logFd: number, position: number, verified: boolean): void {
    this.pending.clear();
    this.dropTail();
    verifiedChunks.forget(this);
    const chunk = Math.floor(position / ENC_CHUNK_BYTES);
    const from = chunk * ENC_CHUNK_BYTES;
    let keep = position === from ? chunk : chunk + 1;
    if (keep > chunk) {
      const to = Math.min(from + ENC_CHUNK_BYTES, this.authenticatedLength());
      let ciphertext: Buffer | null = null;
      try {
        if (to < position) throw new SegmentIntegrityError(this.path, `cut at ${position} past the tags`);
        if (!verified) this.readSync(logFd, from, to - from);
        ciphertext = Buffer.allocUnsafe(position - from);
        if (readFullySync(logFd, ciphertext, from) < ciphertext.length) {
          throw new SegmentIntegrityError(this.path, `log file ends inside chunk ${chunk}`);
        }
      } catch (err) {
        if (!(err instanceof SegmentIntegrityError)) throw err;
        keep = chunk;
      }
      if (ciphertext !== null && keep > chunk) {
        const record = Buffer.alloc(TAG_RECORD_BYTES);
        record.writeUInt32BE(ciphertext.length, 0);
        this.prefixTag(chunk, ciphertext).copy(record, TAG_AT);
        writeFully(this.encFd, record, ENC_HEADER_BYTES + chunk * TAG_RECORD_BYTES);
      }
    }
    ftruncateSync(this.encFd, ENC_HEADER_BYTES + keep * TAG_RECORD_BYTES);
  }

  /**
   * The keystream of one of the segment's index files: counter block 0x03 | kind | generation u32 | 0 0 |
   * position / 16 u64, under the data key (the first byte keeps it apart from every GCM counter block).
   */
  indexCrypt(kind: IndexFileKind): IndexCrypt {
    let fresh = this.freshIndexes;
    const at = INDEX_GENERATIONS_AT + 4 * kind;
    return {
      get fresh() {
        return fresh;
      },
      apply: (buf, start, length, position) => {
        const counter = Buffer.alloc(16);
        counter[0] = NONCE_INDEX;
        counter[1] = kind;
        counter.writeUInt32BE(this.header.readUInt32BE(at), 2);
        counter.writeBigUInt64BE(BigInt(Math.floor(position / 16)), 8);
        const cipher = createCipheriv('aes-256-ctr', this.key, counter);
        if ((position & 15) > 0) cipher.update(ZEROS.subarray(0, position & 15));
        return cipher.update(buf.subarray(start, start + length));
      },
      rekey: () => {
        fresh = false;
        const generation = this.header.readUInt32BE(at) + 1;
        assert(generation <= 0xffffffff, 'index keystream generations fit u32');
        this.header.writeUInt32BE(generation, at);
        this.header.writeUInt32BE(crc32c(this.header.subarray(0, CRC_AT)), CRC_AT);
        writeFully(this.encFd, this.header, 0);
        fsyncSync(this.encFd);
      },
    };
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
    this.dropTail();
    verifiedChunks.forget(this);
  }

  closeAndDelete(): void {
    this.close();
    try {
      unlinkSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  /**
   * Loads the committed part of the chunk holding `position` (the first append after open): its ciphertext is
   * read and verified against its record (never re-tag bytes nobody vouched for), then decrypted.
   */
  private loadTail(logFd: number, position: number): void {
    this.tailPlain ??= Buffer.allocUnsafe(ENC_CHUNK_BYTES);
    this.tailCipher ??= Buffer.allocUnsafe(ENC_CHUNK_BYTES);
    const chunk = Math.floor(position / ENC_CHUNK_BYTES);
    const from = chunk * ENC_CHUNK_BYTES;
    if (position > from) {
      const plan = this.planRead(from, position - from);
      if (plan.cipherLength !== position - from) {
        throw new SegmentIntegrityError(
          this.path,
          `append at ${position}, the tags cover ${from + plan.cipherLength}`,
        );
      }
      const ciphertext = this.tailCipher.subarray(0, position - from);
      const got = readFullySync(logFd, ciphertext, from);
      this.finishRead(plan, ciphertext, got).copy(this.tailPlain, 0);
    }
    this.tailEnd = position;
  }

  private dropTail(): void {
    this.tailEnd = -1;
    this.tailPlain = null;
    this.tailCipher = null;
    this.dropStreams();
  }

  private dropStreams(): void {
    this.stream = null;
    this.streamTags.clear();
  }

  /** AES-256-CTR of `input` at offset `inChunk` of chunk `chunk` (the chunk's GCM keystream). */
  private ctr(chunk: number, inChunk: number, input: Buffer): Buffer {
    const counter = Buffer.allocUnsafe(16);
    writeNonce(counter, NONCE_FULL, 0, chunk);
    // GCM's first counter block (..., 1) masks the tag; its keystream starts at 2.
    counter.writeUInt32BE(2 + (inChunk >>> 4), 12);
    const cipher = createCipheriv('aes-256-ctr', this.key, counter);
    // OpenSSL's CTR is a stream: update answers as many bytes as it takes.
    const skip = inChunk & 15;
    if (skip > 0) cipher.update(ZEROS.subarray(0, skip));
    return cipher.update(input);
  }

  /** The tag of a full chunk: from the GCM pass that encrypted it, or else from a pass of its own. */
  private fullTag(chunk: number, plain: Buffer, written: Buffer): Buffer {
    const tag = this.streamTags.get(chunk);
    if (tag === undefined) return this.sealChunk(chunk, plain, written);
    this.streamTags.delete(chunk);
    return tag;
  }

  /** The GCM tag of a full chunk, from its plaintext; asserts GCM gives the ciphertext that was written. */
  private sealChunk(chunk: number, plain: Buffer, written: Buffer): Buffer {
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce(NONCE_FULL, 0, chunk));
    cipher.setAAD(tagPrefix(this.baseOffset, chunk));
    const ciphertext = cipher.update(plain);
    cipher.final();
    assert(ciphertext.equals(written), 'chunk ciphertext is the GCM ciphertext of its plaintext');
    return cipher.getAuthTag();
  }

  /** Verifies and decrypts a full chunk. */
  private openChunk(chunk: number, ciphertext: Buffer, tag: Buffer, keep = true): Buffer {
    const cached = verifiedChunks.get(this, chunk);
    if (cached !== undefined) return cached;
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce(NONCE_FULL, 0, chunk));
    decipher.setAAD(tagPrefix(this.baseOffset, chunk));
    decipher.setAuthTag(tag);
    const plain = decipher.update(ciphertext);
    try {
      decipher.final();
    } catch {
      throw this.failed(chunk);
    }
    if (keep) verifiedChunks.add(this, chunk, plain);
    return plain;
  }

  /** The GMAC of a chunk's first ciphertext.length bytes. */
  private prefixTag(chunk: number, ciphertext: Buffer): Buffer {
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce(NONCE_PREFIX, ciphertext.length, chunk));
    cipher.setAAD(tagPrefix(this.baseOffset, chunk));
    cipher.setAAD(ciphertext);
    cipher.final();
    return cipher.getAuthTag();
  }

  private checkPrefix(chunk: number, ciphertext: Buffer, tag: Buffer): void {
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce(NONCE_PREFIX, ciphertext.length, chunk));
    decipher.setAAD(tagPrefix(this.baseOffset, chunk));
    decipher.setAAD(ciphertext);
    decipher.setAuthTag(tag);
    try {
      decipher.final();
    } catch {
      throw this.failed(chunk);
    }
  }

  private failed(chunk: number): SegmentIntegrityError {
    return new SegmentIntegrityError(
      this.path,
      `chunk ${chunk} (bytes ${chunk * ENC_CHUNK_BYTES}..) fails authentication: tampered or damaged`,
    );
  }
}

/**
 * Plaintext of the full chunks verified last, across all segments. A fetch's offset lookup reads a batch header
 * from the chunk the fetch then reads, and a consumer's next fetch starts in the chunk where its previous one
 * ended: each would otherwise be verified and decrypted two or three times. A full chunk never changes (its bytes
 * are written once; a truncation seals the segment and forgets its entries here). Bounded by entries (16 KiB
 * each); the least recently used goes first. Read-only for callers: a hit is copied or copied from.
 */
class VerifiedChunks {
  private readonly entries: { owner: SegmentCipher; chunk: number; plain: Buffer }[] = [];

  constructor(private readonly max: number) {}

  get(owner: SegmentCipher, chunk: number): Buffer | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.owner !== owner || e.chunk !== chunk) continue;
      if (i !== this.entries.length - 1) this.entries.push(...this.entries.splice(i, 1));
      return e.plain;
    }
    return undefined;
  }

  add(owner: SegmentCipher, chunk: number, plain: Buffer): void {
    assert(plain.length === ENC_CHUNK_BYTES, 'only full chunks are cached');
    if (this.entries.length >= this.max) this.entries.shift();
    this.entries.push({ owner, chunk, plain });
  }

  forget(owner: SegmentCipher): void {
    for (let i = this.entries.length - 1; i >= 0; i--)
      if (this.entries[i]!.owner === owner) this.entries.splice(i, 1);
  }
}

const verifiedChunks = new VerifiedChunks(16);

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

function writeNonce(into: Buffer, kind: number, covered: number, chunk: number): void {
  into[0] = kind;
  into.writeUIntBE(covered, 1, 3);
  into.writeBigUInt64BE(BigInt(chunk), 4);
}

function nonce(kind: number, covered: number, chunk: number): Buffer {
  const out = Buffer.allocUnsafe(12);
  writeNonce(out, kind, covered, chunk);
  return out;
}

function tagPrefix(baseOffset: number, chunk: number): Buffer {
  const prefix = Buffer.allocUnsafe(20);
  TAG_DOMAIN.copy(prefix, 0);
  prefix.writeBigInt64BE(BigInt(baseOffset), 4);
  prefix.writeBigUInt64BE(BigInt(chunk), 12);
  return prefix;
}

function buildHeader(kekId: string, wrapped: Buffer): Buffer {
  assert(
    kekId.length <= 64 && wrapped.length <= INDEX_GENERATIONS_AT - WRAPPED_AT - 2,
    'key fields fit the header',
  );
  const header = Buffer.alloc(ENC_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[4] = ENC_FORMAT_VERSION;
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

/** Fills buf from `position` of fd, or up to the file's end; returns the bytes read. */
function readFullySync(fd: number, buf: Buffer, position: number): number {
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
