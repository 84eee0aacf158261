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
// Around it: partition-queue.ts holds each partition's batches and sequence state (and decides when a partition
// follows the producer to a new epoch), send-outcome.ts delivers each record's outcome once, producer-record.ts
// sizes a record for buffer.memory; transactions.ts is the transactional state machine.

import { CompressionType, compressionTypeFromName } from '../protocol/compression/compression-type.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ProduceRequest, ProduceResponse } from '../protocol/messages/00-produce.js';
import type { InitProducerIdResponse } from '../protocol/messages/22-init-producer-id.js';
import { ApiKey } from '../protocol/registry.js';
import { BatchWriter, type EncodedHeader } from './batch-writer.js';
import { BufferPool } from './buffer-pool.js';
import { Cluster } from './cluster.js';
import { EarliestTimer } from './earliest-timer.js';
import {
  ClientStateError,
  ConfigError,
  DeliveryTimeoutError,
  isRetriableError,
  KafkaClientError,
  KafkaProtocolError,
  TransactionAbortedError,
} from './errors.js';
import { Fifo } from './fifo.js';
import type { ClientOptions } from './options.js';
import {
  acknowledge,
  type Batch,
  EPOCH_MAX,
  isSequenceGap,
  mayMoveOn,
  newPartitionQueue,
  numberBatch,
  onCurrentEpoch,
  type PartitionQueue,
  requeueInSequenceOrder,
  TXN_ADDED,
  TXN_NONE,
  TXN_PENDING,
} from './partition-queue.js';
import {
  createPartitioner,
  type Partitioner,
  type PartitionerFn,
  type PartitionerName,
} from './partitioners.js';
import { encodeHeaders, recordBytesBound } from './producer-record.js';
import {
  deliverFailure,
  deliverSuccess,
  GroupSlot,
  type OnFailure,
  type OnSuccess,
  SendGroup,
} from './send-outcome.js';
import { bytesSerde, type Serializer } from './serdes.js';
import {
  type ConsumerGroupMetadata,
  isFatalTransactionError,
  TransactionManager,
  type TransactionOffset,
} from './transactions.js';

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
 * buffer.memory (in memoryWaiters), with who learns its outcome.
 */
interface Waiting extends Prepared {
  topic: string;
  /** The partition asked for, if any: one is chosen once the topic's partition count is known. */
  partition: number | undefined;
  onSuccess: OnSuccess;
  onFailure: OnFailure;
  /** When send() took it: max.block.ms bounds its wait from then. */
  startedMs: number;
}

function noop(): void {}

/**
 * Kafka's producer: batches per partition (batch.size, linger.ms) under buffer.memory, idempotence,
 * compression, transactions, flush and close.
 */
export class Producer<K = Buffer | null, V = Buffer | null> {
  /** The connections and metadata this producer uses, exposed so tests and tools can reach a broker directly. */
  readonly cluster: Cluster;
  private readonly acks: number;
  private readonly lingerMs: number;
  private readonly batchSize: number;
  private readonly bufferMemory: number;
  private readonly maxBlockMs: number;
  private readonly maxRequestSize: number;
  private readonly compression: number;
  private readonly compressionLevel: number | undefined;
  /**
   * enable.idempotence as resolved (it is turned off quietly when acks is not all and it was not asked for), so a
   * caller can tell whether retries may duplicate.
   */
  readonly idempotent: boolean;
  private readonly deliveryTimeoutMs: number;
  private readonly ackTimeoutMs: number;
  private readonly maxInFlightPerPartition: number;
  private readonly retries: number;
  private readonly partitioner: Partitioner;
  private readonly keySerializer: Serializer<K>;
  private readonly valueSerializer: Serializer<V>;

