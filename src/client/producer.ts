// The producer: records are serialized, given a partition, and encoded straight into that partition's open
// batch (batch-writer.ts); a batch closes at batch.size or after linger.ms when the partition has an in-flight
// slot free, and otherwise keeps growing (up to max.request.size) until one frees, so a backlog leaves as one
// large batch. A sender drains closed batches, one per partition per Produce request, to each partition's leader.
// Every record's outcome is delivered once: send() resolves a promise per record, sendBatch() one per call.
//
// Idempotence (on by default, as in Kafka 3+): the producer gets a producer id from InitProducerId, numbers each
// partition's batches with sequences, and keeps up to max.in.flight.requests.per.connection (at most 5) batches
// of a partition in flight. When a batch fails with a retriable error the partition stops sending until its
// in-flight batches have come back, and the failed ones go again in sequence order, so the log keeps the send
// order without duplicates. With idempotence off, retries may reorder batches, as in Kafka.
//
// A batch that fails for good (an error that is not retriable, delivery.timeout.ms, retries spent) leaves a gap
// in its partition's sequences, so the producer bumps its epoch (KIP-360, as Kafka's TransactionManager does for
// an idempotent producer: locally, the same producer id with the next epoch, which partition leaders take when
// its sequences start again at 0; a new producer id from InitProducerId only once the epoch is exhausted). Each
// partition moves to the new epoch on its own, once none of its batches under the old one is in flight: until
// then it sends no new batch, and a batch of the old epoch that comes back to be retried goes again with its old
// id, epoch and sequence, so a retry of a batch that did land is answered as a duplicate, and none is renumbered
// behind newer ones. Only when the broker says an old-epoch retry cannot follow (OUT_OF_ORDER_SEQUENCE_NUMBER or
// UNKNOWN_PRODUCER_ID) are the partition's unsent batches numbered again, in order, from 0 under the new epoch.
// OUT_OF_ORDER_SEQUENCE_NUMBER for the partition's oldest unacknowledged batch of the current epoch (every lower
// sequence was acknowledged, so the broker lost records: a real gap, not one a retry fills) bumps the epoch at once,
// and the batch is retried from sequence 0 of the new one, as Kafka's TransactionManager.canRetry does for an
// idempotent producer, instead of being refused until delivery.timeout.ms.
//
// delivery.timeout.ms (KIP-91) bounds a record's time from send() to its outcome, counted from its batch's
// creation as in Kafka. A batch not in flight (waiting for a leader, a broker, its partition's in-flight batches,
// or a retry) fails with DeliveryTimeoutError once it is due, from a timer (RecordAccumulator.expiredBatches); a
// batch in flight fails when its request comes back with a retriable error or times out after the deadline. It
// must be at least linger.ms + request.timeout.ms (checked at construction, as Kafka does).
//
// Memory: buffer.memory bounds the bytes of records accepted but not yet acknowledged; send() waits up to
// max.block.ms for room, then fails.
//
// Order: a partition's records reach its batches in the order of the send() calls, as Kafka's blocking send()
// gives. A record whose topic's metadata is not cached joins that topic's line; one wait per topic loads the
// metadata and admits the whole line at once, and later sends to the topic join the line until then. Room in
// buffer.memory is given in request order. Only a record with nothing waiting before it takes the synchronous path.
//
// State is owned by this object and changed only between awaits; network I/O starts after each change.
//
// This file is the public facade: settings, serialization, partition choice, the wait for a topic's metadata,
// and the transactional API. Around it, each with one job: record-accumulator.ts appends records to their
// partition's open batch (batch.size, linger.ms, buffer.memory, flush), as Kafka's RecordAccumulator;
// sender.ts drains ready batches into Produce requests and settles them from the answers (in-flight limits,
// retries, sequences, epoch bumps, delivery.timeout.ms), as Kafka's Sender; partition-queue.ts holds each
// partition's batches and sequence state (and decides when a partition follows the producer to a new epoch);
// producer-settings.ts resolves the options with Kafka's defaults and rules; send-outcome.ts delivers each
// record's outcome once; producer-record.ts sizes a record for buffer.memory; transactions.ts is the
// transactional state machine and txn-partitions.ts puts partitions into the open transaction (AddPartitionsToTxn).

