// The transaction coordinator (KIP-98): one TxnMetadata per transactional id, for the partitions of
// __transaction_state this broker leads. Every state change is written as a TransactionLogKey/Value record to the
// id's partition (abs(javaHashCode(id)) % partitions) and applied in memory only once the write is acknowledged
// under the high watermark; while a write is in flight the id answers CONCURRENT_TRANSACTIONS.
//
// EndTxn writes PrepareCommit/PrepareAbort, answers the producer, then has the markers written to every partition
// of the transaction (retrying until each leader accepts them, unless one answers that another coordinator owns
// the transaction: markerAnswerAction) and writes CompleteCommit/CompleteAbort. Loading a
// partition replays its records, last per id winning, and finishes any transaction left in a Prepare state; a higher
// coordinator epoch on the same broker reloads the partition, cancelling the markers of the old epoch (as Kafka).
// Transactions older than their timeout are aborted by tick() with the producer epoch bumped (fencing the
// producer), as Kafka's abortTimedOutTransactions does; ids idle for transactional.id.expiration.ms are forgotten
// (a tombstone each), as Kafka's removeExpiredTransactionalIds does.
//
// Every method runs to completion without awaiting; writes re-check on completion that the partition is still
// loaded by the same leadership (token) and that the metadata is the same object.

import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import { transactionLogKeySchema, transactionLogValueSchema } from '../../protocol/internal/index.js';
import type { TransactionLogValue } from '../../protocol/internal/transaction-log-value.js';
import { decodeVersioned, encodeVersioned } from '../../protocol/messages/codec-support.js';
import { groupPartition } from '../group/group-partitioner.js';
import type { EncodedRecord } from '../group/group-records.js';
import type { GroupStorage } from '../group/group-storage.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';

/** Kafka's TransactionState ids, as stored in TransactionLogValue.transactionStatus. */
export const TxnState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const;
export type TxnState = (typeof TxnState)[keyof typeof TxnState];

export const TXN_STATE_NAMES = [
  'Empty',
  'Ongoing',
  'PrepareCommit',
  'PrepareAbort',
  'CompleteCommit',
  'CompleteAbort',
  'Dead',
  'PrepareEpochFence',
] as const;

const MAX_EPOCH = 32767;
const MARKER_RETRY_MS = 200;
/**
 * Bound on the keys of one append of expiration tombstones, well under __transaction_state's max.message.bytes
 * (Kafka fills a batch up to that size, then starts another).
 */
const TOMBSTONE_KEY_BYTES_PER_APPEND_MAX = 256 * 1024;

export interface TopicPartitionRef {
  readonly topic: string;
  readonly partition: number;
}

export interface TxnMetadata {
  readonly transactionalId: string;
  producerId: number;
  /** The producer id before the last InitProducerId (Kafka's previousProducerId; in memory only, as v0 records lack it). */
  previousProducerId: number;
  producerEpoch: number;
  /** The epoch before the last bump a producer asked for with its epoch; -1 after a new producer or a fence. */
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  /** "topic\0partition" keys of the partitions in the transaction. */
  partitions: Set<string>;
  startMs: number;
  updateMs: number;
  /** A write of this id is in flight: other requests answer CONCURRENT_TRANSACTIONS. */
  busy: boolean;
  /**
   * An epoch fence (the abort of a timed-out transaction, or of one a new producer interrupts) bumped the epoch in
   * memory but failed to write it: the next fence reuses that epoch instead of bumping again (Kafka's
   * hasFailedEpochFence). Cleared once a PrepareCommit/PrepareAbort is written.
   */
  hasFailedEpochFence: boolean;
  readonly partition: number;
}

export interface MarkerRequest {
  /** For logs: the markers carry the producer id only. */
  readonly transactionalId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly commit: boolean;
  readonly coordinatorEpoch: number;
  readonly partitions: readonly TopicPartitionRef[];
}

/** A partition whose leader did not take a marker: its answer, or the writer's reason when none came. */
export interface MarkerFailure extends TopicPartitionRef {
  readonly errorCode: number;
}

/**
 * What the coordinator does with a partition's answer to a marker, as Kafka's
 * TransactionMarkerRequestCompletionHandler does:
 * - 'written': NONE; and UNSUPPORTED_FOR_MESSAGE_FORMAT or UNSUPPORTED_VERSION, which Kafka takes the partition out
 *   of the waiting set for (its producer could not have written to it either);
 * - 'fenced': INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED. The partition has seen a later epoch of the
 *   producer or a marker of a later coordinator: another coordinator owns the transaction and completes it. This
 *   one stops sending markers and writes no Complete record; the transaction stays in its Prepare state here
 *   (CONCURRENT_TRANSACTIONS) until this broker stops leading its __transaction_state partition, or leads it again
 *   under a higher coordinator epoch (a reload, which sends the markers again: onLeadershipChange). A leader that
 *   answers a fence wrongly thus holds the transaction only until its coordinator changes, as in Kafka;
 * - 'retry': every other answer, and none (leader moving or restarting, not enough replicas, timeout, a lost
 *   connection): the marker goes again to the partition's leader of that moment. Kafka throws on the answers it
 *   calls fatal (CORRUPT_MESSAGE, ...) and leaves the transaction hanging; Brook retries them, and logs them.
 */
