// A task: one sub-topology instantiated for one partition number ("1_0"), with its own processor instances and
// state stores. It takes raw records of its input partitions, deserializes them at their source node, pushes
// each through the processors synchronously (a forward is a direct call), and hands what reaches a sink, and
// each store write, to its RecordCollector. The same class runs under KafkaStreams and TopologyTestDriver; what
// differs is the collector, the store engines and who calls commit.
//
// Lifecycle: constructed (processors made, stores opened) -> init() (after restoration) -> process()* and
// punctuate()* -> close(). Stream time is the largest record timestamp the task has seen.

import assert from 'node:assert/strict';
import { keyPartition } from '../../client/partitioners.js';
import { FailedProcessingError, MissingSerdeError, ProcessorStateError, StreamsError } from '../errors.js';
import { resolveSerde } from '../kgrouped-table.js';
import type { ErrorHandlerContext, ProcessingExceptionHandler } from '../processing-exception-handler.js';
import {
  type Cancellable,
  type Header,
  type InternalProcessorContext,
  type Processor,
  type PunctuationType,
  Record,
  type RecordContext,
  type RecordMetadata,
  runWithinRecordContext,
} from '../processor.js';
import {
  defaultProductionExceptionHandler,
  type ProductionErrorHandlerContext,
  type ProductionExceptionHandler,
  type SerializationExceptionOrigin,
} from '../production-exception-handler.js';
import { type Serde, SerializationError } from '../serdes.js';

export { StreamsError };

import type { BytesKeyValueStore } from '../state/bytes-store.js';
import { CachingSessionStore } from '../state/caching-session-store.js';
import { CachingKeyValueStore, CachingTimestampedStore } from '../state/caching-store.js';
import { CachingTimestampedWindowStore } from '../state/caching-window-store.js';
import type { CacheBudget, CacheRecordContext, CapturedRecordContext } from '../state/record-cache.js';
import { SessionStore } from '../state/session-store.js';
import { type ChangelogWriter, PlainKeyValueStore, TimestampedStore } from '../state/store-stack.js';
import type { StateStore, StoreBuilder } from '../state/stores.js';
import { type ChangelogRecord, SuppressBuffer } from '../state/suppress-buffer.js';
import { DuplicatesWindowStore, TimestampedWindowStore } from '../state/window-store.js';
import { FailOnInvalidTimestamp } from '../timestamp-extractors.js';
import type { SinkNode, SourceNode, Subtopology, TimestampExtractor, Topology } from '../topology.js';

export interface RawRecord {
  /** The topology's name of the topic (internal topics without the application id prefix). */
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Header[];
}

/** The headers of a punctuation's context (Kafka's StreamTask.punctuate: empty headers). */
const NO_HEADERS: readonly Header[] = Object.freeze([]);

/** Where a punctuation's records come from: nowhere (Kafka's StreamTask.punctuate: null topic, -1, -1). */
const PUNCTUATION_METADATA: Readonly<RecordMetadata> = Object.freeze({
  topic: null,
  partition: -1,
  offset: -1,
});

/** What a cached write keeps of the task's context (see Task.cacheRecordContext). */
interface TaskRecordContext extends CapturedRecordContext, RecordContext {}

export interface RecordCollector {
  /**
   * `topic` is the real topic name; `partition` undefined lets the producer's murmur2 on the key choose.
   * `context` is what the production exception handler is told if the send fails.
   */
  send(
    topic: string,
    key: Buffer | null,
    value: Buffer | null,
    timestamp: number,
    headers: readonly Header[],
    partition: number | undefined,
    context: ProductionErrorHandlerContext,
  ): void;
}

/** What a sink's serializer that failed and was answered CONTINUE gives back: no bytes, the record is skipped. */
const SKIPPED: unique symbol = Symbol('skipped');

export type DeserializationHandlerResponse = 'CONTINUE' | 'FAIL';

/** default.deserialization.exception.handler: what to do with a record whose bytes cannot be read. */
export type DeserializationExceptionHandler = (
  record: RawRecord,
  error: Error,
) => DeserializationHandlerResponse;