import { toProducerEpoch, toProducerId } from '../common/ids.js';
import { CompressionType } from '../protocol/compression/compression-type.js';
import { ErrorCode } from '../protocol/errors.js';
import type { EncodedHeader } from './batch-writer.js';
import { Cluster } from './cluster.js';
import {
  ClientStateError,
  isRetriableError,
  KafkaClientError,
  KafkaProtocolError,
  TransactionAbortedError,
} from './errors.js';
import { Fifo } from './fifo.js';
import { type ClientOptions, producerClientId } from './options.js';
import type { Batch, PartitionQueue } from './partition-queue.js';
import {
  createPartitioner,
  type Partitioner,
  type PartitionerFn,
  type PartitionerName,
} from './partitioners.js';
import { encodeHeaders, recordBytesBound } from './producer-record.js';
import { type ProducerSettings, resolveProducerSettings } from './producer-settings.js';
import { RecordAccumulator } from './record-accumulator.js';
import { checkCloseTimeout, checkCommittableOffset } from './requests.js';
import { deliverFailure, GroupSlot, type OnFailure, type OnSuccess, SendGroup } from './send-outcome.js';
import { Sender } from './sender.js';
import { bytesSerde, type Serializer } from './serdes.js';
import { type ConsumerGroupMetadata, TransactionManager, type TransactionOffset } from './transactions.js';
import { TransactionPartitions } from './txn-partitions.js';

/** compression.type of the batches the producer writes. */
export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
/**
 * acks: how many replicas must have a batch before the broker answers (0 none, 1 the leader, all/-1 every in-
 * sync replica).
 */
export type Acks = 0 | 1 | -1 | 'all';

/**
 * The producer's settings (Kafka's producer keys in camelCase, with Kafka's defaults) and its key and value
 * serializers.
 */
export interface ProducerOptions<K = Buffer | null, V = Buffer | null> extends ClientOptions {
  /** acks (default all). */
  acks?: Acks;
  /** linger.ms (default 5, as in Kafka 4). */
  lingerMs?: number;
  /** batch.size in bytes (default 16384). */
  batchSize?: number;
  /** buffer.memory in bytes (default 32 MiB). */
  bufferMemory?: number;
  /** max.block.ms: how long send() may wait for metadata or buffer space (default 60000). */
  maxBlockMs?: number;
  /** max.request.size: the largest record accepted (default 1 MiB). */
  maxRequestSize?: number;
  /** compression.type (default none). */
  compression?: CompressionName;
  compressionLevel?: number;
  /** enable.idempotence (default true; turned off quietly when acks is not all and it was not asked for). */
  idempotent?: boolean;
  /**
   * delivery.timeout.ms (default 120000): the bound on a record's time from send() to its outcome, counted from
   * its batch's creation. At least lingerMs + requestTimeoutMs (a smaller value given is refused; the default is
   * raised to that sum, as in Kafka).
   */
  deliveryTimeoutMs?: number;
  /** Produce request timeout sent to the broker (default requestTimeoutMs). */
  ackTimeoutMs?: number;
  partitioner?: PartitionerName | PartitionerFn;
  /** allow.auto.create.topics (default true). */
  allowAutoCreateTopics?: boolean;
  keySerializer?: Serializer<K>;
  valueSerializer?: Serializer<V>;
  /**
   * transactional.id: makes the producer transactional (initTransactions, beginTransaction, commitTransaction,
   * abortTransaction, sendOffsetsToTransaction). Needs idempotence, which it turns on.
   */
  transactionalId?: string;
  /** transaction.timeout.ms (default 60000): the coordinator aborts a transaction left open longer. */
  transactionTimeoutMs?: number;
}

export type HeadersInput =
  | Record<string, string | Buffer>
  | Array<{ key: string; value: string | Buffer | null }>;

/** A record to send: topic, optional partition, key, value, headers and timestamp. */
export interface ProducerRecord<K = Buffer | null, V = Buffer | null> {
  topic: string;
  value: V;
  key?: K;
  partition?: number;
  headers?: HeadersInput;
  /** Milliseconds since the epoch (default now). */
  timestamp?: number;
}

