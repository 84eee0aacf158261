// The connector API (Kafka's org.apache.kafka.connect.connector / source / sink packages), in TypeScript.
//
// A Connector is configured once per deployment: start(props) with the connector config, then taskConfigs(n)
// splits the work into at most n task configs (tasks.max), each run by one Task instance. A SourceTask's poll()
// returns records read from the outside system (each with its source partition and offset); a SinkTask's
// put() receives records read from topics and flush()/preCommit() say what is durably written, which decides
// the consumer offsets committed. Lifecycles:
//   Connector: constructor -> initialize(context) -> validate(config)? -> start(config) -> taskConfigs(n)... -> stop()
//   SourceTask: constructor -> initialize(context) -> start(config) -> poll()... / commit() -> stop()
//   SinkTask: constructor -> initialize(context) -> start(config) -> open(partitions) -> put(records)... /
//             preCommit(offsets) -> close(partitions) -> stop()
// Any method may be async. Throwing from start/poll/put fails the task (status FAILED with the error's trace);
// a RetriableException from put() makes the runtime deliver the same records again after a backoff.

import type { Logger } from '../../common/logger.js';
import { ConnectException } from '../errors.js';
import type { ConfigDef, ConfigValue } from './config-def.js';
import type { SinkRecord, SourceOffset, SourcePartition, SourceRecord } from './records.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * Brook's stand-in for SLF4J's LoggerFactory, which a Kafka plugin gets its loggers from: the worker's logger of
 * that name (the plugin's class name, as Kafka's are), so that the levels /admin/loggers and the root set filter
 * a plugin's lines as Kafka's worker's log4j filters a plugin's. Optional: a host without loggers leaves it out.
 */
export interface PluginLoggers {
  logger?(name: string): Logger;
}

