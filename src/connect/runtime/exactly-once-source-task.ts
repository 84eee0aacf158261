// Runs one SourceTask with exactly-once delivery (KIP-618, Kafka's ExactlyOnceWorkerSourceTask): one transactional
// producer per task, transactional.id `${group.id}-${connector}-${task}`, and the source offsets of the records
// written into the offsets topic inside the same transaction as the records. A transaction commits at the
// boundary the connector config asks for (`transaction.boundary`):
//   poll      after every poll() batch that produced anything (records or offsets)
//   interval  every transaction.boundary.interval.ms (default offset.flush.interval.ms)
//   connector when the task asks through its TransactionContext (after a batch, or right after a given record)
// SourceTask.commitRecord() is called for a transaction's records only after it commits (none if it aborts).
// So a read_committed consumer sees a record exactly when its offset is stored: after a crash the next instance
// of the task resumes from the offsets of the last committed transaction, and the records of the transaction the
// crash left open are aborted when that instance's initTransactions() fences the old producer (or by the
// coordinator at transaction.timeout.ms).
//
// Order at start matters: the herder's generation check, initTransactions() (it completes or aborts the previous
// instance's transaction), the check again, then the offsets are read to their end (read_committed), then the
// task starts and reads them.

import { Producer, type ProducerRecord, TransactionAbortedError } from '../../client/index.js';
import type { SourceTask, TransactionContext } from '../api/connector.js';
import type { SourceRecord } from '../api/records.js';
import { stringifyJson } from '../converters/json-text.js';
import { ConnectException } from '../errors.js';
import { TASK_PRODUCER_DEFAULTS } from './client-configs.js';
import type { ConnectorOffsetStore } from './connector-offset-store.js';
import { CONNECT_LOGGERS } from './loggers.js';
import { type OffsetStore, offsetKey } from './offset-store.js';
import {
  type Prepared,
  SEND_BATCH_RECORDS_MAX,
  WorkerSourceTask,
  type WrittenRecord,
} from './worker-source-task.js';
import type { TaskDeps } from './worker-task.js';

export type TransactionBoundary = 'poll' | 'interval' | 'connector';

export interface ExactlyOnceOptions {
  transactionalId: string;
  boundary: TransactionBoundary;
  intervalMs: number;
  /** The topic the offsets are written to inside the transaction (the connector's own, else the worker's). */
  offsetsTopic: string;
  /**
   * The connector's offsets store when offsetsTopic is a topic of the connector's own (Kafka's
   * ConnectorOffsetBackingStore): its writeWith() puts the transaction's offsets in the order Kafka's set() does
   * with the worker's global store (tombstones there first, the other offsets copied there after, not awaited).
   * Null when the worker's store is the only one.
   */
  connectorStore: ConnectorOffsetStore | null;
  /**
   * Run before the producer is initialized and again after (Kafka's pre- and post-producer checks): the herder
   * verifies that the task is still assigned here and its task generation still current, and throws if not, so a
   * task of a stale generation never fences the current one's producer nor starts.
   */
  preProducerCheck?: () => Promise<void>;
  postProducerCheck?: () => Promise<void>;
}

/** Kafka's transactional id of a source task: `${group.id}-${connector}-${task}`. */
export function taskTransactionalId(groupId: string, connector: string, task: number): string {
  return `${groupId}-${connector}-${task}`;
}

type Request = 'commit' | 'abort';

export class ExactlyOnceWorkerSourceTask extends WorkerSourceTask {
  private inTransaction = false;
  private nextTransactionMs = 0;
  /** Connector-defined boundaries: a request for after the batch, and requests for after given records. */
  private batchRequest: Request | null = null;
  private readonly recordRequests = new Map<SourceRecord, Request>();
  /**
   * The records of the open transaction, acknowledged or dropped, in order: their commitRecord() calls wait for
   * the transaction's commit (Kafka's committableRecords) and are dropped with it when it aborts.
   */
  private committable: Array<{ record: SourceRecord; written: WrittenRecord | null }> = [];

