// The transactional producer's side of Kafka's transaction protocol (KIP-98, KIP-360, KIP-447): the state a
// transactional Producer is in, and the requests it sends to coordinators. The Producer (producer.ts) owns the
// records and decides when to call these; this module owns the state machine and the coordinator requests:
//   InitProducerId     to the transaction coordinator (FindCoordinator key type 1): a producer id and epoch for the
//                      transactional id, fencing older sessions and finishing their open transaction; with the
//                      current id and epoch (v3+) it bumps the epoch after an abortable error (KIP-360);
//   AddPartitionsToTxn every partition new to the transaction, batched: the partitions that got records while the
//                      previous request was out go together in the next one, before any of their batches is sent;
//   AddOffsetsToTxn    then TxnOffsetCommit to the group coordinator (key type 0), with the consumer's generation,
//                      member id and group instance id, so a zombie of the group is fenced (KIP-447);
//   EndTxn             commit or abort.
// Each request is retried while its error is retriable (Kafka's RetriableException: CONCURRENT_TRANSACTIONS,
// COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, ...; a lost connection), the coordinator
// looked up again when it moved, up to a deadline. As in Kafka's TransactionManager, other errors are fatal (only
// close() is left) or abortable (the transaction cannot commit; after abortTransaction() the producer goes on):
// a failed record batch is fatal only when the producer is fenced, unauthorized or unsupported
// (maybeTransitionToErrorState), and each coordinator request has its own classes (coordinatorErrorOutcome).

import { ErrorCode, isRetriable } from '../protocol/errors.js';
import type { InitProducerIdResponse } from '../protocol/messages/22-init-producer-id.js';
import type { AddPartitionsToTxnResponse } from '../protocol/messages/24-add-partitions-to-txn.js';
import type { AddOffsetsToTxnResponse } from '../protocol/messages/25-add-offsets-to-txn.js';
import type { EndTxnResponse } from '../protocol/messages/26-end-txn.js';
import type { TxnOffsetCommitResponse } from '../protocol/messages/28-txn-offset-commit.js';
import { ApiKey } from '../protocol/registry.js';
import type { Cluster } from './cluster.js';
import { sleep } from './cluster.js';
import { ClientStateError, isRetriableError, KafkaClientError, KafkaProtocolError } from './errors.js';
import { CoordinatorType, epochOrNone, findCoordinator } from './requests.js';

/** Kafka's TransactionManager states. */
export type TransactionState =
  | 'UNINITIALIZED'
  | 'INITIALIZING'
  | 'READY'
  | 'IN_TRANSACTION'
  | 'COMMITTING_TRANSACTION'
  | 'ABORTING_TRANSACTION'
  | 'ABORTABLE_ERROR'
  | 'FATAL_ERROR';

/** What KafkaConsumer.groupMetadata() answers: what TxnOffsetCommit needs to fence a zombie member (KIP-447). */
export interface ConsumerGroupMetadata {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

/**
 * An offset to commit in a transaction: the next offset to read, as Kafka's OffsetAndMetadata (a missing or negative
 * leaderEpoch commits none, -1).
 */
export interface TransactionOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata?: string | null;
  leaderEpoch?: number;
}

/**
 * What an error leaves of the transaction, as Kafka's TransactionManager decides it: FATAL_ERROR (only close() is
 * left), ABORTABLE_ERROR (abortTransaction() and go on), or ABORTABLE_ERROR with the epoch bumped by the abort
 * (Kafka's abortableErrorIfPossible: the coordinator lost the producer's id, so InitProducerId must follow).
 */
export type TransactionErrorOutcome = 'fatal' | 'abortable' | 'abortable-bump';

/**
 * A failed record batch makes the producer fatal only for these (Kafka's maybeTransitionToErrorState, through
 * Sender.failBatch and handleFailedBatch); every other failure is abortable. INVALID_PRODUCER_EPOCH from a Produce
 * among them: the coordinator may have bumped the epoch when it timed the transaction out (KIP-588), and the
 * coordinator's answer to the abort decides (PRODUCER_FENCED there is fatal).
 */
const BATCH_FATAL_CODES = new Set<number>([
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.UNSUPPORTED_VERSION,
]);

/**
 * Whether a record batch's failure makes the producer fatal, transactional or only idempotent: Kafka 3.9's
 * maybeTransitionToErrorState, which Sender.failBatch reaches through handleFailedBatch for every producer with a
 * TransactionManager (any idempotent one).
 */
