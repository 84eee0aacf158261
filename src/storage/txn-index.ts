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
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { assert } from '../common/assert.js';

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
  private fd = -1;
  private readonly txns: AbortedTxn[] = [];

  /** The file is created on the first aborted transaction, as Kafka does; most segments never have one. */
  constructor(public path: string) {}

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
    this.fd = fd;
    const size = fstatSync(fd).size;
    const whole = size - (size % TXN_INDEX_ENTRY_BYTES);
    const buf = Buffer.allocUnsafe(whole);
    let done = 0;
    while (done < whole) {
      const n = readSync(fd, buf, done, whole - done, done);
      if (n === 0) break;
      done += n;
    }
    for (let pos = 0; pos + TXN_INDEX_ENTRY_BYTES <= done; pos += TXN_INDEX_ENTRY_BYTES) {
      const txn = decodeAbortedTxn(buf, pos);
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
    if (this.fd < 0) this.fd = openSync(this.path, 'w+');
    const bytes = encodeAbortedTxn(txn);
    const at = this.txns.length * TXN_INDEX_ENTRY_BYTES;
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done, at + done);
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
    if (this.fd >= 0) ftruncateSync(this.fd, keep * TXN_INDEX_ENTRY_BYTES);
  }

  reset(): void {
    this.truncateTo(-1);
  }

  flush(): void {
    if (this.fd >= 0) fsyncSync(this.fd);
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
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
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