export type TaskConfig = Record<string, string>;

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** A failure the task may recover from by trying again (Kafka's RetriableException). */
export class RetriableException extends ConnectException {
  override name = 'RetriableException';
}

export interface ConnectorContext extends PluginLoggers {
  /** Ask the runtime to call taskConfigs() again (the set of tables changed, say). */
  requestTaskReconfiguration(): void;
  /** Fail the connector from a background thread of its own. */
  raiseError(error: Error): void;
}

export interface Task {
  version(): string;
  start(props: TaskConfig): MaybePromise<void>;
  stop(): MaybePromise<void>;
}

export type TaskClass = new () => SourceTask | SinkTask;

export abstract class Connector {
  protected context!: ConnectorContext;

  initialize(context: ConnectorContext): void {
    this.context = context;
  }

  abstract version(): string;
  abstract start(props: Record<string, string>): MaybePromise<void>;
  abstract taskClass(): TaskClass;
  abstract taskConfigs(maxTasks: number): MaybePromise<TaskConfig[]>;
  abstract stop(): MaybePromise<void>;
  /** The connector's own keys (the runtime adds name, connector.class, tasks.max, converters, transforms...). */
  abstract config(): ConfigDef;

  /** Checks a config before it is used; the default checks each key against config(). */
  validate(props: Record<string, string>): MaybePromise<ConfigValue[]> {
    return this.config().validate(props);
  }
}

export abstract class SourceConnector extends Connector {
  /** KIP-618: whether the connector can run with exactly-once delivery; undefined for "unknown". */
  exactlyOnceSupport(_props: Record<string, string>): 'SUPPORTED' | 'UNSUPPORTED' | undefined {
    return undefined;
  }

  /**
   * KIP-618: whether the connector's tasks can define their own transactions (`transaction.boundary=connector`)
   * through the TransactionContext; Kafka's default is UNSUPPORTED.
   */
  canDefineTransactionBoundaries(_props: Record<string, string>): 'SUPPORTED' | 'UNSUPPORTED' {
    return 'UNSUPPORTED';
  }

  /**
   * KIP-875: called before the runtime writes offsets that `PATCH` or `DELETE /connectors/{name}/offsets` asked for
   * (a reset gives every stored partition with a null offset), on a connector instance that is not started. Throw to
   * refuse them (the request fails with the error's message, nothing written); answer true when the connector keeps
   * no offsets outside the runtime or has changed them too. Kafka's default, false, says offsets kept elsewhere
   * were not changed, and the response says so.
   */
  alterOffsets(_connectorConfig: Record<string, string>, _offsets: SourceOffsets): MaybePromise<boolean> {
    return false;
  }
}

/** Source offsets an offsets request writes: each source partition with its new offset, null to remove it. */
export type SourceOffsets = ReadonlyArray<{ partition: SourcePartition; offset: SourceOffset | null }>;

/** Sink offsets an offsets request writes: the next offset to read per topic partition, null to remove it. */
export type SinkOffsets = ReadonlyArray<TopicPartition & { offset: number | null }>;

export abstract class SinkConnector extends Connector {
  /** KIP-875: as SourceConnector.alterOffsets, for the consumer group offsets of the connector's tasks. */
  alterOffsets(_connectorConfig: Record<string, string>, _offsets: SinkOffsets): MaybePromise<boolean> {
    return false;
  }
}

/** Reads the source offsets the runtime committed for this connector (what a task resumes from). */
export interface OffsetStorageReader {
  offset(partition: SourcePartition): SourceOffset | null;
  offsets(partitions: SourcePartition[]): Map<SourcePartition, SourceOffset | null>;
}

/**
 * KIP-618: how a task of a connector with `transaction.boundary=connector` marks its transactions. A request
 * without a record applies after the records of the current poll() batch; with a record, right after that record
 * (which must be one this task returned from poll()). An aborted transaction's records are never visible to
 * read_committed consumers and its source offsets are not committed.
 */
export interface TransactionContext {
  commitTransaction(record?: SourceRecord): void;
  abortTransaction(record?: SourceRecord): void;
}

export interface SourceTaskContext extends PluginLoggers {
  configs(): TaskConfig;
  offsetStorageReader(): OffsetStorageReader;
  /** The transaction context, or null unless exactly-once is enabled and the boundary is `connector`. */
  transactionContext?(): TransactionContext | null;
}

export abstract class SourceTask implements Task {
  protected context!: SourceTaskContext;

  initialize(context: SourceTaskContext): void {
    this.context = context;
  }

  abstract version(): string;
  abstract start(props: TaskConfig): MaybePromise<void>;
  /**
   * The next records, or null/[] when there are none yet. It may wait for data, but should return within about a
   * second so that the task can be paused or stopped.
   */
  abstract poll(): MaybePromise<SourceRecord[] | null>;
  abstract stop(): MaybePromise<void>;
  /** Called after the runtime committed offsets of records this task returned. */
  commit(): MaybePromise<void> {}
  /**
   * Called once a record is written to Kafka (or dropped by a transform or the error handler, with null): when the
   * broker acknowledges it, or under exactly-once (KIP-618) once the transaction that holds it has committed, so a
   * read_committed consumer already sees it; never for a record of an aborted transaction.
   */
  commitRecord(
    _record: SourceRecord,
    _metadata: { topic: string; partition: number; offset: number } | null,
  ): MaybePromise<void> {}
}

/** Reports a record a sink task could not handle, to the dead letter queue when one is configured. */
export type ErrantRecordReporter = (record: SinkRecord, error: Error) => Promise<void>;

export interface SinkTaskContext extends PluginLoggers {
  configs(): TaskConfig;
  /** Rewind or skip: the next records of these partitions start at these offsets. */
  offset(offsets: Array<TopicPartition & { offset: number }>): void;
  assignment(): TopicPartition[];
  pause(partitions: TopicPartition[]): void;
  resume(partitions: TopicPartition[]): void;
  /** Commit offsets as soon as possible rather than at the next offset.flush.interval.ms. */
  requestCommit(): void;
  errantRecordReporter(): ErrantRecordReporter | null;
}

export type CommitOffsets = Map<string, TopicPartition & { offset: number }>;

export abstract class SinkTask implements Task {
  protected context!: SinkTaskContext;

  initialize(context: SinkTaskContext): void {
    this.context = context;
  }

  abstract version(): string;
  abstract start(props: TaskConfig): MaybePromise<void>;
  abstract put(records: SinkRecord[]): MaybePromise<void>;
  abstract stop(): MaybePromise<void>;
  /** Make everything put() so far durable. */
  flush(_currentOffsets: CommitOffsets): MaybePromise<void> {}
  /** The offsets safe to commit (next offset to read per partition); the default flushes and returns them all. */
  async preCommit(currentOffsets: CommitOffsets): Promise<CommitOffsets> {
    await this.flush(currentOffsets);
    return currentOffsets;
  }
  open(_partitions: TopicPartition[]): MaybePromise<void> {}
  close(_partitions: TopicPartition[]): MaybePromise<void> {}
}

export function tpKey(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}