export function isFatalBatchError(err: unknown): boolean {
  return err instanceof KafkaProtocolError && BATCH_FATAL_CODES.has(err.code);
}

/**
 * What every later call gets once the producer is fatal (Kafka's maybeFailWithError): an error of the fatal
 * error's own code (fenced, say), so a caller can tell why.
 */
export function fatalStateError(cause: Error | null): Error {
  const text = `The producer is in a fatal error state and can only be closed${cause ? `: ${cause.message}` : ''}`;
  if (cause instanceof KafkaProtocolError) return new KafkaProtocolError(cause.code, text, { cause });
  return new ClientStateError(text);
}

/** The transaction coordinator's answers (and FindCoordinator's), each classified by its own handler in Kafka. */
type CoordinatorCall =
  | 'FindCoordinator'
  | 'InitProducerId'
  | 'AddPartitionsToTxn'
  | 'AddOffsetsToTxn'
  | 'EndTxn'
  | 'TxnOffsetCommit';

/**
 * The outcome of a non-retriable answer of `call`, as Kafka 3.9's TxnRequestHandlers (FindCoordinatorHandler,
 * InitProducerIdHandler, AddPartitionsToTxnHandler, AddOffsetsToTxnHandler, EndTxnHandler, TxnOffsetCommitHandler)
 * decide it. An answer a handler does not expect is fatal, except in AddPartitionsToTxn, whose partition errors
 * make the transaction abortable.
 */
export function coordinatorErrorOutcome(call: CoordinatorCall, code: number): TransactionErrorOutcome {
  if (code === ErrorCode.TRANSACTION_ABORTABLE) return 'abortable';
  if (call === 'FindCoordinator') {
    return code === ErrorCode.GROUP_AUTHORIZATION_FAILED ? 'abortable' : 'fatal';
  }
  if (code === ErrorCode.PRODUCER_FENCED || code === ErrorCode.INVALID_PRODUCER_EPOCH) return 'fatal';
  switch (call) {
    case 'InitProducerId':
      // KAFKA-13668: an authorization error lets initTransactions() be called again once the ACL is fixed.
      return code === ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
        code === ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        ? 'abortable'
        : 'fatal';
    case 'AddPartitionsToTxn':
    case 'AddOffsetsToTxn':
    case 'EndTxn':
      if (code === ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED || code === ErrorCode.INVALID_TXN_STATE) {
        return 'fatal';
      }
      if (code === ErrorCode.UNKNOWN_PRODUCER_ID || code === ErrorCode.INVALID_PRODUCER_ID_MAPPING) {
        return 'abortable-bump';
      }
      if (call === 'AddPartitionsToTxn') return 'abortable';
      return call === 'AddOffsetsToTxn' && code === ErrorCode.GROUP_AUTHORIZATION_FAILED
        ? 'abortable'
        : 'fatal';
    case 'TxnOffsetCommit':
      return GROUP_FENCED_CODES.has(code) || code === ErrorCode.GROUP_AUTHORIZATION_FAILED
        ? 'abortable'
        : 'fatal';
  }
}

/**
 * A coordinator's non-retriable answer, with what it leaves of the transaction. INVALID_PRODUCER_EPOCH from a
 * coordinator (an older one's word for it) is reported as PRODUCER_FENCED, as Kafka's handlers do.
 */
export class TransactionRequestError extends KafkaProtocolError {
  readonly outcome: TransactionErrorOutcome;

  constructor(call: CoordinatorCall, code: number, detail: string) {
    const fenced = code === ErrorCode.INVALID_PRODUCER_EPOCH;
    super(
      fenced ? ErrorCode.PRODUCER_FENCED : code,
      fenced
        ? `${detail} (answered INVALID_PRODUCER_EPOCH: the coordinator has moved to a later epoch)`
        : detail,
    );
    this.name = 'TransactionRequestError';
    this.outcome = coordinatorErrorOutcome(call, code);
  }
}

/** What `err` leaves of the transaction: a coordinator's answer as classified, any other failure as a batch's. */
export function transactionErrorOutcome(err: unknown): TransactionErrorOutcome {
  if (err instanceof TransactionRequestError) return err.outcome;
  return isFatalBatchError(err) ? 'fatal' : 'abortable';
}