  /** Partition queues by topic, indexed by partition; `queueList` holds the same queues in creation order. */
  private readonly queues = new Map<string, PartitionQueue[]>();
  private readonly queueList: PartitionQueue[] = [];
  private bufferedBytes = 0;
  /** Batch buffers back from finished batches (none with acks=0: see buffer-pool.ts). */
  private readonly bufferPool: BufferPool | null;
  /**
   * Per topic whose metadata is loading, the records sent to it meanwhile, in send order (waitForTopic). While a
   * topic has a line, its later records join it instead of taking the fast path, so none overtakes them.
   */
  private readonly topicWaiters = new Map<string, Fifo<Waiting>>();
  private readonly memoryWaiters = new Fifo<{
    bytes: number;
    resolve: () => void;
    reject: (e: Error) => void;
  }>();
  private producerId = -1;
  private producerEpoch = -1;
  private producerIdPromise: Promise<void> | null = null;
  private drainScheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Fires when the earliest batch not in flight reaches delivery.timeout.ms (expireBatches). */
  private readonly expiryTimer = new EarliestTimer(() => this.expireBatches());
  /** Wakes drain when the first retried batch waiting out its backoff may go. */
  private readonly backoffTimer = new EarliestTimer(() => this.scheduleDrain());
  /** Records accepted by send() without an outcome yet: in batches, or waiting for metadata or memory. */
  private unsettled = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  /** Transactional producers only (transactional.id): the transaction's state and coordinator requests. */
  private readonly txn: TransactionManager | null;

  constructor(options: ProducerOptions<K, V>) {
    this.cluster = new Cluster(options);
    this.cluster.allowAutoTopicCreation = options.allowAutoCreateTopics ?? true;
    const acks = options.acks ?? 'all';
    this.acks = acks === 'all' ? -1 : acks;
    if (![0, 1, -1].includes(this.acks)) throw new ConfigError(`acks must be 0, 1, -1 or 'all', not ${acks}`);
    if (options.idempotent === true && this.acks !== -1) {
      throw new ConfigError('an idempotent producer needs acks=all');
    }
    const transactional = options.transactionalId !== undefined;
    if (transactional) {
      // Kafka's rule: a transactional producer is idempotent; turning idempotence off is a configuration error.
      if (options.idempotent === false) {
        throw new ConfigError('a transactional producer needs enable.idempotence (idempotent: true)');
      }
      if (this.acks !== -1) throw new ConfigError('a transactional producer needs acks=all');
      if (options.transactionalId === '') throw new ConfigError('transactional.id must not be empty');
    }
    this.idempotent = transactional || (options.idempotent ?? this.acks === -1);
    this.lingerMs = options.lingerMs ?? 5;
    this.batchSize = options.batchSize ?? 16_384;
    this.bufferMemory = options.bufferMemory ?? 32 * 1024 * 1024;
    this.maxBlockMs = options.maxBlockMs ?? 60_000;
    this.maxRequestSize = options.maxRequestSize ?? 1024 * 1024;
    const codec = compressionTypeFromName(options.compression ?? 'none');
    if (codec === undefined) throw new ConfigError(`unknown compression '${options.compression}'`);
    this.compression = codec;
    this.compressionLevel = options.compressionLevel;
    // Kafka's rule (KafkaProducer.configureDeliveryTimeout): a record gets at least linger.ms and one request's
    // time before it can expire. A value given below that is a configuration error; the default is raised.
    const lingerAndRequestTimeoutMs = this.lingerMs + this.cluster.options.requestTimeoutMs;
    const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120_000;
    if (deliveryTimeoutMs < lingerAndRequestTimeoutMs) {
      if (options.deliveryTimeoutMs !== undefined) {
        throw new ConfigError(
          `delivery.timeout.ms (${deliveryTimeoutMs}) should be equal to or larger than linger.ms + ` +
            `request.timeout.ms (${this.lingerMs} + ${this.cluster.options.requestTimeoutMs})`,
        );
      }
      this.cluster.options.logger?.warn('delivery.timeout.ms raised to linger.ms + request.timeout.ms', {
        deliveryTimeoutMs: lingerAndRequestTimeoutMs,
      });
    }
    this.deliveryTimeoutMs = Math.max(deliveryTimeoutMs, lingerAndRequestTimeoutMs);
    this.ackTimeoutMs = options.ackTimeoutMs ?? this.cluster.options.requestTimeoutMs;
    this.maxInFlightPerPartition = this.cluster.options.maxInFlightRequestsPerConnection;
    if (this.idempotent && this.maxInFlightPerPartition > 5) {
      throw new ConfigError('an idempotent producer allows at most 5 requests in flight per connection');
    }
    // Spares up to a quarter of buffer.memory: enough for a partition's in-flight and open batches at their
    // largest (max.request.size) with the defaults.
    this.bufferPool = this.acks === 0 ? null : new BufferPool(this.bufferMemory / 4);
    this.retries = options.retries ?? 2_147_483_647;
    this.partitioner = createPartitioner(options.partitioner);
    this.keySerializer = options.keySerializer ?? (bytesSerde as unknown as Serializer<K>);
    this.valueSerializer = options.valueSerializer ?? (bytesSerde as unknown as Serializer<V>);
    this.txn = transactional
      ? new TransactionManager(
          this.cluster,
          options.transactionalId!,
          options.transactionTimeoutMs ?? 60_000,
          this.maxBlockMs,
        )
      : null;
  }