  constructor(
    d: TaskDeps,
    task: SourceTask,
    offsets: OffsetStore,
    private readonly eos: ExactlyOnceOptions,
  ) {
    super(d, task, offsets, CONNECT_LOGGERS.exactlyOnceWorkerSourceTask);
  }

  protected override async initializeAndStart(): Promise<void> {
    this.producer = new Producer({
      bootstrapServers: this.d.bootstrapServers,
      clientId: `connector-producer-${this.d.id.connector}-${this.d.id.task}`,
      ...TASK_PRODUCER_DEFAULTS,
      ...this.d.producerOptions,
      // Not overridable: exactly-once needs them (Kafka refuses overrides of these for such tasks too).
      acks: 'all',
      idempotent: true,
      transactionalId: this.eos.transactionalId,
    });
    await this.eos.preProducerCheck?.();
    await this.producer.initTransactions();
    await this.eos.postProducerCheck?.();
    await this.startTask(this.eos.boundary === 'connector' ? this.transactionContext() : null);
    this.nextTransactionMs = Date.now() + this.eos.intervalMs;
  }

  private transactionContext(): TransactionContext {
    const request = (what: Request, record?: SourceRecord) => {
      if (record === undefined) this.batchRequest = what;
      else this.recordRequests.set(record, what);
    };
    return {
      commitTransaction: (record) => request('commit', record),
      abortTransaction: (record) => request('abort', record),
    };
  }

  protected override async runLoop(): Promise<void> {
    while (!this.stopping) {
      if (this.paused) {
        await this.waitWhilePaused(Math.min(1000, this.eos.intervalMs));
        if (this.eos.boundary === 'interval' && Date.now() >= this.nextTransactionMs) await this.commit();
        continue;
      }
      const records = (await this.task.poll()) ?? [];
      if (this.stopping) break;
      const batch: Prepared[] = [];
      for (const r of records) {
        this.begin();
        let p = this.prepare(r);
        if (p instanceof Promise) p = await p;
        if (p !== null) batch.push(p);
        const request = this.recordRequests.get(r);
        if (request !== undefined) {
          this.recordRequests.delete(r);
          await this.produce(batch.splice(0));
          await (request === 'commit' ? this.commit() : this.abort());
        } else if (batch.length >= SEND_BATCH_RECORDS_MAX) {
          await this.produce(batch.splice(0));
        }
      }
      if (batch.length > 0) await this.produce(batch);
      if (this.sendError !== null) throw this.sendError;
      await this.atBoundary(records.length > 0);
    }
    // Stopping: what was read is committed, unless the connector draws the lines (then only it may commit).
    if (this.eos.boundary === 'connector') await this.abort();
    else await this.commit();
  }

  private begin(): void {
    if (this.inTransaction) return;
    this.producer!.beginTransaction();
    this.inTransaction = true;
  }

  private async atBoundary(polledAny: boolean): Promise<void> {
    if (this.eos.boundary === 'poll') {
      if (polledAny) await this.commit();
    } else if (this.eos.boundary === 'interval') {
      if (Date.now() >= this.nextTransactionMs) await this.commit();
    } else {
      const request = this.batchRequest;
      this.batchRequest = null;
      if (request === 'commit') await this.commit();
      else if (request === 'abort') await this.abort();
    }
  }

  protected override recordDropped(record: SourceRecord): void {
    this.committable.push({ record, written: null });
  }

  protected override batchAcknowledged(records: SourceRecord[], metas: ReadonlyArray<WrittenRecord>): void {
    for (let i = 0; i < records.length; i++) {
      const meta = metas[i]!;
      this.committable.push({
        record: records[i]!,
        written: { topic: meta.topic, partition: meta.partition, offset: meta.offset },
      });
    }
  }

  protected override sendFailed(err: Error): void {
    // A record of a transaction this task aborted: dropped on purpose, not a failure.
    if (err instanceof TransactionAbortedError) return;
    super.sendFailed(err);
  }