export interface TaskEnvironment {
  applicationId: string;
  /** The name of the stream thread that runs the task, for its errors' prefix; absent: none (a test driver). */
  threadName?: string;
  topology: Topology;
  collector: RecordCollector;
  /** The real name of a topology topic (internal topics get the application id prefix). */
  realTopic(topic: string): string;
  changelogTopic(store: string): string;
  /**
   * The partition count of a topic the application owns (repartition topics), so that a record's partition is
   * chosen from the count the topic was created with, never from a producer's metadata that may not list every
   * partition of a topic created a moment ago.
   */
  partitionsOf(topic: string): number | undefined;
  openEngine(builder: StoreBuilder, taskId: string): BytesKeyValueStore;
  defaultKeySerde: Serde<unknown>;
  defaultValueSerde: Serde<unknown>;
  deserializationExceptionHandler: DeserializationExceptionHandler;
  /**
   * processing.exception.handler, told of each error a processor's process() or a punctuator throws; absent (and
   * in a global task, as Kafka's GlobalStateUpdateTask sets none) the error goes up as it is.
   */
  processingExceptionHandler?: ProcessingExceptionHandler;
  /** default.production.exception.handler, asked about a sink's serialization error; absent: Kafka's default (FAIL). */
  productionExceptionHandler?: ProductionExceptionHandler;
  /** A record was dropped (Kafka's dropped-records sensor): skipped by a handler or for its timestamp. */
  onDroppedRecord?(): void;
  /**
   * default.timestamp.extractor, for the sources without their own; absent: the record's timestamp. A global task
   * applies none (Kafka's GlobalStateUpdateTask keeps the record's timestamp, negative or not).
   */
  defaultTimestampExtractor?: TimestampExtractor;
  wallClockMs(): number;
  /** The application's properties (ProcessorContext.appConfigs()); absent: none given. */
  appConfigs?: { readonly [key: string]: unknown };
  log(message: string): void;
  /**
   * Whether an error is a task migration (Kafka's TaskMigratedException), which the thread handles and no handler
   * is told of; absent: none is (a test driver).
   */
  isTaskMigration?(e: Error): boolean;
  /** A processor asked for a commit. */
  requestCommit(): void;
  /** The thread's record cache budget; absent or null: no caching (statestore.cache.max.bytes 0). */
  cacheBudget?: CacheBudget | null;
  /** The global stores (GlobalKTable), which every task may read. */
  globalStore?(name: string): StateStore | undefined;
}

interface NodeInstance {
  name: string;
  /**
   * Whether an error of its process() goes to the processing exception handler: a processor's, not a sink's
   * (Kafka's SinkNode overrides ProcessorNode.process, so its errors reach the parent's handling).
   */
  handlesErrors: boolean;
  processor: Processor<unknown, unknown, unknown, unknown>;
  children: NodeInstance[];
}

interface Punctuation {
  node: NodeInstance;
  type: PunctuationType;
  intervalMs: number;
  nextMs: number;
  fn: (timestamp: number) => void;
  cancelled: boolean;
}

export class Task {
  readonly id: string;
  private readonly nodes = new Map<string, NodeInstance>();
  readonly stores = new Map<string, StateStore>();
  /**
   * Store name -> its engine and format, for restoration; `changelog` is the topic it is restored from: its own
   * changelog, or the source topic of a store connected to one (Topology.sourceChangelogs), null for neither.
   * `restoreRecord`, when present, takes each changelog record whole instead of the engine's put: a suppress
   * buffer reads its format version from the headers and its legacy record contexts from the record.
   */
  readonly engines = new Map<
    string,
    {
      engine: BytesKeyValueStore;
      timestamped: boolean;
      changelog: string | null;
      restoreRecord?: (r: ChangelogRecord) => void;
    }
  >();
  private streamTimeMs = -1;
  /**
   * Where the record being processed came from, its topic by its real name (what recordMetadata() reports and a
   * TopicNameExtractor reads); PUNCTUATION_METADATA in punctuations; null between records. Never mutated:
   * contexts share it.
   */
  private current: Readonly<RecordMetadata> | null = null;
  /**
   * A cached write's record context (Kafka's LRUCacheEntry context): the input record's place, and the timestamp
   * and headers of the record the writing processor is processing; set again while the entry is flushed.
   */
  private readonly cacheRecordContext: CacheRecordContext = {
    // Only the record's place is kept (not its key and value bytes), for as long as the entry is cached.
    capture: (): TaskRecordContext => ({
      metadata: this.current,
      timestampMs: this.currentTimestampMs,
      headers: this.currentHeaders,
    }),
    within: (captured, write) => {
      assert.ok('metadata' in captured, 'a cached entry holds the context its task captured');
      this.runWithin(captured as TaskRecordContext, write);
    },
  };
  /** The timestamp and headers of the record the current processor is processing (Kafka's context's). */
  private currentTimestampMs = 0;
  private currentHeaders: readonly Header[] = NO_HEADERS;
  private currentNode: NodeInstance | null = null;
  private readonly punctuations: Punctuation[] = [];
  /** Restored and initialized: its stores may be read from outside (interactive queries). */
  initialized = false;
  processed = 0;
  /** Records this task dropped (Kafka's task-level dropped-records-total). */
  droppedRecords = 0;
  /**
   * The context a failed changelog write reports: Kafka's logChange sends without a record context or a node, so
   * RecordCollectorImpl reports topic null, partition and offset -1, no headers and timestamp -1.
   */
  private readonly changelogContext: ProductionErrorHandlerContext;

