// The producer's sender (Kafka's Sender, franz-go's sink): drains the partition queues the accumulator fills into
// Produce requests, one per leader, within each partition's in-flight limit; numbers idempotent batches; hears the
// answers, retries what may be retried (splitting a batch the topic refused as too large, batch-split.ts) and
// delivers each batch's outcome; expires batches at delivery.timeout.ms; and owns the producer id and epoch the
// batches are numbered under, bumping the epoch when a numbered batch fails for good (KIP-360).
//
// Ownership: one per producer. It changes the partition queues' in-flight and sequence state (partition-queue.ts
// decides what those mean) and hands finished batches back to the accumulator (record-accumulator.ts), which
// frees their memory; it changes state only between awaits, and starts network I/O after each change.

import {
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  type ProducerEpoch,
  type ProducerId,
  toProducerEpoch,
  toProducerId,
} from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ProduceRequest, ProduceResponse } from '../protocol/messages/00-produce.js';
import type { InitProducerIdResponse } from '../protocol/messages/22-init-producer-id.js';
import { ApiKey } from '../protocol/registry.js';
import { splitBatch } from './batch-split.js';
import type { Cluster } from './cluster.js';
import { EarliestTimer } from './earliest-timer.js';
import {
  DeliveryTimeoutError,
  KafkaClientError,
  KafkaProtocolError,
  TransactionAbortedError,
} from './errors.js';
import {
  acknowledge,
  adjustSequencesAfterFailedBatch,
  type Batch,
  EPOCH_MAX,
  isSequenceGap,
  mayMoveOn,
  numberBatch,
  onCurrentEpoch,
  type PartitionQueue,
  requeueInSequenceOrder,
  TXN_ADDED,
} from './partition-queue.js';
import type { RecordMetadata } from './producer.js';
import type { ProducerSettings } from './producer-settings.js';
import type { RecordAccumulator } from './record-accumulator.js';
import { deliverFailure, deliverSuccess } from './send-outcome.js';
import { fatalStateError, isFatalBatchError, type TransactionManager } from './transactions.js';

/** What the sender asks of the producer around it. */
export interface SenderHooks {
  /**
   * Fails every record not sent yet, those waiting for metadata or memory included: the transaction can no longer
   * commit (Kafka's abortUndrainedBatches).
   */
  failUnsent(err: Error): void;
}

/**
 * The broker refused the batch without writing it: a non-retriable answer other than a sequence error (after
 * which the broker's sequences, not the batch, are in question). A retriable answer such as REQUEST_TIMED_OUT or
 * a lost connection may follow a write.
 */
function refusedUnwritten(err: Error): boolean {
  return (
    err instanceof KafkaProtocolError &&
    !err.retriable &&
    err.code !== ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER &&
    err.code !== ErrorCode.UNKNOWN_PRODUCER_ID
  );
}

/**
 * A partition's Produce error as Kafka's Sender.failBatch words it: CLUSTER_AUTHORIZATION_FAILED (which only an
 * idempotent batch gets, from a broker that checks IDEMPOTENT_WRITE) and TOPIC_AUTHORIZATION_FAILED have their own
 * texts; the others carry the broker's message, if any.
 */
function produceError(code: number, errorMessage: string | null, topic: string): KafkaProtocolError {
  if (code === ErrorCode.CLUSTER_AUTHORIZATION_FAILED) {
    return new KafkaProtocolError(code, 'The producer is not authorized to do idempotent sends');
  }
  if (code === ErrorCode.TOPIC_AUTHORIZATION_FAILED) {
    return new KafkaProtocolError(code, `Not authorized to access topics: [${topic}]`);
  }
  return new KafkaProtocolError(code, errorMessage);
}

