// Kafka's text checkpoint files: a version line, a count line, then one entry per line.
//
//   0                        <- version (always 0)
//   2                        <- number of entries
//   orders 0 1200            <- offset checkpoints: topic partition offset
//   orders 1 1187
//
// recovery-point-offset-checkpoint, replication-offset-checkpoint, log-start-offset-checkpoint and
// cleaner-offset-checkpoint hold `topic partition offset`; leader-epoch-checkpoint holds `epoch startOffset`.
// Writes are atomic (see atomic-file.ts). Reading a damaged file raises StorageFormatError; the caller decides
// (the log manager takes the log directory offline, as Kafka does).

import type { LeaderEpoch, Offset } from '../common/ids.js';
import { readSmallFile, StorageFormatError, writeFileAtomic } from './atomic-file.js';
import type { TopicPartition } from './file-names.js';
import { STORAGE_LIMITS } from './log-config.js';

const CHECKPOINT_VERSION = 0;

function parseLines(path: string, text: string, fieldsPerLine: number): string[][] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length < 2) throw new StorageFormatError(path, 'missing version or count line');
  if (lines[0] !== String(CHECKPOINT_VERSION))
    throw new StorageFormatError(path, `unknown version ${lines[0]}`);
  if (!/^[0-9]{1,9}$/.test(lines[1]!)) throw new StorageFormatError(path, `bad count line ${lines[1]}`);
  const count = Number(lines[1]);
  if (count !== lines.length - 2) {
    throw new StorageFormatError(path, `count says ${count}, file has ${lines.length - 2} entries`);
  }
  const entries: string[][] = [];
  for (let i = 2; i < lines.length; i++) {
    const fields = lines[i]!.split(' ');
    if (fields.length !== fieldsPerLine || fields.some((f) => f === '')) {
      throw new StorageFormatError(path, `malformed line ${i + 1}`);
    }
    entries.push(fields);
  }
  return entries;
}

function parseInteger(path: string, text: string, min: number): number {
  if (!/^-?[0-9]{1,16}$/.test(text)) throw new StorageFormatError(path, `not an integer: ${text}`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new StorageFormatError(path, `out of range: ${text}`);
  return n;
}

function render(lines: string[]): string {
  return `${CHECKPOINT_VERSION}\n${lines.length}\n${lines.map((l) => `${l}\n`).join('')}`;
}

export interface PartitionOffset extends TopicPartition {
  readonly offset: number;
}

export function encodeOffsetCheckpoint(entries: readonly PartitionOffset[]): string {
  return render(entries.map((e) => `${e.topic} ${e.partition} ${e.offset}`));
}

export function decodeOffsetCheckpoint(path: string, text: string): PartitionOffset[] {
  return parseLines(path, text, 3).map(([topic, partition, offset]) => ({
    topic: topic!,
    partition: parseInteger(path, partition!, 0),
    offset: parseInteger(path, offset!, -1),
  }));
}

export function writeOffsetCheckpoint(path: string, entries: readonly PartitionOffset[]): void {
  writeFileAtomic(path, encodeOffsetCheckpoint(entries));
}

/** Entries of the file, or an empty list if it does not exist. */
export function readOffsetCheckpoint(path: string): PartitionOffset[] {
  const bytes = readSmallFile(path, STORAGE_LIMITS.checkpointBytesMax);
  return bytes === null ? [] : decodeOffsetCheckpoint(path, bytes.toString('utf8'));
}

export interface EpochEntry {
  readonly epoch: LeaderEpoch;
  readonly startOffset: Offset;
}

export function encodeEpochCheckpoint(entries: readonly EpochEntry[]): string {
  return render(entries.map((e) => `${e.epoch} ${e.startOffset}`));
}

export function decodeEpochCheckpoint(path: string, text: string): EpochEntry[] {
  return parseLines(path, text, 2).map(([epoch, startOffset]) => ({
    // parseInteger checked each: a non-negative safe integer.
    epoch: parseInteger(path, epoch!, 0) as LeaderEpoch,
    startOffset: parseInteger(path, startOffset!, 0) as Offset,
  }));
}

export function writeEpochCheckpoint(path: string, entries: readonly EpochEntry[]): void {
  writeFileAtomic(path, encodeEpochCheckpoint(entries));
}

/** `open` turns the file's bytes into the text (an encrypted log's file is sealed, see encryption/file-seal.ts). */
export function readEpochCheckpoint(path: string, open: (bytes: Buffer) => Buffer = (b) => b): EpochEntry[] {
  const bytes = readSmallFile(path, STORAGE_LIMITS.checkpointBytesMax);
  return bytes === null ? [] : decodeEpochCheckpoint(path, open(bytes).toString('utf8'));
}