  constructor(
    readonly subtopology: Subtopology,
    readonly partition: number,
    private readonly env: TaskEnvironment,
  ) {
    this.id = `${subtopology.id}_${partition}`;
    this.changelogContext = Object.freeze({
      topic: null,
      partition: -1,
      offset: -1,
      headers: NO_HEADERS,
      processorNodeId: null,
      taskId: this.id,
      timestamp: -1,
    });
    for (const storeName of subtopology.stores) this.openStore(storeName);
    for (const name of subtopology.nodes) {
      const node = env.topology.nodes.get(name)!;
      const processor =
        node.kind === 'processor'
          ? node.supplier()
          : node.kind === 'sink'
            ? this.sinkProcessor(node)
            : { process: () => {} };
      this.nodes.set(name, { name, processor, handlesErrors: node.kind === 'processor', children: [] });
    }
    for (const name of subtopology.nodes) {
      const node = env.topology.nodes.get(name)!;
      if (node.kind === 'source') continue;
      for (const p of node.parents) this.nodes.get(p)!.children.push(this.nodes.get(name)!);
    }
  }

  private openStore(name: string): void {
    const builder = this.env.topology.stores.get(name);
    assert.ok(builder, `store ${name} has no builder`);
    if (builder.suppressBuffer) {
      this.openSuppressBuffer(builder);
      return;
    }
    const engine = this.env.openEngine(builder, this.id);
    const changelog = builder.loggingEnabled ? this.env.changelogTopic(name) : null;
    const writer: ChangelogWriter | null =
      changelog === null
        ? null
        : {
            log: (key, value, timestamp) =>
              this.env.collector.send(
                changelog,
                key,
                value,
                timestamp,
                [],
                this.partition,
                this.changelogContext,
              ),
          };
    const restoredFrom = changelog ?? this.env.topology.sourceChangelogs.get(name) ?? null;
    const wrapped = builder.serdesFrom?.(this.env.defaultKeySerde, this.env.defaultValueSerde);
    const options = {
      name,
      engine,
      changelog: writer,
      serdeTopic: restoredFrom ?? name,
      keySerde: wrapped?.key ?? ((builder.keySerde ?? this.env.defaultKeySerde) as Serde<unknown>),
      valueSerde: wrapped?.value ?? ((builder.valueSerde ?? this.env.defaultValueSerde) as Serde<unknown>),
      recordTimestamp: () => this.currentTimestampMs,
    };
    if (builder.session !== null && builder.cachingEnabled && this.env.cacheBudget) {
      const store = new CachingSessionStore(options);
      store.enableCache(this.env.cacheBudget, this.cacheRecordContext);
      this.stores.set(name, store);
    } else if (builder.session !== null) this.stores.set(name, new SessionStore(options));
    else if (builder.window?.retainDuplicates)
      this.stores.set(name, new DuplicatesWindowStore({ ...options, windowSizeMs: builder.window.sizeMs }));
    else if (builder.window !== null && builder.cachingEnabled && this.env.cacheBudget) {
      const store = new CachingTimestampedWindowStore({ ...options, windowSizeMs: builder.window.sizeMs });
      store.enableCache(this.env.cacheBudget, this.cacheRecordContext);
      this.stores.set(name, store);
    } else if (builder.window !== null)
      this.stores.set(name, new TimestampedWindowStore({ ...options, windowSizeMs: builder.window.sizeMs }));
    else if (builder.cachingEnabled && this.env.cacheBudget) {
      // A DSL store, or a Processor API store whose builder asked for caching: the same cache either way.
      const store = builder.timestamped
        ? new CachingTimestampedStore(options)
        : new CachingKeyValueStore(options);
      store.enableCache(this.env.cacheBudget, this.cacheRecordContext);
      this.stores.set(name, store);
    } else
      this.stores.set(
        name,
        builder.timestamped ? new TimestampedStore(options) : new PlainKeyValueStore(options),
      );
    this.engines.set(name, { engine, timestamped: builder.timestamped, changelog: restoredFrom });
  }