/** Where a sent record was written: its partition, offset and timestamp. */
export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 with acks=0. */
  offset: number;
  /** CreateTime, or the broker's time for a LogAppendTime topic. */
  timestamp: number;
}

/** A record serialized and sized, waiting for metadata or memory (the slow path; the fast one keeps no object). */
interface Prepared {
  key: Buffer | null;
  value: Buffer | null;
  headers: EncodedHeader[] | undefined;
  timestamp: number;
  size: number;
}

/**
 * A record that waits, before it reaches a batch, for its topic's metadata (in its topic's line) or for room in
 * buffer.memory (RecordAccumulator.waitForRoom), with who learns its outcome.
 */
interface Waiting extends Prepared {
  topic: string;
  /** The partition asked for, if any: one is chosen once the topic's partition count is known. */
  partition: number | undefined;
  onSuccess: OnSuccess;
  onFailure: OnFailure;
  /** When send() took it: max.block.ms bounds its wait from then. */
  startedMs: number;
  /** The flush generation it was held in (RecordAccumulator.hold): the flushes begun since wait for it. */
  flushGeneration: number;
}

function noop(): void {}

/**
 * Kafka's producer: batches per partition (batch.size, linger.ms) under buffer.memory, idempotence,
 * compression, transactions, flush and close.
 */
export class Producer<K = Buffer | null, V = Buffer | null> {
  /** The connections and metadata this producer uses, exposed so tests and tools can reach a broker directly. */
  readonly cluster: Cluster;
  /** The options with Kafka's defaults and rules applied, shared by the accumulator and the sender. */
  private readonly settings: ProducerSettings;
  /**
   * enable.idempotence as resolved (it is turned off quietly when acks is not all and it was not asked for), so a
   * caller can tell whether retries may duplicate.
   */
  readonly idempotent: boolean;
  private readonly partitioner: Partitioner;
  private readonly keySerializer: Serializer<K>;
  private readonly valueSerializer: Serializer<V>;
  /** The partition queues, open batches and buffer.memory (Kafka's RecordAccumulator). */
  private readonly accumulator: RecordAccumulator;
  /** Drains the queues into Produce requests and settles the batches (Kafka's Sender). */
  private readonly sender: Sender;
  /**
   * Per topic whose metadata is loading, the records sent to it meanwhile, in send order (waitForTopic). While a
   * topic has a line, its later records join it instead of taking the fast path, so none overtakes them.
   */
  private readonly topicWaiters = new Map<string, Fifo<Waiting>>();
  private closed = false;
  /** Transactional producers only (transactional.id): the transaction's state and coordinator requests. */
  private readonly txn: TransactionManager | null;
  /** Transactional producers only: the partitions in the transaction and their AddPartitionsToTxn requests. */
  private readonly txnPartitions: TransactionPartitions | null;

  constructor(options: ProducerOptions<K, V>) {
    this.cluster = new Cluster({
      ...options,
      clientId: producerClientId(options.clientId, options.transactionalId),
    });
    this.cluster.allowAutoTopicCreation = options.allowAutoCreateTopics ?? true;
    const settings = resolveProducerSettings(options, this.cluster.options);
    this.settings = settings;
    this.idempotent = settings.idempotent;
    this.partitioner = createPartitioner(options.partitioner);
    this.keySerializer = options.keySerializer ?? (bytesSerde as unknown as Serializer<K>);
    this.valueSerializer = options.valueSerializer ?? (bytesSerde as unknown as Serializer<V>);
    this.txn = settings.transactional
      ? new TransactionManager(
          this.cluster,
          options.transactionalId!,
          options.transactionTimeoutMs ?? 60_000,
          settings.maxBlockMs,
        )
      : null;
    this.accumulator = new RecordAccumulator(settings, {
      canSendNow: (pq) => this.sender.canSendNow(pq),
      onBatchOpened: (batch) => this.sender.onBatchOpened(batch.createdMs),
      onBatchClosed: (pq, wake) => {
        this.partitioner.onBatchClosed(pq.topic, pq.partition);
        if (wake) this.sender.wake();
      },
      onIdle: () => this.sender.onIdle(),
    });
    this.sender = new Sender(this.cluster, settings, this.accumulator, this.txn, {
      failUnsent: (err) => this.failUnsent(err),
    });
    this.txnPartitions =
      this.txn === null
        ? null
        : new TransactionPartitions(this.txn, this.accumulator.queueList, settings.deliveryTimeoutMs, () =>
            this.sender.wake(),
          );
  }

