// .txnindex: the aborted transactions whose abort marker is in this segment, so read_committed fetches can tell
// consumers which records to skip without decoding the log.
//
//   entry (34 bytes): version int16 (0), producerId int64, firstOffset int64, lastOffset int64,
//                     lastStableOffset int64
//
// firstOffset is the transaction's first offset (possibly in an earlier segment), lastOffset the abort marker's
// offset, lastStableOffset the partition's LSO once this transaction completed. The file is append-only and small
// (one entry per aborted transaction), so its entries are kept in memory once loaded.

import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { assert } from '../common/assert.js';
import { fsyncInBackground } from './atomic-file.js';
import type { IndexCrypt } from './encryption/segment-cipher.js';
import { STORAGE_LIMITS } from './log-config.js';

export const TXN_INDEX_ENTRY_BYTES = 34;
const TXN_INDEX_VERSION = 0;

export interface AbortedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly lastStableOffset: number;
}

function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 0x1_0000_0000 + buf.readUInt32BE(pos + 4);
}

export function encodeAbortedTxn(txn: AbortedTxn, buf = Buffer.allocUnsafe(TXN_INDEX_ENTRY_BYTES)): Buffer {
  buf.writeInt16BE(TXN_INDEX_VERSION, 0);
  buf.writeBigInt64BE(BigInt(txn.producerId), 2);
  buf.writeBigInt64BE(BigInt(txn.firstOffset), 10);
  buf.writeBigInt64BE(BigInt(txn.lastOffset), 18);
  buf.writeBigInt64BE(BigInt(txn.lastStableOffset), 26);
  return buf;
}

/** Decodes the entry at `pos`, or null when it is not a plausible entry (damage). */
export function decodeAbortedTxn(buf: Buffer, pos: number): AbortedTxn | null {
  if (buf.readInt16BE(pos) !== TXN_INDEX_VERSION) return null;
  const txn = {
    producerId: readInt64(buf, pos + 2),
    firstOffset: readInt64(buf, pos + 10),
    lastOffset: readInt64(buf, pos + 18),
    lastStableOffset: readInt64(buf, pos + 26),
  };
  if (txn.producerId < 0 || txn.firstOffset < 0 || txn.lastOffset < txn.firstOffset) return null;
  return txn;
}

export class TxnIndex {
  private readonly txns: AbortedTxn[] = [];
  /** Encrypted: a position may already have been written under the current keystream (see IndexCrypt). */
  private rekeyDue: boolean;

  /**
   * The file is created on the first aborted transaction, as Kafka does; most segments never have one. An
   * encrypted segment's file is encrypted with `crypt` (entries stay plaintext in memory).
   */
  constructor(
    public path: string,
    private readonly crypt: IndexCrypt | null = null,
  ) {
    this.rekeyDue = crypt !== null && !crypt.fresh;
  }

  /**
   * Loads an existing file. Entries from the first implausible one on are dropped (and cut from the file),
   * and so are entries whose marker is at or beyond `endOffset`, the segment's end.
   */
  load(endOffset: number): void {
    let fd: number;
    try {
      fd = openSync(this.path, 'r+');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      this.loadFrom(fd, endOffset);
    } finally {
      closeSync(fd);
    }
  }

  private loadFrom(fd: number, endOffset: number): void {
    const size = fstatSync(fd).size;
    // A damaged length must not size an allocation: read at most the bound, the rest is dropped as damage.
    const readable = Math.min(size, STORAGE_LIMITS.checkpointBytesMax);
    const whole = readable - (readable % TXN_INDEX_ENTRY_BYTES);
    const buf = Buffer.allocUnsafe(whole);
    let done = 0;
    while (done < whole) {
      const n = readSync(fd, buf, done, whole - done, done);
      if (n === 0) break;
      done += n;
    }
    const entries = this.crypt === null ? buf : this.crypt.apply(buf, 0, done, 0);
    for (let pos = 0; pos + TXN_INDEX_ENTRY_BYTES <= done; pos += TXN_INDEX_ENTRY_BYTES) {
      const txn = decodeAbortedTxn(entries, pos);
      if (txn === null || txn.lastOffset >= endOffset) break;
      this.txns.push(txn);
    }
    if (this.txns.length * TXN_INDEX_ENTRY_BYTES !== size)
      ftruncateSync(fd, this.txns.length * TXN_INDEX_ENTRY_BYTES);
  }

  get entries(): readonly AbortedTxn[] {
    return this.txns;
  }

  append(txn: AbortedTxn): void {
    const last = this.txns[this.txns.length - 1];
    assert(last === undefined || txn.lastOffset > last.lastOffset, 'aborted transactions out of order');
    let bytes = encodeAbortedTxn(txn);
    let at = this.txns.length * TXN_INDEX_ENTRY_BYTES;
    if (this.crypt !== null) {
      if (this.rekeyDue) {
        // A new keystream: every kept entry is written again under it, with the new one.
        this.crypt.rekey();
        this.rekeyDue = false;
        bytes = Buffer.concat([...this.txns.map((t) => encodeAbortedTxn(t)), bytes]);
        at = 0;
      }
      bytes = this.crypt.apply(bytes, 0, bytes.length, at);
    }
    // One open per aborted transaction: rare enough that holding a descriptor per segment is not worth it.
    const fd = openSync(this.path, this.txns.length === 0 ? 'w' : 'r+');
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
    } finally {
      closeSync(fd);
    }
    const { producerId, firstOffset, lastOffset, lastStableOffset } = txn;
    this.txns.push({ producerId, firstOffset, lastOffset, lastStableOffset });
  }

  /**
   * Appends to `out` the aborted transactions that overlap [fetchOffset, upperBoundOffset). Returns true when
   * no later segment can add more (an entry's LSO reached the upper bound), as Kafka's search stops there.
   */
  collect(fetchOffset: number, upperBoundOffset: number, out: AbortedTxn[]): boolean {
    for (const txn of this.txns) {
      if (txn.lastOffset >= fetchOffset && txn.firstOffset < upperBoundOffset) out.push(txn);
      if (txn.lastStableOffset >= upperBoundOffset) return true;
    }
    return false;
  }

  /** Drops transactions whose marker is at or after `offset`. */
  truncateTo(offset: number): void {
    let keep = this.txns.length;
    while (keep > 0 && this.txns[keep - 1]!.lastOffset >= offset) keep--;
    if (keep === this.txns.length) return;
    this.txns.length = keep;
    if (this.crypt !== null) this.rekeyDue = true;
    if (existsSync(this.path)) truncateSync(this.path, keep * TXN_INDEX_ENTRY_BYTES);
  }

  reset(): void {
    this.truncateTo(-1);
  }

  flush(): void {
    if (this.txns.length === 0) return;
    const fd = openSync(this.path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** flush() with the fsync in the thread pool (entries are written when appended; nothing waits in memory). */
  flushInBackground(): Promise<void> {
    if (this.txns.length === 0) return Promise.resolve();
    return fsyncInBackground(this.path);
  }

  renameTo(path: string): void {
    try {
      renameSync(this.path, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.path = path;
  }

  close(): void {
    // Nothing to release: the file is only open while it is read or written.
  }

  closeAndDelete(): void {
    this.close();
    try {
      unlinkSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}
