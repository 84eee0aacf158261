// What the source and sink task runners share: the state (RUNNING, PAUSED, FAILED...), the target state set by
// pause/resume, and a run loop started once and awaited by stop(). A failure anywhere in the loop leaves the
// task FAILED with its trace and ends the loop; stop() then only releases resources.

import type { Logger } from '../../common/logger.js';
import type { TaskConfig } from '../api/connector.js';
import type { Converter } from '../converters/converter.js';
import type { TransformChain } from '../transforms/transformation.js';
import type { ErrorHandler } from './error-handler.js';
import { CONNECT_LOGGERS, type Loggers } from './loggers.js';
import { type State, type Status, traceOf } from './status.js';

export interface TaskId {
  connector: string;
  task: number;
}

export interface TaskDeps {
  id: TaskId;
  workerId: string;
  connectorConfig: Readonly<Record<string, string>>;
  taskConfig: TaskConfig;
  keyConverter: Converter;
  valueConverter: Converter;
  transforms: TransformChain;
  errors: ErrorHandler;
  bootstrapServers: string;
  /** The worker's `producer.`/`consumer.` keys and the connector's overrides, as client options. */
  producerOptions: Record<string, unknown>;
  consumerOptions: Record<string, unknown>;
  offsetFlushIntervalMs: number;
  /** Called on every state change (the herder keeps statuses). */
  onStatus: (id: TaskId, status: Status) => void;
  /** A topic the task produced to or consumed from (GET /connectors/{name}/topics, KIP-558). */
  onTopicUsed: (topic: string) => void;
  /** The worker's loggers: each runner logs through its Kafka class's (loggers.ts). */
  loggers: Loggers;
}

export abstract class WorkerTask {
  private stateValue: State = 'UNASSIGNED';
  private traceValue: string | null = null;
  protected paused = false;
  protected stopping = false;
  private loop: Promise<void> | null = null;
  private resumeWaiters: Array<() => void> = [];
  private readonly taskLog: Logger;

  constructor(protected readonly d: TaskDeps) {
    this.taskLog = d.loggers.logger(CONNECT_LOGGERS.workerTask);
  }

  get id(): TaskId {
    return this.d.id;
  }

  /** How Kafka's task lines name the task: `WorkerSinkTask{id=my-sink-0}`. */
  toString(): string {
    return `${this.constructor.name}{id=${this.d.id.connector}-${this.d.id.task}}`;
  }

  status(): Status {
    return { state: this.stateValue, workerId: this.d.workerId, trace: this.traceValue };
  }

  protected setState(state: State, trace: string | null = null): void {
    this.stateValue = state;
    this.traceValue = trace;
    this.d.onStatus(this.d.id, this.status());
  }

  /** Starts the loop; `startPaused` for a connector whose target state is PAUSED. */
  start(startPaused: boolean): void {
    this.paused = startPaused;
    this.loop = this.execute();
  }

  private async execute(): Promise<void> {
    try {
      await this.initializeAndStart();
      this.setState(this.paused ? 'PAUSED' : 'RUNNING');
      await this.runLoop();
    } catch (err) {
      if (!this.stopping) {
        this.taskLog.error(
          `Task ${this.d.id.connector}-${this.d.id.task} threw an uncaught and unrecoverable exception: ${traceOf(err)}`,
        );
        this.setState('FAILED', traceOf(err));
      }
    } finally {
      await this.close().catch((err) =>
        this.taskLog.error(`Task ${this.d.id.connector}-${this.d.id.task} failed to close: ${traceOf(err)}`),
      );
      // Whatever close() did, as Kafka's WorkerTask.doClose: the chain's transforms and predicates, and the error
      // handler (its dead letter queue producer).
      await this.closeQuietly([
        ['transformation chain', () => this.d.transforms.close()],
        ['retry operator', () => this.d.errors.close()],
      ]);
    }
  }

  /**
   * Runs each release step on its own, as Kafka's Utils.closeQuietly does for each of a task's resources: a step
   * that throws is logged at WARN and the next one still runs, so a producer whose close fails cannot leave the
   * offsets store's or the dead letter queue's clients open.
   */
  protected async closeQuietly(steps: ReadonlyArray<readonly [string, () => unknown]>): Promise<void> {
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (err) {
        this.taskLog.warn(`${this} Failed to close ${name}: ${traceOf(err)}`);
      }
    }
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    if (this.stateValue === 'RUNNING') this.setState('PAUSED');
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.stateValue === 'PAUSED') this.setState('RUNNING');
    for (const w of this.resumeWaiters.splice(0)) w();
  }

  /** Waits up to `ms` while paused (woken by resume or stop). */
  protected waitWhilePaused(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      this.resumeWaiters.push(() => {
        clearTimeout(t);
        r();
      });
    });
  }

  /** Ends the loop and releases everything; at most `timeoutMs` for the loop to finish its current step. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.wakeForStop();
    for (const w of this.resumeWaiters.splice(0)) w();
    if (this.loop !== null) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.loop, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
    }
    if (this.stateValue !== 'FAILED') this.setState('UNASSIGNED');
  }

  protected wakeForStop(): void {}
  protected abstract initializeAndStart(): Promise<void>;
  protected abstract runLoop(): Promise<void>;
  protected abstract close(): Promise<void>;
}
