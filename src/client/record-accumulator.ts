// The producer's record accumulator (Kafka's RecordAccumulator): appends records to their partition's open batch,
// closes a batch at batch.size or after linger.ms, counts the bytes of records accepted but not acknowledged
// against buffer.memory (records that find no room wait in line for it), and knows when every accepted record
// has its outcome (flush). It never sends: a closed batch waits in its partition's queue for the sender
// (sender.ts), which it wakes through its hooks.
//
// Why a batch may grow past batch.size: a batch closed while its partition has no free in-flight slot would only
// queue behind the others; the open batch keeps growing (up to max.request.size) until a slot frees, so a backlog
// leaves as one large batch. Whether a slot is free is the sender's knowledge, asked through canSendNow.
//
// Ownership: one per producer, owning the partition queues (partition-queue.ts) and the batch buffers' pool;
// changed only on the event loop between awaits.

import assert from 'node:assert/strict';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID } from '../common/ids.js';
import { BatchWriter, type EncodedHeader } from './batch-writer.js';
import { BufferPool } from './buffer-pool.js';
import { KafkaClientError } from './errors.js';
import { Fifo } from './fifo.js';
import { type Batch, newPartitionQueue, type PartitionQueue } from './partition-queue.js';
import type { ProducerSettings } from './producer-settings.js';
import type { OnFailure, OnSuccess } from './send-outcome.js';

/** What the accumulator asks of, and tells, the producer around it. */
export interface AccumulatorHooks {
  /** True when a batch of `pq` closed now would be sent at once (the sender's in-flight and epoch state). */
  canSendNow(pq: PartitionQueue): boolean;
  /** A batch opened: its delivery.timeout.ms counts from its creation. */
  onBatchOpened(batch: Batch): void;
  /** A batch closed (the partitioner's sticky partition moves on); `wake`: the sender should drain. */
  onBatchClosed(pq: PartitionQueue, wake: boolean): void;
  /** Every record accepted so far has its outcome. */
  onIdle(): void;
}

interface MemoryWaiter {
  bytes: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** The partition queues, the open batches and the buffer.memory account of one producer. */
export class RecordAccumulator {
  /** Partition queues by topic, indexed by partition; `queueList` holds the same queues in creation order. */
  private readonly queues = new Map<string, PartitionQueue[]>();
  readonly queueList: PartitionQueue[] = [];
  private bufferedBytes = 0;
  /** Batch buffers back from finished batches (none with acks=0: see buffer-pool.ts). */
  readonly bufferPool: BufferPool | null;
  private readonly memoryWaiters = new Fifo<MemoryWaiter>();
  /** Records accepted by send() without an outcome yet: in batches, or waiting for metadata or memory. */
  private unsettled = 0;
  /**
   * flush() waits for what was accepted before it, not for what is sent while it waits (Kafka's
   * awaitFlushCompletion waits for the batches incomplete when it began). Each flush starts a new generation;
   * `pendingByGeneration` counts, per generation, the batches not done and the records held before their batch
   * (waiting for metadata or memory). A batch counts under the generation of its oldest record: a held record of
   * an older generation that joins a newer batch takes the batch back to its own generation.
   */
  private flushGeneration = 0;
  private readonly pendingByGeneration = new Map<number, number>();
  /** The flushes waiting, each for every generation up to and including its own. */
  private flushWaiters: { generation: number; resolve: () => void }[] = [];

  constructor(
    private readonly settings: ProducerSettings,
    private readonly hooks: AccumulatorHooks,
  ) {
    // Spares up to a quarter of buffer.memory: enough for a partition's in-flight and open batches at their
    // largest (max.request.size) with the defaults.
    this.bufferPool = settings.acks === 0 ? null : new BufferPool(settings.bufferMemory / 4);
  }

