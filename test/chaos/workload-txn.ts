// Workload 2 of the issue: transactional read-process-write (Kafka's consume-transform-produce). Idempotent
// acks=all producers ("p0", ...) write unique values to an input topic, as in the queue workload (whose producers
// and final input read this workload reuses). Processors ("t0", ...) each own a fixed share of the input
// partitions and a transactional id (the classic exactly-once layout, where the transactional id fences a
// processor's previous session): they poll the input with read_committed, write one output record
// "<input value>@<transaction>" per input record to the same partition of the output topic, add the next input
// offsets to the transaction (TxnOffsetCommit for the group) and commit; about one transaction in eight is aborted
// on purpose, and the processor seeks back and processes those records again; about one in 25 "crashes" before
// EndTxn: a new session starts, and the old session's producer, a zombie by then, tries to write and commit (it
// must be fenced). Any failure ends the processor's
// session: it starts a new one, whose InitProducerId finishes the old session's open transaction, and resumes
// from the group's committed offsets. A downstream consumer ("d0") polls the output with read_committed all along.
// At the end, besides the input read, the output is read to its last stable offset with read_committed and in
// full with read_uncommitted, and the group's committed offsets are read; checker-txn.ts judges it all.

import { KafkaProtocolError } from '../../src/client/errors.js';
import { type Admin, Consumer, Producer } from '../../src/client/index.js';
import { withTimeout } from './chaos-cluster.js';
import { CLIENT_TIMEOUTS, drainGroup, readPartitionPatiently, type Seen } from './final-read.js';
import { errorText, type History } from './history.js';
import { sleep } from './nodes.js';
import { Rng } from './rng.js';
import {
  QueueWorkload,
  recordConsumerState,
  STATE_EVERY_MS,
  setupInputAndOutput,
  waitForInputAndOutput,
} from './workload-queue.js';

export interface TxnWorkloadOptions {
  inputTopic: string;
  outputTopic: string;
  partitions: number;
  producers: number;
  processors: number;
  ratePerProducer: number;
  groupId: string;
  uncleanLeaderElection: boolean;
  minInsyncReplicas?: number;
  seed: number;
}

/** The share of transactions aborted on purpose. */
const ABORT_RATE = 1 / 8;
/**
 * The share of transactions in which the processor "crashes" before EndTxn: it starts a new session at once,
 * and the old session's producer, now a zombie, then tries to write and commit its transaction; both must be
 * fenced (its records never visible).
 */
const CRASH_RATE = 1 / 25;
const TRANSACTION_TIMEOUT_MS = 15_000;
const CALL_TIMEOUT_MS = 20_000;
const DOWNSTREAM_GROUP = 'chaos-downstream';

export function transactionalId(processor: number): string {
  return `chaos-txn-${processor}`;
}

/** Thrown by a transaction that simulates a processor crash; the producer lives on as a zombie. */
class ProcessorCrash extends Error {
  constructor(
    readonly txn: string,
    readonly producer: Producer,
    readonly sample: { partition: number; value: string },
  ) {
    super(`processor crash in transaction ${txn} (simulated)`);
  }
}