/** Which handler of Kafka's classifies the answers of each transaction coordinator request. */
const COORDINATOR_CALL: Record<number, CoordinatorCall> = {
  [ApiKey.INIT_PRODUCER_ID]: 'InitProducerId',
  [ApiKey.ADD_PARTITIONS_TO_TXN]: 'AddPartitionsToTxn',
  [ApiKey.ADD_OFFSETS_TO_TXN]: 'AddOffsetsToTxn',
  [ApiKey.END_TXN]: 'EndTxn',
};

/** Orders outcomes from the mildest: the worst of several partition errors decides. */
const OUTCOME_RANK: Record<TransactionErrorOutcome, number> = { abortable: 2, 'abortable-bump': 3, fatal: 4 };

/** A FindCoordinator that failed for good, classified as Kafka's FindCoordinatorHandler does; others pass. */
function classifyFindCoordinator(err: unknown): never {
  if (err instanceof KafkaProtocolError && !err.retriable && !(err instanceof TransactionRequestError)) {
    throw new TransactionRequestError('FindCoordinator', err.code, err.message);
  }
  throw err;
}

/** Answers after which the coordinator must be looked up again. */
const MOVED_CODES = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

/**
 * TxnOffsetCommit answers after which the group coordinator is looked up again: Kafka's TxnOffsetCommitHandler
 * adds REQUEST_TIMED_OUT to the moved codes (the coordinator may be unreachable); other retriable answers go to
 * the same coordinator again.
 */
const GROUP_LOOKUP_CODES = new Set<number>([...MOVED_CODES, ErrorCode.REQUEST_TIMED_OUT]);

/** The group fenced this member's commit (a rebalance moved on without it): Kafka's CommitFailedException. */
const GROUP_FENCED_CODES = new Set<number>([
  ErrorCode.UNKNOWN_MEMBER_ID,
  ErrorCode.ILLEGAL_GENERATION,
  ErrorCode.FENCED_INSTANCE_ID,
]);

/** Highest versions this client speaks: above them the protocol changes to KIP-890's server-side checks. */
const MAX_VERSION = {
  [ApiKey.INIT_PRODUCER_ID]: 4,
  [ApiKey.ADD_PARTITIONS_TO_TXN]: 3,
  [ApiKey.ADD_OFFSETS_TO_TXN]: 3,
  [ApiKey.END_TXN]: 4,
  [ApiKey.TXN_OFFSET_COMMIT]: 3,
} as Record<number, number>;

export function isFatalTransactionError(err: unknown): boolean {
  return transactionErrorOutcome(err) === 'fatal';
}

/** Transitions Kafka's TransactionManager allows (State.isTransitionValid), by target. */
const ALLOWED_FROM: Record<TransactionState, readonly TransactionState[]> = {
  UNINITIALIZED: [],
  INITIALIZING: ['UNINITIALIZED', 'READY', 'ABORTING_TRANSACTION', 'COMMITTING_TRANSACTION', 'INITIALIZING'],
  READY: ['INITIALIZING', 'COMMITTING_TRANSACTION', 'ABORTING_TRANSACTION'],
  IN_TRANSACTION: ['READY'],
  COMMITTING_TRANSACTION: ['IN_TRANSACTION'],
  ABORTING_TRANSACTION: ['IN_TRANSACTION', 'ABORTABLE_ERROR'],
  ABORTABLE_ERROR: ['IN_TRANSACTION', 'COMMITTING_TRANSACTION', 'ABORTABLE_ERROR', 'ABORTING_TRANSACTION'],
  FATAL_ERROR: [
    'UNINITIALIZED',
    'INITIALIZING',
    'READY',
    'IN_TRANSACTION',
    'COMMITTING_TRANSACTION',
    'ABORTING_TRANSACTION',
    'ABORTABLE_ERROR',
    'FATAL_ERROR',
  ],
};

export class TransactionManager {
  state: TransactionState = 'UNINITIALIZED';
  /**
   * The latest error that put the producer in ABORTABLE_ERROR or FATAL_ERROR (Kafka's lastError): what the
   * transaction's calls and its unsent records fail with.
   */
  lastError: Error | null = null;
  producerId = -1;
  producerEpoch = -1;
  /**
   * A batch of this epoch failed after it may have been written, or was dropped with its sequences: the
   * partitions' sequences cannot go on, so the epoch is bumped once the transaction is aborted (KIP-360).
   */
  epochBumpRequired = false;
  /** The coordinator has heard of the open transaction (partitions or offsets added): EndTxn is needed. */
  transactionStarted = false;
  /** INVALID_PRODUCER_ID_MAPPING: EndTxn would be refused the same way; the abort only re-initializes. */
  producerIdMappingLost = false;
  private txnCoordinator = -1;
  private readonly groupCoordinators = new Map<string, number>();

