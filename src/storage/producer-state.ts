// Producer state of one partition: what idempotent and transactional produce need to know about each producer.
//
// Per producer id: its epoch, the sequence and offset ranges of its last 5 batches (to answer a retried batch
// with its original offsets), the last timestamp (for expiry), the transaction coordinator's epoch and the
// first offset of its open transaction. Across producers: the open transactions by first offset, which give the
// first unstable offset (the LSO is the smaller of it and the high watermark).
//
// The broker calls `check` before assigning offsets (duplicates, sequence/epoch errors and a plain batch from a
// producer with an open transaction come back as values), and the Log calls `apply` for every batch it appends or
// replays. State is rebuilt on recovery from the latest snapshot (producer-snapshot.ts) plus the log after it. Bounded by STORAGE_LIMITS.producerIdsPerPartitionMax
// (least recently used idle producers are forgotten first) and by producer.id.expiration.ms.

import { NO_PRODUCER_EPOCH, type ProducerEpoch, type ProducerId } from '../common/ids.js';
import { batchHeader } from '../protocol/records/batch-header.js';
import { ControlType, readEndTxnMarker } from './control-marker.js';
import { StorageErrorCode } from './error-codes.js';
import { STORAGE_LIMITS } from './log-config.js';
import type { SnapshotEntry } from './producer-snapshot.js';

const NO_SEQUENCE = -1;
const NO_EPOCH = NO_PRODUCER_EPOCH;
const INT32_MAX = 0x7fffffff;

interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
  timestampMs: number;
}

export interface ProducerEntry {
  readonly producerId: ProducerId;
  producerEpoch: ProducerEpoch;
  /** Oldest first, at most STORAGE_LIMITS.batchesPerProducer. */
  readonly batches: BatchMetadata[];
  coordinatorEpoch: number;
  /** First offset of the open transaction, or -1. */
  currentTxnFirstOffset: number;
  lastTimestampMs: number;
}

export type ProducerCheck =
  | { readonly kind: 'ok' }
  | {
      readonly kind: 'duplicate';
      readonly firstOffset: number;
      readonly lastOffset: number;
      readonly timestampMs: number;
    }
  | { readonly kind: 'error'; readonly errorCode: StorageErrorCode };

const OK: ProducerCheck = { kind: 'ok' };
const INVALID_TXN_STATE: ProducerCheck = { kind: 'error', errorCode: StorageErrorCode.InvalidTxnState };

/**
 * Whether the data batch at pos is not transactional while its producer has a transaction open in this partition.
 * Kafka's ProducerAppendInfo refuses it (InvalidTxnStateException, INVALID_TXN_STATE) once the epoch and
 * sequence have passed: its records would land inside the transaction without belonging to it.
 */
function outsideOpenTxn(entry: ProducerEntry | undefined, buf: Buffer, pos: number): boolean {
  return entry !== undefined && entry.currentTxnFirstOffset >= 0 && !batchHeader.isTransactional(buf, pos);
}

export interface CompletedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly isAborted: boolean;
  readonly lastStableOffset: number;
}

/** Kafka's sequence arithmetic: sequences wrap from int32 max to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  return sequence > INT32_MAX - increment ? increment - (INT32_MAX - sequence) - 1 : sequence + increment;
}

function decrementSequence(sequence: number, decrement: number): number {
  return sequence < decrement ? INT32_MAX - (decrement - sequence) + 1 : sequence - decrement;
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

/** Verification guards kept per log at most (each a producer whose verification is in flight). */
const VERIFICATION_GUARDS_MAX = 10_000;

export class ProducerStateManager {
  /** Insertion order is recency: `touch` moves an entry to the end. */
  private readonly producers = new Map<number, ProducerEntry>();
  /** Open transactions, first offset -> producer id, in increasing offset order (appends only go forward). */
  private readonly ongoingTxns = new Map<number, number>();
  /**
   * Completed transactions whose marker may still be at or above the high watermark, first offset -> marker
   * offset (Kafka's unreplicatedTxns): they hold the last stable offset at their first offset until the high
   * watermark passes the marker, so read_committed consumers never get a transaction's data before its marker.
   * Emptied as the high watermark moves (onHighWatermarkUpdated); at most one entry per marker above it.
   */
  private readonly unreplicatedTxns = new Map<number, number>();
  /**
   * KIP-890 verification guards (Kafka's VerificationStateEntry): producer id -> the guard of a verification with
   * a remote transaction coordinator in flight for the producer's first transactional batch. The transaction's
   * first batch or a transaction marker ends it, so an append that finds its guard gone must not open a
   * transaction (a marker was written while the coordinator answered). In memory only; at most
   * VERIFICATION_GUARDS_MAX, the oldest dropped past it (its append is refused and retried).
   */
  private readonly verificationGuards = new Map<number, object>();
  /** Every batch below this offset has been applied. */
  private mapEndOffsetValue: number;

