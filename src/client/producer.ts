// The producer: records are serialized, given a partition, and appended to that partition's open batch; batches
// close when full (batch.size) or after linger.ms, and a sender drains closed batches, one per partition per
// Produce request, to each partition's leader. Every record's promise settles once with its offset or an error.
//
// Idempotence (on by default, as in Kafka 3+): the producer gets a producer id from InitProducerId, numbers each
// partition's batches with sequences, and keeps up to max.in.flight.requests.per.connection (at most 5) batches
// of a partition in flight. When a batch fails with a retriable error the partition stops sending until its
// in-flight batches have come back, and the failed ones go again in sequence order, so the log keeps the send
// order without duplicates. With idempotence off, retries may reorder batches, as in Kafka.
//
// Memory: buffer.memory bounds the bytes of records accepted but not yet acknowledged; send() waits up to
// max.block.ms for room, then fails.
//
// State is owned by this object and changed only between awaits; network I/O starts after each change.

import { CompressionType, compressionTypeFromName } from '../protocol/compression/compression-type.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ProduceRequest, ProduceResponse } from '../protocol/messages/00-produce.js';
import type { InitProducerIdResponse } from '../protocol/messages/22-init-producer-id.js';
import { buildBatch, estimateRecordBytes, type RecordInput } from '../protocol/records/batch-builder.js';
import { ApiKey } from '../protocol/registry.js';
import { Cluster } from './cluster.js';
import { ClientStateError, isRetriableError, KafkaClientError, KafkaProtocolError } from './errors.js';
import type { ClientOptions } from './options.js';
import {
  createPartitioner,
  type Partitioner,
  type PartitionerFn,
  type PartitionerName,
} from './partitioners.js';
import { bytesSerde, type Serializer } from './serdes.js';

export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export type Acks = 0 | 1 | -1 | 'all';

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
  /** delivery.timeout.ms (default 120000): the bound on a record's time from send() to its outcome. */
  deliveryTimeoutMs?: number;
  /** Produce request timeout sent to the broker (default requestTimeoutMs). */
  ackTimeoutMs?: number;
  partitioner?: PartitionerName | PartitionerFn;
  /** allow.auto.create.topics (default true). */
  allowAutoCreateTopics?: boolean;
  keySerializer?: Serializer<K>;
  valueSerializer?: Serializer<V>;
}

export type HeadersInput =
  | Record<string, string | Buffer>
  | Array<{ key: string; value: string | Buffer | null }>;

export interface ProducerRecord<K = Buffer | null, V = Buffer | null> {
  topic: string;
  value: V;
  key?: K;
  partition?: number;
  headers?: HeadersInput;
  /** Milliseconds since the epoch (default now). */
  timestamp?: number;
}

export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 with acks=0. */
  offset: number;
  /** CreateTime, or the broker's time for a LogAppendTime topic. */
  timestamp: number;
}

interface Waiter {
  resolve: (m: RecordMetadata) => void;
  reject: (e: Error) => void;
}

interface Batch {
  pq: PartitionQueue;
  records: RecordInput[];
  waiters: Waiter[];
  bytes: number;
  createdMs: number;
  built: Buffer | null;
  producerId: number;
  baseSequence: number;
  attempts: number;
  lingerTimer: NodeJS.Timeout | NodeJS.Immediate | null;
}

interface PartitionQueue {
  topic: string;
  partition: number;
  open: Batch | null;
  ready: Batch[];
  inFlight: number;
  nextSequence: number;
  /** A batch failed retriably: send nothing more until the in-flight batches have come back. */
  blocked: boolean;
}

const SEQUENCE_MAX = 0x7fffffff;

function toHeaders(h: HeadersInput | undefined): RecordInput['headers'] {
  if (h === undefined) return undefined;
  if (Array.isArray(h)) return h;
  return Object.entries(h).map(([key, value]) => ({ key, value }));
}