  /** The queue of a topic-partition, made on its first record. */
  queueOf(topic: string, partition: number): PartitionQueue {
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

  /** buffer.memory has room for `bytes` now, and no earlier record waits for room (memory goes in order). */
  hasRoom(bytes: number): boolean {
    return (
      this.memoryWaiters.length === 0 &&
      (this.bufferedBytes + bytes <= this.settings.bufferMemory || this.bufferedBytes === 0)
    );
  }

  /** Counts `bytes` against buffer.memory; the caller checked hasRoom. */
  reserve(bytes: number): void {
    this.bufferedBytes += bytes;
  }

  /**
   * Waits in line for room for `bytes`, at most `timeoutMs`: then `granted` (the bytes are counted) or `refused`
   * with the max.block.ms error (or the error failWaiting gives).
   */
  waitForRoom(bytes: number, timeoutMs: number, granted: () => void, refused: (e: Error) => void): void {
    const waiter: MemoryWaiter = {
      bytes,
      resolve: () => {
        clearTimeout(timer);
        granted();
      },
      reject: (e: Error) => {
        clearTimeout(timer);
        refused(e);
      },
    };
    const timer = setTimeout(() => {
      this.memoryWaiters.remove(waiter);
      refused(new KafkaClientError(`no room in buffer.memory after ${this.settings.maxBlockMs} ms`, false));
    }, timeoutMs);
    this.memoryWaiters.push(waiter);
  }

  /** Fails every record waiting for room. */
  failWaiting(err: Error): void {
    for (const w of this.memoryWaiters.drain()) w.reject(err);
  }

  /** Gives `bytes` back to buffer.memory and admits the records waiting in line that now fit. */
  release(bytes: number): void {
    this.bufferedBytes -= bytes;
    while (this.memoryWaiters.length > 0) {
      const w = this.memoryWaiters.peek()!;
      if (this.bufferedBytes + w.bytes > this.settings.bufferMemory && this.bufferedBytes > 0) break;
      this.memoryWaiters.shift();
      this.bufferedBytes += w.bytes;
      w.resolve();
    }
  }

  /**
   * Appends to the partition's open batch. A batch closes at batch.size when it could be sent at once; while the
   * partition waits for an in-flight slot it keeps growing (up to max.request.size), so a backlog leaves as one
   * large batch when the slot frees instead of many small ones queued behind each other. The record comes as
   * its parts, not as an object: send() makes none on its common path. The record counts as unsettled from here.
   */
  append(
    pq: PartitionQueue,
    key: Buffer | null,
    value: Buffer | null,
    headers: EncodedHeader[] | undefined,
    timestamp: number,
    size: number,
    onSuccess: OnSuccess,
    onFailure: OnFailure,
  ): Batch {
    let batch = pq.open;
    if (batch !== null) {
      const limit = this.hooks.canSendNow(pq) ? this.settings.batchSize : this.settings.maxRequestSize;
      if (batch.writer.sizeInBytes + size > limit) {
        this.closeBatch(batch);
        batch = null;
      }
    }
    if (batch === null) batch = this.openBatch(pq, size);
    batch.writer.append(key, value, headers, timestamp);
    batch.onSuccess.push(onSuccess);
    batch.onFailure.push(onFailure);
    batch.timestamps.push(timestamp);
    batch.bytes += size;
    this.unsettled++;
    if (batch.writer.sizeInBytes >= this.settings.batchSize && this.hooks.canSendNow(pq))
      this.closeBatch(batch);
    return batch;
  }

  private openBatch(pq: PartitionQueue, firstRecordBytes: number): Batch {
    const batch: Batch = {
      pq,
      writer: new BatchWriter(
        Math.max(this.settings.batchSize, firstRecordBytes),
        this.settings.maxRequestSize,
        this.bufferPool,
      ),
      onSuccess: [],
      onFailure: [],
      timestamps: [],
      bytes: 0,
      createdMs: Date.now(),
      built: null,
      producerId: NO_PRODUCER_ID,
      producerEpoch: NO_PRODUCER_EPOCH,
      baseSequence: -1,
      attempts: 0,
      sequenceMoved: false,
      retryAtMs: 0,
      lingerTimer: null,
      lingered: false,
      flushGeneration: this.flushGeneration,
      abortedInFlight: false,
    };
    this.countPending(batch.flushGeneration, 1);
    pq.open = batch;
    this.hooks.onBatchOpened(batch);
    const lingerMs = this.settings.lingerMs;
    batch.lingerTimer =
      lingerMs > 0
        ? setTimeout(() => this.onLinger(batch), lingerMs)
        : setImmediate(() => this.onLinger(batch));
    return batch;
  }

  private onLinger(batch: Batch): void {
    batch.lingerTimer = null;
    batch.lingered = true;
    // Otherwise the sender takes it when the partition's next in-flight slot frees.
    if (batch.pq.open === batch && this.hooks.canSendNow(batch.pq)) this.closeBatch(batch);
  }

  /** Moves the partition's open batch to its ready queue; `wake`: tell the sender. */
  closeBatch(batch: Batch, wake = true): void {
    const pq = batch.pq;
    if (pq.open !== batch) return;
    if (batch.lingerTimer !== null) {
      clearTimeout(batch.lingerTimer as NodeJS.Timeout);
      clearImmediate(batch.lingerTimer as NodeJS.Immediate);
      batch.lingerTimer = null;
    }
    pq.open = null;
    pq.ready.push(batch);
    this.hooks.onBatchClosed(pq, wake);
  }

  /** Closes every open batch (flush: they go without waiting for linger.ms). */
  closeAll(): void {
    for (const pq of this.queueList) if (pq.open !== null) this.closeBatch(pq.open);
  }

  /**
   * Hands the batches not in flight that have reached delivery.timeout.ms to `expire`, as Kafka's
   * RecordAccumulator.expiredBatches: each partition's queue from its oldest batch up to the first one still in
   * time, the open batch last. Returns when the next one is due (Infinity: none), and whether any expired.
   */
  expireBatches(now: number, expire: (b: Batch) => void): { nextDueMs: number; expired: boolean } {
    const timeoutMs = this.settings.deliveryTimeoutMs;
    let next = Number.POSITIVE_INFINITY;
    let expired = false;
    for (const pq of this.queueList) {
      let first = pq.ready[0];
      while (first !== undefined && first.createdMs + timeoutMs <= now) {
        pq.ready.shift();
        expire(first);
        expired = true;
        first = pq.ready[0];
      }
      if (first !== undefined) next = Math.min(next, first.createdMs + timeoutMs);
      const open = pq.open;
      if (open === null) continue;
      if (first === undefined && open.createdMs + timeoutMs <= now) {
        this.closeBatch(open, false);
        pq.ready.length = 0;
        expire(open);
        expired = true;
      } else {
        next = Math.min(next, open.createdMs + timeoutMs);
      }
    }
    return { nextDueMs: next, expired };
  }

  /**
   * Takes every batch not in flight out of its queue, the open ones closed, and hands each to `fail`; those `keep`
   * says stay in their queue, in order.
   */
  abortUndrained(keep: (b: Batch) => boolean, fail: (b: Batch) => void): void {
    for (const pq of this.queueList) {
      const failed = pq.ready.filter((b) => !keep(b));
      if (failed.length < pq.ready.length) pq.ready = pq.ready.filter(keep);
      else pq.ready.length = 0;
      const open = pq.open;
      if (open !== null) {
        this.closeBatch(open, false);
        pq.ready.pop();
        failed.push(open);
      }
      for (const b of failed) fail(b);
    }
  }

  /** The batch has its outcome: no request holds its buffer any more, so it goes back to the pool. */
  deallocate(b: Batch): void {
    this.settleAccounts(b);
    this.releaseBuffer(b);
  }

  /**
   * The batch has its outcome while a request may still hold its bytes (aborted in flight): its records stop
   * counting against buffer.memory and for flush(), as Kafka's abortBatches deallocates at once; releaseBuffer
   * follows once its request has settled.
   */
  settleAccounts(b: Batch): void {
    this.release(b.bytes);
    b.bytes = 0;
    this.unsettled -= b.onSuccess.length;
    b.onSuccess = [];
    b.onFailure = [];
    b.timestamps = [];
    if (this.unsettled === 0) this.hooks.onIdle();
    this.countPending(b.flushGeneration, -1);
  }

  /** No request holds the batch's bytes any more: its buffer goes back to the pool. */
  releaseBuffer(b: Batch): void {
    b.built = null;
    b.writer.release();
  }

  /** `big` was split into `parts` (batch-split.ts), which carry its flush generation: they are pending instead. */
  replaceWithParts(big: Batch, parts: readonly Batch[]): void {
    this.countPending(big.flushGeneration, parts.length - 1);
  }

  /**
   * A record accepted but not in a batch yet (waiting for its topic's metadata or for memory) is unsettled. Answers
   * its flush generation, to give back to unhold or dropHeld.
   */
  hold(): number {
    this.unsettled++;
    this.countPending(this.flushGeneration, 1);
    return this.flushGeneration;
  }

  /**
   * A held record of `generation` went into `batch` (append() counted it unsettled again): the batch now waits for
   * the flushes that waited for the record. Counted there before the record stops counting, so that no flush ends
   * in between.
   */
  unhold(generation: number, batch: Batch): void {
    this.unsettled--;
    if (batch.flushGeneration > generation) {
      this.countPending(generation, 1);
      this.countPending(batch.flushGeneration, -1);
      batch.flushGeneration = generation;
    }
    this.countPending(generation, -1);
  }

  /** A held record of `generation` failed before it reached a batch. */
  dropHeld(generation: number): void {
    this.unsettled--;
    if (this.unsettled === 0) this.hooks.onIdle();
    this.countPending(generation, -1);
  }

  /** Every record accepted so far has its outcome. */
  get idle(): boolean {
    return this.unsettled === 0;
  }

  /** A flush() waits: open batches go without waiting for linger.ms. */
  get flushing(): boolean {
    return this.flushWaiters.length > 0;
  }

  /**
   * Starts a flush: resolves when every batch and held record accepted until now has its outcome, whatever is sent
   * meanwhile. The caller closes the open batches first (closeAll), so records sent from here go to new batches.
   */
  awaitFlush(): Promise<void> {
    const generation = this.flushGeneration++;
    if (this.oldestPending() > generation) return Promise.resolve();
    return new Promise<void>((resolve) => this.flushWaiters.push({ generation, resolve }));
  }

  private countPending(generation: number, delta: number): void {
    const left = (this.pendingByGeneration.get(generation) ?? 0) + delta;
    assert.ok(left >= 0, `flush generation ${generation} counted below zero`);
    if (left > 0) {
      this.pendingByGeneration.set(generation, left);
      return;
    }
    this.pendingByGeneration.delete(generation);
    if (this.flushWaiters.length === 0) return;
    const oldest = this.oldestPending();
    const done = this.flushWaiters.filter((w) => w.generation < oldest);
    if (done.length === 0) return;
    this.flushWaiters = this.flushWaiters.filter((w) => w.generation >= oldest);
    for (const w of done) w.resolve();
  }

  /** The oldest generation with a batch or a held record pending (Infinity: none). */
  private oldestPending(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const g of this.pendingByGeneration.keys()) if (g < oldest) oldest = g;
    return oldest;
  }
}
