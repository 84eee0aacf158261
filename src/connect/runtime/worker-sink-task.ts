// Runs one SinkTask: a consumer (auto commit off, auto.offset.reset earliest, in the group connect-<connector>
// unless the worker's consumer.group.id or the connector's consumer.override.group.id names another, as Kafka
// Connect sets them) -> converters -> transforms -> put(). Offsets are committed every
// offset.flush.interval.ms, when the task asks (requestCommit), before partitions are revoked and when
// stopping: the task's preCommit() (by default flush()) says which offsets are durable, and only those are
// committed, so records are delivered at least once. A RetriableException from put() delivers the same records
// again after a backoff; any other error fails the task. Conversion and transform errors go to the error
// handler (errors.tolerance, dead letter queue).

import {
  Consumer,
  type ConsumerRecord,
  KafkaProtocolError,
  type TopicPartition,
} from '../../client/index.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode } from '../../protocol/errors.js';
import { type CommitOffsets, RetriableException, type SinkTask, tpKey } from '../api/connector.js';
import { SinkRecord } from '../api/records.js';
import { type ErrorHandler, SKIPPED } from './error-handler.js';
import { toConnectHeaders } from './headers.js';
import { CONNECT_LOGGERS } from './loggers.js';
import { type TaskDeps, WorkerTask } from './worker-task.js';

const POLL_TIMEOUT_MS = 500;
/**
 * How often a `topics.regex` sink matches its pattern against the cluster's topics again (metadata.max.age.ms of
 * its consumer), so that a matching topic created later is consumed within this time. A `topics` list needs no
 * such setting: the group's leader looks for subscribed topics that do not exist yet every second.
 */
const TOPIC_RECHECK_MS = 3000;
const PUT_RETRY_BACKOFF_MS = 1000;

export class WorkerSinkTask extends WorkerTask {
  private consumer: Consumer | null = null;
  private readonly currentOffsets: CommitOffsets = new Map();
  private readonly committed = new Map<string, number>();
  private nextCommitMs = 0;
  private commitRequested = false;
  private readonly log: Logger;

  constructor(
    d: TaskDeps,
    private readonly task: SinkTask,
    private readonly topics: string[] | RegExp,
  ) {
    super(d);
    this.log = d.loggers.logger(CONNECT_LOGGERS.workerSinkTask);
  }

  protected async initializeAndStart(): Promise<void> {
    const consumer = new Consumer({
      bootstrapServers: this.d.bootstrapServers,
      groupId: `connect-${this.d.id.connector}`,
      clientId: `connector-consumer-${this.d.id.connector}-${this.d.id.task}`,
      enableAutoCommit: false,
      autoOffsetReset: 'earliest',
      ...(Array.isArray(this.topics) ? {} : { metadataMaxAgeMs: TOPIC_RECHECK_MS }),
      ...this.d.consumerOptions,
    });
    this.consumer = consumer;
    this.task.initialize({
      configs: () => this.d.taskConfig,
      offset: (offsets) => {
        for (const o of offsets) consumer.seek(o, o.offset);
      },
      assignment: () => consumer.assignment(),
      pause: (tps) => consumer.pause(tps),
      resume: (tps) => consumer.resume(tps),
      requestCommit: () => {
        this.commitRequested = true;
      },
      errantRecordReporter: () => null,
      logger: (name) => this.d.loggers.logger(name),
    });
    await this.task.start(this.d.taskConfig);
    consumer.subscribe(this.topics, {
      onPartitionsAssigned: async (tps) => {
        this.log.debug(`${this} Partitions assigned ${describePartitions(tps)}`);
        if (this.paused) consumer.pause(tps);
        await this.task.open(tps);
      },
      onPartitionsRevoked: async (tps) => {
        this.log.debug(`${this} Partitions revoked: ${describePartitions(tps)}`);
        await this.commit();
        await this.task.close(tps);
        for (const tp of tps) this.currentOffsets.delete(tpKey(tp));
      },
    });
    this.log.debug(
      Array.isArray(this.topics)
        ? `${this} Initializing and starting task for topics ${this.topics.join(', ')}`
        : `${this} Initializing and starting task for topics regex ${this.topics.source}`,
    );
    this.log.info(`${this} Sink task finished initialization and start`);
    this.nextCommitMs = Date.now() + this.d.offsetFlushIntervalMs;
  }

  protected async runLoop(): Promise<void> {
    this.log.info(`${this} Executing sink task`);
    const consumer = this.consumer!;
    while (!this.stopping) {
      if (this.paused) consumer.pause(consumer.assignment());
      else if (consumer.paused().length > 0) consumer.resume(consumer.paused());
      const polled = await consumer.poll(POLL_TIMEOUT_MS);
      if (this.stopping) break;
      if (polled.length > 0) await this.deliver(polled);
      if (this.commitRequested || Date.now() >= this.nextCommitMs) await this.periodicCommit();
    }
    await this.commit();
  }