  /** A suppress() buffer: in memory, restored through its own target, logged at commit (flushCaches). */
  private openSuppressBuffer(builder: StoreBuilder): void {
    const changelog = builder.loggingEnabled ? this.env.changelogTopic(builder.name) : null;
    const serdes = builder.serdesFrom?.(this.env.defaultKeySerde, this.env.defaultValueSerde);
    const buffer = new SuppressBuffer(
      builder.name,
      serdes?.key ?? ((builder.keySerde ?? this.env.defaultKeySerde) as Serde<unknown>),
      serdes?.value ?? ((builder.valueSerde ?? this.env.defaultValueSerde) as Serde<unknown>),
      changelog ?? builder.name,
      changelog === null
        ? null
        : // Kafka's buffer sends its changelog records without a timestamp: the producer stamps its clock.
          (key, value, headers) =>
            this.env.collector.send(
              changelog,
              key,
              value,
              this.env.wallClockMs(),
              headers,
              this.partition,
              this.changelogContext,
            ),
    );
    this.stores.set(builder.name, buffer);
    this.engines.set(builder.name, {
      engine: buffer.restoreTarget(),
      timestamped: false,
      changelog,
      restoreRecord: (r) => buffer.restoreRecord(r),
    });
  }

  /** Calls each processor's init, in the order the nodes were added; after the stores are restored. */
  init(): void {
    assert.ok(!this.initialized, `task ${this.id} initialized twice`);
    this.initialized = true;
    for (const node of this.nodes.values()) {
      this.currentNode = node;
      node.processor.init?.(this.contextFor(node));
    }
    this.currentNode = null;
  }

  process(raw: RawRecord): void {
    assert.ok(this.initialized, `task ${this.id} processes before init`);
    const source = this.env.topology.sourceNodeOfTopic(raw.topic);
    assert.ok(
      source && this.subtopology.nodes.includes(source.name),
      `task ${this.id} does not read ${raw.topic}`,
    );
    const keyDeserializer = source.keyDeserializer ?? this.env.defaultKeySerde;
    const valueDeserializer = resolveSerde(source.valueDeserializer, this.env.defaultValueSerde);
    const topic = this.env.realTopic(raw.topic);
    let key: unknown;
    let value: unknown;
    try {
      key = keyDeserializer.deserialize(topic, raw.key);
      value = valueDeserializer.deserialize(topic, raw.value);
    } catch (e) {
      if (e instanceof MissingSerdeError) throw e;
      const error = e instanceof Error ? e : new SerializationError(String(e));
      const response = this.env.deserializationExceptionHandler(raw, error);
      if (response === 'FAIL')
        throw new StreamsError(
          `Deserialization exception handler is set to fail upon a deserialization error (${topic}-${raw.partition} offset ${raw.offset}): ${error.message}`,
        );
      this.env.log(
        `skipping record of ${topic}-${raw.partition} at offset ${raw.offset}: it failed to deserialize (${error.message})`,
      );
      this.recordDropped();
      return;
    }
    const timestamp = this.extractTimestamp(source, raw, key, value);
    // A global task keeps every record, as Kafka's GlobalStateUpdateTask, which checks no timestamp.
    if (timestamp < 0 && !this.subtopology.global) {
      this.env.log(
        `skipping record of ${topic}-${raw.partition} at offset ${raw.offset}: invalid timestamp ${timestamp}`,
      );
      this.recordDropped();
      return;
    }
    this.current = { topic, partition: raw.partition, offset: raw.offset };
    this.currentTimestampMs = timestamp;
    if (timestamp > this.streamTimeMs) this.streamTimeMs = timestamp;
    const node = this.nodes.get(source.name)!;
    try {
      this.forwardFrom(node, new Record(key, value, timestamp, raw.headers), undefined);
    } catch (e) {
      // Kafka's StreamTask.process: a processing error the handler failed on ends the thread with this message.
      if (!(e instanceof FailedProcessingError)) throw e;
      throw new StreamsError(
        e.kafkaMessage ??
          `Exception caught in process. taskId=${this.id}, processor=${source.name}, topic=${topic}, partition=${raw.partition}, offset=${raw.offset}`,
        { cause: e.cause },
      );
    } finally {
      // Even when a processor throws (Kafka's StreamTask.process resets its context in a finally): a punctuation
      // or an error report that runs next must not see this record's place.
      this.current = null;
    }
    this.processed++;
    this.punctuate('STREAM_TIME', this.streamTimeMs);
  }