export function markerAnswerAction(errorCode: number): 'written' | 'fenced' | 'retry' {
  switch (errorCode) {
    case ErrorCode.NONE:
    case ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case ErrorCode.UNSUPPORTED_VERSION:
      return 'written';
    case ErrorCode.INVALID_PRODUCER_EPOCH:
    case ErrorCode.TRANSACTION_COORDINATOR_FENCED:
      return 'fenced';
    default:
      return 'retry';
  }
}

export interface TransactionCoordinatorOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly storage: GroupStorage;
  readonly partitionCount: () => number;
  readonly nextProducerId: () => Promise<number>;
  /** transaction.max.timeout.ms */
  readonly maxTimeoutMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  readonly abortIntervalMs: number;
  /** transactional.id.expiration.ms */
  readonly transactionalIdExpirationMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  readonly removeExpiredIntervalMs: number;
  /** Writes the markers; resolves with the partitions that did not take them (empty when all were written). */
  readonly writeMarkers: (request: MarkerRequest) => Promise<MarkerFailure[]>;
  /** The leader epoch of partition `index` of __transaction_state (the markers' coordinator epoch). */
  readonly coordinatorEpoch: (index: number) => number;
  /** Whether a partition exists (AddPartitionsToTxn answers UNKNOWN_TOPIC_OR_PARTITION otherwise). */
  readonly partitionExists?: (topic: string, partition: number) => boolean;
  /** Creates __transaction_state; answers the number of partitions created, 0 when none were. */
  readonly createTopic?: () => Promise<number>;
  readonly defer?: (fn: () => void) => void;
  /** Delay before retrying markers (tests give 0 and run timers themselves). */
  readonly retry?: (fn: () => void, ms: number) => void;
}

export interface InitResult {
  readonly errorCode: number;
  readonly producerId: number;
  readonly producerEpoch: number;
}

/**
 * A led partition of __transaction_state: loading or active, under one leadership (token) at one coordinator
 * epoch (its leader epoch when loading began). Markers carry that epoch; a higher one reloads the partition.
 */
type PartitionStatus = {
  state: 'loading' | 'active';
  readonly token: number;
  readonly coordinatorEpoch: number;
};

const tpKey = (topic: string, partition: number): string => `${topic}\0${partition}`;
const tpOf = (key: string): TopicPartitionRef => {
  const i = key.lastIndexOf('\0');
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
};

/** The fields of a transaction that its TransactionLogValue record stores besides the state and partitions. */
export type TxnRecordFields = Pick<
  TxnMetadata,
  'transactionalId' | 'producerId' | 'producerEpoch' | 'timeoutMs' | 'startMs' | 'updateMs'
>;

export function transactionRecord<T extends Readonly<TxnRecordFields>>(
  m: T,
  state: TxnState,
  partitions: Set<string>,
): EncodedRecord {
  const byTopic = new Map<string, number[]>();
  for (const k of partitions) {
    const tp = tpOf(k);
    const list = byTopic.get(tp.topic) ?? [];
    list.push(tp.partition);
    byTopic.set(tp.topic, list);
  }
  const value: TransactionLogValue = {
    producerId: BigInt(m.producerId),
    previousProducerId: -1n,
    nextProducerId: -1n,
    producerEpoch: m.producerEpoch,
    transactionTimeoutMs: m.timeoutMs,
    transactionStatus: state,
    transactionPartitions: [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds })),
    transactionLastUpdateTimestampMs: BigInt(m.updateMs),
    transactionStartTimestampMs: BigInt(m.startMs),
    clientTransactionVersion: 0,
  };
  return {
    key: transactionLogKey(m.transactionalId),
    value: encodeVersioned(transactionLogValueSchema, 0, value),
  };
}

function transactionLogKey(transactionalId: string): Buffer {
  return encodeVersioned(transactionLogKeySchema, 0, { transactionalId });
}

/** Kafka's TransactionState.isExpirationAllowed: the states in which no transaction runs. */
function isExpirationAllowed(state: TxnState): boolean {
  return state === TxnState.Empty || state === TxnState.CompleteCommit || state === TxnState.CompleteAbort;
}

/** Java's String.hashCode-based partition, as for groups. */
export function transactionPartition(transactionalId: string, partitions: number): number {
  return groupPartition(transactionalId, partitions);
}

/** Kafka's TransactionMetadata.isEpochExhausted: no epoch bump is left after this one. */
export function isEpochExhausted(producerEpoch: number): boolean {
  return producerEpoch >= MAX_EPOCH - 1;
}

/**
 * Kafka's isValidProducerId (KIP-360): whether InitProducerId may go on with the producer id and epoch a client
 * sent. Yes when the id's metadata was just created (no producer yet, epoch -1: a client recovering from
 * UNKNOWN_PRODUCER_ID, or one that sends 0/0 for a new id), when the producer id is the current one (the epoch
 * is checked by nextEpoch), or when it is the previous one with an exhausted epoch: a retry of the bump that
 * rotated the producer id, whose answer the client never received.
 */