export class Producer<K = Buffer | null, V = Buffer | null> {
  readonly cluster: Cluster;
  private readonly acks: number;
  private readonly lingerMs: number;
  private readonly batchSize: number;
  private readonly bufferMemory: number;
  private readonly maxBlockMs: number;
  private readonly maxRequestSize: number;
  private readonly compression: number;
  private readonly compressionLevel: number | undefined;
  readonly idempotent: boolean;
  private readonly deliveryTimeoutMs: number;
  private readonly ackTimeoutMs: number;
  private readonly maxInFlightPerPartition: number;
  private readonly retries: number;
  private readonly partitioner: Partitioner;
  private readonly keySerializer: Serializer<K>;
  private readonly valueSerializer: Serializer<V>;

  private readonly queues = new Map<string, PartitionQueue>();
  private bufferedBytes = 0;
  private readonly memoryWaiters: { bytes: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  private producerId = -1;
  private producerEpoch = -1;
  private producerIdPromise: Promise<void> | null = null;
  private drainScheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private unsettled = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(options: ProducerOptions<K, V>) {
    this.cluster = new Cluster(options);
    this.cluster.allowAutoTopicCreation = options.allowAutoCreateTopics ?? true;
    const acks = options.acks ?? 'all';
    this.acks = acks === 'all' ? -1 : acks;
    if (![0, 1, -1].includes(this.acks)) throw new TypeError(`acks must be 0, 1, -1 or 'all', not ${acks}`);
    if (options.idempotent === true && this.acks !== -1) {
      throw new TypeError('an idempotent producer needs acks=all');
    }
    this.idempotent = options.idempotent ?? this.acks === -1;
    this.lingerMs = options.lingerMs ?? 5;
    this.batchSize = options.batchSize ?? 16_384;
    this.bufferMemory = options.bufferMemory ?? 32 * 1024 * 1024;
    this.maxBlockMs = options.maxBlockMs ?? 60_000;
    this.maxRequestSize = options.maxRequestSize ?? 1024 * 1024;
    const codec = compressionTypeFromName(options.compression ?? 'none');
    if (codec === undefined) throw new TypeError(`unknown compression '${options.compression}'`);
    this.compression = codec;
    this.compressionLevel = options.compressionLevel;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120_000;
    this.ackTimeoutMs = options.ackTimeoutMs ?? this.cluster.options.requestTimeoutMs;
    this.maxInFlightPerPartition = this.cluster.options.maxInFlightRequestsPerConnection;
    if (this.idempotent && this.maxInFlightPerPartition > 5) {
      throw new TypeError('an idempotent producer allows at most 5 requests in flight per connection');
    }
    this.retries = options.retries ?? 2_147_483_647;
    this.partitioner = createPartitioner(options.partitioner);
    this.keySerializer = options.keySerializer ?? (bytesSerde as unknown as Serializer<K>);
    this.valueSerializer = options.valueSerializer ?? (bytesSerde as unknown as Serializer<V>);
  }

  /** Connects and learns the cluster (optional: send() does it on first use). */
  async connect(): Promise<void> {
    await this.cluster.refreshMetadata();
    if (this.idempotent) await this.ensureProducerId();
  }

  /** Sends one record; resolves once the broker acknowledged it (or at once with acks=0). */
  send(record: ProducerRecord<K, V>): Promise<RecordMetadata> {
    try {
      if (this.closed) throw new ClientStateError('the producer is closed');
      const key = record.key === undefined ? null : this.keySerializer.serialize(record.key, record.topic);
      const value = this.valueSerializer.serialize(record.value, record.topic);
      const input: RecordInput = {
        key,
        value,
        headers: toHeaders(record.headers),
        timestamp: record.timestamp ?? Date.now(),
      };
      const size = estimateRecordBytes(input);
      if (size > this.maxRequestSize) {
        throw new KafkaProtocolError(
          ErrorCode.MESSAGE_TOO_LARGE,
          `record of ${size} bytes exceeds max.request.size`,
        );
      }
      // The common case (metadata known, buffer room) appends without waiting a turn of the event loop.
      const cached = this.cluster.snapshot.topics.get(record.topic);
      if (
        cached !== undefined &&
        cached.errorCode === 0 &&
        cached.partitions.length > 0 &&
        this.hasRoom(size)
      ) {
        const partition = this.choosePartition(record, key, cached.partitions.length);
        this.bufferedBytes += size;
        return new Promise<RecordMetadata>((resolve, reject) => {
          this.append(record.topic, partition, input, size, { resolve, reject });
        });
      }
      return this.sendSlow(record, key, input, size);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private hasRoom(bytes: number): boolean {
    return (
      this.memoryWaiters.length === 0 &&
      (this.bufferedBytes + bytes <= this.bufferMemory || this.bufferedBytes === 0)
    );
  }

  private choosePartition(record: ProducerRecord<K, V>, key: Buffer | null, count: number): number {
    const partition = record.partition ?? this.partitioner.partition(record.topic, key, count);
    if (partition < 0 || partition >= count || !Number.isInteger(partition)) {
      throw new KafkaProtocolError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `partition ${partition} of ${record.topic} does not exist (${count} partitions)`,
      );
    }
    return partition;
  }

  private async sendSlow(
    record: ProducerRecord<K, V>,
    key: Buffer | null,
    input: RecordInput,
    size: number,
  ): Promise<RecordMetadata> {
    const started = Date.now();
    const topic = await this.topicWithin(record.topic, started);
    const partition = this.choosePartition(record, key, topic.partitions.length);
    await this.reserve(size, started);
    return new Promise<RecordMetadata>((resolve, reject) => {
      this.append(record.topic, partition, input, size, { resolve, reject });
    });
  }

  private async topicWithin(topic: string, started: number): Promise<{ partitions: unknown[] }> {
    const cached = this.cluster.snapshot.topics.get(topic);
    if (cached !== undefined && cached.errorCode === 0 && cached.partitions.length > 0) return cached;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.cluster.topic(topic);
      } catch (err) {
        const left = this.maxBlockMs - (Date.now() - started);
        if (!isRetriableError(err) || left <= 0) {
          if (isRetriableError(err)) {
            throw new KafkaClientError(
              `topic ${topic} not present in metadata after ${this.maxBlockMs} ms: ${(err as Error).message}`,
              false,
            );
          }
          throw err;
        }
        await new Promise((r) => setTimeout(r, Math.min(left, this.cluster.backoffMs(attempt))));
      }
    }
  }

