// Public surface of Brook Streams (`brook/streams`): Kafka Streams' DSL and Processor API, the runtime and the
// test driver.

export {
  logAndContinue,
  logAndFail,
  type ProcessingGuarantee,
  type ResolvedConfig,
  StreamsConfig,
  StreamsConfigError,
  type StreamsProperties,
} from './config.js';
export {
  Branched,
  Consumed,
  Grouped,
  Joined,
  Materialized,
  Named,
  Produced,
  Repartitioned,
  StreamJoined,
  TableJoined,
} from './dsl-options.js';
export { ProcessorStateError, StreamsError } from './errors.js';
export { GlobalKTable } from './global-ktable.js';
export { JoinWindows } from './join-windows.js';
export {
  CloseOptions,
  type HostInfo,
  KafkaStreams,
  type KafkaStreamsState,
  type KeyQueryMetadata,
  type StateListener,
  type StreamsMetadata,
  type StreamsUncaughtExceptionHandler,
  type StreamThreadExceptionResponse,
  UNAVAILABLE_HOST,
} from './kafka-streams.js';
export { KeyValue } from './key-value.js';
export { ChangedSerde, KGroupedTable } from './kgrouped-table.js';
export { BranchedKStream, KStream, type Predicate } from './kstream.js';
export { type Aggregator, type Initializer, KGroupedStream, KTable, type Reducer } from './ktable.js';
export {
  type ErrorHandlerContext,
  logAndContinueProcessing,
  logAndFailProcessing,
  type ProcessingExceptionHandler,
  type ProcessingHandlerResponse,
} from './processing-exception-handler.js';
export {
  type Cancellable,
  Change,
  type Header,
  type Processor,
  type ProcessorContext,
  type ProcessorSupplier,
  type PunctuationType,
  Record,
  type RecordMetadata,
  type StateRestoreListener,
} from './processor.js';
export {
  defaultProductionExceptionHandler,
  type ProducedRecord,
  type ProductionErrorHandlerContext,
  type ProductionExceptionHandler,
  type ProductionHandlerResponse,
  type SerializationExceptionOrigin,
} from './production-exception-handler.js';
export {
  InvalidStateStoreException,
  type QueryableStoreType,
  QueryableStoreTypes,
  type ReadOnlySessionStore,
  type ReadOnlyWindowStore,
  StoreQueryParameters,
} from './queryable.js';
export type {
  DeserializationExceptionHandler,
  DeserializationHandlerResponse,
  RawRecord,
} from './runtime/task.js';
export { type Deserializer, type Serde, Serdes, SerializationError, type Serializer } from './serdes.js';
export { type Merger, SessionWindow, SessionWindowedKStream, SessionWindows } from './session-windows.js';
export { SlidingWindows } from './sliding-windows.js';
export { SessionStore, type StoredSession } from './state/session-store.js';
export { TimestampedStore } from './state/store-stack.js';
export {
  type KeyValueBytesStoreSupplier,
  type KeyValueStore,
  type ReadOnlyKeyValueStore,
  type SessionBytesStoreSupplier,
  type StateStore,
  StoreBuilder,
  Stores,
  type TimestampedKeyValueStore,
  type ValueAndTimestamp,
  type WindowBytesStoreSupplier,
} from './state/stores.js';
export { TimestampedWindowStore } from './state/window-store.js';
export { StreamsBuilder } from './streams-builder.js';
export {
  BufferConfig,
  type BufferFullStrategy,
  type BufferLogging,
  EagerBufferConfig,
  StrictBufferConfig,
  Suppressed,
} from './suppress.js';
export { TestInputTopic, TestOutputTopic, type TestRecord, TopologyTestDriver } from './test-driver.js';
export {
  FailOnInvalidTimestamp,
  LogAndSkipOnInvalidTimestamp,
  UsePartitionTimeOnInvalidTimestamp,
  WallclockTimestampExtractor,
} from './timestamp-extractors.js';
export {
  type StreamPartitioner,
  type TimestampExtractor,
  type TopicNameExtractor,
  Topology,
  TopologyError,
} from './topology.js';
export type { TopologyDescription } from './topology-description.js';
export { TimeWindow, TimeWindowedKStream, TimeWindows, Windowed, WindowedSerdes } from './windows.js';