function isValidProducerId(m: TxnMetadata, expected: { producerId: number; producerEpoch: number }): boolean {
  return (
    m.producerEpoch === -1 ||
    expected.producerId === m.producerId ||
    (expected.producerId === m.previousProducerId && isEpochExhausted(expected.producerEpoch))
  );
}

interface NextProducer {
  readonly producerId: number;
  readonly epoch: number;
  readonly lastEpoch: number;
}

/**
 * Kafka's prepareIncrementProducerEpoch for an epoch that is not exhausted: the producer id and epoch an
 * InitProducerId writes, or PRODUCER_FENCED. Without an expected epoch the epoch is bumped and no last epoch is
 * kept (a new producer fences the others); with the current epoch (or none yet) it is bumped and the current one
 * becomes the last; with the last epoch it is a retry of a bump that succeeded, answered without bumping again.
 */
function nextEpoch(m: TxnMetadata, expectedEpoch: number | null): NextProducer | number {
  if (expectedEpoch === null) return { producerId: m.producerId, epoch: m.producerEpoch + 1, lastEpoch: -1 };
  if (m.producerEpoch === -1 || expectedEpoch === m.producerEpoch) {
    return { producerId: m.producerId, epoch: m.producerEpoch + 1, lastEpoch: m.producerEpoch };
  }
  if (expectedEpoch === m.lastProducerEpoch) {
    return { producerId: m.producerId, epoch: m.producerEpoch, lastEpoch: m.lastProducerEpoch };
  }
  return ErrorCode.PRODUCER_FENCED;
}

export class TransactionCoordinator {
  private readonly txns = new Map<string, TxnMetadata>();
  private readonly partitions = new Map<number, PartitionStatus>();
  private nextToken = 1;
  private creatingTopic: Promise<number> | null = null;
  private nextAbortCheckMs: number;
  private nextExpirationCheckMs: number;
  private stopped = false;
  private readonly defer: (fn: () => void) => void;
  private readonly retry: (fn: () => void, ms: number) => void;

  constructor(private readonly options: TransactionCoordinatorOptions) {
    this.defer = options.defer ?? ((fn) => setImmediate(fn));
    this.retry =
      options.retry ??
      ((fn, ms) => {
        setTimeout(fn, ms).unref();
      });
    this.nextAbortCheckMs = options.clock.monotonicMs() + options.abortIntervalMs;
    this.nextExpirationCheckMs = options.clock.monotonicMs() + options.removeExpiredIntervalMs;
  }

  partitionFor(transactionalId: string): number {
    return transactionPartition(transactionalId, this.options.partitionCount());
  }

  /** Creates __transaction_state once: as GroupCoordinator.ensureOffsetsTopic, answers the partitions created. */
  ensureTopic(): Promise<number> {
    const create = this.options.createTopic;
    if (create === undefined) return Promise.resolve(0);
    if (this.creatingTopic !== null) return this.creatingTopic.then(() => 0);
    this.creatingTopic = create().finally(() => {
      this.creatingTopic = null;
    });
    return this.creatingTopic;
  }

  /** Whether any led partition is still loading (tests wait for this). */
  get loading(): boolean {
    for (const s of this.partitions.values()) if (s.state === 'loading') return true;
    return false;
  }

  /** The transaction of an id, for DescribeTransactions and tests. */
  describe(transactionalId: string): Readonly<TxnMetadata> | undefined {
    return this.txns.get(transactionalId);
  }

  all(): IterableIterator<Readonly<TxnMetadata>> {
    return this.txns.values();
  }

  // ------------------------------------------------------------------ leadership and loading

  /**
   * Called at every LeaderAndIsr of a partition of __transaction_state. Becoming leader loads it at its coordinator
   * epoch. A higher epoch while already leading (the controller elected this broker again) reloads it, as Kafka's
   * onElection does: the transactions of the old epoch are dropped with their pending markers (Kafka's
   * removeMarkersForTxnTopicPartition; markers in flight are ignored when answered), the partition answers
   * COORDINATOR_LOAD_IN_PROGRESS until its log is read again, and the transactions it finds in a Prepare state send
   * their markers again under the new epoch. The same or a lower epoch changes nothing.
   */
  onLeadershipChange(partition: number, isLeader: boolean): void {
    const status = this.partitions.get(partition);
    if (isLeader) {
      const coordinatorEpoch = this.options.coordinatorEpoch(partition);
      if (status !== undefined) {
        if (coordinatorEpoch <= status.coordinatorEpoch) return;
        this.options.logger.info(
          `coordinator epoch of ${TRANSACTION_STATE_TOPIC}-${partition} changed from ${status.coordinatorEpoch} to ` +
            `${coordinatorEpoch}: reloading it; markers pending under the old epoch are cancelled`,
        );
        this.unload(partition);
      }
      const token = this.nextToken++;
      this.partitions.set(partition, { state: 'loading', token, coordinatorEpoch });
      this.defer(() => this.load(partition, token));
    } else if (status !== undefined) {
      this.unload(partition);
    }
  }

