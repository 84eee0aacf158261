// Jepsen's Kafka queue workload against Brook's own client. Producers ("p0", "p1", ...) are idempotent with
// acks=all; each sends unique values "<producer>-<n>" round-robin to explicit partitions, a few in flight, and
// every send is an op (ok with the acknowledged offset, info when the outcome is unknown). Consumers ("c0", ...)
// are members of one group that poll and then commit exactly what they polled (ok polls and commits are ops).
// After the faults are healed, a final read ("final") takes every partition from offset 0 to its high
// watermark; the checkers compare that with what was acknowledged and delivered.

import { type Admin, Consumer, Producer } from '../../src/client/index.js';
import { withTimeout } from './chaos-cluster.js';
import { CLIENT_TIMEOUTS, readPartitionPatiently, type Seen } from './final-read.js';
import { errorText, type History } from './history.js';
import { sleep } from './nodes.js';

export interface QueueWorkloadOptions {
  topic: string;
  partitions: number;
  producers: number;
  consumers: number;
  /** Sends a second per producer, at most. */
  ratePerProducer: number;
  inFlightPerProducer: number;
  groupId: string;
  uncleanLeaderElection: boolean;
  /** The topic's min.insync.replicas (2 unless told). */
  minInsyncReplicas?: number;
  /**
   * When set, each record gets a key, one of this many per partition (`k<partition>.<j>`), recorded with the send:
   * every key stays on one partition, so a consumer that groups by key (the streams workload) sees all of a key.
   */
  keysPerPartition?: number;
}

export const STATE_EVERY_MS = 5_000;

/** The key of a producer's n-th record (sent to partition n % partitions), or none without keysPerPartition. */
export function recordKey(
  n: number,
  partitions: number,
  keysPerPartition: number | undefined,
): string | undefined {
  if (keysPerPartition === undefined) return undefined;
  return `k${n % partitions}.${Math.floor(n / partitions) % keysPerPartition}`;
}

export class QueueWorkload {
  private producing = false;
  private consuming = false;
  private readonly loops: Promise<void>[] = [];
  private readonly consumerLoops: Promise<void>[] = [];
  /** Per partition, the offset after the last record any consumer polled. */
  private readonly polledTo = new Map<number, number>();

  constructor(
    private readonly bootstrap: string,
    private readonly history: History,
    private readonly o: QueueWorkloadOptions,
    private readonly log: (line: string) => void,
  ) {}

  async setup(admin: Admin): Promise<void> {
    const [result] = await admin.createTopics([
      {
        topic: this.o.topic,
        numPartitions: this.o.partitions,
        replicationFactor: 3,
        configs: {
          'min.insync.replicas': String(this.o.minInsyncReplicas ?? 2),
          'unclean.leader.election.enable': String(this.o.uncleanLeaderElection),
        },
      },
    ]);
    if (result?.error) throw result.error;
    await this.waitForReplicas(admin, 30_000);
  }