  constructor(
    mapEndOffset = 0,
    private readonly producersMax: number = STORAGE_LIMITS.producerIdsPerPartitionMax,
  ) {
    this.mapEndOffsetValue = mapEndOffset;
  }

  get mapEndOffset(): number {
    return this.mapEndOffsetValue;
  }

  get producerCount(): number {
    return this.producers.size;
  }

  producer(producerId: ProducerId): Readonly<ProducerEntry> | undefined {
    return this.producers.get(producerId);
  }

  /** Every producer known to this partition, least recently active first (DescribeProducers). */
  allProducers(): IterableIterator<Readonly<ProducerEntry>> {
    return this.producers.values();
  }

  /** The first offset of the oldest open transaction, or null. */
  private firstOngoingOffset(): number | null {
    for (const first of this.ongoingTxns.keys()) return first;
    return null;
  }

  /**
   * The first offset of the oldest transaction that is open, or completed by a marker at or above
   * `highWatermark`, or null: nothing at or after it is stable (Kafka's firstUnstableOffset).
   */
  firstUnstableOffset(highWatermark: number): number | null {
    let first = this.firstOngoingOffset();
    for (const [firstOffset, markerOffset] of this.unreplicatedTxns) {
      if (markerOffset >= highWatermark && (first === null || firstOffset < first)) first = firstOffset;
    }
    return first;
  }

  /** Forgets completed transactions whose marker is below the high watermark: they are stable now. */
  onHighWatermarkUpdated(highWatermark: number): void {
    if (this.unreplicatedTxns.size === 0) return;
    for (const [firstOffset, markerOffset] of this.unreplicatedTxns) {
      if (markerOffset < highWatermark) this.unreplicatedTxns.delete(firstOffset);
    }
  }

  /**
   * Checks a batch from a producer (the header at `pos` of `buf`) before it gets offsets: a retry of one of the
   * last batches is a duplicate (answered with its original offsets); a stale epoch, a gap in sequences, or a
   * batch outside the producer's open transaction is an error. Batches without a producer id always pass.
   */
  check(buf: Buffer, pos: number): ProducerCheck {
    const result = this.checkSequence(buf, pos);
    if (result.kind !== 'ok' || batchHeader.isControl(buf, pos)) return result;
    return outsideOpenTxn(this.producers.get(batchHeader.producerId(buf, pos)), buf, pos)
      ? INVALID_TXN_STATE
      : OK;
  }

  /** check's duplicate, epoch and sequence rules (and a marker's coordinator epoch). */
  private checkSequence(buf: Buffer, pos: number): ProducerCheck {
    const producerId = batchHeader.producerId(buf, pos);
    if (producerId < 0) return OK;
    const entry = this.producers.get(producerId);
    if (entry === undefined) return OK; // unknown producers may start at any sequence (KIP-360)
    const epoch = batchHeader.producerEpoch(buf, pos);
    if (batchHeader.isControl(buf, pos)) {
      if (epoch < entry.producerEpoch)
        return { kind: 'error', errorCode: StorageErrorCode.InvalidProducerEpoch };
      const marker = readEndTxnMarker(buf, pos);
      if (marker !== null && marker.coordinatorEpoch < entry.coordinatorEpoch) {
        return { kind: 'error', errorCode: StorageErrorCode.TransactionCoordinatorFenced };
      }
      return OK;
    }
    const firstSeq = batchHeader.baseSequence(buf, pos);
    const lastSeq = incrementSequence(firstSeq, batchHeader.lastOffsetDelta(buf, pos));
    if (epoch === entry.producerEpoch) {
      for (const b of entry.batches) {
        if (b.firstSeq === firstSeq && b.lastSeq === lastSeq) {
          return {
            kind: 'duplicate',
            firstOffset: b.firstOffset,
            lastOffset: b.lastOffset,
            timestampMs: b.timestampMs,
          };
        }
      }
    }
    if (epoch < entry.producerEpoch)
      return { kind: 'error', errorCode: StorageErrorCode.InvalidProducerEpoch };
    if (epoch !== entry.producerEpoch) {
      // A bumped epoch starts its sequences again at 0.
      if (firstSeq !== 0 && entry.producerEpoch !== NO_EPOCH) {
        return { kind: 'error', errorCode: StorageErrorCode.OutOfOrderSequenceNumber };
      }
      return OK;
    }
    const last = entry.batches[entry.batches.length - 1];
    // With no batch remembered (all removed by retention or DeleteRecords), any sequence is accepted, as in Kafka.
    if (last !== undefined && !inSequence(last.lastSeq, firstSeq)) {
      return { kind: 'error', errorCode: StorageErrorCode.OutOfOrderSequenceNumber };
    }
    return OK;
  }