  constructor(
    private readonly cluster: Cluster,
    readonly transactionalId: string,
    readonly transactionTimeoutMs: number,
    /** How long one call retries before it fails (max.block.ms). */
    private readonly callTimeoutMs: number,
  ) {}

  get inTransaction(): boolean {
    return this.state === 'IN_TRANSACTION';
  }

  /** A commit or abort is under way (Kafka's isCompleting): a batch failing now asks for no epoch bump. */
  get isCompleting(): boolean {
    return this.state === 'COMMITTING_TRANSACTION' || this.state === 'ABORTING_TRANSACTION';
  }

  get hasError(): boolean {
    return this.state === 'ABORTABLE_ERROR' || this.state === 'FATAL_ERROR';
  }

  transitionTo(target: TransactionState, error: Error | null = null): void {
    if (this.state === 'FATAL_ERROR' && target !== 'FATAL_ERROR') throw this.fatal();
    if (!ALLOWED_FROM[target].includes(this.state)) {
      throw new ClientStateError(`Invalid transition attempted from state ${this.state} to state ${target}`);
    }
    if (target === 'ABORTABLE_ERROR' || target === 'FATAL_ERROR') {
      // Each error replaces the one before, as in Kafka's transitionTo: the latest is reported.
      this.lastError = error;
    } else {
      this.lastError = null;
    }
    this.state = target;
  }

  /**
   * A failure during the transaction (a record batch's, or a coordinator's answer), fatal or abortable as
   * transactionErrorOutcome says; in ABORTING_TRANSACTION or INITIALIZING the state stays, and the call may be
   * made again, as Kafka's transitionToAbortableError skips an abort under way. A coordinator that lost the
   * producer's id asks for the epoch bump; after INVALID_PRODUCER_ID_MAPPING it has no transaction of this id to
   * end either, so the abort goes straight to InitProducerId (Kafka's beginCompletingTransaction).
   */
  fail(err: Error): void {
    if (this.state === 'FATAL_ERROR') return;
    const outcome = transactionErrorOutcome(err);
    if (outcome === 'fatal') {
      this.transitionTo('FATAL_ERROR', err);
      return;
    }
    if (outcome === 'abortable-bump') this.epochBumpRequired = true;
    if (err instanceof KafkaProtocolError && err.code === ErrorCode.INVALID_PRODUCER_ID_MAPPING) {
      this.epochBumpRequired = true;
      this.producerIdMappingLost = true;
    }
    // In ABORTABLE_ERROR already, the new error becomes the one reported (Kafka's transitionToAbortableError).
    if (
      this.state === 'IN_TRANSACTION' ||
      this.state === 'COMMITTING_TRANSACTION' ||
      this.state === 'ABORTABLE_ERROR'
    ) {
      this.transitionTo('ABORTABLE_ERROR', err);
    }
  }

  /** The error every call gets in FATAL_ERROR: of the fatal error's own code (fenced, say), as Kafka's is. */
  private fatal(): Error {
    return fatalStateError(this.lastError);
  }

  /** Throws unless the producer may do `what` in one of `states`. */
  check(what: string, ...states: TransactionState[]): void {
    if (this.state === 'FATAL_ERROR') throw this.fatal();
    if (states.includes(this.state)) return;
    if (this.state === 'ABORTABLE_ERROR') {
      const cause = this.lastError;
      if (cause instanceof KafkaProtocolError && cause.code === ErrorCode.INVALID_PRODUCER_EPOCH) {
        // As Kafka's maybeFailWithError, which throws InvalidProducerEpochException itself, not wrapped.
        const text = `Cannot ${what}: the transaction must be aborted: ${cause.message}`;
        throw new KafkaProtocolError(cause.code, text, { cause });
      }
      throw new KafkaClientError(
        `Cannot ${what}: the transaction must be aborted, it failed with ${this.lastError?.message ?? 'an error'}`,
        false,
        { cause: this.lastError },
      );
    }
    throw new ClientStateError(`Cannot ${what} in state ${this.state}`);
  }