  private reserve(bytes: number, started: number): Promise<void> | void {
    if (
      this.memoryWaiters.length === 0 &&
      (this.bufferedBytes + bytes <= this.bufferMemory || this.bufferedBytes === 0)
    ) {
      this.bufferedBytes += bytes;
      return;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        bytes,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject,
      };
      const timer = setTimeout(
        () => {
          const i = this.memoryWaiters.indexOf(waiter);
          if (i >= 0) this.memoryWaiters.splice(i, 1);
          reject(new KafkaClientError(`no room in buffer.memory after ${this.maxBlockMs} ms`, false));
        },
        Math.max(0, this.maxBlockMs - (Date.now() - started)),
      );
      this.memoryWaiters.push(waiter);
    });
  }

  private release(bytes: number): void {
    this.bufferedBytes -= bytes;
    while (this.memoryWaiters.length > 0) {
      const w = this.memoryWaiters[0]!;
      if (this.bufferedBytes + w.bytes > this.bufferMemory && this.bufferedBytes > 0) break;
      this.memoryWaiters.shift();
      this.bufferedBytes += w.bytes;
      w.resolve();
    }
  }

  private queueOf(topic: string, partition: number): PartitionQueue {
    const id = `${topic}\u0000${partition}`;
    let pq = this.queues.get(id);
    if (pq === undefined) {
      pq = { topic, partition, open: null, ready: [], inFlight: 0, nextSequence: 0, blocked: false };
      this.queues.set(id, pq);
    }
    return pq;
  }

  private append(topic: string, partition: number, input: RecordInput, size: number, waiter: Waiter): void {
    const pq = this.queueOf(topic, partition);
    if (pq.open !== null && pq.open.bytes + size > this.batchSize) this.closeBatch(pq.open);
    let batch = pq.open;
    if (batch === null) {
      batch = {
        pq,
        records: [],
        waiters: [],
        bytes: 0,
        createdMs: Date.now(),
        built: null,
        producerId: -1,
        baseSequence: -1,
        attempts: 0,
        lingerTimer: null,
      };
      pq.open = batch;
      const b = batch;
      batch.lingerTimer =
        this.lingerMs > 0
          ? setTimeout(() => this.closeBatch(b), this.lingerMs)
          : setImmediate(() => this.closeBatch(b));
    }
    batch.records.push(input);
    batch.waiters.push(waiter);
    batch.bytes += size;
    this.unsettled++;
    if (batch.bytes >= this.batchSize) this.closeBatch(batch);
  }

  private closeBatch(batch: Batch): void {
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
    this.scheduleDrain();
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
          for (const pq of this.queues.values()) pq.nextSequence = 0;
        }, 1_000_000)
        .finally(() => {
          this.producerIdPromise = null;
        });
    }
    return this.producerIdPromise;
  }

  /** Sends every ready batch it may: per leader, one request with the first ready batch of each partition. */
  private drain(): void {
    if (this.idempotent && this.producerId < 0) {
      this.ensureProducerId().then(
        () => this.scheduleDrain(),
        (err: Error) => this.failAll(err),
      );
      return;
    }
    const byLeader = new Map<number, Batch[]>();
    let missingLeader = false;
    for (const pq of this.queues.values()) {
      if (pq.ready.length === 0) continue;
      if (pq.blocked) {
        if (pq.inFlight > 0) continue;
        pq.blocked = false;
      }
      if (pq.inFlight >= this.maxInFlightPerPartition) continue;
      const leader = this.cluster.leaderOf(pq.topic, pq.partition);
      if (leader < 0) {
        missingLeader = true;
        continue;
      }
      const batch = this.takeBatch(pq);
      pq.inFlight++;
      let list = byLeader.get(leader);
      if (list === undefined) byLeader.set(leader, (list = []));
      list.push(batch);
    }
    for (const [leader, batches] of byLeader) this.sendBatches(leader, batches);
    if (missingLeader) this.retryLater(0, true);
  }

  /**
   * The next batch of a partition to send. When batches have piled up behind the in-flight limit, the ones never
   * sent are merged into one of up to max.request.size: a backlog then goes out in fewer, larger requests instead
   * of waiting for one slot per 16 KiB batch. A batch that was sent before keeps its bytes and sequence.
   */
  private takeBatch(pq: PartitionQueue): Batch {
    const batch = pq.ready.shift()!;
    if (batch.attempts > 0) return batch;
    while (pq.ready.length > 0) {
      const next = pq.ready[0]!;
      if (next.attempts > 0 || batch.bytes + next.bytes > this.maxRequestSize) break;
      pq.ready.shift();
      for (let i = 0; i < next.records.length; i++) {
        batch.records.push(next.records[i]!);
        batch.waiters.push(next.waiters[i]!);
      }
      batch.bytes += next.bytes;
    }
    return batch;
  }

  private retryLater(attempt: number, refresh: boolean): void {
    if (this.retryTimer !== null) return;
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

  private build(batch: Batch): Buffer {
    if (this.idempotent && batch.producerId !== this.producerId) {
      // First send, or the producer id changed since: take the next sequences under the current id.
      const pq = batch.pq;
      batch.producerId = this.producerId;
      batch.baseSequence = pq.nextSequence;
      pq.nextSequence = (pq.nextSequence + batch.records.length) % (SEQUENCE_MAX + 1);
      batch.built = null;
    }
    if (batch.built === null) {
      batch.built = buildBatch(batch.records, {
        compression: this.compression,
        compressionLevel: this.compressionLevel,
        producerId: this.idempotent ? this.producerId : -1,
        producerEpoch: this.idempotent ? this.producerEpoch : -1,
        baseSequence: this.idempotent ? batch.baseSequence : -1,
        timestamp: batch.createdMs,
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
      }
    }
    const request: ProduceRequest = {
      transactionalId: null,
      acks: this.acks,
      timeoutMs: this.ackTimeoutMs,
      topicData: [...topics].map(([name, partitionData]) => ({ name, partitionData })),
    };
    const live = batches.filter((b) => b.waiters.length > 0);
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
        const retriable = p.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER;
        const err = new KafkaProtocolError(p.errorCode, p.errorMessage);
        this.onBatchError(b, err, retriable || err.retriable);
      }
    }
    this.scheduleDrain();
  }

  private succeed(b: Batch, baseOffset: number, logAppendTimeMs: number): void {
    b.pq.inFlight--;
    const topic = b.pq.topic;
    const partition = b.pq.partition;
    for (let i = 0; i < b.waiters.length; i++) {
      b.waiters[i]!.resolve({
        topic,
        partition,
        offset: baseOffset < 0 ? -1 : baseOffset + i,
        timestamp: logAppendTimeMs >= 0 ? logAppendTimeMs : b.records[i]!.timestamp!,
      });
    }
    this.finish(b);
  }

  private onBatchError(b: Batch, err: Error, retriable: boolean): void {
    const pq = b.pq;
    pq.inFlight--;
    const expired = Date.now() - b.createdMs >= this.deliveryTimeoutMs;
    if (retriable && !expired && b.attempts <= this.retries && !this.closedHard) {
      // Back into the queue in sequence order, and hold the partition until its in-flight batches return.
      pq.blocked = true;
      let i = 0;
      while (i < pq.ready.length && pq.ready[i]!.attempts > 0 && pq.ready[i]!.baseSequence < b.baseSequence)
        i++;
      pq.ready.splice(i, 0, b);
      this.cluster.invalidate();
      this.retryLater(Math.min(b.attempts - 1, 10), true);
      return;
    }
    this.settle(
      b,
      expired ? new KafkaClientError(`delivery.timeout.ms expired: ${err.message}`, false) : err,
    );
    if (this.idempotent && !(err instanceof KafkaProtocolError && err.code === ErrorCode.MESSAGE_TOO_LARGE)) {
      // The partition's sequences now have a gap the broker will not accept: start over with a new producer id.
      this.producerId = -1;
    }
  }

  private settle(b: Batch, err: Error): void {
    for (const w of b.waiters) w.reject(err);
    this.finish(b);
  }

  private finish(b: Batch): void {
    this.release(b.bytes);
    this.unsettled -= b.waiters.length;
    b.waiters = [];
    b.records = [];
    b.built = null;
    if (this.unsettled === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private failAll(err: Error): void {
    for (const pq of this.queues.values()) {
      const all = [...pq.ready.splice(0)];
      if (pq.open !== null) {
        all.push(pq.open);
        this.closeBatch(pq.open);
        pq.ready.length = 0;
      }
      for (const b of all) this.settle(b, err);
    }
  }

  /** Sends every buffered record now and resolves when all records sent so far have an outcome. */
  async flush(): Promise<void> {
    for (const pq of this.queues.values()) if (pq.open !== null) this.closeBatch(pq.open);
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
    this.failAll(new ClientStateError('the producer was closed before the record was sent'));
    for (const w of this.memoryWaiters.splice(0)) w.reject(new ClientStateError('the producer is closed'));
    await this.cluster.close();
  }
}

export { CompressionType };