  /** Connects and learns the cluster (optional: send() does it on first use). */
  async connect(): Promise<void> {
    await this.cluster.refreshMetadata();
    if (this.idempotent && this.txn === null) await this.ensureProducerId();
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
        this.bufferedBytes += size;
        const pq = this.queueOf(topic, partition);
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
            this.bufferedBytes += prepared.size;
            this.appendPrepared(this.queueOf(record.topic, partition), prepared, slot, slot);
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
    if (size > this.maxRequestSize) {
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
    if (count === 0 || !this.hasRoom(size)) return -1;
    if (this.topicWaiters.size > 0 && this.topicWaiters.has(topic)) return -1;
    return this.choosePartition(topic, record.partition, key, count);
  }

  /** The topic's partition count from cached metadata, or 0 while it is unknown (or answered with an error). */
  private knownPartitionCount(topic: string): number {
    const cached = this.cluster.snapshot.topics.get(topic);
    return cached === undefined || cached.errorCode !== 0 ? 0 : cached.partitions.length;
  }

  private hasRoom(bytes: number): boolean {
    return (
      this.memoryWaiters.length === 0 &&
      (this.bufferedBytes + bytes <= this.bufferMemory || this.bufferedBytes === 0)
    );
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
    this.unsettled++;
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
      for (let w = line.peek(); w !== undefined && w.startedMs + this.maxBlockMs <= now; w = line.peek()) {
        line.shift();
        this.abandon(
          w,
          new KafkaClientError(
            `topic ${topic} not present in metadata after ${this.maxBlockMs} ms: ${(error as Error).message}`,
            false,
          ),
        );
      }
      const first = line.peek();
      if (first === undefined) {
        this.topicWaiters.delete(topic);
        return;
      }
      const leftMs = first.startedMs + this.maxBlockMs - now;
      await new Promise((r) => setTimeout(r, Math.min(leftMs, this.cluster.backoffMs(attempt))));
      if (this.topicWaiters.get(topic) !== line) return;
    }
  }

  /**
   * A record whose topic is known: it takes its partition now, and is appended as soon as buffer.memory has room.
   * Memory is given in request order (memoryWaiters), and send() takes its fast path only while no one waits for
   * it, so a record waiting here is not overtaken either.
   */
  private admit(w: Waiting, partitionCount: number): void {
    let partition: number;
    try {
      partition = this.choosePartition(w.topic, w.partition, w.key, partitionCount);
    } catch (err) {
      this.abandon(w, err as Error);
      return;
    }
    if (this.hasRoom(w.size)) {
      this.bufferedBytes += w.size;
      this.appendWaiting(w, partition);
      return;
    }
    const waiter = {
      bytes: w.size,
      resolve: () => {
        clearTimeout(timer);
        this.appendWaiting(w, partition);
      },
      reject: (e: Error) => {
        clearTimeout(timer);
        this.abandon(w, e);
      },
    };
    const timer = setTimeout(
      () => {
        this.memoryWaiters.remove(waiter);
        this.abandon(w, new KafkaClientError(`no room in buffer.memory after ${this.maxBlockMs} ms`, false));
      },
      Math.max(0, this.maxBlockMs - (Date.now() - w.startedMs)),
    );
    this.memoryWaiters.push(waiter);
  }

  /** A waiting record with its memory reserved goes into its partition's open batch. */
  private appendWaiting(w: Waiting, partition: number): void {
    if (this.closedHard) {
      this.release(w.size);
      this.abandon(w, new ClientStateError('the producer was closed before the record was sent'));
      return;
    }
    // append() counts it among the unsettled records again.
    this.unsettled--;
    this.appendPrepared(this.queueOf(w.topic, partition), w, w.onSuccess, w.onFailure);
    // A flush() under way sends it without waiting for linger.ms.
    if (this.idleWaiters.length > 0) this.scheduleDrain();
  }