  private extractTimestamp(source: SourceNode, raw: RawRecord, key: unknown, value: unknown): number {
    // Kafka's global tasks take the record's own timestamp, whatever extractor their source names.
    if (this.subtopology.global) return raw.timestamp;
    const extractor = source.timestampExtractor ?? this.env.defaultTimestampExtractor;
    if (extractor === undefined) return raw.timestamp;
    // Kafka's default answers a valid record timestamp as it is: no record object for it on the hot path.
    if (extractor === FailOnInvalidTimestamp && raw.timestamp >= 0) return raw.timestamp;
    return extractor(
      {
        topic: raw.topic,
        partition: raw.partition,
        offset: raw.offset,
        timestamp: raw.timestamp,
        key,
        value,
      },
      this.streamTimeMs,
    );
  }

  /** Runs the punctuators of a kind that are due at `nowMs` (stream time or wall-clock time). */
  punctuate(type: PunctuationType, nowMs: number): void {
    for (const p of this.punctuations) {
      if (p.cancelled || p.type !== type || p.nextMs > nowMs) continue;
      p.nextMs = nowMs + p.intervalMs - ((nowMs - p.nextMs) % p.intervalMs);
      const previous = this.currentNode;
      const previousMetadata = this.current;
      this.currentNode = p.node;
      this.current = PUNCTUATION_METADATA;
      this.currentTimestampMs = nowMs;
      this.currentHeaders = NO_HEADERS;
      try {
        p.fn(nowMs);
      } catch (e) {
        this.punctuationFailed(p.node, nowMs, e);
      } finally {
        this.currentNode = previous;
        this.current = previousMetadata;
      }
    }
  }

  get streamTime(): number {
    return this.streamTimeMs;
  }

  private forwardFrom(
    node: NodeInstance,
    record: Record<unknown, unknown>,
    childName: string | undefined,
  ): void {
    // Each child sees the forwarded record's timestamp and headers as its context's; the forwarding processor
    // gets its own back once the call returns (Kafka's ProcessorContextImpl.forward restores its record context).
    const previousNode = this.currentNode;
    const previousTimestampMs = this.currentTimestampMs;
    const previousHeaders = this.currentHeaders;
    try {
      for (const child of node.children) {
        if (childName !== undefined && child.name !== childName) continue;
        this.currentNode = child;
        this.currentTimestampMs = record.timestamp;
        this.currentHeaders = record.headers;
        if (!child.handlesErrors) child.processor.process(record);
        else
          try {
            child.processor.process(record);
          } catch (e) {
            this.processingFailed(child, record, e);
          }
      }
    } finally {
      this.currentNode = previousNode;
      this.currentTimestampMs = previousTimestampMs;
      this.currentHeaders = previousHeaders;
    }
  }

  /** The processing exception handler of this task; null where errors go up as they are (a global task). */
  private get processingHandler(): ProcessingExceptionHandler | null {
    return this.subtopology.global ? null : (this.env.processingExceptionHandler ?? null);
  }

  /**
   * Whether an error a processor threw is one the processing exception handler is told of. Kafka's
   * ProcessorNode.process hands over every RuntimeException (a KafkaException with an error code, a ConfigException
   * or a StreamsException from a sink below included) but three: a FailedProcessingException (already handled
   * below), and a TaskMigratedException or TaskCorruptedException, which the thread handles; Brook's thread tells
   * which errors are task migrations (its producer fenced under EOS), and has no task corruption during processing.
   * A missing serde, itself or as a cause, is kept from the handler too (Kafka fails on it when the task
   * initializes, before any handler could be asked).
   */
  private handleable(e: unknown): e is Error {
    if (!(e instanceof Error) || e instanceof FailedProcessingError) return false;
    if (this.env.isTaskMigration?.(e)) return false;
    for (let c: unknown = e, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++)
      if (c instanceof MissingSerdeError) return false;
    return true;
  }