  /**
   * Writes the offsets into the transaction and commits it (Kafka's ExactlyOnceWorkerSourceTask.commitTransaction),
   * then the task's commitRecord() and commit(). With a global store beside the connector's own topic, the order is
   * Kafka's ConnectorOffsetBackingStore.set: tombstones to the global store first and awaited (a failure there fails
   * the commit before anything commits: the task fails and its transaction is aborted, as Kafka's flush error does),
   * then the transaction, then the other offsets copied to the global store without waiting for it, a failure there
   * only a warning. Kafka starts that copy once the broker acknowledges the offsets inside the transaction; Brook
   * starts it once the transaction has committed, so the global store never holds the offsets of an aborted one
   * (a fallback a later task could resume from, skipping records).
   */
  private async commit(): Promise<void> {
    this.nextTransactionMs = Date.now() + this.eos.intervalMs;
    const producer = this.producer;
    if (producer === null) return;
    const snapshot = [...this.pendingOffsets.values()];
    this.pendingOffsets.clear();
    if (!this.inTransaction && snapshot.length === 0) return;
    this.begin();
    const commitWith = async (entries: typeof snapshot): Promise<void> => {
      if (entries.length > 0) {
        const out: ProducerRecord[] = entries.map((e) => ({
          topic: this.eos.offsetsTopic,
          key: Buffer.from(offsetKey(this.d.id.connector, e.partition), 'utf8'),
          value: e.offset === null ? null : Buffer.from(stringifyJson(e.offset), 'utf8'),
        }));
        producer.sendBatch(out).catch((err: Error) => this.sendFailed(err));
      }
      await producer.commitTransaction();
      this.inTransaction = false;
      if (this.sendError !== null) throw this.sendError;
    };
    const store = this.eos.connectorStore;
    if (store === null) await commitWith(snapshot);
    else await store.writeWith(this.d.id.connector, snapshot, commitWith);
    // Every record of the transaction was acknowledged before the commit returned (it flushes first).
    const committed = this.committable.splice(0);
    // Now that read_committed consumers see them (Kafka logs a failing commitRecord and goes on, as here).
    for (const c of committed) {
      try {
        await this.task.commitRecord(c.record, c.written);
      } catch (err) {
        this.log.error(
          `Task ${this.d.id.connector}-${this.d.id.task} threw an exception from commitRecord(): ${(err as Error).message}`,
        );
      }
    }
    await this.task.commit();
  }

  /** Aborts the open transaction: its records and offsets are dropped. */
  private async abort(): Promise<void> {
    this.pendingOffsets.clear();
    if (!this.inTransaction || this.producer === null) {
      this.committable = [];
      return;
    }
    await this.producer.abortTransaction();
    this.inTransaction = false;
    // Its records were never committed: no commitRecord() for them.
    this.committable = [];
  }

  /** The offsets stay pending until the transaction's commit writes them. */
  protected override submit(_acked: boolean): null {
    return null;
  }

  /** Offsets are committed by transactions only. */
  override async commitOffsets(): Promise<void> {}

  /** Each resource on its own, as the at-least-once runner's close(); an open transaction is aborted first. */
  protected override async close(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await this.closeQuietly([
      ['source task', () => this.task.stop()],
      [
        'source task producer',
        async () => {
          // A transaction left open by a failure is aborted now rather than at transaction.timeout.ms.
          if (producer !== null && this.inTransaction) await producer.abortTransaction().catch(() => {});
          await producer?.close();
        },
      ],
      // The task's own reader of the connector's offsets topic, if it has one.
      ['offset backing store', () => this.offsets.release?.()],
    ]);
  }
}

/** The boundary and interval of a connector config, as KIP-618 defines them. */
export function transactionBoundary(
  config: Readonly<Record<string, string>>,
  offsetFlushIntervalMs: number,
): { boundary: TransactionBoundary; intervalMs: number } {
  const boundary = (config['transaction.boundary'] ?? 'poll').trim().toLowerCase();
  if (boundary !== 'poll' && boundary !== 'interval' && boundary !== 'connector')
    throw new ConnectException(`Invalid transaction.boundary ${boundary}`);
  const interval = (config['transaction.boundary.interval.ms'] ?? '').trim();
  return { boundary, intervalMs: interval === '' ? offsetFlushIntervalMs : Number(interval) };
}