  /** Waits until every partition has a leader and a full ISR; answers whether it did within timeoutMs. */
  async waitForReplicas(admin: Admin, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const [d] = await withTimeout(admin.describeTopics([this.o.topic]), 5_000).catch(() => []);
      const ready =
        d !== undefined &&
        d.error === null &&
        d.partitions.length === this.o.partitions &&
        d.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length);
      if (ready) return true;
      await sleep(500);
    }
    return false;
  }

  start(): void {
    this.producing = true;
    this.consuming = true;
    for (let i = 0; i < this.o.producers; i++) this.loops.push(this.produceLoop(`p${i}`));
    for (let i = 0; i < this.o.consumers; i++) this.consumerLoops.push(this.consumeLoop(`c${i}`));
  }

  async stopProducers(): Promise<void> {
    this.producing = false;
    await Promise.all(this.loops);
  }

  async stopConsumers(): Promise<void> {
    this.consuming = false;
    await Promise.all(this.consumerLoops);
  }

  private async produceLoop(process: string): Promise<void> {
    const producer = new Producer({
      bootstrapServers: this.bootstrap,
      clientId: `chaos-${process}`,
      acks: 'all',
      idempotent: true,
      lingerMs: 2,
      deliveryTimeoutMs: 20_000,
      maxBlockMs: 10_000,
      ...CLIENT_TIMEOUTS,
    });
    const gapMs = 1000 / this.o.ratePerProducer;
    const inFlight = new Set<Promise<void>>();
    let n = 0;
    try {
      while (this.producing) {
        while (inFlight.size >= this.o.inFlightPerProducer) await Promise.race(inFlight);
        const value = `${process}-${n}`;
        const partition = n % this.o.partitions;
        const key = recordKey(n, this.o.partitions, this.o.keysPerPartition);
        n++;
        const op = this.history
          .record(
            process,
            'send',
            key === undefined ? { value, partition } : { value, partition, key },
            () =>
              producer.send({
                topic: this.o.topic,
                partition,
                ...(key === undefined ? {} : { key: Buffer.from(key) }),
                value: Buffer.from(value),
              }),
            (m) => ({ value, partition: m.partition, offset: m.offset }),
          )
          .then(() => {});
        inFlight.add(op);
        op.finally(() => inFlight.delete(op));
        await sleep(gapMs);
      }
      await Promise.all(inFlight);
    } finally {
      await producer.close(5_000).catch(() => {});
    }
  }

  private newConsumer(process: string): Consumer {
    const consumer = new Consumer({
      bootstrapServers: this.bootstrap,
      clientId: `chaos-${process}`,
      groupId: this.o.groupId,
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1_000,
      maxPollIntervalMs: 60_000,
      ...CLIENT_TIMEOUTS,
    });
    consumer.subscribe([this.o.topic]);
    return consumer;
  }

  private async consumeLoop(process: string): Promise<void> {
    let consumer = this.newConsumer(process);
    let failures = 0;
    let stateAt = 0;
    try {
      while (this.consuming) {
        if (Date.now() - stateAt >= STATE_EVERY_MS) {
          stateAt = Date.now();
          await recordConsumerState(this.history, process, consumer);
        }
        const invokedAt = this.history.now();
        let records: Seen[];
        try {
          const polled = await withTimeout(consumer.poll(500), 30_000);
          records = polled.map((r) => [r.partition, r.offset, r.value?.toString() ?? '']);
          failures = 0;
        } catch (e) {
          this.history.add('info', process, 'poll', undefined, errorText(e));
          if (++failures >= 5) {
            // A consumer stuck in a state it does not leave: start a new member.
            this.log(`${process}: replacing the consumer after ${failures} failed polls`);
            await withTimeout(consumer.close(), 10_000).catch(() => {});
            consumer = this.newConsumer(process);
            failures = 0;
          }
          await sleep(500);
          continue;
        }
        if (records.length === 0) continue;
        const invoke = this.history.add('invoke', process, 'poll');
        invoke.time = invokedAt;
        this.history.add('ok', process, 'poll', records);
        const next = new Map<number, number>();
        for (const [p, offset] of records) next.set(p, Math.max(next.get(p) ?? 0, offset + 1));
        for (const [p, offset] of next) this.polledTo.set(p, Math.max(this.polledTo.get(p) ?? 0, offset));
        const offsets = [...next].map(([partition, offset]) => ({ topic: this.o.topic, partition, offset }));
        await this.history.record(
          process,
          'commit',
          Object.fromEntries(next),
          () => withTimeout(consumer.commit(offsets), 20_000),
          () => Object.fromEntries(next),
        );
      }
    } finally {
      await withTimeout(consumer.close(), 10_000).catch(() => {});
    }
  }

  /** The cluster's own view of each partition (leader, ISR), recorded every few seconds while the run goes. */
  async watchLeaders(admin: Admin, until: () => boolean): Promise<void> {
    while (!until()) {
      const [d] = await withTimeout(admin.describeTopics([this.o.topic]), 4_000).catch(() => []);
      if (d !== undefined && d.error === null) {
        const partitions = Object.fromEntries(
          d.partitions.map((p) => [
            p.partition,
            { leader: p.leader, leaderEpoch: p.leaderEpoch, isr: p.isr },
          ]),
        );
        this.history.add('ok', 'harness', 'leaders', partitions);
      }
      await sleep(STATE_EVERY_MS);
    }
  }

  /**
   * After the producers stopped: waits up to timeoutMs for the group to have polled every partition to its high
   * watermark; answers the partitions it did not reach ({} when all were).
   */
  async drain(admin: Admin, timeoutMs: number): Promise<Record<number, { polled: number; end: number }>> {
    const tps = Array.from({ length: this.o.partitions }, (_, partition) => ({
      topic: this.o.topic,
      partition,
      spec: 'latest' as const,
    }));
    const ends = await withTimeout(admin.listOffsets(tps), 10_000).catch(() => []);
    const behind = (): Record<number, { polled: number; end: number }> => {
      const out: Record<number, { polled: number; end: number }> = {};
      for (const e of ends) {
        const polled = this.polledTo.get(e.partition) ?? 0;
        if (polled < e.offset) out[e.partition] = { polled, end: e.offset };
      }
      return out;
    };
    const deadline = Date.now() + timeoutMs;
    while (Object.keys(behind()).length > 0 && Date.now() < deadline) await sleep(500);
    return behind();
  }

  /** Reads every partition from offset 0 to its high watermark, one op per partition. */
  async finalRead(): Promise<void> {
    for (let partition = 0; partition < this.o.partitions; partition++) {
      await this.history.record('final', 'read', { partition }, () =>
        readPartitionPatiently(this.bootstrap, this.o.topic, partition, 'read_uncommitted', this.log),
      );
    }
  }
}

