// .snapshot files: producer state at an offset, so a restart replays only the log after it. The layout follows
// Kafka's ProducerSnapshot schema (version 1), big-endian:
//
//   version int16 (1) | crc uint32 (CRC32C of every byte after this field) | count int32 | entries
//   entry (46 bytes): producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
//                     timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64 (-1: none)
//
// A file is named by the offset it describes: the state after applying every batch below that offset.

import { readdirSync, unlinkSync } from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import {
  fsyncFileAndDir,
  fsyncFileAndDirNow,
  readSmallFile,
  StorageFormatError,
  writeFileAtomic,
  writeFileUnsynced,
} from './atomic-file.js';
import { type FileSeal, openWithoutKeys } from './encryption/file-seal.js';
import { parseOffsetFileName, SNAPSHOT_SUFFIX, segmentFilePath } from './file-names.js';
import { STORAGE_LIMITS } from './log-config.js';

export const SNAPSHOT_VERSION = 1;
const HEADER_BYTES = 2 + 4 + 4;
const CRC_FROM = 6;
export const SNAPSHOT_ENTRY_BYTES = 46;

export interface SnapshotEntry {
  readonly producerId: number;
  readonly epoch: number;
  readonly lastSequence: number;
  readonly lastOffset: number;
  readonly offsetDelta: number;
  readonly timestamp: number;
  readonly coordinatorEpoch: number;
  readonly currentTxnFirstOffset: number;
}

function readInt64(buf: Buffer, pos: number): number {
  const n = buf.readBigInt64BE(pos);
  return Number(n);
}

export function encodeSnapshot(entries: readonly SnapshotEntry[]): Buffer {
  const buf = Buffer.allocUnsafe(HEADER_BYTES + entries.length * SNAPSHOT_ENTRY_BYTES);
  buf.writeInt16BE(SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(entries.length, 6);
  let pos = HEADER_BYTES;
  for (const e of entries) {
    buf.writeBigInt64BE(BigInt(e.producerId), pos);
    buf.writeInt16BE(e.epoch, pos + 8);
    buf.writeInt32BE(e.lastSequence, pos + 10);
    buf.writeBigInt64BE(BigInt(e.lastOffset), pos + 14);
    buf.writeInt32BE(e.offsetDelta, pos + 22);
    buf.writeBigInt64BE(BigInt(e.timestamp), pos + 26);
    buf.writeInt32BE(e.coordinatorEpoch, pos + 34);
    buf.writeBigInt64BE(BigInt(e.currentTxnFirstOffset), pos + 38);
    pos += SNAPSHOT_ENTRY_BYTES;
  }
  buf.writeUInt32BE(crc32c(buf.subarray(CRC_FROM)), 2);
  return buf;
}

export function decodeSnapshot(path: string, buf: Buffer): SnapshotEntry[] {
  if (buf.length < HEADER_BYTES) throw new StorageFormatError(path, 'shorter than its header');
  const version = buf.readInt16BE(0);
  if (version !== SNAPSHOT_VERSION) throw new StorageFormatError(path, `unknown version ${version}`);
  if (crc32c(buf.subarray(CRC_FROM)) !== buf.readUInt32BE(2))
    throw new StorageFormatError(path, 'crc mismatch');
  const count = buf.readInt32BE(6);
  if (count < 0 || HEADER_BYTES + count * SNAPSHOT_ENTRY_BYTES !== buf.length) {
    throw new StorageFormatError(path, `count ${count} does not match ${buf.length} bytes`);
  }
  const entries: SnapshotEntry[] = [];
  for (let pos = HEADER_BYTES; pos < buf.length; pos += SNAPSHOT_ENTRY_BYTES) {
    entries.push({
      producerId: readInt64(buf, pos),
      epoch: buf.readInt16BE(pos + 8),
      lastSequence: buf.readInt32BE(pos + 10),
      lastOffset: readInt64(buf, pos + 14),
      offsetDelta: buf.readInt32BE(pos + 22),
      timestamp: readInt64(buf, pos + 26),
      coordinatorEpoch: buf.readInt32BE(pos + 34),
      currentTxnFirstOffset: readInt64(buf, pos + 38),
    });
  }
  return entries;
}

/** Offsets of the `.snapshot` files in a partition directory, ascending. */
export function listSnapshotOffsets(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync(dir)) {
    const parsed = parseOffsetFileName(name);
    if (parsed !== null && parsed.suffix === SNAPSHOT_SUFFIX) out.push(parsed.offset);
  }
  return out.sort((a, b) => a - b);
}

/** A snapshot's file bytes: encrypted by `seal` when the topic is (see encryption/file-seal.ts). */
function snapshotBytes(entries: readonly SnapshotEntry[], seal: FileSeal | null): Buffer {
  const plain = encodeSnapshot(entries);
  return seal === null ? plain : seal.seal('producer-snapshot', plain);
}

export function writeSnapshotFile(
  dir: string,
  offset: number,
  entries: readonly SnapshotEntry[],
  seal: FileSeal | null = null,
): void {
  writeFileAtomic(segmentFilePath(dir, offset, SNAPSHOT_SUFFIX), snapshotBytes(entries, seal));
}

/**
 * Writes the snapshot at `offset` complete (tmp, rename) but not durable: `syncSnapshotFile` must finish before
 * anything relies on it surviving a crash (the log's recovery point moving to or past `offset`).
 */
export function writeSnapshotFileUnsynced(
  dir: string,
  offset: number,
  entries: readonly SnapshotEntry[],
  seal: FileSeal | null = null,
): void {
  writeFileUnsynced(segmentFilePath(dir, offset, SNAPSHOT_SUFFIX), snapshotBytes(entries, seal));
}

/** Makes a `writeSnapshotFileUnsynced` durable off the event loop; a snapshot deleted meanwhile resolves. */
export function syncSnapshotFile(dir: string, offset: number): Promise<void> {
  return fsyncFileAndDir(segmentFilePath(dir, offset, SNAPSHOT_SUFFIX));
}

/** Makes a `writeSnapshotFileUnsynced` durable now, synchronously (clean shutdown); a deleted one is skipped. */
export function syncSnapshotFileNow(dir: string, offset: number): void {
  fsyncFileAndDirNow(segmentFilePath(dir, offset, SNAPSHOT_SUFFIX));
}

/** Reads the snapshot at `offset`; null when it is missing or damaged (the caller then replays more log). */
export function readSnapshotFile(
  dir: string,
  offset: number,
  seal: FileSeal | null = null,
): SnapshotEntry[] | null {
  const path = segmentFilePath(dir, offset, SNAPSHOT_SUFFIX);
  try {
    const bytes = readSmallFile(path, STORAGE_LIMITS.snapshotBytesMax);
    if (bytes === null) return null;
    const plain = seal === null ? openWithoutKeys(path, bytes) : seal.open(path, 'producer-snapshot', bytes);
    return decodeSnapshot(path, plain);
  } catch (err) {
    if (err instanceof StorageFormatError) return null;
    throw err;
  }
}

export function deleteSnapshotFile(dir: string, offset: number): void {
  try {
    unlinkSync(segmentFilePath(dir, offset, SNAPSHOT_SUFFIX));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