/** Drains ready batches into Produce requests and settles them from the answers. */
export class Sender {
  /** The producer id and epoch new batches are numbered under (-1 before the first). */
  producerId: ProducerId = NO_PRODUCER_ID;
  producerEpoch: ProducerEpoch = NO_PRODUCER_EPOCH;
  private producerIdPromise: Promise<void> | null = null;
  private drainScheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Fires when the earliest batch not in flight reaches delivery.timeout.ms (expireBatches). */
  private readonly expiryTimer = new EarliestTimer(() => this.expireBatches());
  /** Wakes drain when the first retried batch waiting out its backoff may go. */
  private readonly backoffTimer = new EarliestTimer(() => this.wake());
  /** close() ran its course: nothing is retried or expired any more. */
  closed = false;
  /**
   * The error that made an idempotent producer without transactional.id fatal (a transactional one keeps it in its
   * TransactionManager): Kafka 3.9 gives every idempotent producer a TransactionManager, whose FATAL_ERROR stops the
   * Sender and fails every later send. Once set, it stays.
   */
  private idempotentFatal: Error | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly settings: ProducerSettings,
    private readonly accumulator: RecordAccumulator,
    private readonly txn: TransactionManager | null,
    private readonly hooks: SenderHooks,
  ) {}

  /**
   * True when a batch closed now would be sent at once: nothing closed is waiting before it and an in-flight slot
   * is free. Otherwise the open batch keeps growing: fewer, larger requests cost the broker less per record than
   * several batch.size ones queued behind each other (measured: about 3x the records per second at 100 B).
   */
  canSendNow(pq: PartitionQueue): boolean {
    return (
      !pq.blocked &&
      pq.inFlight.size < this.settings.maxInFlightPerPartition &&
      pq.ready.length === 0 &&
      (pq.inFlight.size === 0 || !this.settings.idempotent || this.onCurrentEpoch(pq))
    );
  }

  /** The partition's sequences run under the producer's current id and epoch. */
  private onCurrentEpoch(pq: PartitionQueue): boolean {
    return onCurrentEpoch(pq, this.producerId, this.producerEpoch);
  }

  /** See mayMoveOn (partition-queue.ts): the partition follows the producer to its current epoch when it can. */
  private mayMoveOn(pq: PartitionQueue): boolean {
    return mayMoveOn(pq, this.producerId, this.producerEpoch);
  }

  /** A batch opened at `createdMs`: expire it at its delivery.timeout.ms unless it is sent by then. */
  onBatchOpened(createdMs: number): void {
    this.expiryTimer.armBy(createdMs + this.settings.deliveryTimeoutMs);
  }

  /** Every record sent so far has its outcome: no timer is needed until the next. */
  onIdle(): void {
    this.expiryTimer.cancel();
    this.backoffTimer.cancel();
  }

  /**
   * Throws what every send gets once an idempotent producer without transactional.id is fatal, as Kafka's
   * KafkaProducer.doSend does through maybeAddPartition and maybeFailWithError.
   */
  checkNotFatal(): void {
    if (this.idempotentFatal !== null) throw fatalStateError(this.idempotentFatal);
  }

  /**
   * A batch failed for good. In a transaction (Kafka's TransactionManager.handleFailedBatch): the transaction can
   * no longer commit (abortable, or fatal when fenced), and the epoch is bumped by the coordinator after the abort
   * (KIP-360) for any batch that fails while the transaction is open, numbered or not, an expired one never sent
   * too (maybeTransitionToErrorState). While a commit or abort is under way Kafka asks for no bump; a batch the
   * broker refused unwritten (`answered`) gives its sequences back and the partition's later batches move down
   * (adjustSequencesAfterFailedBatch). A numbered batch whose fate is unknown (expired after it was sent, or refused
   * by a sequence error) still asks for the bump then, as Kafka's unresolved sequences do (maybeResolveSequences).
   * Idempotent without a transaction: a fatal error (isFatalBatchError: unauthorized, fenced, unsupported) stops
   * the producer, as Kafka's maybeTransitionToErrorState does for it too, and nothing is bumped (handleFailedBatch
   * ignores every batch once fatal); otherwise its sequences will never be filled, so later batches of its partition
   * cannot follow under this epoch; as Kafka's idempotent producer does, the next epoch of the same producer id,
   * or a new producer id once the epoch is exhausted. A batch of an epoch already left behind needs no bump: its
   * partition starts again under the current one.
   */
  private bumpEpochAfter(b: Batch, err: Error, records: number, answered: boolean): void {
    if (this.txn !== null) {
      const givenBack = answered && adjustSequencesAfterFailedBatch(b, records);
      if (!this.txn.isCompleting || (b.baseSequence >= 0 && !givenBack)) this.txn.epochBumpRequired = true;
      this.txn.fail(err);
      // Its later batches go again with their new sequences; and in an error state the unsent ones are failed.
      this.wake();
      return;
    }
    if (!this.settings.idempotent || this.idempotentFatal !== null) return;
    if (isFatalBatchError(err)) {
      this.idempotentFatal = err;
      this.cluster.options.logger?.info('Transiting to fatal error state', { error: err.message });
      this.wake();
      return;
    }
    if (b.baseSequence < 0) return;
    if (b.producerId !== this.producerId || b.producerEpoch !== this.producerEpoch) return;
    if (this.producerEpoch >= EPOCH_MAX) this.producerId = NO_PRODUCER_ID;
    else this.producerEpoch = toProducerEpoch(this.producerEpoch + 1);
  }

  /**
   * Fails the batches not in flight that have reached delivery.timeout.ms (the accumulator picks them, as Kafka's
   * RecordAccumulator does), then waits for the next one due. Batches in flight are not among them: they expire
   * when their request comes back (onBatchError).
   */
  private expireBatches(): void {
    if (this.closed) return;
    const now = Date.now();
    const { nextDueMs, expired } = this.accumulator.expireBatches(now, (b) => this.expire(b, now, null));
    if (nextDueMs !== Number.POSITIVE_INFINITY) this.expiryTimer.armBy(nextDueMs);
    if (expired) this.wake();
  }

  /**
   * The batch reached delivery.timeout.ms: its records fail with Kafka's message. A batch that was sent may have
   * been written, so its sequences are unresolved: the epoch moves on (bumpEpochAfter), as for any numbered batch
   * that fails for good.
   */
  private expire(b: Batch, now: number, lastError: Error | null): void {
    const what = `${b.onSuccess.length} record(s) for ${b.pq.topic}-${b.pq.partition}`;
    const err = new DeliveryTimeoutError(
      `Expiring ${what}:${now - b.createdMs} ms has passed since batch creation ` +
        `(delivery.timeout.ms ${this.settings.deliveryTimeoutMs})` +
        (lastError === null ? '' : `; last error: ${lastError.message}`),
      lastError === null ? undefined : { cause: lastError },
    );
    const records = b.onSuccess.length;
    this.settle(b, err);
    this.bumpEpochAfter(b, err, records, false);
  }

  /** Runs drain once, in a microtask: every change made in this turn of the event loop is seen together. */
  wake(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    queueMicrotask(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  /** An idempotent producer without transactional.id gets its producer id from InitProducerId (once at a time). */
  ensureProducerId(): Promise<void> {
    if (this.producerId >= 0) return Promise.resolve();
    if (this.producerIdPromise === null) {
      this.producerIdPromise = this.cluster
        .withRetry(async () => {
          const res = await this.cluster.sendAny<InitProducerIdResponse>(ApiKey.INIT_PRODUCER_ID, {
            transactionalId: null,
            transactionTimeoutMs: 60_000,
            producerId: -1n,
            producerEpoch: -1,
          });
          if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, 'InitProducerId');
          this.producerId = toProducerId(res.producerId);
          this.producerEpoch = toProducerEpoch(res.producerEpoch);
        }, 1_000_000)
        .finally(() => {
          this.producerIdPromise = null;
        });
    }
    return this.producerIdPromise;
  }

  /**
   * Sends every batch it may, in rounds: each round takes the next batch of every partition that has a free
   * in-flight slot (its oldest closed batch, else its open batch once full or lingered) and sends one request
   * per leader, so a partition with several batches waiting fills its slots in one go.
   */
  private drain(): void {
    const { idempotent, maxInFlightPerPartition } = this.settings;
    if (this.txn !== null) {
      // Outside a transaction that may still commit, the batches never numbered fail (Kafka's
      // abortUndrainedBatches), with the error that broke the transaction or, for an abort asked for, as aborted.
      // Those numbered already (waiting for a retry) may have been written: they still go, so that their
      // sequences are resolved and the abort needs no epoch bump; after a fatal error nothing goes, and the
      // batches in flight fail too (abortFatally).
      const state = this.txn.state;
      if (state === 'FATAL_ERROR') {
        if (this.txn.lastError !== null) this.abortFatally(this.txn.lastError);
        return;
      }
      if (state !== 'IN_TRANSACTION' && state !== 'COMMITTING_TRANSACTION') {
        this.hooks.failUnsent(
          this.txn.lastError ?? new TransactionAbortedError('Failing batch since transaction was aborted'),
        );
        if (!this.sendsNumberedOnly()) return;
      }
      if (this.producerId < 0) return;
    } else if (this.idempotentFatal !== null) {
      this.abortFatally(this.idempotentFatal);
      return;
    } else if (idempotent && this.producerId < 0) {
      this.ensureProducerId().then(
        () => this.wake(),
        (err: Error) => this.abortUndrained(err),
      );
      return;
    }
    let missingLeader = false;
    const now = Date.now();
    for (let round = 0; round < maxInFlightPerPartition; round++) {
      const byLeader = new Map<number, Batch[]>();
      for (const pq of this.accumulator.queueList) {
        if (pq.blocked) {
          if (pq.inFlight.size > 0) continue;
          pq.blocked = false;
        }
        if (pq.inFlight.size >= maxInFlightPerPartition) continue;
        // A partition's batches go only once the coordinator has it in the transaction (AddPartitionsToTxn).
        if (this.txn !== null && pq.inTxn !== TXN_ADDED) continue;
        // A retry waits out its backoff, as in Kafka's accumulator: a broker that is down is not hammered.
        const first = pq.ready[0];
        if (first !== undefined && first.retryAtMs > now) {
          this.backoffTimer.armBy(first.retryAtMs);
          continue;
        }
        if (idempotent && !this.mayMoveOn(pq)) continue;
        if (pq.ready.length === 0) {
          const open = pq.open;
          // While a flush() waits, an open batch goes without waiting for linger.ms (records that were waiting
          // for metadata or memory reach their batches then), as Kafka's flush makes every batch ready.
          const flushing = this.accumulator.flushing;
          if (
            open === null ||
            !(flushing || open.lingered || open.writer.sizeInBytes >= this.settings.batchSize)
          )
            continue;
          this.accumulator.closeBatch(open, false);
        }
        const leader = this.cluster.leaderOf(pq.topic, pq.partition);
        if (leader < 0) {
          missingLeader = true;
          continue;
        }
        const batch = pq.ready.shift()!;
        pq.inFlight.add(batch);
        let list = byLeader.get(leader);
        if (list === undefined) byLeader.set(leader, (list = []));
        list.push(batch);
      }
      if (byLeader.size === 0) break;
      for (const [leader, batches] of byLeader) this.sendBatches(leader, batches);
    }
    if (missingLeader) this.retryLater(0, true);
  }

  private retryLater(attempt: number, refresh: boolean): void {
    // Once closed, nothing is retried: a metadata refresh in flight when close() ran fails (the client is closed)
    // and would otherwise schedule the next retry, and so on for ever, keeping the process alive.
    if (this.retryTimer !== null || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (refresh) {
        this.cluster.refreshMetadata().then(
          () => this.wake(),
          () => this.retryLater(attempt + 1, true),
        );
      } else {
        this.wake();
      }
    }, this.cluster.backoffMs(attempt));
  }

  /**
   * The batch's bytes for its next request. A batch is in one request at a time, and is built again only after
   * the previous request settled, when no socket holds its bytes any more (connection.ts): a request timeout
   * closes the connection before the batch hears of it. So a retry may rewrite the header in place.
   */
  private build(batch: Batch): Buffer {
    const idempotent = this.settings.idempotent;
    if (idempotent && numberBatch(batch)) batch.built = null;
    batch.sequenceMoved = false;
    if (batch.built === null) {
      batch.built = batch.writer.finish({
        compression: this.settings.compression,
        compressionLevel: this.settings.compressionLevel,
        producerId: idempotent ? batch.producerId : -1,
        producerEpoch: idempotent ? batch.producerEpoch : -1,
        baseSequence: idempotent ? batch.baseSequence : -1,
        transactional: this.txn !== null,
      });
    }
    return batch.built;
  }

  private sendBatches(leader: number, batches: Batch[]): void {
    const topics = new Map<string, { index: number; records: Buffer }[]>();
    for (const b of batches) {
      b.attempts++;
      let list = topics.get(b.pq.topic);
      if (list === undefined) topics.set(b.pq.topic, (list = []));
      try {
        list.push({ index: b.pq.partition, records: this.build(b) });
      } catch (err) {
        // Building fails only for a programming error or a codec failure; the batch cannot be sent.
        b.pq.inFlight.delete(b);
        const records = b.onSuccess.length;
        this.settle(b, err as Error);
        this.bumpEpochAfter(b, err as Error, records, false);
      }
    }
    const acks = this.settings.acks;
    const request: ProduceRequest = {
      transactionalId: this.txn === null ? null : this.txn.transactionalId,
      acks,
      timeoutMs: this.settings.ackTimeoutMs,
      topicData: [...topics].map(([name, partitionData]) => ({ name, partitionData })),
    };
    const live = batches.filter((b) => b.onSuccess.length > 0);
    if (live.length === 0) return;
    this.cluster
      .send<ProduceResponse | undefined>(leader, ApiKey.PRODUCE, request, { noResponse: acks === 0 })
      .then(
        (res) => this.onResponse(live, res),
        (err: Error) => {
          for (const b of live) {
            if (b.abortedInFlight) this.forgetAborted(b);
            else this.onBatchError(b, err, true);
          }
          this.wake();
        },
      );
  }

  private onResponse(batches: Batch[], res: ProduceResponse | undefined): void {
    for (const b of batches) {
      if (b.abortedInFlight) {
        this.forgetAborted(b);
        continue;
      }
      if (res === undefined) {
        this.succeed(b, -1, -1);
        continue;
      }
      const p = res.responses
        .find((t) => t.name === b.pq.topic)
        ?.partitionResponses.find((x) => x.index === b.pq.partition);
      if (p === undefined) {
        this.onBatchError(
          b,
          new KafkaClientError(`no response for ${b.pq.topic}-${b.pq.partition}`, true),
          false,
        );
      } else if (p.errorCode === 0 || p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        this.succeed(b, Number(p.baseOffset), Number(p.logAppendTimeMs));
      } else if (p.errorCode === ErrorCode.MESSAGE_TOO_LARGE && b.onSuccess.length > 1 && !this.closed) {
        this.splitAndRequeue(b, p.errorMessage);
      } else {
        const err = produceError(p.errorCode, p.errorMessage, b.pq.topic);
        const sequenceError =
          this.settings.idempotent &&
          (p.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER ||
            p.errorCode === ErrorCode.UNKNOWN_PRODUCER_ID);
        let retriable = err.retriable;
        if (sequenceError && this.txn === null) {
          this.onSequenceError(b, p.errorCode);
          retriable = true;
        } else if (sequenceError) {
          // Transactional: the epoch does not move during a transaction. A batch out of sequence behind an
          // earlier one being retried goes again, as does one whose sequences moved down while it was out (an
          // earlier batch was refused); lost producer state or a real gap fails it, which makes the transaction
          // abortable and bumps the epoch after the abort (KIP-360), as Kafka's canRetry decides.
          retriable =
            (p.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && b.sequenceMoved) ||
            !this.isSequenceGap(b, p.errorCode);
        }
        this.onBatchError(b, err, retriable);
      }
    }
    this.wake();
  }

  /**
   * MESSAGE_TOO_LARGE for a batch of several records: the broker wrote none of it, and each record may fit the
   * topic on its own. As Kafka's Sender (completeBatch, splitAndReenqueue): the batch is split into batch.size
   * parts with its sequences (batch-split.ts), which take its place at the head of the queue, in sequence order,
   * without counting a retry. The partition holds its next batches until its in-flight ones are back, as for a
   * retry: those behind the big one come back OUT_OF_ORDER_SEQUENCE_NUMBER and go again after the parts.
   */
  private splitAndRequeue(b: Batch, errorMessage: string | null): void {
    const pq = b.pq;
    pq.inFlight.delete(b);
    const records = b.onSuccess.length;
    const parts = splitBatch(b, this.settings.batchSize, this.accumulator.bufferPool);
    this.accumulator.replaceWithParts(b, parts);
    this.cluster.options.logger?.warn('produce batch too large for the topic: split and sent again', {
      topic: pq.topic,
      partition: pq.partition,
      records,
      parts: parts.length,
      error: errorMessage,
    });
    pq.blocked = true;
    requeueInSequenceOrder(pq, ...parts);
    this.expiryTimer.armBy(parts[0]!.createdMs + this.settings.deliveryTimeoutMs);
  }

  private succeed(b: Batch, baseOffset: number, logAppendTimeMs: number): void {
    const pq = b.pq;
    pq.inFlight.delete(b);
    acknowledge(b);
    const topic = b.pq.topic;
    const partition = b.pq.partition;
    const onSuccess = b.onSuccess;
    for (let i = 0; i < onSuccess.length; i++) {
      const metadata: RecordMetadata = {
        topic,
        partition,
        offset: baseOffset < 0 ? -1 : baseOffset + i,
        timestamp: logAppendTimeMs >= 0 ? logAppendTimeMs : b.timestamps[i]!,
      };
      deliverSuccess(onSuccess[i]!, metadata);
    }
    this.accumulator.deallocate(b);
  }

  /**
   * OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID: the batch is retried. Under the partition's current
   * epoch, out of sequence usually means that an earlier batch failed and goes again first. For a batch of an
   * epoch the producer has left, the broker will not take its partition's old sequences any more: its unsent
   * batches are numbered again under the current epoch once nothing of the old one is in flight (mayMoveOn).
   * UNKNOWN_PRODUCER_ID (the partition lost the producer's state) does the same after bumping the epoch, as
   * Kafka's idempotent producer does, if the batch is of the current one; so does OUT_OF_ORDER_SEQUENCE_NUMBER
   * for the batch right after the last acknowledged sequence (TransactionManager.canRetry: nothing earlier is
   * missing, so the gap is real and only a new epoch lets the partition go on).
   */
  private onSequenceError(b: Batch, code: number): void {
    const pq = b.pq;
    if (b.producerId !== pq.producerId || b.producerEpoch !== pq.producerEpoch) return;
    if (this.isSequenceGap(b, code)) {
      // Lost producer state, or a real gap: every sequence before this batch was acknowledged, yet the broker
      // does not take it (it lost records). No retry under this epoch can succeed.
      this.bumpEpochAfter(b, new KafkaProtocolError(code), b.onSuccess.length, false);
      pq.sequenceGap = true;
    } else if (!this.onCurrentEpoch(pq)) {
      pq.sequenceGap = true;
    }
  }

  /** See isSequenceGap (partition-queue.ts), under the producer's current id and epoch. */
  private isSequenceGap(b: Batch, code: number): boolean {
    return isSequenceGap(b, code, this.producerId, this.producerEpoch);
  }

  private onBatchError(b: Batch, err: Error, retriable: boolean): void {
    const pq = b.pq;
    pq.inFlight.delete(b);
    const deliveryTimeoutMs = this.settings.deliveryTimeoutMs;
    const expired = Date.now() - b.createdMs >= deliveryTimeoutMs;
    if (retriable && !expired && b.attempts <= this.settings.retries && !this.closed) {
      // Back into the queue in sequence order, and hold the partition until its in-flight batches return.
      pq.blocked = true;
      requeueInSequenceOrder(pq, b);
      b.retryAtMs = Date.now() + this.cluster.backoffMs(Math.min(b.attempts - 1, 10));
      this.expiryTimer.armBy(b.createdMs + deliveryTimeoutMs);
      this.cluster.invalidate();
      this.retryLater(Math.min(b.attempts - 1, 10), true);
      return;
    }
    if (expired) {
      this.expire(b, Date.now(), err);
    } else {
      const records = b.onSuccess.length;
      this.settle(b, err);
      this.bumpEpochAfter(b, err, records, refusedUnwritten(err));
    }
  }

  private settle(b: Batch, err: Error): void {
    for (const f of b.onFailure) deliverFailure(f, err);
    this.accumulator.deallocate(b);
  }

  /**
   * After a fatal error, every batch without an outcome fails with it, in flight or not, as Kafka's Sender does
   * (maybeAbortBatches, RecordAccumulator.abortBatches: "whether they have been sent or not"): the records not
   * sent through failUnsent, those in flight here. An in-flight batch keeps its place in its partition's
   * in-flight set and its buffer until its request settles; the answer is then ignored (forgetAborted), as
   * Kafka's ProducerBatch.done ignores a late answer to an aborted batch, a success included.
   */
  private abortFatally(err: Error): void {
    this.hooks.failUnsent(err);
    let aborted = 0;
    for (const pq of this.accumulator.queueList) {
      for (const b of pq.inFlight) {
        if (b.abortedInFlight) continue;
        b.abortedInFlight = true;
        aborted += b.onFailure.length;
        for (const f of b.onFailure) deliverFailure(f, err);
        this.accumulator.settleAccounts(b);
      }
    }
    if (aborted > 0) {
      this.cluster.options.logger?.error('Aborting producer batches due to fatal error', {
        records: aborted,
        error: err.message,
      });
    }
  }

  /** The request of a batch aborted in flight settled: its answer changes nothing, its buffer is free again. */
  private forgetAborted(b: Batch): void {
    b.pq.inFlight.delete(b);
    this.accumulator.releaseBuffer(b);
  }

  /**
   * A transaction that can only be aborted (abortable error, or an abort under way) still sends its numbered
   * batches, as Kafka's RecordAccumulator drains them; the unnumbered ones are failed (abortUndrained).
   */
  private sendsNumberedOnly(): boolean {
    const state = this.txn?.state;
    return !this.closed && (state === 'ABORTABLE_ERROR' || state === 'ABORTING_TRANSACTION');
  }

  /**
   * Fails every batch not in flight (open ones included) with `err`, except, while a transaction is being
   * aborted (sendsNumberedOnly), those already numbered: they wait for their retry and go, as in Kafka's
   * abortUndrainedBatches, which fails only the batches without a sequence.
   */
  abortUndrained(err: Error): void {
    const keepNumbered = this.sendsNumberedOnly();
    this.accumulator.abortUndrained(
      (b) => keepNumbered && b.baseSequence >= 0,
      (b) => {
        // A batch that was sent, failed and waits for its retry may have been written: its sequences are spent.
        if (this.txn !== null && b.baseSequence >= 0) this.txn.epochBumpRequired = true;
        this.settle(b, err);
      },
    );
  }

  /** Stops retrying and expiring: the producer is closing for good. */
  close(): void {
    this.closed = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.expiryTimer.cancel();
    this.backoffTimer.cancel();
  }
}
