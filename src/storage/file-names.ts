// Names of the files and directories of a log directory, exactly as Kafka spells them.
//
// A partition lives in `<topic>-<partition>`; its segments are named by their base offset, zero-padded to
// 20 digits, with one suffix per file kind. A partition being deleted is renamed
// `<topic>-<partition>.<uuid without dashes>-delete`, and a segment being deleted gets `.deleted` appended. A
// replica being moved to another log directory (AlterReplicaLogDirs) is copied into
// `<topic>-<partition>.<uuid without dashes>-future` there until it replaces the current log.

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
export const TXN_INDEX_SUFFIX = '.txnindex';
/** An encrypted segment's key and chunk tags (storage/encryption/segment-cipher.ts). */
export const ENC_SUFFIX = '.enc';
export const SNAPSHOT_SUFFIX = '.snapshot';
export const DELETED_SUFFIX = '.deleted';
/** Compaction writes `.cleaned` files and swaps them in through `.swap` files (see cleaner/swap-files.ts). */
export const CLEANED_SUFFIX = '.cleaned';
export const SWAP_SUFFIX = '.swap';
export const TMP_SUFFIX = '.tmp';
export const DELETE_DIR_SUFFIX = '-delete';
export const FUTURE_DIR_SUFFIX = '-future';

export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const REPLICATION_CHECKPOINT_FILE = 'replication-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const CLEANER_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';
export const PARTITION_METADATA_FILE = 'partition.metadata';
export const META_PROPERTIES_FILE = 'meta.properties';

const OFFSET_DIGITS = 20;

/** `00000000000000000042`: base offsets are non-negative and below 2^53 here, so padding a number is exact. */
export function offsetFileStem(offset: number): string {
  return String(offset).padStart(OFFSET_DIGITS, '0');
}

export function segmentFilePath(dir: string, baseOffset: number, suffix: string): string {
  return join(dir, offsetFileStem(baseOffset) + suffix);
}

/** Parses `<20 digits><suffix>`; returns null for any other name. */
export function parseOffsetFileName(name: string): { offset: number; suffix: string } | null {
  if (name.length <= OFFSET_DIGITS) return null;
  const stem = name.slice(0, OFFSET_DIGITS);
  if (!/^[0-9]{20}$/.test(stem)) return null;
  const offset = Number(stem);
  if (!Number.isSafeInteger(offset)) return null;
  return { offset, suffix: name.slice(OFFSET_DIGITS) };
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export function partitionDirName(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** Topic names may contain '-', so the partition is what follows the last one. */
export function parsePartitionDirName(name: string): TopicPartition | null {
  const dash = name.lastIndexOf('-');
  if (dash <= 0 || dash === name.length - 1) return null;
  const digits = name.slice(dash + 1);
  if (!/^[0-9]{1,10}$/.test(digits)) return null;
  const partition = Number(digits);
  if (partition > 0x7fffffff) return null;
  return { topic: name.slice(0, dash), partition };
}

/** `<topic>-<partition>.<uuid hex>-delete`, the name Kafka gives a partition directory awaiting deletion. */
export function deleteDirName(tp: TopicPartition): string {
  return `${partitionDirName(tp)}.${randomUUID().replaceAll('-', '')}${DELETE_DIR_SUFFIX}`;
}

export function isDeleteDirName(name: string): boolean {
  return /\.[0-9a-f]{32}-delete$/.test(name);
}

/** `<topic>-<partition>.<uuid hex>-future`, the name Kafka gives the log a replica is being moved into. */
export function futureDirName(tp: TopicPartition): string {
  return `${partitionDirName(tp)}.${randomUUID().replaceAll('-', '')}${FUTURE_DIR_SUFFIX}`;
}

/** The partition of a `-future` directory name, or null for any other name. */
export function parseFutureDirName(name: string): TopicPartition | null {
  const m = /^(.+)\.[0-9a-f]{32}-future$/.exec(name);
  return m === null ? null : parsePartitionDirName(m[1]!);
}