  /** InitProducerId for the transactional id; with `bump`, for the current id and epoch (KIP-360). */
  async initProducerId(bump: boolean): Promise<void> {
    const res = await this.txnCall<InitProducerIdResponse>('InitProducerId', ApiKey.INIT_PRODUCER_ID, (v) => {
      if (bump && v < 3) {
        throw new KafkaProtocolError(
          ErrorCode.UNSUPPORTED_VERSION,
          'the transaction coordinator cannot bump the epoch of an existing producer (InitProducerId v3, KIP-360)',
        );
      }
      return {
        transactionalId: this.transactionalId,
        transactionTimeoutMs: this.transactionTimeoutMs,
        producerId: bump ? BigInt(this.producerId) : -1n,
        producerEpoch: bump ? this.producerEpoch : -1,
      };
    });
    this.producerId = Number(res.producerId);
    this.producerEpoch = res.producerEpoch;
    this.epochBumpRequired = false;
    this.producerIdMappingLost = false;
  }

  /** AddPartitionsToTxn for these partitions (v3 and below: one transaction per request). */
  async addPartitions(
    partitions: readonly { topic: string; partition: number }[],
    timeoutMs: number,
  ): Promise<void> {
    const topics = new Map<string, number[]>();
    for (const p of partitions) {
      let list = topics.get(p.topic);
      if (list === undefined) topics.set(p.topic, (list = []));
      list.push(p.partition);
    }
    const body = {
      transactions: [],
      v3AndBelowTransactionalId: this.transactionalId,
      v3AndBelowProducerId: BigInt(this.producerId),
      v3AndBelowProducerEpoch: this.producerEpoch,
      v3AndBelowTopics: [...topics].map(([name, ps]) => ({ name, partitions: ps })),
    };
    await this.txnCall<AddPartitionsToTxnResponse>(
      'AddPartitionsToTxn',
      ApiKey.ADD_PARTITIONS_TO_TXN,
      () => body,
      (res) => {
        if (res.errorCode !== ErrorCode.NONE) return res.errorCode;
        // The worst partition error decides: fatal, then abortable with a bump, then abortable, then retriable.
        let worst: number = ErrorCode.NONE;
        let worstRank = 0;
        for (const t of res.resultsByTopicV3AndBelow) {
          for (const p of t.resultsByPartition) {
            const c = p.partitionErrorCode;
            if (c === ErrorCode.NONE || c === ErrorCode.OPERATION_NOT_ATTEMPTED) continue;
            const rank = isRetriable(c) ? 1 : OUTCOME_RANK[coordinatorErrorOutcome('AddPartitionsToTxn', c)];
            if (rank > worstRank) [worst, worstRank] = [c, rank];
          }
        }
        return worst;
      },
      timeoutMs,
    );
    this.transactionStarted = true;
  }

  /** AddOffsetsToTxn, then TxnOffsetCommit at the group's coordinator. */
  async sendOffsets(offsets: readonly TransactionOffset[], group: ConsumerGroupMetadata): Promise<void> {
    await this.txnCall<AddOffsetsToTxnResponse>('AddOffsetsToTxn', ApiKey.ADD_OFFSETS_TO_TXN, () => ({
      transactionalId: this.transactionalId,
      producerId: BigInt(this.producerId),
      producerEpoch: this.producerEpoch,
      groupId: group.groupId,
    }));
    this.transactionStarted = true;
    let pending = offsets;
    await this.retrying('TxnOffsetCommit', this.callTimeoutMs, async () => {
      let coordinator = this.groupCoordinators.get(group.groupId);
      if (coordinator === undefined) {
        coordinator = await findCoordinator(this.cluster, group.groupId, CoordinatorType.GROUP).catch(
          classifyFindCoordinator,
        );
        this.groupCoordinators.set(group.groupId, coordinator);
      }
      const topics = new Map<string, TransactionOffset[]>();
      for (const o of pending) {
        let list = topics.get(o.topic);
        if (list === undefined) topics.set(o.topic, (list = []));
        list.push(o);
      }
      const res = await this.cluster
        .send<TxnOffsetCommitResponse>(
          coordinator,
          ApiKey.TXN_OFFSET_COMMIT,
          {
            transactionalId: this.transactionalId,
            groupId: group.groupId,
            producerId: BigInt(this.producerId),
            producerEpoch: this.producerEpoch,
            generationId: group.generationId,
            memberId: group.memberId,
            groupInstanceId: group.groupInstanceId,
            topics: [...topics].map(([name, list]) => ({
              name,
              partitions: list.map((o) => ({
                partitionIndex: o.partition,
                committedOffset: BigInt(o.offset),
                committedLeaderEpoch: epochOrNone(o.leaderEpoch),
                committedMetadata: o.metadata ?? '',
              })),
            })),
          },
          { maxVersion: MAX_VERSION[ApiKey.TXN_OFFSET_COMMIT] },
        )
        .catch((e: unknown) => {
          this.groupCoordinators.delete(group.groupId);
          throw e;
        });
      // Partitions committed are done; a retriable error sends the rest again.
      const failed: TransactionOffset[] = [];
      let retriable: KafkaProtocolError | null = null;
      for (const t of res.topics) {
        for (const p of t.partitions) {
          const code = p.errorCode;
          if (code === ErrorCode.NONE) continue;
          const what = `TxnOffsetCommit ${t.name}-${p.partitionIndex} for group ${group.groupId}`;
          if (GROUP_LOOKUP_CODES.has(code)) this.groupCoordinators.delete(group.groupId);
          if (GROUP_FENCED_CODES.has(code)) {
            throw new TransactionRequestError(
              'TxnOffsetCommit',
              code,
              `${what}: the group moved on without this member (generation ${group.generationId}, member ` +
                `${group.memberId}); the transaction must be aborted`,
            );
          }
          if (!isRetriable(code)) throw new TransactionRequestError('TxnOffsetCommit', code, what);
          retriable = new KafkaProtocolError(code, what);
          const o = pending.find((x) => x.topic === t.name && x.partition === p.partitionIndex);
          if (o !== undefined) failed.push(o);
        }
      }
      if (retriable !== null) {
        pending = failed;
        // Retriable whatever the code's own classification (UNKNOWN_TOPIC_OR_PARTITION while a log loads, say).
        throw new KafkaClientError(retriable.message, true, { cause: retriable });
      }
    });
  }