  private async deliver(polled: ConsumerRecord[]): Promise<void> {
    const batch: SinkRecord[] = [];
    // Kafka's per-record TRACE line; the level is read once per batch, so at DEBUG and above no record pays for it.
    const trace = this.log.enabled('trace');
    for (const r of polled) {
      if (trace)
        this.log.trace(
          `${this} Consuming and converting message in topic '${r.topic}' partition ${r.partition} ` +
            `at offset ${r.offset} and timestamp ${r.timestamp}`,
        );
      const converted = await this.convert(r, this.d.errors);
      if (converted !== null) batch.push(converted);
    }
    if (trace) this.log.trace(`${this} Delivering batch of ${batch.length} messages to task`);
    for (;;) {
      try {
        await this.task.put(batch);
        break;
      } catch (err) {
        if (!(err instanceof RetriableException) || this.stopping) throw err;
        this.log.error(
          `${this} RetriableException from SinkTask, delivering the batch again: ${err.message}`,
        );
        await new Promise((r) => setTimeout(r, PUT_RETRY_BACKOFF_MS));
      }
    }
    for (const r of polled) {
      this.d.onTopicUsed(r.topic);
      this.currentOffsets.set(tpKey(r), { topic: r.topic, partition: r.partition, offset: r.offset + 1 });
    }
  }

  private async convert(r: ConsumerRecord, e: ErrorHandler): Promise<SinkRecord | null> {
    const key = await e.execute(
      'KEY_CONVERTER',
      this.d.keyConverter.constructor.name,
      () => this.d.keyConverter.toConnectData(r.topic, r.key),
      r,
    );
    if (key === SKIPPED) return null;
    const value = await e.execute(
      'VALUE_CONVERTER',
      this.d.valueConverter.constructor.name,
      () => this.d.valueConverter.toConnectData(r.topic, r.value),
      r,
    );
    if (value === SKIPPED) return null;
    const record = new SinkRecord({
      topic: r.topic,
      kafkaPartition: r.partition,
      keySchema: key.schema,
      key: key.value,
      valueSchema: value.schema,
      value: value.value,
      timestamp: r.timestamp,
      kafkaOffset: r.offset,
      headers: toConnectHeaders(r.headers),
    });
    const t = await e.execute('TRANSFORMATION', 'TransformChain', () => this.d.transforms.apply(record), r);
    return t === SKIPPED ? null : t;
  }

  /**
   * The loop's commit. One refused because the consumer is rejoining its group (REBALANCE_IN_PROGRESS) is logged
   * and left for the revocation or the next interval, as Kafka's WorkerSinkTask logs a failed periodic commit and
   * carries on.
   */
  private async periodicCommit(): Promise<void> {
    try {
      await this.commit();
    } catch (err) {
      if (!(err instanceof KafkaProtocolError) || err.code !== ErrorCode.REBALANCE_IN_PROGRESS) throw err;
      this.log.error(`${this} Commit of offsets failed: ${err.message}`);
    }
  }

  /** Commits what preCommit() reports durable, for partitions whose offset moved since the last commit. */
  private async commit(): Promise<void> {
    this.commitRequested = false;
    this.nextCommitMs = Date.now() + this.d.offsetFlushIntervalMs;
    if (this.consumer === null || this.currentOffsets.size === 0) return;
    const durable = await this.task.preCommit(new Map(this.currentOffsets));
    const changed: Array<TopicPartition & { offset: number }> = [];
    for (const [k, o] of durable) if (this.committed.get(k) !== o.offset) changed.push(o);
    if (changed.length === 0) {
      this.log.debug(`${this} Skipping offset commit, no change since last commit`);
      return;
    }
    const startedMs = Date.now();
    this.log.debug(`${this} Committing offsets: ${describePartitions(changed)}`);
    await this.consumer.commit(changed);
    for (const o of changed) this.committed.set(tpKey(o), o.offset);
    this.log.debug(
      `${this} Finished offset commit successfully in ${Date.now() - startedMs} ms: ${describePartitions(changed)}`,
    );
  }

  protected override wakeForStop(): void {
    // poll() returns within POLL_TIMEOUT_MS; nothing to interrupt.
  }

  /**
   * The task, then its consumer, each on its own (Kafka's WorkerSinkTask.close); the dead letter queue producer is
   * closed after this with the transformation chain (WorkerTask).
   */
  protected async close(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    await this.closeQuietly([
      ['sink task', () => this.task.stop()],
      ['consumer', () => consumer?.close()],
    ]);
  }
}

/** Partitions (with their offsets, when they have one) as a log line lists them: `[t-0=5, t-1=7]`. */
function describePartitions(tps: ReadonlyArray<TopicPartition & { offset?: number }>): string {
  const each = tps.map(
    (tp) => `${tp.topic}-${tp.partition}${tp.offset === undefined ? '' : `=${tp.offset}`}`,
  );
  return `[${each.join(', ')}]`;
}