  /** Drops a partition and its transactions; their writes and marker loops end when they see the token gone. */
  private unload(partition: number): void {
    this.partitions.delete(partition);
    for (const [id, m] of this.txns) if (m.partition === partition) this.txns.delete(id);
  }

  shutdown(): void {
    this.stopped = true;
  }

  private load(partition: number, token: number): void {
    const status = this.partitions.get(partition);
    if (status?.token !== token) return;
    const latest = new Map<string, TransactionLogValue | null>();
    try {
      for (const r of this.options.storage.readAll(partition)) {
        if (r.key === null) continue;
        let id: string;
        try {
          const key = decodeVersioned(transactionLogKeySchema, r.key, 'read-known-fields');
          if (key.version !== 0) continue;
          id = key.value.transactionalId;
        } catch {
          continue;
        }
        if (r.value === null) {
          latest.set(id, null);
          continue;
        }
        try {
          latest.set(id, decodeVersioned(transactionLogValueSchema, r.value, 'read-known-fields').value);
        } catch {
          // A value this broker cannot read is skipped, as an unknown record type would be.
        }
      }
    } catch (e) {
      this.options.logger.warn(`loading ${TRANSACTION_STATE_TOPIC}-${partition} failed: ${String(e)}`);
      this.partitions.delete(partition);
      return;
    }
    const resume: TxnMetadata[] = [];
    for (const [id, v] of latest) {
      if (v === null) continue;
      const partitions = new Set<string>();
      for (const t of v.transactionPartitions ?? [])
        for (const p of t.partitionIds) partitions.add(tpKey(t.topic, p));
      const m: TxnMetadata = {
        transactionalId: id,
        producerId: Number(v.producerId),
        previousProducerId: -1,
        producerEpoch: v.producerEpoch,
        lastProducerEpoch: -1,
        timeoutMs: v.transactionTimeoutMs,
        state: v.transactionStatus as TxnState,
        partitions,
        startMs: Number(v.transactionStartTimestampMs),
        updateMs: Number(v.transactionLastUpdateTimestampMs),
        busy: false,
        hasFailedEpochFence: false,
        partition,
      };
      this.txns.set(id, m);
      if (m.state === TxnState.PrepareCommit || m.state === TxnState.PrepareAbort) resume.push(m);
    }
    this.partitions.set(partition, { state: 'active', token, coordinatorEpoch: status.coordinatorEpoch });
    for (const m of resume) {
      m.busy = true;
      this.completeTransaction(m, m.state === TxnState.PrepareCommit, token);
    }
  }