export class TxnWorkload {
  private readonly input: QueueWorkload;
  /** The output topic seen as a queue without producers or consumers: only for its replica checks. */
  private readonly output: QueueWorkload;
  private processing = false;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly bootstrap: string,
    private readonly history: History,
    private readonly o: TxnWorkloadOptions,
    private readonly log: (line: string) => void,
  ) {
    const queue = {
      topic: o.inputTopic,
      partitions: o.partitions,
      producers: o.producers,
      consumers: 0,
      ratePerProducer: o.ratePerProducer,
      inFlightPerProducer: 5,
      groupId: o.groupId,
      uncleanLeaderElection: o.uncleanLeaderElection,
      minInsyncReplicas: o.minInsyncReplicas,
    };
    this.input = new QueueWorkload(bootstrap, history, queue, log);
    this.output = new QueueWorkload(
      bootstrap,
      history,
      { ...queue, topic: o.outputTopic, producers: 0 },
      log,
    );
  }

  setup(admin: Admin): Promise<void> {
    return setupInputAndOutput(admin, this.input, this.output, this.o);
  }

  waitForReplicas(admin: Admin, timeoutMs: number): Promise<boolean> {
    return waitForInputAndOutput(admin, this.input, this.output, timeoutMs);
  }

  start(): void {
    this.input.start();
    this.processing = true;
    for (let k = 0; k < this.o.processors; k++) this.loops.push(this.processLoop(k));
    this.loops.push(this.downstreamLoop('d0'));
  }

  watchLeaders(admin: Admin, until: () => boolean): Promise<void> {
    return this.input.watchLeaders(admin, until);
  }

  stopProducers(): Promise<void> {
    return this.input.stopProducers();
  }

  /** The drain before the final reads (final-read.ts drainGroup). */
  drain(admin: Admin, timeoutMs: number): Promise<Record<number, { polled: number; end: number }>> {
    return drainGroup(
      admin,
      { topic: this.o.inputTopic, partitions: this.o.partitions },
      this.o.groupId,
      timeoutMs,
    );
  }

  /** Stops the processors and the downstream consumer, then fences every transactional id (no open transaction stays). */
  async stopConsumers(): Promise<void> {
    this.processing = false;
    await Promise.all(this.loops);
    for (let k = 0; k < this.o.processors; k++) {
      const producer = this.newProducer(k);
      await this.history.record(
        'harness',
        'fence',
        { transactionalId: transactionalId(k) },
        () => withTimeout(producer.initTransactions(), 60_000),
        () => ({ transactionalId: transactionalId(k), epoch: producer.producerIdAndEpoch.producerEpoch }),
      );
      await producer.close();
    }
  }

  async finalRead(admin: Admin): Promise<void> {
    await this.input.finalRead();
    for (let partition = 0; partition < this.o.partitions; partition++) {
      await this.history.record('final', 'read-output', { partition }, () =>
        readPartitionPatiently(this.bootstrap, this.o.outputTopic, partition, 'read_committed', this.log),
      );
      await this.history.record('final', 'read-output-uncommitted', { partition }, () =>
        readPartitionPatiently(this.bootstrap, this.o.outputTopic, partition, 'read_uncommitted', this.log),
      );
    }
    await this.history.record(
      'final',
      'offsets',
      { groupId: this.o.groupId },
      () => withTimeout(admin.listConsumerGroupOffsets(this.o.groupId), 30_000),
      (offsets) =>
        Object.fromEntries(
          offsets.filter((x) => x.topic === this.o.inputTopic).map((x) => [x.partition, x.offset]),
        ),
    );
  }

  /**
   * The client's transactional Producer: each coordinator call retried up to CALL_TIMEOUT_MS (max.block.ms), each
   * record up to the same (delivery.timeout.ms).
   */
  private newProducer(k: number): Producer {
    return new Producer({
      bootstrapServers: this.bootstrap,
      clientId: `chaos-${transactionalId(k)}`,
      transactionalId: transactionalId(k),
      transactionTimeoutMs: TRANSACTION_TIMEOUT_MS,
      maxBlockMs: CALL_TIMEOUT_MS,
      deliveryTimeoutMs: CALL_TIMEOUT_MS,
      ...CLIENT_TIMEOUTS,
    });
  }

  /** Writes values to one partition of the output in the producer's open transaction. */
  private async write(producer: Producer, partition: number, values: readonly string[]): Promise<void> {
    await producer.sendBatch(
      values.map((v) => ({ topic: this.o.outputTopic, partition, value: Buffer.from(v) })),
    );
  }

  /** One processor: sessions one after another until the workload stops. */
  private async processLoop(k: number): Promise<void> {
    const process = `t${k}`;
    const tps: { topic: string; partition: number }[] = [];
    for (let p = k; p < this.o.partitions; p += this.o.processors)
      tps.push({ topic: this.o.inputTopic, partition: p });
    const rng = new Rng(this.o.seed * 31 + k);
    let zombie: ProcessorCrash | null = null;
    for (let session = 1; this.processing; session++) {
      const producer = this.newProducer(k);
      let crashed: ProcessorCrash | null = null;
      const consumer = new Consumer({
        bootstrapServers: this.bootstrap,
        clientId: `chaos-${process}`,
        groupId: this.o.groupId,
        isolationLevel: 'read_committed',
        enableAutoCommit: false,
        // The processor positions itself at the group's committed offsets and must never move past input it did
        // not read: under Kafka's default (latest) an OFFSET_OUT_OF_RANGE from a deposed leader with a shorter log
        // (one a fresh consumer's first metadata can name, README F9) moves the position to the end, as Kafka's
        // consumer does. With none the session fails and the next one starts from the committed offsets.
        autoOffsetReset: 'none',
        ...CLIENT_TIMEOUTS,
      });
      try {
        // The new epoch first: it finishes the previous session's transaction, so the offsets read next are final.
        await withTimeout(producer.initTransactions(), 60_000);
        if (zombie !== null) {
          await this.zombieTries(process, zombie);
          zombie = null;
        }
        consumer.assign(tps);
        const committed = await withTimeout(consumer.committed(tps), 30_000);
        const positions: Record<number, number> = {};
        for (const tp of tps) {
          const at = Math.max(0, committed.get(`${tp.topic}\u0000${tp.partition}`) ?? 0);
          consumer.seek(tp, at);
          positions[tp.partition] = at;
        }
        this.history.add('ok', process, 'session', {
          session,
          producerId: String(producer.producerIdAndEpoch.producerId),
          epoch: producer.producerIdAndEpoch.producerEpoch,
          positions,
        });
        await this.transact(process, session, producer, consumer, rng);
      } catch (e) {
        if (e instanceof ProcessorCrash) crashed = e;
        this.history.add('info', process, 'session', { session }, errorText(e));
        this.log(`${process}: session ${session} ended: ${errorText(e)}`);
      } finally {
        await withTimeout(consumer.close(), 10_000).catch(() => {});
        if (crashed === null) await producer.close().catch(() => {});
      }
      if (crashed !== null) {
        await zombie?.producer.close().catch(() => {});
        zombie = crashed;
      } else if (this.processing) await sleep(1_000);
    }
    await zombie?.producer.close().catch(() => {});
  }

  /**
   * The crashed session's producer, fenced by the new session's InitProducerId, writes one more record and
   * commits: a broker that let either through would show the record, or the transaction, in the committed output.
   */
  private async zombieTries(process: string, zombie: ProcessorCrash): Promise<void> {
    const outcome: Record<string, string> = {};
    try {
      await this.write(zombie.producer, zombie.sample.partition, [`${zombie.sample.value}@${zombie.txn}`]);
      outcome.send = 'ok';
    } catch (e) {
      outcome.send = errorText(e);
    }
    // The commit goes even when the write was refused: the coordinator must refuse it on its own.
    try {
      await zombie.producer.commitTransaction();
      this.history.add('ok', process, 'txn', { txn: zombie.txn, outcome: 'committed', zombie: outcome });
    } catch (e) {
      // Refused (fenced): certainly not committed; no answer or only retriable ones: unknown.
      const type = e instanceof KafkaProtocolError && !e.retriable ? 'fail' : 'info';
      this.history.add(type, process, 'txn', { txn: zombie.txn, zombie: outcome }, errorText(e));
    } finally {
      await zombie.producer.close().catch(() => {});
    }
  }

  /** Transactions of one session until the workload stops (returns) or something fails (throws). */
  private async transact(
    process: string,
    session: number,
    producer: Producer,
    consumer: Consumer,
    rng: Rng,
  ): Promise<void> {
    let stateAt = 0;
    for (let n = 0; this.processing; ) {
      // As the queue consumers: a processor that stops getting records can be told from one with nothing to read.
      if (Date.now() - stateAt >= STATE_EVERY_MS) {
        stateAt = Date.now();
        await recordConsumerState(this.history, process, consumer);
      }
      const invokedAt = this.history.now();
      const polled = await withTimeout(consumer.poll(500), 30_000);
      if (polled.length === 0) continue;
      const records: Seen[] = polled.map((r) => [r.partition, r.offset, r.value?.toString() ?? '']);
      const invoke = this.history.add('invoke', process, 'poll');
      invoke.time = invokedAt;
      this.history.add('ok', process, 'poll', records);
      const first = new Map<number, number>();
      const next = new Map<number, number>();
      const values = new Map<number, string[]>();
      for (const [p, offset, value] of records) {
        if (!first.has(p)) first.set(p, offset);
        next.set(p, offset + 1);
        values.set(p, [...(values.get(p) ?? []), value]);
      }
      const txn = `${process}.${session}.${n++}`;
      const abort = rng.next() < ABORT_RATE;
      const crash = !abort && rng.next() < CRASH_RATE;
      this.history.add('invoke', process, 'txn', {
        txn,
        inputs: records,
        offsets: Object.fromEntries(next),
        abort,
        crash,
      });
      let commitSent = false;
      try {
        producer.beginTransaction();
        await Promise.all(
          [...values].map(([p, vs]) =>
            this.write(
              producer,
              p,
              vs.map((v) => `${v}@${txn}`),
            ),
          ),
        );
        await producer.sendOffsetsToTransaction(
          [...next].map(([partition, offset]) => ({ topic: this.o.inputTopic, partition, offset })),
          this.o.groupId,
        );
        if (crash) {
          const [partition, , value] = records[0]!;
          throw new ProcessorCrash(txn, producer, { partition, value });
        }
        if (abort) {
          await producer.abortTransaction();
          this.history.add('ok', process, 'txn', { txn, outcome: 'aborted' });
          for (const [partition, offset] of first)
            consumer.seek({ topic: this.o.inputTopic, partition }, offset);
          continue;
        }
        commitSent = true;
        await producer.commitTransaction();
        this.history.add('ok', process, 'txn', { txn, outcome: 'committed' });
      } catch (e) {
        // The zombie records the outcome of a crashed transaction.
        if (e instanceof ProcessorCrash) throw e;
        // Before EndTxn(commit) was sent the transaction cannot commit; after, its outcome is unknown.
        this.history.add(commitSent ? 'info' : 'fail', process, 'txn', { txn }, errorText(e));
        throw e;
      }
    }
  }

  /** A read_committed consumer of the output, in its own group, recording what it polls (for dirty reads). */
  private async downstreamLoop(process: string): Promise<void> {
    const newConsumer = () => {
      const c = new Consumer({
        bootstrapServers: this.bootstrap,
        clientId: `chaos-${process}`,
        groupId: DOWNSTREAM_GROUP,
        isolationLevel: 'read_committed',
        autoOffsetReset: 'earliest',
        enableAutoCommit: false,
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 1_000,
        ...CLIENT_TIMEOUTS,
      });
      c.subscribe([this.o.outputTopic]);
      return c;
    };
    let consumer = newConsumer();
    let failures = 0;
    try {
      while (this.processing) {
        try {
          const polled = await withTimeout(consumer.poll(500), 30_000);
          failures = 0;
          if (polled.length === 0) continue;
          this.history.add(
            'ok',
            process,
            'poll-output',
            polled.map((r) => [r.partition, r.offset, r.value?.toString() ?? '']),
          );
        } catch (e) {
          this.history.add('info', process, 'poll-output', undefined, errorText(e));
          if (++failures >= 5) {
            await withTimeout(consumer.close(), 10_000).catch(() => {});
            consumer = newConsumer();
            failures = 0;
          }
          await sleep(500);
        }
      }
    } finally {
      await withTimeout(consumer.close(), 10_000).catch(() => {});
    }
  }
}