/**
 * The transactional and Streams workloads read the queue workload's input topic and write an output topic of the
 * same shape (rf 3, its min.insync.replicas and unclean election): creates both and waits for their replicas.
 */
export async function setupInputAndOutput(
  admin: Admin,
  input: QueueWorkload,
  output: QueueWorkload,
  o: { outputTopic: string; partitions: number; minInsyncReplicas?: number; uncleanLeaderElection: boolean },
): Promise<void> {
  await input.setup(admin);
  const [result] = await admin.createTopics([
    {
      topic: o.outputTopic,
      numPartitions: o.partitions,
      replicationFactor: 3,
      configs: {
        'min.insync.replicas': String(o.minInsyncReplicas ?? 2),
        'unclean.leader.election.enable': String(o.uncleanLeaderElection),
      },
    },
  ]);
  if (result?.error) throw result.error;
  await waitForInputAndOutput(admin, input, output, 30_000);
}

/** Both topics fully replicated within timeoutMs (see QueueWorkload.waitForReplicas). */
export async function waitForInputAndOutput(
  admin: Admin,
  input: QueueWorkload,
  output: QueueWorkload,
  timeoutMs: number,
): Promise<boolean> {
  const started = Date.now();
  if (!(await input.waitForReplicas(admin, timeoutMs))) return false;
  return output.waitForReplicas(admin, Math.max(1_000, timeoutMs - (Date.now() - started)));
}

/**
 * A consumer's view every few seconds (assignment and positions), so that a consumer that stops making
 * progress can be told from one that has nothing to read.
 */
export async function recordConsumerState(
  history: History,
  process: string,
  consumer: Consumer,
): Promise<void> {
  const positions: Record<number, number | string> = {};
  // The leader each partition is fetched from, as this consumer's metadata has it.
  const leaders: Record<number, number> = {};
  for (const tp of consumer.assignment()) {
    positions[tp.partition] = await withTimeout(consumer.position(tp), 2_000).catch((e: unknown) =>
      errorText(e),
    );
    leaders[tp.partition] = consumer.cluster.leaderOf(tp.topic, tp.partition);
  }
  history.add('ok', process, 'state', { positions, leaders });
}