  /** A waiting record fails before it reached a batch. */
  private abandon(w: Waiting, err: Error): void {
    deliverFailure(w.onFailure, err);
    this.unsettled--;
    if (this.unsettled === 0) this.onIdle();
  }

  private release(bytes: number): void {
    this.bufferedBytes -= bytes;
    while (this.memoryWaiters.length > 0) {
      const w = this.memoryWaiters.peek()!;
      if (this.bufferedBytes + w.bytes > this.bufferMemory && this.bufferedBytes > 0) break;
      this.memoryWaiters.shift();
      this.bufferedBytes += w.bytes;
      w.resolve();
    }
  }

  private queueOf(topic: string, partition: number): PartitionQueue {
    let list = this.queues.get(topic);
    if (list === undefined) this.queues.set(topic, (list = []));
    let pq = list[partition];
    if (pq === undefined) {
      pq = newPartitionQueue(topic, partition);
      list[partition] = pq;
      this.queueList.push(pq);
    }
    return pq;
  }

  /**
   * True when a batch closed now would be sent at once: nothing closed is waiting before it and an in-flight slot
   * is free. Otherwise the open batch keeps growing: fewer, larger requests cost the broker less per record than
   * several batch.size ones queued behind each other (measured: about 3x the records per second at 100 B).
   */
  private canSendNow(pq: PartitionQueue): boolean {
    return (
      !pq.blocked &&
      pq.inFlight < this.maxInFlightPerPartition &&
      pq.ready.length === 0 &&
      (pq.inFlight === 0 || !this.idempotent || this.onCurrentEpoch(pq))
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

  /**
   * A numbered batch failed for good: its sequences will never be filled, so later batches of its partition
   * cannot follow under this epoch. As Kafka's idempotent producer does (KIP-360): the next epoch of the same
   * producer id, or a new producer id once the epoch is exhausted. A batch of an epoch already left behind needs
   * no bump: its partition starts again under the current one.
   */
  private bumpEpochAfter(b: Batch, err: Error): void {
    if (this.txn !== null) {
      // In a transaction any record that fails breaks it (abortable, or fatal when fenced). The epoch is bumped
      // by the coordinator after the abort (KIP-360), not here: the transaction's partitions carry this one.
      if (b.baseSequence >= 0) this.txn.epochBumpRequired = true;
      this.txn.fail(err);
      if (this.txn.hasError) this.scheduleDrain();
      return;
    }
    if (!this.idempotent || b.baseSequence < 0) return;
    if (b.producerId !== this.producerId || b.producerEpoch !== this.producerEpoch) return;
    if (this.producerEpoch >= EPOCH_MAX) this.producerId = -1;
    else this.producerEpoch++;
  }

  /**
   * Appends to the partition's open batch. A batch closes at batch.size when it could be sent at once; while the
   * partition waits for an in-flight slot it keeps growing (up to max.request.size), so a backlog leaves as one
   * large batch when the slot frees instead of many small ones queued behind each other. The record comes as
   * its parts, not as an object: send() makes none on its common path.
   */
  private append(
    pq: PartitionQueue,
    key: Buffer | null,
    value: Buffer | null,
    headers: EncodedHeader[] | undefined,
    timestamp: number,
    size: number,
    onSuccess: OnSuccess,
    onFailure: OnFailure,
  ): void {
    let batch = pq.open;
    if (batch !== null) {
      const limit = this.canSendNow(pq) ? this.batchSize : this.maxRequestSize;
      if (batch.writer.sizeInBytes + size > limit) {
        this.closeBatch(batch);
        batch = null;
      }
    }
    if (batch === null) batch = this.openBatch(pq, size);
    if (pq.inTxn === TXN_NONE && this.txn !== null) this.addToTransaction(pq);
    batch.writer.append(key, value, headers, timestamp);
    batch.onSuccess.push(onSuccess);
    batch.onFailure.push(onFailure);
    batch.timestamps.push(timestamp);
    batch.bytes += size;
    this.unsettled++;
    if (batch.writer.sizeInBytes >= this.batchSize && this.canSendNow(pq)) this.closeBatch(batch);
  }

  /** `append` of a record prepared on the slow path (or by sendBatch). */
  private appendPrepared(pq: PartitionQueue, r: Prepared, onSuccess: OnSuccess, onFailure: OnFailure): void {
    this.append(pq, r.key, r.value, r.headers, r.timestamp, r.size, onSuccess, onFailure);
  }

  private openBatch(pq: PartitionQueue, firstRecordBytes: number): Batch {
    const batch: Batch = {
      pq,
      writer: new BatchWriter(
        Math.max(this.batchSize, firstRecordBytes),
        this.maxRequestSize,
        this.bufferPool,
      ),
      onSuccess: [],
      onFailure: [],
      timestamps: [],
      bytes: 0,
      createdMs: Date.now(),
      built: null,
      producerId: -1,
      producerEpoch: -1,
      baseSequence: -1,
      attempts: 0,
      retryAtMs: 0,
      lingerTimer: null,
      lingered: false,
    };
    pq.open = batch;
    this.expiryTimer.armBy(batch.createdMs + this.deliveryTimeoutMs);
    batch.lingerTimer =
      this.lingerMs > 0
        ? setTimeout(() => this.onLinger(batch), this.lingerMs)
        : setImmediate(() => this.onLinger(batch));
    return batch;
  }

  private onLinger(batch: Batch): void {
    batch.lingerTimer = null;
    batch.lingered = true;
    // Otherwise drain() takes it when the partition's next in-flight slot frees.
    if (batch.pq.open === batch && this.canSendNow(batch.pq)) this.closeBatch(batch);
  }

  private closeBatch(batch: Batch, schedule = true): void {
    const pq = batch.pq;
    if (pq.open !== batch) return;
    if (batch.lingerTimer !== null) {
      clearTimeout(batch.lingerTimer as NodeJS.Timeout);
      clearImmediate(batch.lingerTimer as NodeJS.Immediate);
      batch.lingerTimer = null;
    }
    pq.open = null;
    pq.ready.push(batch);
    this.partitioner.onBatchClosed(pq.topic, pq.partition);
    if (schedule) this.scheduleDrain();
  }

  /**
   * Fails the batches not in flight that have reached delivery.timeout.ms, as Kafka's RecordAccumulator does: each
   * partition's queue from its oldest batch up to the first one still in time, the open batch last. Then waits for
   * the next one due. Batches in flight are not here: they expire when their request comes back (onBatchError).
   */
  private expireBatches(): void {
    if (this.closedHard) return;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    let expired = false;
    for (const pq of this.queueList) {
      let first = pq.ready[0];
      while (first !== undefined && first.createdMs + this.deliveryTimeoutMs <= now) {
        pq.ready.shift();
        this.expire(first, now, null);
        expired = true;
        first = pq.ready[0];
      }
      if (first !== undefined) next = Math.min(next, first.createdMs + this.deliveryTimeoutMs);
      const open = pq.open;
      if (open === null) continue;
      if (first === undefined && open.createdMs + this.deliveryTimeoutMs <= now) {
        this.closeBatch(open, false);
        pq.ready.length = 0;
        this.expire(open, now, null);
        expired = true;
      } else {
        next = Math.min(next, open.createdMs + this.deliveryTimeoutMs);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.expiryTimer.armBy(next);
    if (expired) this.scheduleDrain();
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
        `(delivery.timeout.ms ${this.deliveryTimeoutMs})` +
        (lastError === null ? '' : `; last error: ${lastError.message}`),
      lastError === null ? undefined : { cause: lastError },
    );
    this.settle(b, err);
    this.bumpEpochAfter(b, err);
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    queueMicrotask(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private ensureProducerId(): Promise<void> {
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
          this.producerId = Number(res.producerId);
          this.producerEpoch = res.producerEpoch;
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
    if (this.txn !== null) {
      // Outside a transaction that may still commit, nothing more is sent: the batches not sent yet fail (Kafka's
      // abortUndrainedBatches), with the error that broke the transaction or, for an abort asked for, as aborted.
      const state = this.txn.state;
      if (state !== 'IN_TRANSACTION' && state !== 'COMMITTING_TRANSACTION') {
        this.failUnsent(
          this.txn.lastError ?? new TransactionAbortedError('Failing batch since transaction was aborted'),
        );
        return;
      }
      if (this.producerId < 0) return;
    } else if (this.idempotent && this.producerId < 0) {
      this.ensureProducerId().then(
        () => this.scheduleDrain(),
        (err: Error) => this.failAll(err),
      );
      return;
    }
    let missingLeader = false;
    const now = Date.now();
    for (let round = 0; round < this.maxInFlightPerPartition; round++) {
      const byLeader = new Map<number, Batch[]>();
      for (const pq of this.queueList) {
        if (pq.blocked) {
          if (pq.inFlight > 0) continue;
          pq.blocked = false;
        }
        if (pq.inFlight >= this.maxInFlightPerPartition) continue;
        // A partition's batches go only once the coordinator has it in the transaction (AddPartitionsToTxn).
        if (this.txn !== null && pq.inTxn !== TXN_ADDED) continue;
        // A retry waits out its backoff, as in Kafka's accumulator: a broker that is down is not hammered.
        const first = pq.ready[0];
        if (first !== undefined && first.retryAtMs > now) {
          this.backoffTimer.armBy(first.retryAtMs);
          continue;
        }
        if (this.idempotent && !this.mayMoveOn(pq)) continue;
        if (pq.ready.length === 0) {
          const open = pq.open;
          // While a flush() waits, an open batch goes without waiting for linger.ms (records that were waiting
          // for metadata or memory reach their batches then), as Kafka's flush makes every batch ready.
          const flushing = this.idleWaiters.length > 0;
          if (open === null || !(flushing || open.lingered || open.writer.sizeInBytes >= this.batchSize))
            continue;
          this.closeBatch(open, false);
        }
        const leader = this.cluster.leaderOf(pq.topic, pq.partition);
        if (leader < 0) {
          missingLeader = true;
          continue;
        }
        const batch = pq.ready.shift()!;
        pq.inFlight++;
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
    if (this.retryTimer !== null || this.closedHard) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (refresh) {
        this.cluster.refreshMetadata().then(
          () => this.scheduleDrain(),
          () => this.retryLater(attempt + 1, true),
        );
      } else {
        this.scheduleDrain();
      }
    }, this.cluster.backoffMs(attempt));
  }

  /**
   * The batch's bytes for its next request. A batch is in one request at a time, and is built again only after
   * the previous request settled, when no socket holds its bytes any more (connection.ts): a request timeout
   * closes the connection before the batch hears of it. So a retry may rewrite the header in place.
   */
  private build(batch: Batch): Buffer {
    if (this.idempotent && numberBatch(batch)) batch.built = null;
    if (batch.built === null) {
      batch.built = batch.writer.finish({
        compression: this.compression,
        compressionLevel: this.compressionLevel,
        producerId: this.idempotent ? batch.producerId : -1,
        producerEpoch: this.idempotent ? batch.producerEpoch : -1,
        baseSequence: this.idempotent ? batch.baseSequence : -1,
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
        b.pq.inFlight--;
        this.settle(b, err as Error);
        this.bumpEpochAfter(b, err as Error);
      }
    }
    const request: ProduceRequest = {
      transactionalId: this.txn === null ? null : this.txn.transactionalId,
      acks: this.acks,
      timeoutMs: this.ackTimeoutMs,
      topicData: [...topics].map(([name, partitionData]) => ({ name, partitionData })),
    };
    const live = batches.filter((b) => b.onSuccess.length > 0);
    if (live.length === 0) return;
    this.cluster
      .send<ProduceResponse | undefined>(leader, ApiKey.PRODUCE, request, { noResponse: this.acks === 0 })
      .then(
        (res) => this.onResponse(live, res),
        (err: Error) => {
          for (const b of live) this.onBatchError(b, err, true);
          this.scheduleDrain();
        },
      );
  }

  private onResponse(batches: Batch[], res: ProduceResponse | undefined): void {
    for (const b of batches) {
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
      } else {
        const err = new KafkaProtocolError(p.errorCode, p.errorMessage);
        const sequenceError =
          this.idempotent &&
          (p.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER ||
            p.errorCode === ErrorCode.UNKNOWN_PRODUCER_ID);
        let retriable = err.retriable;
        if (sequenceError && this.txn === null) {
          this.onSequenceError(b, p.errorCode);
          retriable = true;
        } else if (sequenceError) {
          // Transactional: the epoch does not move during a transaction. A batch out of sequence behind an
          // earlier one being retried goes again; lost producer state or a real gap fails it, which makes the
          // transaction abortable and bumps the epoch after the abort (KIP-360), as Kafka's canRetry decides.
          retriable = !this.isSequenceGap(b, p.errorCode);
        }
        this.onBatchError(b, err, retriable);
      }
    }
    this.scheduleDrain();
  }

  private succeed(b: Batch, baseOffset: number, logAppendTimeMs: number): void {
    const pq = b.pq;
    pq.inFlight--;
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
    this.finish(b);
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
      this.bumpEpochAfter(b, new KafkaProtocolError(code));
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
    pq.inFlight--;
    const expired = Date.now() - b.createdMs >= this.deliveryTimeoutMs;
    if (retriable && !expired && b.attempts <= this.retries && !this.closedHard) {
      // Back into the queue in sequence order, and hold the partition until its in-flight batches return.
      pq.blocked = true;
      requeueInSequenceOrder(pq, b);
      b.retryAtMs = Date.now() + this.cluster.backoffMs(Math.min(b.attempts - 1, 10));
      this.expiryTimer.armBy(b.createdMs + this.deliveryTimeoutMs);
      this.cluster.invalidate();
      this.retryLater(Math.min(b.attempts - 1, 10), true);
      return;
    }
    if (expired) {
      this.expire(b, Date.now(), err);
    } else {
      this.settle(b, err);
      this.bumpEpochAfter(b, err);
    }
  }

  private settle(b: Batch, err: Error): void {
    for (const f of b.onFailure) deliverFailure(f, err);
    this.finish(b);
  }

  /** The batch has its outcome: no request holds its buffer any more, so it goes back to the pool. */
  private finish(b: Batch): void {
    this.release(b.bytes);
    this.unsettled -= b.onSuccess.length;
    b.onSuccess = [];
    b.onFailure = [];
    b.timestamps = [];
    b.built = null;
    b.writer.release();
    if (this.unsettled === 0) this.onIdle();
  }

  /** Every record sent so far has its outcome. */
  private onIdle(): void {
    this.expiryTimer.cancel();
    this.backoffTimer.cancel();
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private failAll(err: Error): void {
    for (const pq of this.queueList) {
      const all = [...pq.ready.splice(0)];
      if (pq.open !== null) {
        all.push(pq.open);
        this.closeBatch(pq.open, false);
        pq.ready.length = 0;
      }
      for (const b of all) {
        // A batch that was sent, failed and waits for its retry may have been written: its sequences are spent.
        if (this.txn !== null && b.baseSequence >= 0) this.txn.epochBumpRequired = true;
        this.settle(b, err);
      }
    }
  }

  /** Fails every record not sent yet: in batches, and those still waiting for their topic's metadata or memory. */
  private failUnsent(err: Error): void {
    this.failAll(err);
    for (const w of this.memoryWaiters.drain()) w.reject(err);
    const lines = [...this.topicWaiters.values()];
    this.topicWaiters.clear();
    for (const line of lines) for (const w of line.drain()) this.abandon(w, err);
  }

  /** A partition got its first record of the transaction: it joins the next AddPartitionsToTxn request. */
  private addToTransaction(pq: PartitionQueue): void {
    pq.inTxn = TXN_PENDING;
    // One request for all the partitions that get records in this turn of the event loop, or while the previous
    // request is out (Kafka's Sender batches the partitions added since its last AddPartitionsToTxn likewise).
    if (this.partitionsAdding === null) this.partitionsAdding = this.addPendingPartitions();
  }

  /** The AddPartitionsToTxn requests going on, one after another while partitions are pending; never rejects. */
  private partitionsAdding: Promise<void> | null = null;

  private async addPendingPartitions(): Promise<void> {
    const txn = this.txn!;
    await Promise.resolve();
    try {
      for (;;) {
        const pending = this.queueList.filter((pq) => pq.inTxn === TXN_PENDING);
        if (pending.length === 0) return;
        if (txn.state !== 'IN_TRANSACTION' && txn.state !== 'COMMITTING_TRANSACTION') return;
        try {
          await txn.addPartitions(
            pending.map((pq) => ({ topic: pq.topic, partition: pq.partition })),
            this.deliveryTimeoutMs,
          );
        } catch (err) {
          txn.fail(err as Error);
          return;
        }
        for (const pq of pending) if (pq.inTxn === TXN_PENDING) pq.inTxn = TXN_ADDED;
        this.scheduleDrain();
      }
    } finally {
      this.partitionsAdding = null;
      this.scheduleDrain();
    }
  }

  /** The transaction ended: no partition is in it any more. */
  private resetTransactionPartitions(): void {
    for (const pq of this.queueList) pq.inTxn = TXN_NONE;
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
      if (isFatalTransactionError(err)) txn.transitionTo('FATAL_ERROR', err as Error);
      throw err;
    }
    this.producerId = txn.producerId;
    this.producerEpoch = txn.producerEpoch;
    txn.transitionTo('READY');
  }

  /** beginTransaction(): starts a transaction on the client (the coordinator hears of it with its first partition). */
  beginTransaction(): void {
    const txn = this.transactional('beginTransaction');
    txn.check('beginTransaction', 'READY');
    this.resetTransactionPartitions();
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
    if (offsets.length === 0) return;
    try {
      await txn.sendOffsets(offsets, group);
    } catch (err) {
      txn.fail(err as Error);
      this.scheduleDrain();
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
    while (this.partitionsAdding !== null) await this.partitionsAdding;
    if (txn.hasError) throw txn.lastError;
    if (txn.transactionStarted) {
      try {
        await txn.endTxn(true);
      } catch (err) {
        if (isFatalTransactionError(err)) txn.transitionTo('FATAL_ERROR', err as Error);
        else if (!isRetriableError(err)) txn.transitionTo('ABORTABLE_ERROR', err as Error);
        throw err;
      }
    }
    this.resetTransactionPartitions();
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
    if (txn.state !== 'ABORTING_TRANSACTION') txn.transitionTo('ABORTING_TRANSACTION');
    this.failUnsent(new TransactionAbortedError('Failing batch since transaction was aborted'));
    await this.flush();
    while (this.partitionsAdding !== null) await this.partitionsAdding;
    txn.check('abortTransaction', 'ABORTING_TRANSACTION');
    try {
      if (txn.transactionStarted) await txn.endTxn(false);
      if (txn.epochBumpRequired) {
        await txn.initProducerId(true);
        this.producerId = txn.producerId;
        this.producerEpoch = txn.producerEpoch;
      }
    } catch (err) {
      if (isFatalTransactionError(err)) txn.transitionTo('FATAL_ERROR', err as Error);
      throw err;
    }
    this.resetTransactionPartitions();
    txn.transitionTo('READY');
  }

  /** The transaction state (Kafka's TransactionManager state), or null for a producer without transactional.id. */
  get transactionState(): string | null {
    return this.txn === null ? null : this.txn.state;
  }

  /** The producer id and epoch in use (-1 before the first). */
  get producerIdAndEpoch(): { producerId: number; producerEpoch: number } {
    return { producerId: this.producerId, producerEpoch: this.producerEpoch };
  }

  /**
   * Sends every buffered record now and resolves when all records sent so far have an outcome, those still
   * waiting for their topic's metadata or for buffer.memory included.
   */
  async flush(): Promise<void> {
    for (const pq of this.queueList) if (pq.open !== null) this.closeBatch(pq.open);
    if (this.unsettled === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private closedHard = false;

  /** Flushes (unless timeoutMs is 0), then closes the connections. Later sends fail. */
  async close(timeoutMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (timeoutMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.flush(), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
    }
    this.closedHard = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.expiryTimer.cancel();
    this.backoffTimer.cancel();
    this.failAll(new ClientStateError('the producer was closed before the record was sent'));
    for (const w of this.memoryWaiters.drain()) w.reject(new ClientStateError('the producer is closed'));
    const lines = [...this.topicWaiters.values()];
    this.topicWaiters.clear();
    for (const line of lines) {
      for (const w of line.drain()) this.abandon(w, new ClientStateError('the producer is closed'));
    }
    await this.cluster.close();
  }
}

export { CompressionType };