  /** Asks the handler about an error; a handler that throws or answers neither value fails the thread. */
  private askHandler(
    handler: ProcessingExceptionHandler,
    context: ErrorHandlerContext,
    record: Record<unknown, unknown> | null,
    error: Error,
  ): 'CONTINUE' | 'FAIL' {
    let response: unknown;
    try {
      response = handler(context, record, error);
    } catch (e) {
      response = e;
    }
    if (response === 'CONTINUE' || response === 'FAIL') return response;
    this.env.log(
      `Processing error callback failed after processing error for record of ${context.topic}-${context.partition} at offset ${context.offset}: ${error.message}`,
    );
    const fatal =
      response instanceof Error ? response : new Error('Invalid ProcessingExceptionHandler response.');
    throw new FailedProcessingError('Fatal user code error in processing error callback', fatal);
  }

  /**
   * Kafka's ProcessorNode.process catch: the node's error goes to the handler with the record the node was given
   * and the context it ran in; CONTINUE drops the record there (the parent goes on with its next child),
   * FAIL sends a FailedProcessingError up through the parents.
   */
  private processingFailed(node: NodeInstance, record: Record<unknown, unknown>, e: unknown): void {
    const handler = this.processingHandler;
    if (handler === null || !this.handleable(e)) throw e;
    const context = this.errorHandlerContext(node.name);
    const where = `processor node: ${node.name}, taskId: ${this.id}, source topic: ${context.topic}, source partition: ${context.partition}, source offset: ${context.offset}`;
    if (this.askHandler(handler, context, record, e) === 'FAIL') {
      this.env.log(
        `Exception caught during message processing, ${where}: ${e.message}. Processing exception handler is set to fail upon a processing error. If you would rather have the streaming pipeline continue after a processing error, please set the processing.exception.handler appropriately.`,
      );
      throw new FailedProcessingError(null, e);
    }
    this.env.log(`Exception caught during message processing, ${where}: ${e.message}`);
    this.recordDropped();
  }

  /**
   * Kafka's StreamTask.punctuate catch: the punctuator's error goes to the handler without a record, in the
   * punctuation's context; FAIL (or a failure below it) ends the thread with Kafka's message.
   */
  private punctuationFailed(node: NodeInstance, nowMs: number, e: unknown): void {
    const punctuating = `Exception caught while punctuating processor '${node.name}'`;
    if (e instanceof FailedProcessingError)
      throw e.kafkaMessage === null ? new StreamsError(punctuating, { cause: e.cause }) : e;
    const handler = this.processingHandler;
    if (handler === null || !this.handleable(e)) throw e;
    const context: ErrorHandlerContext = {
      ...this.errorHandlerContext(node.name),
      headers: NO_HEADERS,
      timestamp: nowMs,
    };
    if (this.askHandler(handler, context, null, e) === 'FAIL') {
      this.env.log(
        `${punctuating}: ${e.message}. Processing exception handler is set to fail upon a processing error. If you would rather have the streaming pipeline continue after a processing error, please set the processing.exception.handler appropriately.`,
      );
      throw new StreamsError(punctuating, { cause: e });
    }
    this.env.log(`${punctuating}, task ${this.id}: ${e.message}; going on`);
    this.recordDropped();
  }

  /**
   * A sink's serializer threw (Kafka's RecordCollectorImpl.handleException): a missing serde is Kafka's
   * "Failed to initialize serdes" error; anything else goes to the production exception handler's
   * handleSerializationException with the record as it was given. CONTINUE skips the record (counted as dropped);
   * FAIL throws Kafka's "Unable to serialize record" StreamsException, which a processor above hands to the
   * processing exception handler as any error of its own (Kafka 3.9 does the same); a handler that throws or
   * answers anything else is a fatal user code error.
   */
  private serializationFailed(
    sink: SinkNode,
    origin: SerializationExceptionOrigin,
    produced: {
      topic: string;
      partition: number | null;
      timestamp: number;
      key: unknown;
      value: unknown;
      headers: readonly Header[];
    },
    context: ProductionErrorHandlerContext,
    e: unknown,
  ): typeof SKIPPED {
    if (e instanceof MissingSerdeError)
      throw new StreamsError(
        `Failed to initialize ${origin === 'KEY' ? 'key' : 'value'} serdes for sink node ${sink.name}`,
        { cause: e },
      );
    const error = e instanceof Error ? e : new SerializationError(String(e));
    const handler = this.env.productionExceptionHandler ?? defaultProductionExceptionHandler;
    let response: unknown;
    try {
      response = handler.handleSerializationException?.(context, produced, error, origin) ?? 'FAIL';
    } catch (thrown) {
      response = thrown;
    }
    const where = `ProducerRecord(topic=[${produced.topic}], partition=[${produced.partition}], timestamp=[${produced.timestamp}]`;
    if (response === 'FAIL') throw new StreamsError(`Unable to serialize record. ${where}`, { cause: error });
    if (response !== 'CONTINUE') {
      this.env.log(
        `Production error callback failed after serialization error for record ${origin.toLowerCase()} of task ${this.id}, node ${sink.name}: ${error.message}`,
      );
      const fatal =
        response instanceof Error ? response : new Error('Invalid ProductionExceptionHandler response.');
      throw new FailedProcessingError('Fatal user code error in production error callback', fatal);
    }
    this.env.log(`Unable to serialize record, continue processing. ${where})`);
    this.recordDropped();
    return SKIPPED;
  }

