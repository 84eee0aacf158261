// How the group coordinator reaches its partitions of __consumer_offsets. The coordinator sees only the
// GroupStorage interface (tests give it an in-memory one); partitionGroupStorage() implements it over the
// broker's leader partitions, described here structurally so that the coordinator does not import the broker.
//
// An append is a leader append with acks=-1 semantics: it answers once the records are on disk (when the log
// acknowledges after fsync) and the high watermark has passed them, or with an error code. Loading reads the
// partition's whole log, batch by batch, from the log start offset to the log end offset.

import { ErrorCode } from '../../protocol/errors.js';
import { buildBatch } from '../../protocol/records/batch-builder.js';
import { decodeRecordsBlob } from '../../protocol/records/decode-records-blob.js';
import type { EncodedRecord } from './group-records.js';

export interface StoredRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

export interface GroupStorage {
  /** Appends records to the partition as its leader; resolves with a Kafka error code once replicated or failed. */
  append(partition: number, records: readonly EncodedRecord[]): Promise<number>;
  /** Every record of the partition's log in offset order, for loading; throws on I/O failure. */
  readAll(partition: number): Iterable<StoredRecord>;
}

/** The parts of the broker's Partition that the coordinator uses. */
export interface OffsetsPartition {
  readonly key: string;
  readonly isLeader: boolean;
  readonly settings: { readonly minInsyncReplicas: number };
  readonly log: {
    readonly logStartOffset: number;
    readonly logEndOffset: number;
    readonly highWatermark: number;
    read(
      startOffset: number,
      maxBytes: number,
    ): { readonly errorCode: number; readonly records?: Buffer; readonly nextOffset?: number };
  };
  appendAsLeader(
    records: Buffer,
    requiredAcks: number,
    minInsyncReplicas: number,
    nowMs: number,
  ): { readonly errorCode: number; readonly lastOffset: number; readonly durable: Promise<void> | null };
}

/** The parts of the broker's Purgatory used to wait for the high watermark. */
export interface OffsetsPurgatory {
  tryCompleteElseWatch(
    op: { tryComplete(): boolean; onComplete(satisfied: boolean): void },
    keys: readonly string[],
    timeoutMs: number,
  ): boolean;
  checkAndComplete(key: string): number;
}

export interface PartitionGroupStorageOptions {
  /** The leader partition `__consumer_offsets-N` on this broker, if any. */
  readonly partition: (index: number) => OffsetsPartition | undefined;
  /** Where acks=-1 writes wait for the high watermark (the broker's produce purgatory). */
  readonly producePurgatory: OffsetsPurgatory;
  /** Told after each append, so waiting follower fetches see the records (the broker's fetch purgatory). */
  readonly fetchPurgatory: OffsetsPurgatory;
  /** offsets.topic.compression.codec */
  readonly compression: number;
  /** offsets.commit.timeout.ms */
  readonly commitTimeoutMs: number;
  /** offsets.load.buffer.size */
  readonly loadBufferBytes: number;
  readonly nowMs: () => number;
}

export function partitionGroupStorage(options: PartitionGroupStorageOptions): GroupStorage {
  return {
    async append(index, records) {
      const partition = options.partition(index);
      if (partition === undefined || !partition.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
      const nowMs = options.nowMs();
      const batch = buildBatch(
        records.map((r) => ({ key: r.key, value: r.value, timestamp: nowMs })),
        { compression: options.compression, timestamp: nowMs },
      );
      const result = partition.appendAsLeader(batch, -1, partition.settings.minInsyncReplicas, nowMs);
      if (result.errorCode !== ErrorCode.NONE) return result.errorCode;
      options.fetchPurgatory.checkAndComplete(partition.key);
      if (result.durable !== null) await result.durable;
      const replicated = await waitForHighWatermark(options, partition, result.lastOffset);
      return replicated ? ErrorCode.NONE : ErrorCode.REQUEST_TIMED_OUT;
    },
    *readAll(index) {
      const partition = options.partition(index);
      if (partition === undefined) return;
      const log = partition.log;
      let offset = log.logStartOffset;
      const end = log.logEndOffset;
      while (offset < end) {
        const read = log.read(offset, options.loadBufferBytes);
        if (read.errorCode !== 0 || read.records === undefined || read.records.length === 0) return;
        const blob = decodeRecordsBlob(read.records, 0, read.records.length, { verifyCrc: false });
        let next = offset;
        for (const batch of blob.batches) {
          next = Math.max(next, batch.lastOffset + 1);
          // Transaction markers carry no group data; transactional offset commits are not written yet.
          if (batch.isControl) continue;
          for (const r of batch.records) if (r.offset >= offset) yield { key: r.key, value: r.value };
        }
        if (next <= offset) return;
        offset = next;
      }
    },
  };
}

function waitForHighWatermark(
  options: PartitionGroupStorageOptions,
  partition: OffsetsPartition,
  lastOffset: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    options.producePurgatory.tryCompleteElseWatch(
      {
        tryComplete: () => partition.log.highWatermark > lastOffset,
        onComplete: (satisfied) => resolve(satisfied),
      },
      [partition.key],
      options.commitTimeoutMs,
    );
  });
}
