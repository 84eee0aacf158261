// The input records of one task, one queue per input partition, handed out in timestamp order across the
// partitions (Kafka's PartitionGroup): the next record is the head of the queue whose head has the smallest
// timestamp, so a task reading two co-partitioned topics (a join) sees their records interleaved by time rather
// than in the order its consumer fetched them. Ties go to the partition registered first.
//
// A task processes only when every partition has a record queued, or when an empty partition is known to
// hold nothing more on the broker (its lag, from the consumer's last fetch, is 0) and has been empty for
// max.task.idle.ms (Kafka's default 0: at once; KIP-695). An empty partition whose lag is unknown or positive
// is waited for: its records are on their way. max.task.idle.ms -1 processes whatever is queued.
//
// Records are ordered by their record timestamps (the default extractor's); a custom timestamp extractor is
// applied when the task processes the record, not here.

import assert from 'node:assert/strict';
import type { ConsumerRecord } from '../../client/consumer.js';
import { partitionKey } from './partition-key.js';

/** Kafka's StreamsConfig.MAX_TASK_IDLE_MS_DISABLED. */
export const MAX_TASK_IDLE_MS_DISABLED = -1;

interface PartitionQueue {
  /** "real topic:partition". */
  key: string;
  topic: string;
  partition: number;
  records: ConsumerRecord[];
  /** Index of the head in `records` (records before it were taken). */
  head: number;
}

export class PartitionGroup {
  private readonly queues: PartitionQueue[] = [];
  /** "topic:partition" of an empty partition with lag 0 -> when it may be skipped (wall clock). */
  private readonly idleDeadlines = new Map<string, number>();

  constructor(private readonly maxTaskIdleMs: number) {}

  /** Registers one of the task's input partitions (once). */
  addPartition(topic: string, partition: number): void {
    const key = partitionKey({ topic, partition });
    if (this.queues.some((q) => q.key === key)) return;
    this.queues.push({ key, topic, partition, records: [], head: 0 });
  }

  partitions(): { topic: string; partition: number }[] {
    return this.queues.map((q) => ({ topic: q.topic, partition: q.partition }));
  }

  add(record: ConsumerRecord): void {
    const q = this.queues.find((x) => x.key === partitionKey(record));
    assert.ok(q, `${record.topic}-${record.partition} is not an input partition of this task`);
    q.records.push(record);
  }

  /** Records queued for one partition. */
  buffered(topic: string, partition: number): number {
    const q = this.queues.find((x) => x.key === partitionKey({ topic, partition }));
    return q === undefined ? 0 : q.records.length - q.head;
  }

  /** Records queued in all partitions. */
  size(): number {
    let n = 0;
    for (const q of this.queues) n += q.records.length - q.head;
    return n;
  }

  /**
   * Whether the task may take its next record now. `lagOf` is the consumer's lag of a partition (null while
   * unknown).
   */
  readyToProcess(nowMs: number, lagOf: (topic: string, partition: number) => number | null): boolean {
    if (this.size() === 0) return false;
    if (this.maxTaskIdleMs === MAX_TASK_IDLE_MS_DISABLED) return true;
    let ready = true;
    for (const q of this.queues) {
      if (q.records.length > q.head) {
        this.idleDeadlines.delete(q.key);
        continue;
      }
      const lag = lagOf(q.topic, q.partition);
      if (lag === null || lag > 0) {
        // Its records are on the broker, or we do not know yet: wait for the fetch.
        this.idleDeadlines.delete(q.key);
        ready = false;
        continue;
      }
      let deadline = this.idleDeadlines.get(q.key);
      if (deadline === undefined) this.idleDeadlines.set(q.key, (deadline = nowMs + this.maxTaskIdleMs));
      if (nowMs < deadline) ready = false;
    }
    return ready;
  }

  /** Takes the head record with the smallest timestamp; null when nothing is queued. */
  next(): ConsumerRecord | null {
    let best: PartitionQueue | null = null;
    for (const q of this.queues) {
      if (q.records.length === q.head) continue;
      if (best === null || q.records[q.head]!.timestamp < best.records[best.head]!.timestamp) best = q;
    }
    if (best === null) return null;
    const r = best.records[best.head++]!;
    if (best.head === best.records.length) {
      best.records = [];
      best.head = 0;
    } else if (best.head > 1024 && best.head * 2 > best.records.length) {
      best.records = best.records.slice(best.head);
      best.head = 0;
    }
    return r;
  }

  clear(): void {
    for (const q of this.queues) {
      q.records = [];
      q.head = 0;
    }
    this.idleDeadlines.clear();
  }
}