  /** Connects and learns the cluster (optional: send() does it on first use). */
  async connect(): Promise<void> {
    await this.cluster.refreshMetadata();
    if (this.idempotent && this.txn === null) await this.sender.ensureProducerId();
  }

  /**
   * The resolve and reject functions of the promise send() is making. One executor serves every send(): a
   * closure per record (and an object to keep its two functions) was a quarter of the producer's own garbage, and
   * garbage is what sets the pace of the collector's pauses, which is what a send()'s p99 latency waits on.
   */
  private newResolve: (m: RecordMetadata) => void = noop;
  private newReject: (e: Error) => void = noop;
  private readonly captureSettlers = (resolve: (m: RecordMetadata) => void, reject: (e: Error) => void) => {
    this.newResolve = resolve;
    this.newReject = reject;
  };

  /** Sends one record; resolves once the broker acknowledged it (or at once with acks=0). */
  send(record: ProducerRecord<K, V>): Promise<RecordMetadata> {
    try {
      if (this.closed) throw new ClientStateError('the producer is closed');
      if (this.txn !== null) this.txn.check('send', 'IN_TRANSACTION');
      else this.sender.checkNotFatal();
      const topic = record.topic;
      const key = record.key === undefined ? null : this.keySerializer.serialize(record.key, topic);
      const value = this.valueSerializer.serialize(record.value, topic) ?? null;
      const headers = record.headers === undefined ? undefined : encodeHeaders(record.headers);
      const size = this.checkedSize(key, value, headers);
      const timestamp = record.timestamp ?? Date.now();
      // The common case (metadata known, nothing waiting before it, buffer room) appends without waiting a turn
      // of the event loop.
      const partition = this.partitionNow(record, key, size);
      const sent = new Promise<RecordMetadata>(this.captureSettlers);
      if (partition >= 0) {
        this.accumulator.reserve(size);
        const pq = this.accumulator.queueOf(topic, partition);
        this.append(pq, key, value, headers, timestamp, size, this.newResolve, this.newReject);
      } else {
        this.sendSlow({
          topic,
          partition: record.partition,
          key,
          value,
          headers,
          timestamp,
          size,
          onSuccess: this.newResolve,
          onFailure: this.newReject,
          startedMs: Date.now(),
          flushGeneration: -1,
        });
      }
      return sent;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Sends several records with one promise, which resolves with their metadata in order once all are
   * acknowledged, or rejects with the first failure (the other records may still be delivered, as with
   * Promise.all over send()). Cheaper than a send() per record: no promise per record.
   */
  sendBatch(records: readonly ProducerRecord<K, V>[]): Promise<RecordMetadata[]> {
    if (records.length === 0) return Promise.resolve([]);
    return new Promise<RecordMetadata[]>((resolve, reject) => {
      const group = new SendGroup(records.length, resolve, reject);
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        const slot = new GroupSlot(group, i);
        try {
          const prepared = this.prepare(record);
          const partition = this.partitionNow(record, prepared.key, prepared.size);
          if (partition >= 0) {
            this.accumulator.reserve(prepared.size);
            this.appendPrepared(this.accumulator.queueOf(record.topic, partition), prepared, slot, slot);
          } else {
            const waiting = prepared as Waiting;
            waiting.topic = record.topic;
            waiting.partition = record.partition;
            waiting.onSuccess = slot;
            waiting.onFailure = slot;
            waiting.startedMs = Date.now();
            this.sendSlow(waiting);
          }
        } catch (err) {
          group.fail(err as Error);
          return;
        }
      }
    });
  }

  /** Serializes and sizes a record; throws when the producer is closed or the record is too large. */
  private prepare(record: ProducerRecord<K, V>): Prepared {
    if (this.closed) throw new ClientStateError('the producer is closed');
    if (this.txn !== null) this.txn.check('send', 'IN_TRANSACTION');
    else this.sender.checkNotFatal();
    const key = record.key === undefined ? null : this.keySerializer.serialize(record.key, record.topic);
    const value = this.valueSerializer.serialize(record.value, record.topic) ?? null;
    const headers = record.headers === undefined ? undefined : encodeHeaders(record.headers);
    const size = this.checkedSize(key, value, headers);
    return { key, value, headers, timestamp: record.timestamp ?? Date.now(), size };
  }

  /** The bytes buffer.memory counts for a record; throws when it exceeds max.request.size. */
  private checkedSize(
    key: Buffer | null,
    value: Buffer | null,
    headers: EncodedHeader[] | undefined,
  ): number {
    const size = recordBytesBound(key, value, headers);
    if (size > this.settings.maxRequestSize) {
      throw new KafkaProtocolError(
        ErrorCode.MESSAGE_TOO_LARGE,
        `record of ${size} bytes exceeds max.request.size`,
      );
    }
    return size;
  }

  /**
   * The record's partition when it may be appended at once, else -1 (take the slow path): its topic's metadata is
   * cached, no earlier record of the topic waits for it, and buffer.memory has room with no one waiting for it.
   */
  private partitionNow(record: ProducerRecord<K, V>, key: Buffer | null, size: number): number {
    const topic = record.topic;
    const count = this.knownPartitionCount(topic);
    if (count === 0 || !this.accumulator.hasRoom(size)) return -1;
    if (this.topicWaiters.size > 0 && this.topicWaiters.has(topic)) return -1;
    return this.choosePartition(topic, record.partition, key, count);
  }

  /** The topic's partition count from cached metadata, or 0 while it is unknown (or answered with an error). */
  private knownPartitionCount(topic: string): number {
    const cached = this.cluster.snapshot.topics.get(topic);
    return cached === undefined || cached.errorCode !== 0 ? 0 : cached.partitions.length;
  }

  private choosePartition(
    topic: string,
    asked: number | undefined,
    key: Buffer | null,
    count: number,
  ): number {
    const partition = asked ?? this.partitioner.partition(topic, key, count);
    if (partition < 0 || partition >= count || !Number.isInteger(partition)) {
      throw new KafkaProtocolError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `partition ${partition} of ${topic} does not exist (${count} partitions)`,
      );
    }
    return partition;
  }

