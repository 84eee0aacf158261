// Runs one SourceTask: poll -> transforms -> converters -> Brook's producer, and commits source offsets.
// The loop polls again while earlier records are still being sent (Kafka's WorkerSourceTask does too): it waits
// only when the records handed to the producer and not yet acknowledged reach the producer's buffer.memory in
// bytes, as Kafka's send() blocks on a full buffer. Offsets are at-least-once, as Kafka's SubmittedRecords keeps
// them: each batch handed to the producer carries the source offsets of its records (and of records dropped
// before it); every offset.flush.interval.ms the offsets of the batches acknowledged so far, up to the first one
// that is not, are written to the offset store, without flushing the producer (the copy goes on meanwhile). When
// the task stops, everything sent is awaited first, so all of it is committed. A failed send fails the task
// before its offset is stored, so a restart reads that record again. Records a transform drops still advance
// the offsets.

import { Producer, type ProducerRecord } from '../../client/index.js';
import type { Logger } from '../../common/logger.js';
import type { SourceTask, TransactionContext } from '../api/connector.js';
import type { SourceRecord } from '../api/records.js';
import { stringifyJson } from '../converters/json-text.js';
import { ConnectException } from '../errors.js';
import { TASK_PRODUCER_DEFAULTS } from './client-configs.js';
import { SKIPPED, type Stage } from './error-handler.js';
import { fromConnectHeaders } from './headers.js';
import { CONNECT_LOGGERS } from './loggers.js';
import { type OffsetStore, storageReader } from './offset-store.js';
import { type TaskDeps, WorkerTask } from './worker-task.js';

/** The most records handed to the producer in one sendBatch() (a poll's records go in batches of at most this). */
export const SEND_BATCH_RECORDS_MAX = 5_000;

/** What one record counts toward buffer.memory beyond its key, value and headers (its batch framing, roughly). */
const RECORD_OVERHEAD_BYTES = 64;

/** The producer's default buffer.memory: the bytes of unacknowledged records before the loop waits. */
const BUFFER_MEMORY_DEFAULT = 32 * 1024 * 1024;

/** Where a record was written, as SourceTask.commitRecord() receives it. */
export type WrittenRecord = { topic: string; partition: number; offset: number };

/** A record ready for the producer, with the record the task returned (for commitRecord). */
export interface Prepared {
  record: SourceRecord;
  out: ProducerRecord;
  /** What the record counts toward buffer.memory. */
  bytes: number;
}

/** The latest source offset of one source partition. */
interface PendingOffset {
  partition: Record<string, unknown>;
  offset: Record<string, unknown> | null;
}

/** A batch handed to the producer, with the source offsets it moves its partitions to (Kafka's SubmittedRecord). */
export interface Submitted {
  offsets: Map<string, PendingOffset>;
  acked: boolean;
}

/**
 * Source partitions as JSON, remembered per object: a connector that reuses one partition object for all its
 * records (MirrorSourceTask, one per topic-partition) pays for the JSON once. Records are immutable, so is this.
 */
const partitionKeys = new WeakMap<object, string>();
/**
 * The last partition looked up and its key: a poll's records come partition by partition, so most records hit here
 * (a WeakMap lookup per record otherwise). Keeps one partition object alive at most.
 */
let lastPartition: object | null = null;
let lastPartitionKey = '';
function partitionKey(partition: Record<string, unknown>): string {
  if (partition === lastPartition) return lastPartitionKey;
  let key = partitionKeys.get(partition);
  if (key === undefined) partitionKeys.set(partition, (key = stringifyJson(partition)));
  lastPartition = partition;
  lastPartitionKey = key;
  return key;
}

