// The Processor API (Kafka's org.apache.kafka.streams.processor.api): the immutable Record that flows between
// nodes, the Processor a user writes, and the ProcessorContext a task hands to each processor instance.
// The DSL's operations are themselves processors written against this API.

import type { Serde } from './serdes.js';
import type { StateStore } from './state/stores.js';

export interface Header {
  key: string;
  value: Buffer | null;
}

/** One record on its way through a task: key, value, timestamp and headers; `with*` give changed copies. */
export class Record<K, V> {
  constructor(
    readonly key: K,
    readonly value: V,
    readonly timestamp: number,
    readonly headers: readonly Header[] = [],
  ) {}

  withKey<K2>(key: K2): Record<K2, V> {
    return new Record(key, this.value, this.timestamp, this.headers);
  }

  withValue<V2>(value: V2): Record<K, V2> {
    return new Record(this.key, value, this.timestamp, this.headers);
  }

  withTimestamp(timestamp: number): Record<K, V> {
    return new Record(this.key, this.value, timestamp, this.headers);
  }

  withHeaders(headers: readonly Header[]): Record<K, V> {
    return new Record(this.key, this.value, this.timestamp, headers);
  }
}

/**
 * Where the record being processed came from (Kafka's RecordMetadata). In a punctuation, and downstream of what a
 * punctuator forwards, there is no input record: topic null, partition -1, offset -1, as Kafka's
 * StreamTask.punctuate sets its record context. recordMetadata() answers null only where Kafka's is empty (in
 * init(), before the task has a record context).
 */
export interface RecordMetadata {
  topic: string | null;
  partition: number;
  offset: number;
}

export type PunctuationType = 'STREAM_TIME' | 'WALL_CLOCK_TIME';

export interface Cancellable {
  cancel(): void;
}

export interface ProcessorContext<KOut = unknown, VOut = unknown> {
  readonly applicationId: string;
  /** "subtopology_partition", as Kafka's TaskId prints. */
  readonly taskId: string;
  /** Sends a record to all children, or to the one named. */
  forward<K extends KOut, V extends VOut>(record: Record<K, V>, childName?: string): void;
  recordMetadata(): RecordMetadata | null;
  /** The task's stream time: the largest timestamp it has processed (-1 before the first). */
  currentStreamTimeMs(): number;
  currentSystemTimeMs(): number;
  getStateStore<S extends StateStore>(name: string): S;
  /** Calls `punctuator` every `intervalMs` of stream time or of wall-clock time. */
  schedule(intervalMs: number, type: PunctuationType, punctuator: (timestamp: number) => void): Cancellable;
  /** Asks for a commit soon. */
  commit(): void;
  /** The application's default key serde (default.key.serde), as Kafka's ProcessorContext.keySerde(). */
  keySerde(): Serde<unknown>;
  /** The application's default value serde (default.value.serde). */
  valueSerde(): Serde<unknown>;
  /** The application's properties, as given to KafkaStreams or the test driver (Kafka's appConfigs()). */
  appConfigs(): { readonly [key: string]: unknown };
}

/**
 * The record context a processor runs in (Kafka's ProcessorRecordContext): where its record came from (a
 * punctuation's has topic null, partition and offset -1; null: no context at all), and the timestamp and headers
 * of the record it processes.
 */
export interface RecordContext {
  readonly metadata: RecordMetadata | null;
  readonly timestampMs: number;
  readonly headers: readonly Header[];
}

/**
 * The key of an internal capability of the task's contexts (not exported by the package), Kafka's
 * InternalProcessorContext.setRecordContext then its restore: runs `run` within a record context the DSL's
 * processor kept, so what it forwards there reads that context downstream. suppress() emits a held update so.
 */
export const runWithinRecordContext: unique symbol = Symbol('runWithinRecordContext');

/** A context with the internal capabilities the DSL's processors use; every task context is one. */
export interface InternalProcessorContext<KOut = unknown, VOut = unknown>
  extends ProcessorContext<KOut, VOut> {
  [runWithinRecordContext](context: RecordContext, run: () => void): void;
}

export interface Processor<KIn, VIn, KOut = never, VOut = never> {
  init?(context: ProcessorContext<KOut, VOut>): void;
  process(record: Record<KIn, VIn>): void;
  close?(): void;
}

/** Makes one processor instance per task (Kafka's ProcessorSupplier.get). */
export type ProcessorSupplier<KIn, VIn, KOut = never, VOut = never> = () => Processor<KIn, VIn, KOut, VOut>;

/** A KTable's update as it travels downstream: the new value and, where known, the one it replaced. */
export class Change<V> {
  constructor(
    readonly newValue: V | null,
    readonly oldValue: V | null,
  ) {}
}

/**
 * Kafka's StateRestoreListener (KafkaStreams.setGlobalStateRestoreListener): told when an active task's store starts
 * restoring a changelog partition (from `startingOffset` up to `endingOffset`, exclusive), after each polled batch
 * (`batchEndOffset`: the last offset applied), and when it is done. Called in the stream thread, between polls.
 */
export interface StateRestoreListener {
  onRestoreStart(
    topicPartition: { topic: string; partition: number },
    storeName: string,
    startingOffset: number,
    endingOffset: number,
  ): void;
  onBatchRestored(
    topicPartition: { topic: string; partition: number },
    storeName: string,
    batchEndOffset: number,
    numRestored: number,
  ): void;
  onRestoreEnd(
    topicPartition: { topic: string; partition: number },
    storeName: string,
    totalRestored: number,
  ): void;
}
