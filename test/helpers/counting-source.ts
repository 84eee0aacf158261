// A source connector for exactly-once tests, loaded from plugin.path (plugin.path points at a folder with a
// module re-exporting this compiled file): each task emits `<task>-<n>` for n = 0, 1, 2, ... with source partition
// {"task": t} and offset {"n": n}, resuming after the stored offset; `records.max` ends the stream, `poll.delay.ms`
// paces it. With `transaction.boundary=connector` it draws its own lines: a poll of three `<task>-<n>` records
// asks for a commit, the next poll of two `drop-<task>-<k>` records for an abort, and so on, so a read_committed
// consumer must see every `<task>-<n>` and no `drop-` record. `tombstone.at` adds, to the poll of that n, a
// record `tombstone-<task>` removing the offset of partition {"task": t, "old": true} (a null offset).

import { setTimeout as sleep } from 'node:timers/promises';
import { Consumer } from '../../src/client/index.js';
import {
  ConfigDef,
  SourceConnector,
  SourceRecord,
  SourceTask,
  type TaskConfig,
} from '../../src/connect/index.js';

/**
 * What the tasks of this process did, in order (`start <task>`): tests push their own marks in between to check
 * when a task really started.
 */
export const taskEvents: string[] = [];

const CHECK_GRACE_MS = 1000;

/**
 * The commitRecord() calls of this process, in order, when `commit.record.check=true`: the record's value and
 * whether a read_committed consumer already saw it then (its offset below the partition's last stable offset).
 */
export const committedRecords: Array<{ topic: string; value: string; visibleToReadCommitted: boolean }> = [];

function def(): ConfigDef {
  return new ConfigDef()
    .define({ name: 'topic', type: 'STRING', importance: 'HIGH', documentation: 'Topic to write to' })
    .define({
      name: 'records.max',
      type: 'INT',
      defaultValue: 1_000_000,
      importance: 'LOW',
      documentation: 'Records per task',
    })
    .define({
      name: 'commit.record.check',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'LOW',
      documentation: 'Record each commitRecord() call and whether read_committed consumers see the record',
    })
    .define({
      name: 'check.bootstrap.servers',
      type: 'STRING',
      defaultValue: '',
      importance: 'LOW',
      documentation: 'The cluster the commitRecord() check reads from',
    })
    .define({
      name: 'tombstone.at',
      type: 'INT',
      defaultValue: -1,
      importance: 'LOW',
      documentation: 'The n whose poll also removes the offset of the partition {"task": t, "old": true}',
    })
    .define({
      name: 'poll.delay.ms',
      type: 'INT',
      defaultValue: 20,
      importance: 'LOW',
      documentation: 'Pause before each poll',
    });
}

export class CountingSourceConnector extends SourceConnector {
  static readonly className = 'test.CountingSourceConnector';
  private props: Record<string, string> = {};
  version(): string {
    return '1.0';
  }
  start(props: Record<string, string>): void {
    this.props = props;
  }
  taskClass() {
    return CountingSourceTask;
  }
  taskConfigs(maxTasks: number): TaskConfig[] {
    return [...Array(maxTasks).keys()].map((t) => ({ ...this.props, 'task.id': String(t) }));
  }
  stop(): void {}
  config(): ConfigDef {
    return def();
  }
  override exactlyOnceSupport(): 'SUPPORTED' {
    return 'SUPPORTED';
  }
  override canDefineTransactionBoundaries(): 'SUPPORTED' {
    return 'SUPPORTED';
  }
}

export class CountingSourceTask extends SourceTask {
  private topic = '';
  private task = 0;
  private next = 0;
  private max = 0;
  private delayMs = 0;
  private tombstoneAt = -1;
  private connectorBoundaries = false;
  private polls = 0;
  /** The read_committed consumer of the commitRecord() check, when it is on. */
  private checker: Consumer | null = null;
  version(): string {
    return '1.0';
  }
  start(props: TaskConfig): void {
    if (props['commit.record.check'] === 'true')
      this.checker = new Consumer({
        bootstrapServers: props['check.bootstrap.servers']!,
        isolationLevel: 'read_committed',
      });
    this.topic = props.topic!;
    this.task = Number(props['task.id']);
    this.max = Number(props['records.max'] ?? 1_000_000);
    this.delayMs = Number(props['poll.delay.ms'] ?? 20);
    this.tombstoneAt = Number(props['tombstone.at'] ?? -1);
    this.connectorBoundaries = props['transaction.boundary'] === 'connector';
    const stored = this.context.offsetStorageReader().offset({ task: this.task });
    this.next = stored === null ? 0 : Number(stored.n) + 1;
    taskEvents.push(`start ${this.task}`);
  }
  async poll(): Promise<SourceRecord[] | null> {
    await sleep(this.delayMs);
    if (this.next >= this.max) return null;
    const txn = this.context.transactionContext?.() ?? null;
    const poll = this.polls++;
    if (this.connectorBoundaries && txn !== null && poll % 2 === 1) {
      // Records that must never be seen: their transaction is aborted (their offsets are not stored either).
      txn.abortTransaction();
      return [0, 1].map((i) => this.record(`drop-${this.task}-${poll}-${i}`, this.next - 1));
    }
    const out: SourceRecord[] = [];
    const first = this.next;
    for (let i = 0; i < 3 && this.next < this.max; i++, this.next++)
      out.push(this.record(`${this.task}-${this.next}`, this.next));
    if (this.tombstoneAt >= first && this.tombstoneAt < this.next)
      out.push(
        new SourceRecord({
          sourcePartition: { task: this.task, old: true },
          sourceOffset: null,
          topic: this.topic,
          value: `tombstone-${this.task}`,
        }),
      );
    if (txn !== null) txn.commitTransaction();
    return out;
  }
  private record(value: string, n: number): SourceRecord {
    return new SourceRecord({
      sourcePartition: { task: this.task },
      sourceOffset: { n },
      topic: this.topic,
      value,
    });
  }
  override async commitRecord(
    record: SourceRecord,
    metadata: { topic: string; partition: number; offset: number } | null,
  ): Promise<void> {
    if (this.checker === null || metadata === null) return;
    // The commit markers follow the end of a transaction by a moment (the coordinator writes them after answering
    // EndTxn, as Kafka's does): a record counts as visible if it is within CHECK_GRACE_MS, far less than the
    // transaction intervals the tests use.
    const deadline = Date.now() + CHECK_GRACE_MS;
    let visible = false;
    for (;;) {
      const tp = { topic: metadata.topic, partition: metadata.partition };
      const [lso] = await this.checker.endOffsets([tp]);
      visible = metadata.offset < lso!.offset;
      if (visible || Date.now() > deadline) break;
      await sleep(50);
    }
    committedRecords.push({
      topic: metadata.topic,
      value: String(record.value),
      visibleToReadCommitted: visible,
    });
  }
  async stop(): Promise<void> {
    await this.checker?.close().catch(() => {});
    this.checker = null;
  }
}
