// The tail consumer of a produce run and its end-to-end latency, shared by the broker benchmark (cell.ts) and
// the cluster benchmark (../cluster/produce.ts): a FetchConsumer reading the topic G1 writes from offset 0,
// while G1 tells it each batch's intended send time (G1Options.onBatchSent) and the measured window's edges.
//
// Latency is matched by order, not by content: with one writer per partition (one G1 connection) the n-th batch
// the consumer sees on a partition is the n-th one sent to it, which gives end-to-end latency (intended send
// time to the consumer's receipt of the fetch response) without touching the pre-encoded, CRC-protected
// batches. A batch counts when it was sent inside the window and arrived before the window closed. On a
// replicated partition the consumer reads from the leader, which serves only up to the high watermark, so the
// latency includes the followers' round trip as well as acks=all's produce latency does.
import { assert } from '../../src/common/assert.js';
import type { Histogram } from '../harness/histogram.js';
import { FetchConsumer } from './fetch-consumer.js';

/** fetch.max.wait.ms of the benches' consumers (Kafka's default is 500; a tail reader wants answers sooner). */
export const consumerMaxWaitMs = 100;
/** How long the tail consumer may take to catch up after a run (and a backlog read may take). */
export const catchUpTimeoutMs = 30_000;

export interface TailOptions {
  host: string;
  port: number;
  topic: string;
  partitions: number;
  /** Where end-to-end latencies go (microseconds); nothing is recorded when `endToEnd` is false. */
  latency: Histogram;
  /** False when partitions have several writers (G1 with several connections): order says nothing then. */
  endToEnd: boolean;
}

export class TailConsumer {
  /** Intended send times of each partition's batches, in send order, and the next one the consumer matches. */
  private readonly sentAt: number[][];
  private readonly sentHead: number[];
  private windowStartMs = Number.POSITIVE_INFINITY;
  private windowEndMs = Number.POSITIVE_INFINITY;

  private constructor(
    private readonly consumer: FetchConsumer,
    private readonly options: TailOptions,
  ) {
    this.sentAt = Array.from({ length: options.partitions }, () => []);
    this.sentHead = new Array(options.partitions).fill(0);
  }

  static async connect(options: TailOptions): Promise<TailConsumer> {
    let tail: TailConsumer | undefined;
    const consumer = await FetchConsumer.connect({
      host: options.host,
      port: options.port,
      topic: options.topic,
      partitions: options.partitions,
      maxWaitMs: consumerMaxWaitMs,
      onBatch: (partition, _records, arrivedMs) => tail!.arrived(partition, arrivedMs),
    });
    tail = new TailConsumer(consumer, options);
    return tail;
  }

  /** G1's onBatchSent, or undefined when latency is not matched (so G1 keeps no send times). */
  get onBatchSent(): ((partition: number, intendedMs: number) => void) | undefined {
    if (!this.options.endToEnd) return undefined;
    return (partition, intendedMs) => this.sentAt[partition]!.push(intendedMs);
  }

  /** Batch bytes received so far (sampled at the window's edges for the tail fetch rate). */
  get batchBytes(): number {
    return this.consumer.batchBytes;
  }

  get errors(): Record<string, number> {
    return this.consumer.errors;
  }

  /** G1's onWindow edge, at `nowMs` (performance.now()). */
  window(edge: 'start' | 'end', nowMs: number): void {
    if (edge === 'start') this.windowStartMs = nowMs;
    else this.windowEndMs = nowMs;
  }

  start(): void {
    this.consumer.start();
  }

  /**
   * After G1 returned: stops tailing, reads on to the run's end offsets and checks that every acknowledged
   * record was read (else the run fails).
   */
  async finish(endOffsets: readonly number[], recordsAcknowledged: number): Promise<void> {
    await this.consumer.stop();
    await this.consumer.readUntil(endOffsets, catchUpTimeoutMs);
    assert(
      this.consumer.records === recordsAcknowledged,
      `the tail consumer read ${this.consumer.records} records of ${recordsAcknowledged} acknowledged`,
    );
  }

  close(): void {
    this.consumer.close();
  }

  private arrived(partition: number, arrivedMs: number): void {
    if (!this.options.endToEnd) return;
    const intended = this.sentAt[partition]![this.sentHead[partition]!++];
    if (intended !== undefined && intended >= this.windowStartMs && arrivedMs < this.windowEndMs) {
      this.options.latency.record((arrivedMs - intended) * 1000);
    }
  }
}