export class WorkerSourceTask extends WorkerTask {
  protected producer: Producer | null = null;
  /** Source offsets of the records prepared since the last batch was handed to the producer. */
  protected pendingOffsets = new Map<string, PendingOffset>();
  /** Batches handed to the producer whose offsets are not committable yet, oldest first. */
  private readonly submitted: Submitted[] = [];
  /** Offsets of the acknowledged prefix of `submitted`, written at the next commit. */
  private committableOffsets = new Map<string, PendingOffset>();
  /** Bytes (as buffer.memory counts them) of records handed to the producer and not yet acknowledged. */
  private outstandingBytes = 0;
  /** The bound on outstandingBytes: the producer's buffer.memory. */
  private outstandingBytesMax = BUFFER_MEMORY_DEFAULT;
  /** Resolves a wait for outstandingBytes to fall to `limit`. */
  private drained: { limit: number; wake: () => void } | null = null;
  protected sendError: Error | null = null;
  private nextCommitMs = 0;
  /** The commitRecord calls of acknowledged batches, one batch after another. */
  private commits: Promise<void> = Promise.resolve();
  protected readonly log: Logger;
  /** While the task's own offsets store opens: a stop closes it (Kafka's cancel closes the offset reader). */
  private openingOffsets = false;

  constructor(
    d: TaskDeps,
    protected readonly task: SourceTask,
    protected readonly offsets: OffsetStore,
    /** The Kafka class whose logger this runner writes through (the exactly-once runner names its own). */
    loggerName: string = CONNECT_LOGGERS.workerSourceTask,
  ) {
    super(d);
    this.log = d.loggers.logger(loggerName);
  }

  protected async initializeAndStart(): Promise<void> {
    this.producer = new Producer({
      bootstrapServers: this.d.bootstrapServers,
      clientId: `connector-producer-${this.d.id.connector}-${this.d.id.task}`,
      ...TASK_PRODUCER_DEFAULTS,
      ...this.d.producerOptions,
    });
    const memory = this.d.producerOptions.bufferMemory;
    if (typeof memory === 'number' && memory > 0) this.outstandingBytesMax = memory;
    await this.startTask();
    this.nextCommitMs = Date.now() + this.d.offsetFlushIntervalMs;
  }

  /**
   * Opens the task's own offsets store if it has one (Kafka's AbstractWorkerSourceTask.initializeAndStart: in the
   * task's loop, so a store that cannot open fails this task alone), reads the stored offsets to their end
   * (distributed mode), then initializes and starts the task.
   */
  protected async startTask(transactionContext: TransactionContext | null = null): Promise<void> {
    // A stop that came first: nothing is opened that only close() would free, after the worker's stop returned.
    if (this.stopping) throw new ConnectException(`${this} was stopped before it started`);
    this.openingOffsets = true;
    try {
      await this.offsets.acquire?.();
    } finally {
      this.openingOffsets = false;
    }
    await this.offsets.refresh?.();
    this.task.initialize({
      configs: () => this.d.taskConfig,
      offsetStorageReader: () => storageReader(this.offsets, this.d.id.connector),
      transactionContext: () => transactionContext,
      logger: (name) => this.d.loggers.logger(name),
    });
    await this.task.start(this.d.taskConfig);
    this.log.info(`${this} Source task finished initialization and start`);
  }

  protected override wakeForStop(): void {
    if (this.openingOffsets) void this.offsets.release?.().catch(() => {});
  }

  protected async runLoop(): Promise<void> {
    this.log.info(`${this} Executing source task`);
    while (!this.stopping) {
      if (this.paused) {
        await this.waitWhilePaused(1000);
        continue;
      }
      const records = await this.task.poll();
      if (this.stopping) break;
      // A poll's records go to the producer as one batch (one promise, not one per record).
      const batch: Prepared[] = [];
      // An indexed loop: for-of over the array allocated an iterator result per record here (~110 bytes of
      // garbage a record in an allocation profile of a mirror copy), as the loop's awaits keep V8 from eliding it.
      const n = records?.length ?? 0;
      // Kafka's TRACE lines, per poll and per record; the level is read once per poll, so at DEBUG and above the
      // per-record path pays one test of a local.
      const trace = this.log.enabled('trace');
      if (trace) this.tracePoll(n);
      for (let i = 0; i < n; i++) {
        let p = this.prepare(records![i]!);
        if (p instanceof Promise) p = await p;
        if (p !== null) {
          if (trace) this.traceAppend(p);
          batch.push(p);
        }
        if (batch.length >= SEND_BATCH_RECORDS_MAX) await this.produce(batch.splice(0));
      }
      if (batch.length > 0) await this.produce(batch);
      else if (this.pendingOffsets.size > 0) this.submit(true); // dropped records only: committable after the rest
      if (this.sendError !== null) throw this.sendError;
      if (Date.now() >= this.nextCommitMs) await this.commitOffsets(false);
    }
    await this.commitOffsets(true);
  }

