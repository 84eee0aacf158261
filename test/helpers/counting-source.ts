// A source connector for exactly-once tests, loaded from plugin.path (plugin.path points at a folder with a
// module re-exporting this compiled file): each task emits `<task>-<n>` for n = 0, 1, 2, ... with source partition
// {"task": t} and offset {"n": n}, resuming after the stored offset; `records.max` ends the stream, `poll.delay.ms`
// paces it. With `transaction.boundary=connector` it draws its own lines: a poll of three `<task>-<n>` records
// asks for a commit, the next poll of two `drop-<task>-<k>` records for an abort, and so on, so a read_committed
// consumer must see every `<task>-<n>` and no `drop-` record.

import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConfigDef,
  SourceConnector,
  SourceRecord,
  SourceTask,
  type TaskConfig,
} from '../../src/connect/index.js';

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
  private connectorBoundaries = false;
  private polls = 0;
  version(): string {
    return '1.0';
  }
  start(props: TaskConfig): void {
    this.topic = props.topic!;
    this.task = Number(props['task.id']);
    this.max = Number(props['records.max'] ?? 1_000_000);
    this.delayMs = Number(props['poll.delay.ms'] ?? 20);
    this.connectorBoundaries = props['transaction.boundary'] === 'connector';
    const stored = this.context.offsetStorageReader().offset({ task: this.task });
    this.next = stored === null ? 0 : Number(stored.n) + 1;
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
    for (let i = 0; i < 3 && this.next < this.max; i++, this.next++)
      out.push(this.record(`${this.task}-${this.next}`, this.next));
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
  stop(): void {}
}
