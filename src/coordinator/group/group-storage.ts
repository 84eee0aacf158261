// How the group coordinator reaches its partitions of __consumer_offsets. The coordinator sees only the
// GroupStorage interface (tests give it an in-memory one); partitionGroupStorage() implements it over the
// broker's leader partitions, described here structurally so that the coordinator does not import the broker.
//
// An append is a leader append with acks=-1 semantics: it answers once the records are on disk (when the log
// acknowledges after fsync) and the high watermark has passed them, or with an error code. An append may be a
// transactional batch of a producer (TxnOffsetCommit, as Kafka writes it): the COMMIT or ABORT marker that the
// transaction coordinator later writes to the partition ends it. Loading reads the partition's whole log, batch by
// batch, from the log start offset to the log end offset, with each record's offset and transactional producer,
// and the transaction markers.

import { ErrorCode } from '../../protocol/errors.js';
import { buildBatch } from '../../protocol/records/batch-builder.js';
import { decodeRecordsBlob } from '../../protocol/records/decode-records-blob.js';
import type { EncodedRecord } from './group-records.js';

export interface StoredRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Its offset in the log (absent in stores that have none). */
  readonly offset?: number;
  /** The producer id of the transactional batch that holds it; absent or -1 outside transactions. */
  readonly producerId?: number;
  /** Set on a transaction marker of `producerId` (key and value are null then). */
  readonly marker?: 'commit' | 'abort';
}

export interface AppendOptions {
  /** Writes the records as one transactional batch of this producer (TxnOffsetCommit). */
  readonly producer?: { readonly producerId: number; readonly producerEpoch: number };
  /**
   * Called at once, before append() resolves, when the leader has taken the records (they are in its log, not yet
   * replicated), with the offset of the first one; never called when the leader refused them.
   */
  readonly onAppended?: (baseOffset: number) => void;
}

export interface GroupStorage {
  /** Appends records to the partition as its leader; resolves with a Kafka error code once replicated or failed. */
  append(partition: number, records: readonly EncodedRecord[], options?: AppendOptions): Promise<number>;
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
    produceVersion?: number,
    fromClient?: boolean,
  ): {
    readonly errorCode: number;
    readonly baseOffset: number;
    readonly lastOffset: number;
    readonly durable: Promise<void> | null;
  };
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
    async append(index, records, appendOptions = {}) {
      const partition = options.partition(index);
      if (partition === undefined || !partition.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
      const nowMs = options.nowMs();
      const producer = appendOptions.producer;
      const batch = buildBatch(
        records.map((r) => ({ key: r.key, value: r.value, timestamp: nowMs })),
        {
          compression: options.compression,
          timestamp: nowMs,
          ...(producer === undefined
            ? {}
            : {
                producerId: producer.producerId,
                producerEpoch: producer.producerEpoch,
                baseSequence: 0,
                transactional: true,
              }),
        },
      );
      // Not from a client: as Kafka's coordinator appends, only the producer epoch is checked, not sequences.
      const result = partition.appendAsLeader(
        batch,
        -1,
        partition.settings.minInsyncReplicas,
        nowMs,
        Number.MAX_SAFE_INTEGER,
        false,
      );
      if (result.errorCode !== ErrorCode.NONE) return result.errorCode;
      appendOptions.onAppended?.(result.baseOffset);
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
          const producerId = batch.isTransactional ? batch.producerId : -1;
          for (const r of batch.records) {
            if (r.offset < offset) continue;
            if (!batch.isControl) {
              yield { key: r.key, value: r.value, offset: r.offset, producerId };
              continue;
            }
            // A control record's key: version int16, type int16 (0 ABORT, 1 COMMIT).
            if (r.key === null || r.key.length < 4) continue;
            const type = r.key.readInt16BE(2);
            if (type !== 0 && type !== 1) continue;
            yield {
              key: null,
              value: null,
              offset: r.offset,
              producerId,
              marker: type === 1 ? 'commit' : 'abort',
            };
          }
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
