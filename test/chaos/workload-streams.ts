// The Kafka Streams workload (`--workload streams`): exactly-once of Brook Streams under faults, with its state
// restoration and task migration. The queue workload's producers ("p0", ...) write the input topic, each record
// with a key (one of a few per partition, recorded in the history with the value); two instances ("s0", "s1") of
// one Streams application, each its own process (streams-app.ts) with its own state directory, count the records
// per key (groupByKey, count in a persistent store with a changelog, exactly_once_v2, no record cache) and write
// each new count "<key>=<count>" to the output topic. Every 20-30 s one instance is killed with SIGKILL and started
// again at once on the same state directory (the process id there keeps its transactional ids): its tasks move to
// the other instance and back, and each new owner restores the counts from the changelog (read_committed). An
// instance that exits on its own (its client reached ERROR) is started again too. The kills are recorded as
// nemesis events ("kill-app") so that the report shows them beside the faults. After the producers stop, the
// group's committed offsets must reach the input's end; then the instances are closed (SIGTERM), and the final
// reads take the input, the output with read_committed, and the application's committed offsets for
// checker-streams.ts.

import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Admin } from '../../src/client/index.js';
import { endingWithParent } from '../../src/common/end-with-parent.js';
import { withTimeout } from './chaos-cluster.js';
import { drainGroup, readPartitionPatiently } from './final-read.js';
import type { History } from './history.js';
import { sleep, trackPid, untrackPid } from './nodes.js';
import { Rng } from './rng.js';
import { QueueWorkload, setupInputAndOutput, waitForInputAndOutput } from './workload-queue.js';

export interface StreamsWorkloadOptions {
  inputTopic: string;
  outputTopic: string;
  partitions: number;
  producers: number;
  ratePerProducer: number;
  /** The Streams application.id: its group, and the prefix of its changelog topic. */
  applicationId: string;
  uncleanLeaderElection: boolean;
  minInsyncReplicas?: number;
  seed: number;
  /** Where each instance keeps its state directory. */
  workDir: string;
  /** The run's logs/ directory: each instance appends to its own file there. */
  logDir: string;
  /** Kills of an instance are this many ms apart at least, and at most killGapMs[1]. */
  killGapMs?: [number, number];
}

export const STREAMS_INSTANCES = 2;
export const KEYS_PER_PARTITION = 5;
const APP_SCRIPT = join(import.meta.dirname, 'streams-app.js');
/** Streams' transaction.timeout.ms under exactly_once_v2 (10 s), and a margin. */
const TRANSACTION_TIMEOUT_MARGIN_MS = 12_000;

/** One instance of the application: a child process that can be killed and started again on its state. */
class AppInstance {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** The next exit is ours (a kill or a stop), not one to report and recover from. */
  private expectExit = false;
  starts = 0;

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    private readonly logPath: string,
    private readonly history: History,
    private readonly restartOnExit: () => boolean,
  ) {}

  start(): void {
    const fd = openSync(this.logPath, 'a');
    writeSync(fd, `\n=== ${new Date().toISOString()} start ${this.name}\n`);
    // Ended with the harness even when it is killed by a signal, as the servers are (nodes.ts).
    const [command, ...args] = endingWithParent([process.execPath, APP_SCRIPT]);
    const child = spawn(command!, args, {
      env: { ...process.env, ...this.env, NAME: this.name },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    this.child = child;
    this.expectExit = false;
    this.starts++;
    const pid = child.pid;
    if (pid !== undefined) trackPid(pid);
    this.history.add('ok', this.name, 'start', { pid: pid ?? null, start: this.starts });
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        if (pid !== undefined) untrackPid(pid);
        if (this.child === child) this.child = null;
        if (!this.expectExit) {
          this.history.add('info', this.name, 'exit', { pid: pid ?? null, code, signal });
          setTimeout(() => {
            if (this.child === null && this.restartOnExit()) this.start();
          }, 1_000);
        }
        done();
      }),
    );
  }

  /** kill -9, and wait for the exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    this.expectExit = true;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (a clean close), SIGKILL after timeoutMs; answers whether it had to kill. */
  async stop(timeoutMs: number): Promise<boolean> {
    const child = this.child;
    if (child === null) return false;
    this.expectExit = true;
    child.kill('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    await this.exited;
    clearTimeout(timer);
    return killed;
  }
}

export class StreamsWorkload {
  private readonly input: QueueWorkload;
  /** The output topic seen as a queue without producers or consumers: only for its replica checks. */
  private readonly output: QueueWorkload;
  private readonly instances: AppInstance[] = [];
  private running = false;
  private killing = false;
  private killer: Promise<void> = Promise.resolve();