  /** Where the current node runs: the record context's place, timestamp and headers (Kafka's ErrorHandlerContext). */
  private errorHandlerContext(nodeName: string): ErrorHandlerContext {
    const c = this.current;
    return {
      topic: c?.topic ?? null,
      partition: c?.partition ?? -1,
      offset: c?.offset ?? -1,
      headers: this.currentHeaders,
      processorNodeId: nodeName,
      taskId: this.id,
      timestamp: this.currentTimestampMs,
    };
  }

  private recordDropped(): void {
    this.droppedRecords++;
    this.env.onDroppedRecord?.();
  }

  /**
   * Runs `run` with `context` as the task's record context, then sets back the one before, even if `run` throws
   * (Kafka's setRecordContext before and after: a cache flush, a suppression's emit).
   */
  private runWithin(context: RecordContext, run: () => void): void {
    const previous: RecordContext = {
      metadata: this.current,
      timestampMs: this.currentTimestampMs,
      headers: this.currentHeaders,
    };
    this.current = context.metadata;
    this.currentTimestampMs = context.timestampMs;
    this.currentHeaders = context.headers;
    try {
      run();
    } finally {
      this.current = previous.metadata;
      this.currentTimestampMs = previous.timestampMs;
      this.currentHeaders = previous.headers;
    }
  }

  private contextFor(node: NodeInstance): InternalProcessorContext<unknown, unknown> {
    const task = this;
    return {
      applicationId: this.env.applicationId,
      taskId: this.id,
      forward(record, childName) {
        if (childName !== undefined && !node.children.some((c) => c.name === childName))
          throw new StreamsError(`Unknown downstream node: ${childName} of ${node.name}`);
        task.forwardFrom(node, record as Record<unknown, unknown>, childName);
      },
      recordMetadata(): RecordMetadata | null {
        const c = task.current;
        return c === null ? null : { topic: c.topic, partition: c.partition, offset: c.offset };
      },
      [runWithinRecordContext]: (context, run) => task.runWithin(context, run),
      currentStreamTimeMs: () => task.streamTimeMs,
      currentSystemTimeMs: () => task.env.wallClockMs(),
      appConfigs: () => task.env.appConfigs ?? {},
      getStateStore<S extends StateStore>(name: string): S {
        const store = task.stores.get(name) ?? task.env.globalStore?.(name);
        if (store === undefined)
          throw new StreamsError(
            `Processor ${node.name} has no access to StateStore ${name} (connect it first)`,
          );
        return store as S;
      },
      schedule(intervalMs, type, fn): Cancellable {
        assert.ok(intervalMs >= 1, 'The minimum supported scheduling interval is 1 millisecond.');
        const p: Punctuation = {
          node,
          type,
          intervalMs,
          nextMs: type === 'WALL_CLOCK_TIME' ? task.env.wallClockMs() + intervalMs : 0,
          fn,
          cancelled: false,
        };
        task.punctuations.push(p);
        return { cancel: () => void (p.cancelled = true) };
      },
      commit: () => task.env.requestCommit(),
      keySerde: () => task.env.defaultKeySerde,
      valueSerde: () => task.env.defaultValueSerde,
    };
  }