  /**
   * Checks the batches at `positions` of one produce request together, as Kafka does: each producer's first
   * batch in the request is checked against the stored state (a duplicate or an error comes back as is), and
   * its later batches against the one before them in the same request, since they will be appended together.
   */
  checkBatches(buf: Buffer, positions: readonly number[]): ProducerCheck {
    let staged: Map<number, { epoch: number; lastSeq: number; inTxn: boolean }> | null = null;
    for (const pos of positions) {
      const producerId = batchHeader.producerId(buf, pos);
      if (producerId < 0 || batchHeader.isControl(buf, pos)) continue;
      const epoch = batchHeader.producerEpoch(buf, pos);
      const firstSeq = batchHeader.baseSequence(buf, pos);
      const lastSeq = incrementSequence(firstSeq, batchHeader.lastOffsetDelta(buf, pos));
      const transactional = batchHeader.isTransactional(buf, pos);
      const previous = staged?.get(producerId);
      let inTxn: boolean;
      if (previous === undefined) {
        const result = this.check(buf, pos);
        if (result.kind !== 'ok') return result;
        inTxn = transactional || (this.producers.get(producerId)?.currentTxnFirstOffset ?? -1) >= 0;
      } else if (epoch < previous.epoch) {
        return { kind: 'error', errorCode: StorageErrorCode.InvalidProducerEpoch };
      } else if (epoch === previous.epoch ? !inSequence(previous.lastSeq, firstSeq) : firstSeq !== 0) {
        return { kind: 'error', errorCode: StorageErrorCode.OutOfOrderSequenceNumber };
      } else if (previous.inTxn && !transactional) {
        // A transaction opened by an earlier batch of the same request is open for this one too.
        return INVALID_TXN_STATE;
      } else {
        inTxn = previous.inTxn || transactional;
      }
      staged ??= new Map();
      staged.set(producerId, { epoch, lastSeq, inTxn });
    }
    return OK;
  }

  /**
   * A verification of the producer's first transactional batch starts: the guard its append must still find
   * (verifiedBy). Concurrent verifications of one producer share a guard, as Kafka's do.
   */
  startVerification(producerId: ProducerId): object {
    let guard = this.verificationGuards.get(producerId);
    if (guard === undefined) {
      guard = {};
      this.verificationGuards.set(producerId, guard);
      if (this.verificationGuards.size > VERIFICATION_GUARDS_MAX) {
        const oldest = this.verificationGuards.keys().next().value;
        if (oldest !== undefined) this.verificationGuards.delete(oldest);
      }
    }
    return guard;
  }

  /**
   * Whether the producer's transactional batches may be appended after the verification that gave `guard`: they
   * join a transaction already open in this log, or the guard is still the producer's (no marker came since).
   */
  verifiedBy(producerId: ProducerId, guard: object): boolean {
    const entry = this.producers.get(producerId);
    if (entry !== undefined && entry.currentTxnFirstOffset >= 0) return true;
    return this.verificationGuards.get(producerId) === guard;
  }

  /** Records that batches without a producer id were appended up to `offset` (exclusive). */
  advanceMapEnd(offset: number): void {
    if (offset > this.mapEndOffsetValue) this.mapEndOffsetValue = offset;
  }

  /**
   * Applies an appended batch (header at `pos`; a control batch must be whole in `buf`). Returns the completed
   * transaction when the batch is a transaction marker, so the Log can index aborted ones.
   */
  apply(buf: Buffer, pos: number): CompletedTxn | null {
    const lastOffset = batchHeader.lastOffset(buf, pos);
    if (lastOffset + 1 > this.mapEndOffsetValue) this.mapEndOffsetValue = lastOffset + 1;
    // The batch header's producer id and epoch, as the log accepted them (ids below 0 mean none).
    const producerId = batchHeader.producerId(buf, pos) as ProducerId;
    if (producerId < 0) return null;
    const epoch = batchHeader.producerEpoch(buf, pos) as ProducerEpoch;
    const baseOffset = batchHeader.baseOffset(buf, pos);
    const timestampMs = batchHeader.maxTimestamp(buf, pos);
    const entry = this.touch(producerId);
    if (epoch > entry.producerEpoch) {
      entry.producerEpoch = epoch;
      entry.batches.length = 0;
    }
    entry.lastTimestampMs = timestampMs;
    if (batchHeader.isControl(buf, pos)) {
      const marker = readEndTxnMarker(buf, pos);
      if (marker === null) return null;
      this.verificationGuards.delete(producerId);
      entry.coordinatorEpoch = marker.coordinatorEpoch;
      const firstOffset = entry.currentTxnFirstOffset >= 0 ? entry.currentTxnFirstOffset : baseOffset;
      if (entry.currentTxnFirstOffset >= 0) {
        this.ongoingTxns.delete(entry.currentTxnFirstOffset);
        this.unreplicatedTxns.set(entry.currentTxnFirstOffset, lastOffset);
      }
      entry.currentTxnFirstOffset = -1;
      // The index entry's LSO counts open transactions only, as Kafka's lastStableOffset(completedTxn) does.
      const lastStableOffset = this.firstOngoingOffset() ?? lastOffset + 1;
      return {
        producerId,
        firstOffset,
        lastOffset,
        isAborted: marker.type === ControlType.Abort,
        lastStableOffset,
      };
    }
    const firstSeq = batchHeader.baseSequence(buf, pos);
    entry.batches.push({
      firstSeq,
      lastSeq: incrementSequence(firstSeq, batchHeader.lastOffsetDelta(buf, pos)),
      firstOffset: baseOffset,
      lastOffset,
      timestampMs,
    });
    if (entry.batches.length > STORAGE_LIMITS.batchesPerProducer) entry.batches.shift();
    if (batchHeader.isTransactional(buf, pos) && entry.currentTxnFirstOffset < 0) {
      entry.currentTxnFirstOffset = baseOffset;
      this.ongoingTxns.set(baseOffset, producerId);
      this.verificationGuards.delete(producerId);
    }
    return null;
  }