  constructor(
    private readonly bootstrap: string,
    private readonly history: History,
    private readonly o: StreamsWorkloadOptions,
    private readonly log: (line: string) => void,
  ) {
    const queue = {
      topic: o.inputTopic,
      partitions: o.partitions,
      producers: o.producers,
      consumers: 0,
      ratePerProducer: o.ratePerProducer,
      inFlightPerProducer: 5,
      groupId: o.applicationId,
      uncleanLeaderElection: o.uncleanLeaderElection,
      minInsyncReplicas: o.minInsyncReplicas,
      keysPerPartition: KEYS_PER_PARTITION,
    };
    this.input = new QueueWorkload(bootstrap, history, queue, log);
    this.output = new QueueWorkload(
      bootstrap,
      history,
      { ...queue, topic: o.outputTopic, producers: 0 },
      log,
    );
    for (let i = 0; i < STREAMS_INSTANCES; i++) {
      const name = `s${i}`;
      this.instances.push(
        new AppInstance(
          name,
          {
            BOOTSTRAP: bootstrap,
            STATE_DIR: join(o.workDir, `streams-${name}`),
            APP_ID: o.applicationId,
            INPUT: o.inputTopic,
            OUTPUT: o.outputTopic,
          },
          join(o.logDir, `streams-${name}.log`),
          history,
          () => this.running,
        ),
      );
    }
  }

  setup(admin: Admin): Promise<void> {
    return setupInputAndOutput(admin, this.input, this.output, this.o);
  }

  waitForReplicas(admin: Admin, timeoutMs: number): Promise<boolean> {
    return waitForInputAndOutput(admin, this.input, this.output, timeoutMs);
  }

  start(): void {
    this.input.start();
    this.running = true;
    for (const instance of this.instances) instance.start();
    this.killing = true;
    this.killer = this.killLoop();
  }

  watchLeaders(admin: Admin, until: () => boolean): Promise<void> {
    return this.input.watchLeaders(admin, until);
  }

  /** Stops the kills (the faults are healed by now), then the producers. */
  async stopProducers(): Promise<void> {
    this.killing = false;
    await this.killer;
    await this.input.stopProducers();
  }

  /** The drain before the final reads (final-read.ts drainGroup). */
  drain(admin: Admin, timeoutMs: number): Promise<Record<number, { polled: number; end: number }>> {
    return drainGroup(
      admin,
      { topic: this.o.inputTopic, partitions: this.o.partitions },
      this.o.applicationId,
      timeoutMs,
    );
  }

  /**
   * Closes every instance (SIGTERM: commit, checkpoints, leave the group). One that had to be killed may leave
   * a transaction open: waiting out the transaction timeout lets the coordinator abort it before the final reads.
   */
  async stopConsumers(): Promise<void> {
    this.running = false;
    this.killing = false;
    await this.killer;
    const killed = await Promise.all(this.instances.map((i) => i.stop(30_000)));
    for (const [i, k] of killed.entries()) {
      if (!k) continue;
      this.log(`${this.instances[i]!.name} did not close within 30 s: killed`);
      this.history.add(
        'info',
        this.instances[i]!.name,
        'close',
        undefined,
        'did not close within 30 s: killed',
      );
    }
    if (killed.some((k) => k)) await sleep(TRANSACTION_TIMEOUT_MARGIN_MS);
  }

  /** Ends every instance still running (a run that was aborted). */
  async close(): Promise<void> {
    this.running = false;
    this.killing = false;
    await this.killer;
    await Promise.all(this.instances.map((i) => i.kill()));
  }

  async finalRead(admin: Admin): Promise<void> {
    await this.input.finalRead();
    for (let partition = 0; partition < this.o.partitions; partition++) {
      await this.history.record('final', 'read-output', { partition }, () =>
        readPartitionPatiently(this.bootstrap, this.o.outputTopic, partition, 'read_committed', this.log),
      );
    }
    await this.history.record(
      'final',
      'offsets',
      { groupId: this.o.applicationId },
      () => withTimeout(admin.listConsumerGroupOffsets(this.o.applicationId), 30_000),
      (offsets) =>
        Object.fromEntries(
          offsets.filter((x) => x.topic === this.o.inputTopic).map((x) => [x.partition, x.offset]),
        ),
    );
  }

  /** Every 20-30 s (drawn from the seed), kill -9 one instance (drawn too) and start it again at once. */
  private async killLoop(): Promise<void> {
    const rng = new Rng(this.o.seed * 53 + 7);
    const [minGap, maxGap] = this.o.killGapMs ?? [20_000, 30_000];
    for (;;) {
      const due = Date.now() + rng.int(minGap, maxGap);
      while (this.killing && Date.now() < due) await sleep(200);
      if (!this.killing) return;
      const instance = rng.pick(this.instances);
      const description = `kill -9 streams instance ${instance.name}, started again at once`;
      this.history.add('invoke', 'nemesis', 'kill-app', { description, target: instance.name });
      await instance.kill();
      instance.start();
      this.history.add('ok', 'nemesis', 'kill-app', { description, target: instance.name });
      this.log(`killed streams instance ${instance.name} and started it again`);
    }
  }
}