  private sinkProcessor(node: SinkNode): Processor<unknown, unknown> {
    const env = this.env;
    const task = this;
    return {
      process(record) {
        const logical =
          typeof node.topic === 'string'
            ? node.topic
            : node.topic(record.key, record.value, {
                topic: task.current?.topic ?? null,
                partition: task.current?.partition ?? -1,
                offset: task.current?.offset ?? -1,
              });
        const topic = env.realTopic(logical);
        const keySerializer = node.keySerializer ?? env.defaultKeySerde;
        const valueSerializer = resolveSerde(node.valueSerializer, env.defaultValueSerde);
        // A custom partitioner's choice comes first, as in Kafka, so that a serialization error reports it.
        const count = env.partitionsOf(topic);
        const chosen = node.partitioner?.(topic, record.key, record.value, count ?? -1);
        const context = task.errorHandlerContext(node.name);
        const serialized = (origin: SerializationExceptionOrigin): Buffer | null | typeof SKIPPED => {
          try {
            return origin === 'KEY'
              ? keySerializer.serialize(topic, record.key)
              : valueSerializer.serialize(topic, record.value);
          } catch (e) {
            const produced = {
              topic,
              partition: chosen ?? null,
              timestamp: record.timestamp,
              key: record.key,
              value: record.value,
              headers: record.headers,
            };
            return task.serializationFailed(node, origin, produced, context, e);
          }
        };
        const key = serialized('KEY');
        if (key === SKIPPED) return;
        const value = serialized('VALUE');
        if (value === SKIPPED) return;
        let partition = chosen;
        if (partition === undefined && count !== undefined && key !== null)
          partition = keyPartition(key, count);
        env.collector.send(topic, key, value, record.timestamp, record.headers, partition, context);
      },
    };
  }

  /**
   * Empties the record caches: their latest values go to the stores, changelogs and downstream. Called before
   * a commit flushes the producer, so that what they forward is acknowledged before the offsets are committed.
   * As Kafka's ProcessorStateManager.flushCache, a store that fails does not keep the others from flushing; the
   * first error is thrown after all.
   */
  flushCaches(): void {
    const first = new FirstError();
    for (const s of this.stores.values())
      if (
        s instanceof CachingTimestampedStore ||
        s instanceof CachingKeyValueStore ||
        s instanceof CachingTimestampedWindowStore ||
        s instanceof CachingSessionStore
      )
        this.flushing(first, s.name, 'cache of store', () => s.flushCache());
    // After the caches: what they forward may reach a suppression and change its buffer.
    for (const s of this.stores.values())
      if (s instanceof SuppressBuffer) this.flushing(first, s.name, 'cache of store', () => s.logDirty());
    first.rethrow();
  }

  /**
   * Flushes the stores' engines (the changelog records are the collector's to flush); as Kafka's
   * ProcessorStateManager.flush, every store, the first error thrown after.
   */
  flush(): void {
    const first = new FirstError();
    for (const s of this.stores.values()) this.flushing(first, s.name, 'state store', () => s.flush());
    first.rethrow();
  }

  /**
   * Runs one store's flush; an error is logged and kept if it is the first. One that is not a StreamsError (a
   * store's own failure) is wrapped with the task and the store named, as Kafka's "Failed to flush cache of store";
   * a StreamsError (a processor's below a cache, a handler's FAIL) is kept as it is.
   */
  private flushing(first: FirstError, store: string, what: string, flush: () => void): void {
    try {
      flush();
    } catch (e) {
      const message = `Failed to flush ${what} ${store}`;
      this.env.log(`${this.logPrefix}${message}: ${e instanceof Error ? e.message : String(e)}`);
      first.keep(
        e instanceof StreamsError ? e : new ProcessorStateError(`${this.logPrefix}${message}`, { cause: e }),
      );
    }
  }

  /** Kafka's log context of a task: "stream-thread [name] stream-task [0_1] ". */
  private get logPrefix(): string {
    const thread = this.env.threadName === undefined ? '' : `stream-thread [${this.env.threadName}] `;
    return `${thread}stream-task [${this.id}] `;
  }

  close(): void {
    for (const node of this.nodes.values()) node.processor.close?.();
    for (const s of this.stores.values()) s.close();
    this.stores.clear();
  }
}

/** The first of the errors of a loop that goes on past them, thrown once the loop is done. */
class FirstError {
  private error: unknown = undefined;
  private caught = false;

  keep(e: unknown): void {
    if (this.caught) return;
    this.caught = true;
    this.error = e;
  }

  rethrow(): void {
    if (this.caught) throw this.error;
  }
}
