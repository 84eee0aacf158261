// How the group coordinator reaches its partitions of __consumer_offsets. The coordinator sees only the
// GroupStorage interface (tests give it an in-memory one); partitionGroupStorage() implements it over the
// broker's leader partitions, described here structurally so that the coordinator does not import the broker.
//
// An append is the broker's acks=-1 leader append (appendAsLeader, given by the broker): it answers once the
// records are on disk (when the log acknowledges after fsync) and the high watermark has passed them with
// min.insync.replicas in the ISR, or with an error code (NOT_LEADER_OR_FOLLOWER at once when the broker stops
// leading the partition, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT after offsets.commit.timeout.ms).
// An append may be a
// transactional batch of a producer (TxnOffsetCommit, as Kafka writes it): the COMMIT or ABORT marker that the
// transaction coordinator later writes to the partition ends it. Loading reads the partition's whole log, batch by
// batch, from the log start offset to the log end offset, with each record's offset and transactional producer,
// and the transaction markers.

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
  /**
   * The KIP-890 verification that let this transactional batch in (TxnOffsetCommit): the append is refused with
   * INVALID_TXN_STATE unless the producer still holds it in the partition (no marker came since), or has a
   * transaction open there.
   */
  readonly verificationGuard?: AppendVerificationGuard;
}

/** A producer's verification guard in a partition's producer state (Kafka's VerificationGuard); opaque here. */
export interface AppendVerificationGuard {
  readonly producerId: number;
  readonly guard: object;
}

export interface GroupStorage {
  /** Appends records to the partition as its leader; resolves with a Kafka error code once replicated or failed. */
  append(partition: number, records: readonly EncodedRecord[], options?: AppendOptions): Promise<number>;
  /** Every record of the partition's log in offset order, for loading; throws on I/O failure. */
  readAll(partition: number): Iterable<StoredRecord>;
  /**
   * Resolves true once this broker is shown to still lead the partition (its in-sync followers follow it at its
   * leader epoch), false when it does not or cannot be shown in time: before a stable OffsetFetch is answered, so
   * that a deposed coordinator does not answer from its stale copy. Stores without replicas leave it out.
   */
  confirmLeadership?(partition: number): Promise<boolean>;
}

/** The parts of the broker's Partition that loading reads. */
export interface OffsetsPartition {
  readonly log: {
    readonly logStartOffset: number;
    readonly logEndOffset: number;
    read(
      startOffset: number,
      maxBytes: number,
    ): { readonly errorCode: number; readonly records?: Buffer; readonly nextOffset?: number };
  };
}

export interface PartitionGroupStorageOptions {
  /** The leader partition `__consumer_offsets-N` on this broker, if any. */
  readonly partition: (index: number) => OffsetsPartition | undefined;
  /**
   * Appends a batch to partition `index` as its leader with acks=-1, not as a client's (as Kafka's coordinator
   * appends: only the producer epoch is checked, not sequences), calls `onAppended` with the first offset once the
   * leader has taken it, and resolves with its error code once replicated, refused or failed: the broker's
   * appendAsLeaderAndWait (broker/replica/replicated-append.ts).
   */
  readonly appendAsLeader: (
    index: number,
    records: Buffer,
    timeoutMs: number,
    onAppended?: (baseOffset: number) => void,
    verificationGuard?: AppendVerificationGuard,
  ) => Promise<number>;
  /** offsets.topic.compression.codec */
  readonly compression: number;
  /** offsets.commit.timeout.ms */
  readonly commitTimeoutMs: number;
  /** offsets.load.buffer.size */
  readonly loadBufferBytes: number;
  readonly nowMs: () => number;
  /** GroupStorage.confirmLeadership for partition `index` (broker/replica/leadership-confirmations.ts). */
  readonly confirmLeadership?: (index: number) => Promise<boolean>;
}

export function partitionGroupStorage(options: PartitionGroupStorageOptions): GroupStorage {
  return {
    append(index, records, appendOptions = {}) {
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
      return options.appendAsLeader(
        index,
        batch,
        options.commitTimeoutMs,
        appendOptions.onAppended,
        appendOptions.verificationGuard,
      );
    },
    ...(options.confirmLeadership === undefined ? {} : { confirmLeadership: options.confirmLeadership }),
    *readAll(index) {
      const partition = options.partition(index);
      if (partition === undefined) return;
      const log = partition.log;
      let offset = log.logStartOffset;
      const end = log.logEndOffset;
      while (offset < end) {
        // partition.log each time: a move between log directories may swap the log between two reads.
        const read = partition.log.read(offset, options.loadBufferBytes);
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