  private tracePoll(records: number): void {
    if (records === 0)
      this.log.trace(`${this} Nothing to send to Kafka. Polling source for additional records`);
    else this.log.trace(`${this} About to send ${records} records to Kafka`);
  }

  private traceAppend(p: Prepared): void {
    const size = (b: Buffer | null | undefined) => (b == null ? 'null' : `${b.length} bytes`);
    this.log.trace(
      `${this} Appending record to the topic ${p.out.topic} with key ${size(p.out.key)}, value ${size(p.out.value)}`,
    );
  }

  /**
   * Runs one stage (transforms, a converter) directly; only when it throws does the error handler take over, with
   * that failure as the first attempt, then its retries, tolerance and reporting (a stage is never run twice for
   * one attempt: transforms may keep state or call out). A record that passes costs no await (three per record
   * otherwise: a third of a mirrored record's time). The stage is a function of up to three arguments rather than a closure: a closure
   * per stage and record was garbage on every record of a byte-for-byte copy.
   */
  private stage<T, A, B, C>(
    stage: Stage,
    className: string,
    fn: (a: A, b: B, c: C) => T,
    a: A,
    b: B,
    c: C,
  ): T | typeof SKIPPED | Promise<T | typeof SKIPPED> {
    let v: T;
    try {
      v = fn(a, b, c);
    } catch (error) {
      // This call was the first attempt: the handler retries from the second on.
      return this.d.errors.execute(stage, className, () => fn(a, b, c), undefined, { error });
    }
    if (!(v instanceof Promise)) return v;
    // The first attempt is the promise in hand; a retry calls the stage again.
    let first: Promise<T> | null = v;
    return this.d.errors.execute(stage, className, () => {
      const attempt = first ?? fn(a, b, c);
      first = null;
      return attempt;
    });
  }

  /** Transforms and converters bound once (see stage()). */
  private readonly applyTransforms = (r: SourceRecord): SourceRecord | null => this.d.transforms.apply(r);
  private readonly keyFromConnect = (t: SourceRecord): Buffer | null =>
    this.d.keyConverter.fromConnectData(t.topic, t.keySchema, t.key);
  private readonly valueFromConnect = (t: SourceRecord): Buffer | null =>
    this.d.valueConverter.fromConnectData(t.topic, t.valueSchema, t.value);
  private readonly keyConverterName = this.d.keyConverter.constructor.name;
  private readonly valueConverterName = this.d.valueConverter.constructor.name;

  /** Runs a record through transforms and converters; null when it is dropped (its offset still moves on). */
  protected prepare(record: SourceRecord): Prepared | null | Promise<Prepared | null> {
    if (record.sourcePartition !== null) {
      // One entry per source partition, updated in place (the next batch handed to the producer takes the map).
      const key = partitionKey(record.sourcePartition);
      const entry = this.pendingOffsets.get(key);
      if (entry === undefined) {
        this.pendingOffsets.set(key, { partition: record.sourcePartition, offset: record.sourceOffset });
      } else {
        entry.offset = record.sourceOffset;
      }
    }
    const t = this.stage('TRANSFORMATION', 'TransformChain', this.applyTransforms, record, null, null);
    if (t instanceof Promise) return t.then((v) => this.convert(record, v));
    return this.convert(record, t);
  }