  private touch(producerId: ProducerId): ProducerEntry {
    let entry = this.producers.get(producerId);
    if (entry !== undefined) {
      this.producers.delete(producerId);
    } else {
      entry = {
        producerId,
        producerEpoch: NO_EPOCH,
        batches: [],
        coordinatorEpoch: -1,
        currentTxnFirstOffset: -1,
        lastTimestampMs: -1,
      };
      this.evictIfFull();
    }
    this.producers.set(producerId, entry);
    return entry;
  }

  private evictIfFull(): void {
    if (this.producers.size < this.producersMax) return;
    for (const [id, entry] of this.producers) {
      if (entry.currentTxnFirstOffset < 0) {
        this.producers.delete(id);
        return;
      }
    }
  }

  /** Forgets producers idle for `expirationMs` with no open transaction (producer.id.expiration.ms). */
  removeExpired(nowMs: number, expirationMs: number): number {
    let removed = 0;
    for (const [id, entry] of this.producers) {
      if (entry.currentTxnFirstOffset < 0 && nowMs - entry.lastTimestampMs >= expirationMs) {
        this.producers.delete(id);
        removed++;
      }
    }
    return removed;
  }

  /** Entries in snapshot form (only the last batch of each producer is kept, as in Kafka's snapshots). */
  toSnapshot(): SnapshotEntry[] {
    const out: SnapshotEntry[] = [];
    for (const e of this.producers.values()) {
      const last = e.batches[e.batches.length - 1];
      out.push({
        producerId: e.producerId,
        epoch: e.producerEpoch,
        lastSequence: last?.lastSeq ?? NO_SEQUENCE,
        lastOffset: last?.lastOffset ?? -1,
        offsetDelta: last === undefined ? 0 : last.lastOffset - last.firstOffset,
        timestamp: e.lastTimestampMs,
        coordinatorEpoch: e.coordinatorEpoch,
        currentTxnFirstOffset: e.currentTxnFirstOffset,
      });
    }
    return out;
  }

  /** Replaces the state with a snapshot taken at `offset`. */
  loadSnapshot(offset: number, entries: readonly SnapshotEntry[]): void {
    this.clear(offset);
    const open: [number, number][] = [];
    for (const s of entries) {
      // As the snapshot wrote them from this state (its file CRC-checked when read, producer-snapshot.ts).
      const entry = this.touch(s.producerId as ProducerId);
      entry.producerEpoch = s.epoch as ProducerEpoch;
      entry.coordinatorEpoch = s.coordinatorEpoch;
      entry.lastTimestampMs = s.timestamp;
      entry.currentTxnFirstOffset = s.currentTxnFirstOffset;
      if (s.lastSequence !== NO_SEQUENCE && s.lastOffset >= 0) {
        entry.batches.push({
          firstSeq: decrementSequence(s.lastSequence, s.offsetDelta),
          lastSeq: s.lastSequence,
          firstOffset: s.lastOffset - s.offsetDelta,
          lastOffset: s.lastOffset,
          timestampMs: s.timestamp,
        });
      }
      if (s.currentTxnFirstOffset >= 0) open.push([s.currentTxnFirstOffset, s.producerId]);
    }
    open.sort((a, b) => a[0] - b[0]);
    for (const [first, id] of open) this.ongoingTxns.set(first, id);
  }

  /** Empties the state; `offset` is where replay will start. */
  clear(offset: number): void {
    this.producers.clear();
    this.verificationGuards.clear();
    this.ongoingTxns.clear();
    this.unreplicatedTxns.clear();
    this.mapEndOffsetValue = offset;
  }
}
