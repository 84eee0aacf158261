// Error handling of a task's record pipeline (Kafka's RetryWithToleranceOperator and its reporters):
// an operation that fails with a RetriableException is tried again with backoff (doubling from 300 ms, at most
// errors.retry.delay.max.ms) until errors.retry.timeout; then, with errors.tolerance=none the task fails
// ("Tolerance exceeded in error handler"), with errors.tolerance=all the record is skipped, logged when
// errors.log.enable, and for sink connectors written to the dead letter queue topic
// (errors.deadletterqueue.topic.name) as it was read, with Kafka's __connect.errors.* context headers when
// errors.deadletterqueue.context.headers.enable. As Kafka's DeadLetterQueueReporter, a DLQ write is not awaited:
// the record goes to the task's DLQ producer, which retries as any producer does, and a write that fails anyway
// is logged at ERROR (DeadLetterQueueReporter's logger), never fatal to the task.

import type { ConsumerRecord, Producer } from '../../client/index.js';
import type { Logger } from '../../common/logger.js';
import { RetriableException } from '../api/connector.js';
import { ConnectException } from '../errors.js';
import { traceOf } from './status.js';

export type Stage =
  | 'KEY_CONVERTER'
  | 'VALUE_CONVERTER'
  | 'HEADER_CONVERTER'
  | 'TRANSFORMATION'
  | 'TASK_PUT'
  | 'TASK_POLL'
  | 'KAFKA_PRODUCE'
  | 'KAFKA_CONSUME';

export const SKIPPED: unique symbol = Symbol('skipped');

export interface ErrorHandlerOptions {
  connector: string;
  taskId: number;
  tolerance: 'none' | 'all';
  logEnable: boolean;
  logIncludeMessages: boolean;
  retryTimeoutMs: number;
  retryDelayMaxMs: number;
  dlqTopic: string | null;
  dlqContextHeaders: boolean;
  /** The task's own dead letter queue producer: close() closes it. */
  dlqProducer: Producer | null;
  /** errors.log.enable's lines, at ERROR as Kafka's LogReporter writes them. */
  log: Logger;
  /** DLQ writes that failed, at ERROR as Kafka's DeadLetterQueueReporter logs them. */
  dlqLog: Logger;
}

const INITIAL_RETRY_DELAY_MS = 300;
/**
 * DLQ writes a task may have unacknowledged at once; one more waits for the oldest to end, as Kafka's task thread
 * waits in send() while the producer's buffer is full.
 */
const PENDING_DLQ_WRITES_MAX = 1000;

export class ErrorHandler {
  totalErrors = 0;
  totalSkipped = 0;
  private readonly pendingDlqWrites = new Set<Promise<void>>();

  constructor(private readonly o: ErrorHandlerOptions) {}

  get tolerateAll(): boolean {
    return this.o.tolerance === 'all';
  }

  /**
   * Runs `fn`; SKIPPED when it failed and errors are tolerated, otherwise its result or a thrown ConnectException.
   * `firstAttempt` is the failure of an attempt the caller already made (the source task's fast path): it counts
   * as the first attempt, so each attempt runs the operation once, as in Kafka (a transform with state, or one
   * calling a service, sees exactly the attempts the retry settings allow).
   */
  async execute<T>(
    stage: Stage,
    className: string,
    fn: () => T | Promise<T>,
    consumed?: ConsumerRecord,
    firstAttempt?: { error: unknown },
  ): Promise<T | typeof SKIPPED> {
    const deadline = this.o.retryTimeoutMs < 0 ? Infinity : Date.now() + this.o.retryTimeoutMs;
    let delay = INITIAL_RETRY_DELAY_MS;
    let failed = firstAttempt;
    for (;;) {
      if (failed === undefined) {
        try {
          return await fn();
        } catch (err) {
          failed = { error: err };
        }
      }
      const error = failed.error instanceof Error ? failed.error : new Error(String(failed.error));
      failed = undefined;
      if (error instanceof RetriableException && Date.now() + delay <= deadline) {
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, this.o.retryDelayMaxMs);
        continue;
      }
      await this.report(stage, className, error, consumed);
      if (!this.tolerateAll) {
        const failure = new ConnectException('Tolerance exceeded in error handler', { cause: error });
        throw failure;
      }
      this.totalSkipped++;
      return SKIPPED;
    }
  }

  /**
   * Releases the dead letter queue producer; the task calls it when it closes, as Kafka's closes its reporters.
   * Kafka's DeadLetterQueueReporter.close() closes its producer without a time limit: everything it holds is
   * delivered (or fails, by delivery.timeout.ms, unbounded for task producers) before it closes, however long the
   * cluster takes; the herder does not wait for that (task.shutdown.graceful.timeout.ms). A write it gives up on is
   * logged like any failed one.
   */
  async close(): Promise<void> {
    const producer = this.o.dlqProducer;
    if (producer !== null) {
      await producer.flush().catch(() => {});
      await producer.close(0);
    }
    await Promise.all(this.pendingDlqWrites);
  }

  private async report(
    stage: Stage,
    className: string,
    error: Error,
    consumed?: ConsumerRecord,
  ): Promise<void> {
    this.totalErrors++;
    if (this.o.logEnable) {
      const where =
        consumed === undefined ? '' : ` on record ${consumed.topic}-${consumed.partition}@${consumed.offset}`;
      const body =
        this.o.logIncludeMessages && consumed !== undefined
          ? ` value=${consumed.value?.toString('utf8') ?? 'null'}`
          : '';
      this.o.log.error(
        `Error encountered in task ${this.o.connector}-${this.o.taskId}. Executing stage '${stage}' with class '${className}'${where}.${body} ${error.name}: ${error.message}`,
      );
    }
    if (
      !this.tolerateAll ||
      this.o.dlqTopic === null ||
      this.o.dlqProducer === null ||
      consumed === undefined
    )
      return;
    const headers: Array<{ key: string; value: Buffer | null }> = consumed.headers.map((h) => ({
      key: h.key,
      value: h.value,
    }));
    if (this.o.dlqContextHeaders) {
      const add = (k: string, v: string) =>
        headers.push({ key: `__connect.errors.${k}`, value: Buffer.from(v) });
      add('topic', consumed.topic);
      add('partition', String(consumed.partition));
      add('offset', String(consumed.offset));
      add('connector.name', this.o.connector);
      add('task.id', String(this.o.taskId));
      add('stage', stage);
      add('class.name', className);
      add('exception.class.name', error.name);
      add('exception.message', error.message);
      add('exception.stacktrace', error.stack ?? `${error.name}: ${error.message}`);
    }
    await this.writeToDeadLetterQueue(this.o.dlqProducer, this.o.dlqTopic, {
      topic: this.o.dlqTopic,
      key: consumed.key,
      value: consumed.value,
      headers,
      timestamp: consumed.timestamp,
    });
  }

  /** Hands the record to the DLQ producer without waiting for its acknowledgement; a failure is only logged. */
  private async writeToDeadLetterQueue(
    producer: Producer,
    topic: string,
    record: Parameters<Producer['send']>[0],
  ): Promise<void> {
    while (this.pendingDlqWrites.size >= PENDING_DLQ_WRITES_MAX) await Promise.race(this.pendingDlqWrites);
    const write: Promise<void> = producer
      .send(record)
      .then(
        () => {},
        (err: unknown) =>
          this.o.dlqLog.error(
            `Could not produce message to dead letter queue. topic=${topic} ${traceOf(err)}`,
          ),
      )
      .finally(() => this.pendingDlqWrites.delete(write));
    this.pendingDlqWrites.add(write);
  }
}