  /**
   * A record that cannot be appended at once. It counts as unsettled from here (flush() waits for it). Behind the
   * records of its topic that wait for metadata, if any; else, when the topic is known, it takes its partition
   * and waits for buffer.memory in line (admit); else it starts its topic's wait.
   */
  private sendSlow(w: Waiting): void {
    w.flushGeneration = this.accumulator.hold();
    const line = this.topicWaiters.get(w.topic);
    if (line !== undefined) {
      line.push(w);
      return;
    }
    const count = this.knownPartitionCount(w.topic);
    if (count > 0) {
      this.admit(w, count);
      return;
    }
    const started = new Fifo<Waiting>();
    started.push(w);
    this.topicWaiters.set(w.topic, started);
    void this.waitForTopic(w.topic, started);
  }

  /**
   * Loads the metadata of a topic that records wait for, then admits them all, in send order, in one go. One
   * wait per topic, so those records take their partitions and their places in its queues in the order they
   * were sent, and none sent later overtakes them (send() takes its fast path for the topic only once the line
   * is gone). max.block.ms bounds each record's wait from its own send().
   */
  private async waitForTopic(topic: string, line: Fifo<Waiting>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let error: unknown = null;
      let count = 0;
      try {
        count = (await this.cluster.topic(topic)).partitions.length;
      } catch (err) {
        error = err;
      }
      // close() failed the records and removed the line meanwhile.
      if (this.topicWaiters.get(topic) !== line) return;
      if (error === null) {
        this.topicWaiters.delete(topic);
        for (const w of line.drain()) this.admit(w, count);
        return;
      }
      const now = Date.now();
      if (!isRetriableError(error)) {
        this.topicWaiters.delete(topic);
        for (const w of line.drain()) this.abandon(w, error as Error);
        return;
      }
      const maxBlockMs = this.settings.maxBlockMs;
      for (let w = line.peek(); w !== undefined && w.startedMs + maxBlockMs <= now; w = line.peek()) {
        line.shift();
        this.abandon(
          w,
          new KafkaClientError(
            `topic ${topic} not present in metadata after ${maxBlockMs} ms: ${(error as Error).message}`,
            false,
          ),
        );
      }
      const first = line.peek();
      if (first === undefined) {
        this.topicWaiters.delete(topic);
        return;
      }
      const leftMs = first.startedMs + maxBlockMs - now;
      await new Promise((r) => setTimeout(r, Math.min(leftMs, this.cluster.backoffMs(attempt))));
      if (this.topicWaiters.get(topic) !== line) return;
    }
  }

  /**
   * A record whose topic is known: it takes its partition now, and is appended as soon as buffer.memory has room.
   * Memory is given in request order (RecordAccumulator.waitForRoom), and send() takes its fast path only while
   * no one waits for it, so a record waiting here is not overtaken either.
   */
  private admit(w: Waiting, partitionCount: number): void {
    let partition: number;
    try {
      partition = this.choosePartition(w.topic, w.partition, w.key, partitionCount);
    } catch (err) {
      this.abandon(w, err as Error);
      return;
    }
    if (this.accumulator.hasRoom(w.size)) {
      this.accumulator.reserve(w.size);
      this.appendWaiting(w, partition);
      return;
    }
    this.accumulator.waitForRoom(
      w.size,
      Math.max(0, this.settings.maxBlockMs - (Date.now() - w.startedMs)),
      () => this.appendWaiting(w, partition),
      (e) => this.abandon(w, e),
    );
  }

  /** A waiting record with its memory reserved goes into its partition's open batch. */
  private appendWaiting(w: Waiting, partition: number): void {
    if (this.sender.closed) {
      this.accumulator.release(w.size);
      this.abandon(w, new ClientStateError('the producer was closed before the record was sent'));
      return;
    }
    const batch = this.appendPrepared(
      this.accumulator.queueOf(w.topic, partition),
      w,
      w.onSuccess,
      w.onFailure,
    );
    // append() counted it among the unsettled records again, in its batch.
    this.accumulator.unhold(w.flushGeneration, batch);
    // A flush() under way sends it without waiting for linger.ms.
    if (this.accumulator.flushing) this.sender.wake();
  }

  /** A waiting record fails before it reached a batch. */
  private abandon(w: Waiting, err: Error): void {
    deliverFailure(w.onFailure, err);
    this.accumulator.dropHeld(w.flushGeneration);
  }

  /** Appends to the partition's open batch (RecordAccumulator.append); a partition new to a transaction joins it. */
  private append(
    pq: PartitionQueue,
    key: Buffer | null,
    value: Buffer | null,
    headers: EncodedHeader[] | undefined,
    timestamp: number,
    size: number,
    onSuccess: OnSuccess,
    onFailure: OnFailure,
  ): Batch {
    const batch = this.accumulator.append(pq, key, value, headers, timestamp, size, onSuccess, onFailure);
    this.txnPartitions?.add(pq);
    return batch;
  }

  /** `append` of a record prepared on the slow path (or by sendBatch). */
  private appendPrepared(pq: PartitionQueue, r: Prepared, onSuccess: OnSuccess, onFailure: OnFailure): Batch {
    return this.append(pq, r.key, r.value, r.headers, r.timestamp, r.size, onSuccess, onFailure);
  }

  /** Fails every record not sent yet: in batches, and those still waiting for their topic's metadata or memory. */
  private failUnsent(err: Error): void {
    this.sender.abortUndrained(err);
    this.accumulator.failWaiting(err);
    const lines = [...this.topicWaiters.values()];
    this.topicWaiters.clear();
    for (const line of lines) for (const w of line.drain()) this.abandon(w, err);
  }

  private transactional(what: string): TransactionManager {
    if (this.txn === null) {
      throw new ClientStateError(`Cannot ${what}: the producer has no transactional.id (transactionalId)`);
    }
    if (this.closed) throw new ClientStateError('the producer is closed');
    return this.txn;
  }

  /**
   * initTransactions(): gets the producer id and epoch of the transactional id from its coordinator, which fences
   * any older producer with the same transactional.id and finishes (aborts, or completes a prepared commit) the
   * transaction it left open. Call once, before the first transaction; after a timeout it may be called again.
   */
  async initTransactions(): Promise<void> {
    const txn = this.transactional('initTransactions');
    txn.check('initTransactions', 'UNINITIALIZED', 'INITIALIZING');
    txn.transitionTo('INITIALIZING');
    try {
      await txn.initProducerId(false);
    } catch (err) {
      // Fatal when fenced or refused for good; an authorization error or a timeout lets the call be made again.
      txn.fail(err as Error);
      throw err;
    }
    this.sender.producerId = toProducerId(txn.producerId);
    this.sender.producerEpoch = toProducerEpoch(txn.producerEpoch);
    txn.transitionTo('READY');
  }

  /** beginTransaction(): starts a transaction on the client (the coordinator hears of it with its first partition). */
  beginTransaction(): void {
    const txn = this.transactional('beginTransaction');
    txn.check('beginTransaction', 'READY');
    this.txnPartitions!.reset();
    txn.transactionStarted = false;
    txn.transitionTo('IN_TRANSACTION');
  }

  /**
   * sendOffsetsToTransaction(offsets, groupMetadata): commits a consumer group's offsets as part of the transaction
   * (AddOffsetsToTxn, then TxnOffsetCommit at the group coordinator), so they count only if it commits. Pass the
   * consumer's groupMetadata() so that a member the group has moved on from is fenced (KIP-447); a group id alone
   * commits without that check, as Kafka's older overload does.
   */
  async sendOffsetsToTransaction(
    offsets: readonly TransactionOffset[],
    groupMetadata: ConsumerGroupMetadata | string,
  ): Promise<void> {
    const txn = this.transactional('sendOffsetsToTransaction');
    txn.check('sendOffsetsToTransaction', 'IN_TRANSACTION');
    const group: ConsumerGroupMetadata =
      typeof groupMetadata === 'string'
        ? { groupId: groupMetadata, generationId: -1, memberId: '', groupInstanceId: null }
        : groupMetadata;
    for (const o of offsets) checkCommittableOffset(o.offset);
    if (offsets.length === 0) return;
    try {
      await txn.sendOffsets(offsets, group);
    } catch (err) {
      txn.fail(err as Error);
      this.sender.wake();
      throw err;
    }
  }

  /**
   * commitTransaction(): sends every record of the transaction (flush), then commits it (EndTxn). Fails with the
   * error of a record or request that broke the transaction: then only abortTransaction() is left (or close(),
   * after a fatal error). After a timeout it may be called again.
   */
  async commitTransaction(): Promise<void> {
    const txn = this.transactional('commitTransaction');
    txn.check('commitTransaction', 'IN_TRANSACTION', 'COMMITTING_TRANSACTION');
    if (txn.state === 'IN_TRANSACTION') txn.transitionTo('COMMITTING_TRANSACTION');
    await this.flush();
    await this.txnPartitions!.settled();
    if (txn.hasError) throw txn.lastError;
    if (txn.transactionStarted) {
      try {
        await txn.endTxn(true);
      } catch (err) {
        // A timeout leaves the commit to be called again; any other answer is fatal or abortable (EndTxnHandler).
        if (!isRetriableError(err)) txn.fail(err as Error);
        throw err;
      }
    }
    this.txnPartitions!.reset();
    txn.transitionTo('READY');
  }

  /**
   * abortTransaction(): fails the records not sent yet, waits for those in flight, and aborts the transaction
   * (EndTxn); after an error that left sequences unresolved, bumps the epoch (InitProducerId with the current id
   * and epoch, KIP-360). The producer is then ready for the next transaction.
   */
  async abortTransaction(): Promise<void> {
    const txn = this.transactional('abortTransaction');
    txn.check('abortTransaction', 'IN_TRANSACTION', 'ABORTABLE_ERROR', 'ABORTING_TRANSACTION');
    await this.abort(txn);
  }

  /** abortTransaction() once its state is checked; close() calls it too. */
  private async abort(txn: TransactionManager): Promise<void> {
    if (txn.state !== 'ABORTING_TRANSACTION') txn.transitionTo('ABORTING_TRANSACTION');
    this.failUnsent(new TransactionAbortedError('Failing batch since transaction was aborted'));
    await this.flush();
    await this.txnPartitions!.settled();
    txn.check('abortTransaction', 'ABORTING_TRANSACTION');
    try {
      if (txn.transactionStarted && !txn.producerIdMappingLost) await txn.endTxn(false);
      if (txn.epochBumpRequired) {
        await txn.initProducerId(true);
        this.sender.producerId = toProducerId(txn.producerId);
        this.sender.producerEpoch = toProducerEpoch(txn.producerEpoch);
      }
    } catch (err) {
      // Fatal (PRODUCER_FENCED: the coordinator bumped the epoch when it timed the transaction out, or a newer
      // producer took the id) or, after a timeout or an abortable answer, abortTransaction() may be called again.
      if (!isRetriableError(err)) txn.fail(err as Error);
      throw err;
    }
    this.txnPartitions!.reset();
    txn.transitionTo('READY');
  }

  /**
   * A graceful close() aborts a transaction still open (in progress, or failed with an abortable error) once its
   * records are sent, as Kafka's Sender does on shutdown: left open, it would hold its partitions' last stable
   * offset, and read_committed consumers with it, until the coordinator times it out (transaction.timeout.ms). A
   * commit or abort already under way is left to finish. Never rejects: a failure is logged, as Kafka's is.
   */
  private async abortLeftOpen(): Promise<void> {
    const txn = this.txn;
    if (txn === null || (txn.state !== 'IN_TRANSACTION' && txn.state !== 'ABORTABLE_ERROR')) return;
    const logger = this.cluster.options.logger;
    logger?.info('Aborting incomplete transaction due to shutdown', { transactionalId: txn.transactionalId });
    try {
      await this.abort(txn);
    } catch (err) {
      logger?.error('Error while aborting the transaction during close', {
        transactionalId: txn.transactionalId,
        error: (err as Error).message,
      });
    }
  }

  /** The transaction state (Kafka's TransactionManager state), or null for a producer without transactional.id. */
  get transactionState(): string | null {
    return this.txn === null ? null : this.txn.state;
  }

  /** The producer id and epoch in use (-1 before the first). */
  get producerIdAndEpoch(): { producerId: number; producerEpoch: number } {
    return { producerId: this.sender.producerId, producerEpoch: this.sender.producerEpoch };
  }

  /**
   * Sends every buffered record now and resolves when all records sent before the call have an outcome, those
   * still waiting for their topic's metadata or for buffer.memory included. Records sent while it waits are sent
   * at once too, but not waited for, as in Kafka (RecordAccumulator.awaitFlushCompletion), so a steady stream of
   * send() calls from other tasks does not keep a flush() from ending.
   */
  async flush(): Promise<void> {
    this.accumulator.closeAll();
    await this.accumulator.awaitFlush();
  }

  /**
   * Flushes (unless timeoutMs is 0) and aborts a transaction left open, then closes the connections. Later sends
   * fail. A negative timeout is refused (RangeError) before anything closes, as Kafka's close(Duration) throws
   * IllegalArgumentException.
   */
  async close(timeoutMs = 30_000): Promise<void> {
    checkCloseTimeout(timeoutMs);
    if (this.closed) return;
    this.closed = true;
    if (timeoutMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      const graceful = this.flush().then(() => this.abortLeftOpen());
      await Promise.race([graceful, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
    }
    this.sender.close();
    this.sender.abortUndrained(new ClientStateError('the producer was closed before the record was sent'));
    this.accumulator.failWaiting(new ClientStateError('the producer is closed'));
    const lines = [...this.topicWaiters.values()];
    this.topicWaiters.clear();
    for (const line of lines) {
      for (const w of line.drain()) this.abandon(w, new ClientStateError('the producer is closed'));
    }
    await this.cluster.close();
  }
}

export { CompressionType };