  private convert(
    record: SourceRecord,
    t: SourceRecord | null | typeof SKIPPED,
  ): Prepared | null | Promise<Prepared | null> {
    if (t === SKIPPED || t === null) {
      const done = this.recordDropped(record);
      return done instanceof Promise ? done.then(() => null) : null;
    }
    const key = this.stage('KEY_CONVERTER', this.keyConverterName, this.keyFromConnect, t, null, null);
    const value = this.stage(
      'VALUE_CONVERTER',
      this.valueConverterName,
      this.valueFromConnect,
      t,
      null,
      null,
    );
    if (key instanceof Promise || value instanceof Promise) {
      return Promise.all([key, value]).then(([k, v]) =>
        this.prepared(record, t, k as Buffer | null | typeof SKIPPED, v as Buffer | null | typeof SKIPPED),
      );
    }
    return this.prepared(record, t, key, value);
  }

  private prepared(
    record: SourceRecord,
    t: SourceRecord,
    key: Buffer | null | typeof SKIPPED,
    value: Buffer | null | typeof SKIPPED,
  ): Prepared | null {
    if (key === SKIPPED || value === SKIPPED) return null;
    this.d.onTopicUsed(t.topic);
    let bytes = RECORD_OVERHEAD_BYTES + (key?.length ?? 0) + (value?.length ?? 0);
    const headers = t.headers;
    for (let i = 0; i < headers.length; i++) bytes += headers[i]!.key.length + 16; // indexed: no iterator a record
    return {
      bytes,
      record,
      out: {
        topic: t.topic,
        key,
        value,
        partition: t.kafkaPartition ?? undefined,
        timestamp: t.timestamp ?? undefined,
        headers: t.headers.length === 0 ? undefined : fromConnectHeaders(t.headers),
      },
    };
  }

  /**
   * Sends records as one batch; each record's commitRecord() follows, in order, once the batch is acknowledged.
   * Returns once the batch is handed over: it waits only while unacknowledged records fill buffer.memory.
   */
  protected async produce(batch: Prepared[]): Promise<void> {
    // Wait for acknowledgements rather than flush(): a flush empties the pipeline, and the copy stalls until it has.
    if (this.outstandingBytes >= this.outstandingBytesMax && this.sendError === null) {
      await this.outstandingAtMost(this.outstandingBytesMax / 2);
    }
    let bytes = 0;
    for (const p of batch) bytes += p.bytes;
    this.outstandingBytes += bytes;
    const submitted = this.submit(false);
    // Only the task's records wait for the acknowledgement (for commitRecord); the producer records and the
    // Prepared wrappers die here, young. Kept until the acknowledgement (hundreds of milliseconds under load),
    // they outlived the young generation's collections, and copying them there was most of the collector's time.
    const outs: ProducerRecord[] = new Array(batch.length);
    const records: SourceRecord[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      outs[i] = batch[i]!.out;
      records[i] = batch[i]!.record;
    }
    this.producer!.sendBatch(outs).then(
      (metas) => {
        this.acknowledged(bytes, submitted);
        this.batchAcknowledged(records, metas);
      },
      (err: Error) => {
        // Its offsets never become committable, nor do those of any later batch: a restart reads them again.
        this.sendFailed(err);
        this.acknowledged(bytes, null);
      },
    );
  }

  /**
   * Hands the offsets prepared since the last batch to the batch sent now; without a batch (records dropped only,
   * `acked`) they need no acknowledgement, and are committable once every earlier batch is. Null for a task
   * whose offsets go by another way (exactly once: with its transaction).
   */
  protected submit(acked: boolean): Submitted | null {
    const entry: Submitted = { offsets: this.pendingOffsets, acked };
    this.pendingOffsets = new Map();
    this.submitted.push(entry);
    if (acked) this.advanceCommittable();
    return entry;
  }

