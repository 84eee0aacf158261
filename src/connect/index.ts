// Brook Connect's public surface for connector authors (the package export `brook/connect`): the connector
// API, the data model, converters, config definitions and transform interfaces.

export {
  ConfigDef,
  type ConfigKey,
  type ConfigKeyInput,
  type ConfigType,
  type ConfigValue,
  type Importance,
  nonEmptyString,
  nonEmptyStringWithoutControlChars,
  oneOf,
  Password,
  range,
  type Validator,
  type Width,
} from './api/config-def.js';
export {
  type CommitOffsets,
  Connector,
  type ConnectorContext,
  type ErrantRecordReporter,
  type OffsetStorageReader,
  type PluginLoggers,
  RetriableException,
  SinkConnector,
  type SinkOffsets,
  SinkTask,
  type SinkTaskContext,
  SourceConnector,
  type SourceOffsets,
  SourceTask,
  type SourceTaskContext,
  type Task,
  type TaskConfig,
  type TopicPartition,
  type TransactionContext,
} from './api/connector.js';
export {
  type ConnectHeader,
  ConnectRecord,
  SinkRecord,
  type SourceOffset,
  type SourcePartition,
  SourceRecord,
} from './api/records.js';
export * from './converters/index.js';
export * from './data/index.js';
export { ConfigException, ConnectException, DataException } from './errors.js';
export type { Predicate, Transformation } from './transforms/transformation.js';