  /** EndTxn (commit or abort). */
  async endTxn(commit: boolean): Promise<void> {
    await this.txnCall<EndTxnResponse>(commit ? 'EndTxn(commit)' : 'EndTxn(abort)', ApiKey.END_TXN, () => ({
      transactionalId: this.transactionalId,
      producerId: BigInt(this.producerId),
      producerEpoch: this.producerEpoch,
      committed: commit,
    }));
    this.transactionStarted = false;
  }

  /** A request to the transaction coordinator, found (again) as needed, retried while its answer says so. */
  private txnCall<T extends { errorCode: number }>(
    what: string,
    apiKey: number,
    body: (version: number) => unknown,
    errorOf: (res: T) => number = (res) => res.errorCode,
    timeoutMs = this.callTimeoutMs,
  ): Promise<T> {
    return this.retrying(what, timeoutMs, async () => {
      if (this.txnCoordinator < 0) {
        this.txnCoordinator = await findCoordinator(
          this.cluster,
          this.transactionalId,
          CoordinatorType.TRANSACTION,
        ).catch(classifyFindCoordinator);
      }
      const coordinator = this.txnCoordinator;
      const connection = await this.cluster.connection(coordinator).catch((e: unknown) => {
        this.txnCoordinator = -1;
        throw e;
      });
      const version = connection.pickVersion(apiKey, MAX_VERSION[apiKey]);
      const res = await connection.request<T>(apiKey, body(version), { version }).catch((e: unknown) => {
        this.txnCoordinator = -1;
        throw e;
      });
      const code = errorOf(res);
      if (code === ErrorCode.NONE) return res;
      if (MOVED_CODES.has(code)) this.txnCoordinator = -1;
      const detail = `${what} for transactional id ${this.transactionalId}`;
      if (isRetriable(code)) {
        const err = new KafkaProtocolError(code, detail);
        throw new KafkaClientError(err.message, true, { cause: err });
      }
      throw new TransactionRequestError(COORDINATOR_CALL[apiKey]!, code, detail);
    });
  }

  /** Runs fn until it succeeds, fails for good, or timeoutMs has passed; backoff as the cluster's, shorter at first. */
  private async retrying<T>(what: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!isRetriableError(err)) throw err;
        if (Date.now() >= deadline) {
          throw new KafkaClientError(
            `${what} did not succeed within ${timeoutMs} ms: ${(err as Error).message}`,
            true,
            { cause: err },
          );
        }
        this.cluster.invalidate();
        // CONCURRENT_TRANSACTIONS right after a commit clears within milliseconds (Kafka retries it after 20 ms).
        await sleep(
          Math.min(attempt === 0 ? 20 : this.cluster.backoffMs(attempt - 1), deadline - Date.now()),
        );
      }
    }
  }
}
