// Runs one SourceTask: poll -> transforms -> converters -> Brook's producer, and commits source offsets.
// Offsets are at-least-once: every offset.flush.interval.ms (and when stopping) the offsets of records handed
// to the producer so far are taken, the producer is flushed, and only when every one of those records is
// acknowledged are the offsets written to the offset store; a failed send fails the task before its offset is
// stored, so a restart reads that record again. Records a transform drops still advance the offsets.

import { Producer } from '../../client/index.js';
import type { SourceTask } from '../api/connector.js';
import type { SourceRecord } from '../api/records.js';
import { stringifyJson } from '../converters/json-text.js';
import { SKIPPED } from './error-handler.js';
import { fromConnectHeaders } from './headers.js';
import { type OffsetStore, storageReader } from './offset-store.js';
import { type TaskDeps, WorkerTask } from './worker-task.js';

/** Records handed to the producer and not yet acknowledged before the task waits (a bound on memory). */
const OUTSTANDING_RECORDS_MAX = 10_000;

export class WorkerSourceTask extends WorkerTask {
  private producer: Producer | null = null;
  private readonly pendingOffsets = new Map<
    string,
    { partition: Record<string, unknown>; offset: Record<string, unknown> | null }
  >();
  private outstanding = 0;
  private sendError: Error | null = null;
  private nextCommitMs = 0;

  constructor(
    d: TaskDeps,
    private readonly task: SourceTask,
    private readonly offsets: OffsetStore,
  ) {
    super(d);
  }

  protected async initializeAndStart(): Promise<void> {
    this.producer = new Producer({
      bootstrapServers: this.d.bootstrapServers,
      clientId: `connector-producer-${this.d.id.connector}-${this.d.id.task}`,
      acks: 'all',
      ...this.d.producerOptions,
    });
    this.task.initialize({
      configs: () => this.d.taskConfig,
      offsetStorageReader: () => storageReader(this.offsets, this.d.id.connector),
    });
    await this.task.start(this.d.taskConfig);
    this.nextCommitMs = Date.now() + this.d.offsetFlushIntervalMs;
  }

  protected async runLoop(): Promise<void> {
    while (!this.stopping) {
      if (this.paused) {
        await this.waitWhilePaused(1000);
        continue;
      }
      const records = await this.task.poll();
      if (this.stopping) break;
      for (const r of records ?? []) await this.send(r);
      if (this.sendError !== null) throw this.sendError;
      if (Date.now() >= this.nextCommitMs) await this.commitOffsets();
    }
    await this.commitOffsets();
  }

  private async send(record: SourceRecord): Promise<void> {
    if (record.sourcePartition !== null) {
      this.pendingOffsets.set(stringifyJson(record.sourcePartition), {
        partition: record.sourcePartition,
        offset: record.sourceOffset,
      });
    }
    const e = this.d.errors;
    const t = await e.execute('TRANSFORMATION', 'TransformChain', () => this.d.transforms.apply(record));
    if (t === SKIPPED || t === null) {
      await this.task.commitRecord(record, null);
      return;
    }
    const key = await e.execute('KEY_CONVERTER', this.d.keyConverter.constructor.name, () =>
      this.d.keyConverter.fromConnectData(t.topic, t.keySchema, t.key),
    );
    if (key === SKIPPED) return;
    const value = await e.execute('VALUE_CONVERTER', this.d.valueConverter.constructor.name, () =>
      this.d.valueConverter.fromConnectData(t.topic, t.valueSchema, t.value),
    );
    if (value === SKIPPED) return;
    if (this.outstanding >= OUTSTANDING_RECORDS_MAX) await this.producer!.flush();
    this.outstanding++;
    this.d.onTopicUsed(t.topic);
    this.producer!.send({
      topic: t.topic,
      key,
      value,
      partition: t.kafkaPartition ?? undefined,
      timestamp: t.timestamp ?? undefined,
      headers: fromConnectHeaders(t.headers),
    }).then(
      async (meta) => {
        this.outstanding--;
        await this.task.commitRecord(record, {
          topic: meta.topic,
          partition: meta.partition,
          offset: meta.offset,
        });
      },
      (err: Error) => {
        this.outstanding--;
        this.sendError ??= err;
      },
    );
  }

  /** Writes the offsets of every record sent so far, once all of them are acknowledged. */
  async commitOffsets(): Promise<void> {
    this.nextCommitMs = Date.now() + this.d.offsetFlushIntervalMs;
    if (this.producer === null) return;
    const snapshot = [...this.pendingOffsets.values()];
    this.pendingOffsets.clear();
    await this.producer.flush();
    if (this.sendError !== null) throw this.sendError;
    if (snapshot.length === 0) return;
    await this.offsets.write(this.d.id.connector, snapshot);
    await this.task.commit();
  }

  protected async close(): Promise<void> {
    try {
      await this.task.stop();
    } finally {
      await this.producer?.close();
      this.producer = null;
    }
  }
}