  /** Waits until the records handed to the producer and not acknowledged count at most `limit` bytes. */
  private outstandingAtMost(limit: number): Promise<void> {
    if (this.outstandingBytes <= limit || this.sendError !== null) return Promise.resolve();
    return new Promise<void>((wake) => (this.drained = { limit, wake }));
  }

  /** A record a transform or the error handler dropped: at least once, its commitRecord(record, null) at once. */
  protected recordDropped(record: SourceRecord): void | Promise<void> {
    return this.task.commitRecord(record, null);
  }

  /** The broker acknowledged a batch: at least once, as Kafka, each record's commitRecord() now. */
  protected batchAcknowledged(records: SourceRecord[], metas: ReadonlyArray<WrittenRecord>): void {
    // One batch's commitRecord calls after the previous batch's: awaited calls of two batches acknowledged
    // together would interleave, and a task that tracks positions (MirrorSourceTask's offset syncs) would see
    // offsets go back and forth. Kafka calls them from the producer's callbacks, in order per partition.
    this.commits = this.commits
      .then(async () => {
        for (let i = 0; i < records.length; i++) {
          // Awaited only when the task returns a promise: an await per record was a microtask per record.
          // The producer's metadata as it is (Kafka hands the task its RecordMetadata too): no copy per record.
          const done = this.task.commitRecord(records[i]!, metas[i]!);
          if (done instanceof Promise) await done;
        }
      })
      .catch((err: Error) => {
        this.sendError ??= err;
      });
  }

  /** A batch failed: the task fails with the first such error. */
  protected sendFailed(err: Error): void {
    this.sendError ??= err;
  }

  /** A batch settled: its bytes leave the window; an acknowledged one may make offsets committable. */
  private acknowledged(bytes: number, submitted: Submitted | null): void {
    this.outstandingBytes -= bytes;
    if (submitted !== null) submitted.acked = true;
    this.advanceCommittable();
    const d = this.drained;
    if (d !== null && (this.outstandingBytes <= d.limit || this.sendError !== null)) {
      this.drained = null;
      d.wake();
    }
  }

  /** Moves the offsets of the acknowledged batches at the head of `submitted` into `committableOffsets`. */
  private advanceCommittable(): void {
    while (this.submitted.length > 0 && this.submitted[0]!.acked) {
      for (const [key, e] of this.submitted.shift()!.offsets) this.committableOffsets.set(key, e);
    }
  }

  /**
   * Writes the offsets of the records acknowledged so far (every record before them acknowledged too). While
   * running it does not wait for records in flight; when stopping (`all`) it waits for every record sent, so
   * everything read is committed, or fails with the send's error.
   */
  async commitOffsets(all = true): Promise<void> {
    this.nextCommitMs = Date.now() + this.d.offsetFlushIntervalMs;
    if (this.producer === null) return;
    if (all) {
      if (this.pendingOffsets.size > 0) this.submit(true);
      await this.outstandingAtMost(0);
      if (this.sendError !== null) throw this.sendError;
      this.advanceCommittable();
    }
    if (this.committableOffsets.size === 0) {
      this.log.debug(`${this} No acknowledged records since the last offset commit: nothing to commit`);
      return;
    }
    const startedMs = Date.now();
    const snapshot = [...this.committableOffsets.values()];
    this.committableOffsets = new Map();
    this.log.debug(`${this} Committing offsets of ${snapshot.length} source partitions`);
    await this.offsets.write(this.d.id.connector, snapshot);
    // The task's commit() after the commitRecord() calls of the records whose offsets were just written.
    await this.commits;
    await this.task.commit();
    this.log.debug(`${this} Finished commitOffsets successfully in ${Date.now() - startedMs} ms`);
  }

  /** Each resource on its own (Kafka's AbstractWorkerSourceTask.close): one that fails does not skip the rest. */
  protected async close(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await this.closeQuietly([
      ['source task', () => this.task.stop()],
      ['source task producer', () => producer?.close()],
      // The task's own reader of the connector's offsets topic, if it has one.
      ['offset backing store', () => this.offsets.release?.()],
    ]);
  }
}