  private coordinatorError(transactionalId: string): number {
    if (this.stopped) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const status = this.partitions.get(this.partitionFor(transactionalId));
    if (status === undefined) return ErrorCode.NOT_COORDINATOR;
    if (status.state === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    return ErrorCode.NONE;
  }

  private tokenOf(partition: number): number {
    return this.partitions.get(partition)?.token ?? -1;
  }

  /** Whether `m` is still the live metadata of a partition still led under `token`. */
  private isCurrent(m: TxnMetadata, token: number): boolean {
    return this.tokenOf(m.partition) === token && this.txns.get(m.transactionalId) === m;
  }

  /** Writes a transition; `apply` runs once acknowledged (if still current). Resolves with the error code. */
  private write(
    m: TxnMetadata,
    state: TxnState,
    partitions: Set<string>,
    apply: () => void,
  ): Promise<number> {
    const token = this.tokenOf(m.partition);
    m.busy = true;
    const record = transactionRecord(m, state, partitions);
    return this.options.storage.append(m.partition, [record]).then(
      (errorCode) => {
        if (!this.isCurrent(m, token)) return ErrorCode.NOT_COORDINATOR;
        m.busy = false;
        if (errorCode !== ErrorCode.NONE) {
          return errorCode === ErrorCode.REQUEST_TIMED_OUT || errorCode === ErrorCode.NOT_ENOUGH_REPLICAS
            ? ErrorCode.COORDINATOR_NOT_AVAILABLE
            : ErrorCode.NOT_COORDINATOR;
        }
        m.state = state;
        apply();
        return ErrorCode.NONE;
      },
      () => {
        if (this.isCurrent(m, token)) m.busy = false;
        return ErrorCode.COORDINATOR_NOT_AVAILABLE;
      },
    );
  }

  // ------------------------------------------------------------------ requests

  /** InitProducerId with a transactional id. `expected` is the producer id and epoch of KIP-360 (v3+), or null. */
  async initProducerId(
    transactionalId: string,
    timeoutMs: number,
    expected: { producerId: number; producerEpoch: number } | null,
  ): Promise<InitResult> {
    const fail = (errorCode: number): InitResult => ({ errorCode, producerId: -1, producerEpoch: -1 });
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (timeoutMs <= 0 || timeoutMs > this.options.maxTimeoutMs)
      return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const coordinator = this.coordinatorError(transactionalId);
    if (coordinator !== ErrorCode.NONE) return fail(coordinator);
    let m = this.txns.get(transactionalId);
    if (m === undefined) {
      const producerId = await this.options.nextProducerId();
      const again = this.coordinatorError(transactionalId);
      if (again !== ErrorCode.NONE) return fail(again);
      m = this.txns.get(transactionalId);
      if (m === undefined) {
        // A new id has a producer id but no producer yet (epoch -1) until its first Empty record is written.
        const now = this.options.clock.nowMs();
        m = {
          transactionalId,
          producerId,
          previousProducerId: -1,
          producerEpoch: -1,
          lastProducerEpoch: -1,
          timeoutMs,
          state: TxnState.Empty,
          partitions: new Set(),
          startMs: -1,
          updateMs: now,
          busy: false,
          hasFailedEpochFence: false,
          partition: this.partitionFor(transactionalId),
        };
        this.txns.set(transactionalId, m);
      }
    }
    const meta = m;
    if (meta.busy) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    if (expected !== null && !isValidProducerId(meta, expected)) return fail(ErrorCode.PRODUCER_FENCED);
    switch (meta.state) {
      case TxnState.PrepareCommit:
      case TxnState.PrepareAbort:
      case TxnState.PrepareEpochFence:
        return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      case TxnState.Ongoing: {
        // The previous producer's transaction is aborted under a bumped epoch; the new producer retries.
        this.abortWithBump(meta);
        return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      }
      default:
        break;
    }
    let next: NextProducer | number;
    if (
      isEpochExhausted(meta.producerEpoch) &&
      (expected === null || expected.producerEpoch === meta.producerEpoch)
    ) {
      // Kafka's prepareProducerIdRotation: a new producer id at epoch 0; the last epoch is kept only for a
      // producer that sent its id and epoch, so that its retry (previous id, exhausted epoch) is recognised.
      const producerId = await this.options.nextProducerId();
      if (!this.isCurrent(meta, this.tokenOf(meta.partition))) return fail(ErrorCode.NOT_COORDINATOR);
      if (meta.busy) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      next = { producerId, epoch: 0, lastEpoch: expected === null ? -1 : meta.producerEpoch };
    } else {
      next = nextEpoch(meta, expected === null ? null : expected.producerEpoch);
      if (typeof next === 'number') return fail(next);
    }
    const { producerId, epoch, lastEpoch } = next;
    const previous = {
      producerId: meta.producerId,
      producerEpoch: meta.producerEpoch,
      timeoutMs: meta.timeoutMs,
    };
    meta.producerId = producerId;
    meta.producerEpoch = epoch;
    meta.timeoutMs = timeoutMs;
    meta.updateMs = this.options.clock.nowMs();
    const errorCode = await this.write(meta, TxnState.Empty, new Set(), () => {
      // As Kafka's completeTransitionTo(Empty): the producer id before this transition becomes the previous one.
      meta.previousProducerId = previous.producerId;
      meta.lastProducerEpoch = lastEpoch;
      meta.partitions = new Set();
      meta.startMs = -1;
    });
    if (errorCode !== ErrorCode.NONE) {
      if (this.txns.get(transactionalId) === meta && meta.producerEpoch === epoch) {
        meta.producerId = previous.producerId;
        meta.producerEpoch = previous.producerEpoch;
        meta.timeoutMs = previous.timeoutMs;
      }
      return fail(errorCode);
    }
    return { errorCode: ErrorCode.NONE, producerId, producerEpoch: epoch };
  }

  /** Checks a request of the producer against the id's metadata; NONE when it may go on. */
  private producerError(m: TxnMetadata | undefined, producerId: number, producerEpoch: number): number {
    if (m === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (m.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (producerEpoch !== m.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (m.busy) return ErrorCode.CONCURRENT_TRANSACTIONS;
    return ErrorCode.NONE;
  }

  /**
   * The producer's transaction when a request may add to it or check it (AddPartitionsToTxn, its verifyOnly
   * form): else the error that answers every partition, the coordinator's (not coordinator, loading), the
   * producer's (unknown id, fenced epoch, a request of its already running) or CONCURRENT_TRANSACTIONS while the
   * transaction is being ended.
   */
  private transactionToTouch(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
  ): TxnMetadata | number {
    const coordinator = this.coordinatorError(transactionalId);
    if (coordinator !== ErrorCode.NONE) return coordinator;
    const m = this.txns.get(transactionalId);
    const invalid = this.producerError(m, producerId, producerEpoch);
    if (invalid !== ErrorCode.NONE || m === undefined) return invalid;
    if (m.state === TxnState.PrepareCommit || m.state === TxnState.PrepareAbort)
      return ErrorCode.CONCURRENT_TRANSACTIONS;
    return m;
  }

  /**
   * AddPartitionsToTxn: per partition error codes, keyed "topic\0partition". `checkExistence` false is
   * AddOffsetsToTxn's: Kafka adds the group's partition of __consumer_offsets, computed from the partition count,
   * without asking the metadata cache, which may not show the topic yet on a fresh cluster.
   */
  async addPartitions(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    partitions: readonly TopicPartitionRef[],
    checkExistence = true,
  ): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    const all = (errorCode: number): Map<string, number> => {
      for (const p of partitions) result.set(tpKey(p.topic, p.partition), errorCode);
      return result;
    };
    // Partitions the metadata does not show are refused first, as Kafka's KafkaApis does before it calls the
    // coordinator: whatever the coordinator would answer (NOT_COORDINATOR, loading, an unknown or fenced producer,
    // a transaction being ended), the producer learns which partitions do not exist.
    const exists = this.options.partitionExists;
    const unknown =
      exists === undefined || !checkExistence ? [] : partitions.filter((p) => !exists(p.topic, p.partition));
    if (unknown.length > 0) {
      all(ErrorCode.OPERATION_NOT_ATTEMPTED);
      for (const p of unknown) result.set(tpKey(p.topic, p.partition), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      return result;
    }
    const m = this.transactionToTouch(transactionalId, producerId, producerEpoch);
    if (typeof m === 'number') return all(m);
    if (m.state === TxnState.PrepareEpochFence || m.state === TxnState.Dead)
      return all(ErrorCode.INVALID_TXN_STATE);
    const added = new Set(m.partitions);
    for (const p of partitions) added.add(tpKey(p.topic, p.partition));
    if (m.state === TxnState.Ongoing && added.size === m.partitions.size) return all(ErrorCode.NONE);
    const now = this.options.clock.nowMs();
    const startMs = m.state === TxnState.Ongoing ? m.startMs : now;
    const before = { startMs: m.startMs, updateMs: m.updateMs };
    m.startMs = startMs;
    m.updateMs = now;
    const errorCode = await this.write(m, TxnState.Ongoing, added, () => {
      m.partitions = added;
    });
    if (
      errorCode !== ErrorCode.NONE &&
      this.txns.get(transactionalId) === m &&
      m.state !== TxnState.Ongoing
    ) {
      m.startMs = before.startMs;
      m.updateMs = before.updateMs;
    }
    return all(errorCode);
  }

  /**
   * KIP-890 part 1 (AddPartitionsToTxn with verifyOnly, answered in process when a partition's leader is this
   * coordinator's broker): whether each partition was added to the producer's ongoing transaction. Per partition
   * NONE or TRANSACTION_ABORTABLE, as Kafka 3.9's handleVerifyPartitionsInTransaction answers (the leader converts
   * it for producers that predate it, produce-txn-verification.ts); for all of them the coordinator's errors
   * (NOT_COORDINATOR when the id is coordinated elsewhere), the producer's (INVALID_PRODUCER_ID_MAPPING,
   * PRODUCER_FENCED) or CONCURRENT_TRANSACTIONS while the transaction is being ended or changed. Synchronous: nothing changes between the answer and the caller's append.
   */
  verifyPartitions(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    partitions: readonly TopicPartitionRef[],
  ): Map<string, number> {
    const result = new Map<string, number>();
    const all = (errorCode: number): Map<string, number> => {
      for (const p of partitions) result.set(tpKey(p.topic, p.partition), errorCode);
      return result;
    };
    const m = this.transactionToTouch(transactionalId, producerId, producerEpoch);
    if (typeof m === 'number') return all(m);
    for (const p of partitions) {
      const key = tpKey(p.topic, p.partition);
      const added = m.state === TxnState.Ongoing && m.partitions.has(key);
      result.set(key, added ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE);
    }
    return result;
  }

  /** EndTxn: answers once PrepareCommit/PrepareAbort is written; markers and the Complete record follow. */
  async endTransaction(
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    commit: boolean,
  ): Promise<number> {
    const coordinator = this.coordinatorError(transactionalId);
    if (coordinator !== ErrorCode.NONE) return coordinator;
    const m = this.txns.get(transactionalId);
    if (m === undefined || m.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (producerEpoch !== m.producerEpoch) {
      // A retry of an abort or commit that completed under a bump by a timeout is still fenced, as in Kafka.
      return ErrorCode.PRODUCER_FENCED;
    }
    if (m.busy) return ErrorCode.CONCURRENT_TRANSACTIONS;
    switch (m.state) {
      case TxnState.Ongoing:
        break;
      case TxnState.CompleteCommit:
        return commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE;
      case TxnState.CompleteAbort:
        return commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE;
      case TxnState.PrepareCommit:
        return commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE;
      case TxnState.PrepareAbort:
        return commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS;
      default:
        return ErrorCode.INVALID_TXN_STATE;
    }
    return this.prepare(m, commit);
  }

  private prepare(m: TxnMetadata, commit: boolean): Promise<number> {
    const token = this.tokenOf(m.partition);
    m.updateMs = this.options.clock.nowMs();
    const state = commit ? TxnState.PrepareCommit : TxnState.PrepareAbort;
    return this.write(m, state, m.partitions, () => {}).then((errorCode) => {
      if (errorCode === ErrorCode.NONE && this.isCurrent(m, token)) {
        m.hasFailedEpochFence = false;
        m.busy = true;
        this.completeTransaction(m, commit, token);
      }
      return errorCode;
    });
  }

  /**
   * Aborts an Ongoing transaction under epoch + 1, so its producer is fenced (timeouts, a new InitProducerId). As
   * in Kafka's epoch fence, no last epoch is kept: the fenced producer's InitProducerId with its old epoch must
   * not pass for a retry of a bump it asked for. An epoch at the maximum (a fence can follow a bump to 32766)
   * cannot grow; Kafka refuses that case outright, Brook aborts under the same epoch.
   *
   * As in Kafka, the bumped epoch is set in memory before PrepareAbort is written, and stays there if the write
   * fails: it was never given to a client, and the old producer stays fenced here. The fence is then marked failed,
   * and the next one (the next timeout check, or InitProducerId) writes the same epoch again rather than bumping
   * once more for every failed attempt; a new coordinator loading the log starts from the epoch written there.
   */
  private abortWithBump(m: TxnMetadata): void {
    m.lastProducerEpoch = -1;
    if (!m.hasFailedEpochFence && m.producerEpoch < MAX_EPOCH) m.producerEpoch += 1;
    const token = this.tokenOf(m.partition);
    void this.prepare(m, false).then((errorCode) => {
      if (errorCode === ErrorCode.NONE) return;
      if (this.isCurrent(m, token)) m.hasFailedEpochFence = true;
      this.options.logger.warn(
        `fencing producer of transaction ${m.transactionalId} failed: error ${errorCode}; epoch ${m.producerEpoch} ` +
          'is kept in memory (not given to any client) and written by the next attempt',
      );
    });
  }

  /**
   * Writes the markers until every partition has them, then the Complete record. `m.busy` is set throughout, and
   * stays set when a leader answers that another coordinator owns the transaction (markerAnswerAction).
   */
  private completeTransaction(m: TxnMetadata, commit: boolean, token: number): void {
    // The epoch the partition was loaded at, fixed for this loop: a new epoch reloads the partition and ends it.
    const coordinatorEpoch = this.partitions.get(m.partition)?.coordinatorEpoch ?? -1;
    let remaining = [...m.partitions].map(tpOf);
    // A partition's failure is logged the first time it comes with a given error, not at every retry.
    const logged = new Set<string>();
    const attempt = (): void => {
      if (!this.isCurrent(m, token) || this.stopped) return;
      const request: MarkerRequest = {
        transactionalId: m.transactionalId,
        producerId: m.producerId,
        producerEpoch: m.producerEpoch,
        commit,
        coordinatorEpoch,
        partitions: remaining,
      };
      this.options
        .writeMarkers(request)
        .then(
          (failures) => failures,
          (): MarkerFailure[] =>
            remaining.map((tp) => ({ ...tp, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR })),
        )
        .then((failures) => {
          if (!this.isCurrent(m, token) || this.stopped) return;
          const retry: TopicPartitionRef[] = [];
          let fenced = false;
          for (const f of failures) {
            const action = markerAnswerAction(f.errorCode);
            const key = `${tpKey(f.topic, f.partition)}\0${f.errorCode}`;
            if (!logged.has(key)) {
              logged.add(key);
              this.logMarkerFailure(request, f, action);
            }
            if (action === 'retry') retry.push({ topic: f.topic, partition: f.partition });
            else if (action === 'fenced') fenced = true;
          }
          if (fenced) return;
          remaining = retry;
          if (remaining.length > 0) {
            this.retry(attempt, MARKER_RETRY_MS);
            return;
          }
          m.updateMs = this.options.clock.nowMs();
          const state = commit ? TxnState.CompleteCommit : TxnState.CompleteAbort;
          void this.write(m, state, new Set(), () => {
            m.partitions = new Set();
          }).then((errorCode) => {
            if (errorCode !== ErrorCode.NONE && this.isCurrent(m, token)) {
              m.busy = true;
              this.retry(() => {
                remaining = [];
                attempt();
              }, MARKER_RETRY_MS);
            }
          });
        });
    };
    attempt();
  }

  private logMarkerFailure(
    request: MarkerRequest,
    failure: MarkerFailure,
    action: 'written' | 'fenced' | 'retry',
  ): void {
    const what =
      `${request.commit ? 'COMMIT' : 'ABORT'} marker of transaction ${request.transactionalId} (producer ` +
      `${request.producerId} epoch ${request.producerEpoch}, coordinator epoch ${request.coordinatorEpoch}) for ` +
      `${failure.topic}-${failure.partition} failed with ${errorName(failure.errorCode)}`;
    if (action === 'fenced') {
      this.options.logger.warn(
        `${what}: another coordinator owns the transaction; no more markers are sent and the transaction stays ` +
          'in its Prepare state here until this broker stops coordinating it',
      );
    } else if (action === 'written') {
      this.options.logger.info(`${what}: the partition is taken out of the transaction, as Kafka does`);
    } else {
      this.options.logger.info(`${what}: retrying (repeats of this error for the partition are not logged)`);
    }
  }

  /**
   * Aborts Ongoing transactions older than their timeout, every abortIntervalMs; forgets expired transactional ids,
   * every removeExpiredIntervalMs.
   */
  tick(): void {
    const now = this.options.clock.monotonicMs();
    if (now >= this.nextAbortCheckMs) {
      this.nextAbortCheckMs = now + this.options.abortIntervalMs;
      this.abortTimedOutTransactions();
    }
    if (now >= this.nextExpirationCheckMs) {
      this.nextExpirationCheckMs = now + this.options.removeExpiredIntervalMs;
      this.removeExpiredTransactionalIds();
    }
  }

  private abortTimedOutTransactions(): void {
    const wall = this.options.clock.nowMs();
    for (const m of this.txns.values()) {
      if (m.state !== TxnState.Ongoing || m.busy) continue;
      if (this.partitions.get(m.partition)?.state !== 'active') continue;
      if (wall > m.startMs + m.timeoutMs) {
        this.options.logger.info(`aborting timed out transaction ${m.transactionalId}`);
        this.abortWithBump(m);
      }
    }
  }

  /**
   * Kafka's removeExpiredTransactionalIds: an id in which no transaction runs (Empty, CompleteCommit,
   * CompleteAbort), with no write in flight, whose last change is transactional.id.expiration.ms old is forgotten.
   * A tombstone for its key is written to its partition, so that compaction drops its records and a coordinator
   * loading the partition does not bring it back; once acknowledged, the id leaves memory, and a producer that
   * initializes it again is a new one (a new producer id at epoch 0). While the tombstone is in flight the id is busy
   * and answers CONCURRENT_TRANSACTIONS, as Kafka's pending Dead state; a failed write leaves it as it was, for the
   * next check.
   */
  private removeExpiredTransactionalIds(): void {
    const cutoffMs = this.options.clock.nowMs() - this.options.transactionalIdExpirationMs;
    const byPartition = new Map<number, TxnMetadata[]>();
    for (const m of this.txns.values()) {
      if (m.busy || !isExpirationAllowed(m.state) || m.updateMs > cutoffMs) continue;
      if (this.partitions.get(m.partition)?.state !== 'active') continue;
      const expired = byPartition.get(m.partition) ?? [];
      expired.push(m);
      byPartition.set(m.partition, expired);
    }
    for (const [partition, expired] of byPartition) {
      let chunk: TxnMetadata[] = [];
      let keyBytes = 0;
      for (const m of expired) {
        const bytes = Buffer.byteLength(m.transactionalId, 'utf8');
        if (chunk.length > 0 && keyBytes + bytes > TOMBSTONE_KEY_BYTES_PER_APPEND_MAX) {
          this.writeTombstones(partition, chunk);
          chunk = [];
          keyBytes = 0;
        }
        chunk.push(m);
        keyBytes += bytes;
      }
      this.writeTombstones(partition, chunk);
    }
  }

  private writeTombstones(partition: number, expired: readonly TxnMetadata[]): void {
    const token = this.tokenOf(partition);
    for (const m of expired) m.busy = true;
    const records = expired.map((m) => ({ key: transactionLogKey(m.transactionalId), value: null }));
    const written = (errorCode: number): void => {
      let removed = 0;
      for (const m of expired) {
        if (!this.isCurrent(m, token)) continue;
        m.busy = false;
        if (errorCode !== ErrorCode.NONE) continue;
        this.txns.delete(m.transactionalId);
        removed++;
      }
      if (errorCode !== ErrorCode.NONE) {
        this.options.logger.warn(
          `writing the expiration of ${expired.length} transactional ids to ${TRANSACTION_STATE_TOPIC}-` +
            `${partition} failed with ${errorName(errorCode)}; they are kept until the next check`,
        );
      } else if (removed > 0) {
        this.options.logger.info(
          `${removed} transactional ids of ${TRANSACTION_STATE_TOPIC}-${partition} expired and were removed`,
        );
      }
    };
    void this.options.storage
      .append(partition, records)
      .then(written, () => written(ErrorCode.UNKNOWN_SERVER_ERROR));
  }

  /**
   * ListTransactions' error for the whole response, as Kafka's: COORDINATOR_NOT_AVAILABLE once stopped,
   * COORDINATOR_LOAD_IN_PROGRESS while any partition led here is loading (not per partition: a list without the
   * ids of a loading partition would look complete), else NONE.
   */
  listError(): number {
    if (this.stopped) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    return this.loading ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
  }

  /** ListTransactions: ids of the partitions led here, filtered by state names and producer ids. */
  list(
    states: readonly string[],
    producerIds: readonly number[],
  ): { id: string; producerId: number; state: string; startMs: number }[] {
    const out: { id: string; producerId: number; state: string; startMs: number }[] = [];
    for (const m of this.txns.values()) {
      const name = TXN_STATE_NAMES[m.state] ?? 'Unknown';
      if (states.length > 0 && !states.includes(name)) continue;
      if (producerIds.length > 0 && !producerIds.includes(m.producerId)) continue;
      out.push({ id: m.transactionalId, producerId: m.producerId, state: name, startMs: m.startMs });
    }
    return out;
  }

  errorFor(transactionalId: string): number {
    return this.coordinatorError(transactionalId);
  }
}

export { tpKey, tpOf };
