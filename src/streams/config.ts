// StreamsConfig: Kafka Streams' configuration keys, their defaults, and their checks. Values may be given as
// strings (as in a properties file) or as numbers; serdes and handlers as objects or by Kafka's names.

import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type StreamsClientConfigs, streamsClientConfigs } from './client-configs.js';
import { MissingSerdeError, StreamsConfigError } from './errors.js';
import {
  type ProcessingExceptionHandler,
  processingExceptionHandlerOf,
} from './processing-exception-handler.js';
import {
  type ProductionExceptionHandler,
  productionExceptionHandlerOf,
} from './production-exception-handler.js';
import { RACK_AWARE_STRATEGIES, type RackAwareStrategy } from './runtime/rack-aware-task-assignor.js';
import { isUpgradeFrom, UPGRADE_FROM_VALUES, type UpgradeFrom } from './runtime/upgrade-from.js';
import { type Serde, serdeByName } from './serdes.js';
import { timestampExtractorOf } from './timestamp-extractors.js';
import type { TimestampExtractor } from './topology.js';

export { StreamsConfigError };

import type { DeserializationExceptionHandler, RawRecord } from './runtime/task.js';

export const StreamsConfig = {
  APPLICATION_ID_CONFIG: 'application.id',
  BOOTSTRAP_SERVERS_CONFIG: 'bootstrap.servers',
  PROCESSING_GUARANTEE_CONFIG: 'processing.guarantee',
  COMMIT_INTERVAL_MS_CONFIG: 'commit.interval.ms',
  REPARTITION_PURGE_INTERVAL_MS_CONFIG: 'repartition.purge.interval.ms',
  MAX_TASK_IDLE_MS_CONFIG: 'max.task.idle.ms',
  BUFFERED_RECORDS_PER_PARTITION_CONFIG: 'buffered.records.per.partition',
  STATE_DIR_CONFIG: 'state.dir',
  NUM_STREAM_THREADS_CONFIG: 'num.stream.threads',
  NUM_STANDBY_REPLICAS_CONFIG: 'num.standby.replicas',
  ACCEPTABLE_RECOVERY_LAG_CONFIG: 'acceptable.recovery.lag',
  MAX_WARMUP_REPLICAS_CONFIG: 'max.warmup.replicas',
  PROBING_REBALANCE_INTERVAL_MS_CONFIG: 'probing.rebalance.interval.ms',
  RACK_AWARE_ASSIGNMENT_TAGS_CONFIG: 'rack.aware.assignment.tags',
  RACK_AWARE_ASSIGNMENT_STRATEGY_CONFIG: 'rack.aware.assignment.strategy',
  RACK_AWARE_ASSIGNMENT_TRAFFIC_COST_CONFIG: 'rack.aware.assignment.traffic_cost',
  RACK_AWARE_ASSIGNMENT_NON_OVERLAP_COST_CONFIG: 'rack.aware.assignment.non_overlap_cost',
  CLIENT_TAG_PREFIX: 'client.tag.',
  /** The prefix of the properties that configure every internal topic (Kafka's StreamsConfig.TOPIC_PREFIX). */
  TOPIC_PREFIX: 'topic.',
  DEFAULT_KEY_SERDE_CLASS_CONFIG: 'default.key.serde',
  DEFAULT_VALUE_SERDE_CLASS_CONFIG: 'default.value.serde',
  DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG: 'default.deserialization.exception.handler',
  PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG: 'processing.exception.handler',
  DEFAULT_PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG: 'default.production.exception.handler',
  DEFAULT_TIMESTAMP_EXTRACTOR_CLASS_CONFIG: 'default.timestamp.extractor',
  REPLICATION_FACTOR_CONFIG: 'replication.factor',
  CACHE_MAX_BYTES_BUFFERING_CONFIG: 'cache.max.bytes.buffering',
  STATESTORE_CACHE_MAX_BYTES_CONFIG: 'statestore.cache.max.bytes',
  APPLICATION_SERVER_CONFIG: 'application.server',
  WINDOW_STORE_CHANGE_LOG_ADDITIONAL_RETENTION_MS_CONFIG: 'windowstore.changelog.additional.retention.ms',
  UPGRADE_FROM_CONFIG: 'upgrade.from',
  TOPOLOGY_OPTIMIZATION_CONFIG: 'topology.optimization',
  NO_OPTIMIZATION: 'none',
  OPTIMIZE: 'all',
  REUSE_KTABLE_SOURCE_TOPICS: 'reuse.ktable.source.topics',
  MERGE_REPARTITION_TOPICS: 'merge.repartition.topics',
  SINGLE_STORE_SELF_JOIN: 'single.store.self.join',
  /** Brook's: the module each worker thread imports to build the topology (stream threads as worker threads). */
  TOPOLOGY_MODULE_CONFIG: 'brook.topology.module',
  /** Brook's: the module's export that builds the topology (default buildTopology). */
  TOPOLOGY_MODULE_EXPORT_CONFIG: 'brook.topology.module.export',
  /** Brook's: the latest assignment user data version spoken (7-11), lower only to act as an older instance. */
  ASSIGNMENT_LATEST_SUPPORTED_VERSION_CONFIG: 'brook.assignment.latest.supported.version',
  AT_LEAST_ONCE: 'at_least_once',
  EXACTLY_ONCE_V2: 'exactly_once_v2',
} as const;

/** Kafka's default for statestore.cache.max.bytes: 10 MiB. */
const DEFAULT_CACHE_MAX_BYTES = 10 * 1024 * 1024;

export type ProcessingGuarantee = 'at_least_once' | 'exactly_once_v2';

export type StreamsProperties = {
  'application.id'?: string;
  'bootstrap.servers'?: string;
  'processing.guarantee'?: ProcessingGuarantee;
  'commit.interval.ms'?: number | string;
  'repartition.purge.interval.ms'?: number | string;
  'max.task.idle.ms'?: number | string;
  'buffered.records.per.partition'?: number | string;
  'state.dir'?: string;
  'num.stream.threads'?: number | string;
  'num.standby.replicas'?: number | string;
  'acceptable.recovery.lag'?: number | string;
  'max.warmup.replicas'?: number | string;
  'probing.rebalance.interval.ms'?: number | string;
  'rack.aware.assignment.tags'?: string | string[];
  'rack.aware.assignment.strategy'?: RackAwareStrategy;
  'rack.aware.assignment.traffic_cost'?: number | string;
  'rack.aware.assignment.non_overlap_cost'?: number | string;
  /** The consumers' client.rack: the rack this instance runs in (KIP-925 placement, follower fetching). */
  'client.rack'?: string;
  'default.key.serde'?: Serde<unknown> | string;
  'default.value.serde'?: Serde<unknown> | string;
  'default.deserialization.exception.handler'?: DeserializationExceptionHandler | string;
  /**
   * What a processor's (or punctuator's) error does (KIP-1033): a function answering 'CONTINUE' (drop the record)
   * or 'FAIL', or Kafka's LogAndFailProcessingExceptionHandler (the default) / LogAndContinueProcessingExceptionHandler.
   */
  'processing.exception.handler'?: ProcessingExceptionHandler | string;
  /**
   * What a record that cannot be written does: an object with `handle` (a send the producer failed, e.g.
   * MESSAGE_TOO_LARGE) and optionally `handleSerializationException` (a sink's serializer threw), each answering
   * 'CONTINUE' (skip the record) or 'FAIL'; a function is taken as `handle`; or Kafka's
   * DefaultProductionExceptionHandler (the default, FAIL) by name.
   */
  'default.production.exception.handler'?:
    | ProductionExceptionHandler
    | ProductionExceptionHandler['handle']
    | string;
  /**
   * The timestamp extractor of the sources without their own (Consumed.withTimestampExtractor): a function, or
   * one of Kafka's by class name; Kafka's default FailOnInvalidTimestamp fails on a negative record timestamp.
   */
  'default.timestamp.extractor'?: TimestampExtractor | string;
  'replication.factor'?: number | string;
  'cache.max.bytes.buffering'?: number | string;
  'statestore.cache.max.bytes'?: number | string;
  'application.server'?: string;
  'client.id'?: string;
  'windowstore.changelog.additional.retention.ms'?: number | string;
  /**
   * The release a rolling upgrade starts from ('0.10.0' to '3.8', Kafka's UpgradeFromValues), set during its
   * first bounce only; checked when the config is resolved.
   */
  'upgrade.from'?: UpgradeFrom | (string & {}) | null;
  'topology.optimization'?: string;
  /**
   * A module (file URL or path) whose export builds the same topology: each stream thread then runs in a worker
   * thread of its own (several cores), which imports it; without it the threads share the event loop.
   */
  'brook.topology.module'?: string;
  'brook.topology.module.export'?: string;
  /**
   * The latest SubscriptionInfo / AssignmentInfo version this instance speaks (7 to 11, default 11): lower only to
   * act as an older Kafka Streams instance, e.g. to try version probing (KIP-268).
   */
  'brook.assignment.latest.supported.version'?: number | string;
} & { [key: string]: unknown };

export interface ResolvedConfig {
  applicationId: string;
  /** The properties as the application gave them (Kafka's ProcessorContext.appConfigs()). */
  appConfigs: Readonly<StreamsProperties>;
  bootstrapServers: string;
  processingGuarantee: ProcessingGuarantee;
  commitIntervalMs: number;
  /**
   * repartition.purge.interval.ms: how often, at most, a thread deletes the consumed records of the repartition
   * topics it reads, up to their committed offsets (Kafka's default 30000).
   */
  repartitionPurgeIntervalMs: number;
  stateDir: string;
  numStreamThreads: number;
  /** num.standby.replicas: standby tasks per task, each on another instance (default 0). */
  numStandbyReplicas: number;
  /** acceptable.recovery.lag: changelog records an instance may lack and still count as caught up (10000). */
  acceptableRecoveryLag: number;
  /** max.warmup.replicas: warm-up replicas the assignment may hold at once (2). */
  maxWarmupReplicas: number;
  /** probing.rebalance.interval.ms: how soon a rebalance follows one that placed warm-ups (600000). */
  probingRebalanceIntervalMs: number;
  /** rack.aware.assignment.tags: the client tag keys standby replicas are spread over (KIP-708). */
  rackAwareAssignmentTags: string[];
  /** client.tag.<key>=<value>: this instance's tags. */
  clientTags: Record<string, string>;
  /** rack.aware.assignment.strategy (KIP-925): none (default), min_traffic or balance_subtopology. */
  rackAwareAssignmentStrategy: RackAwareStrategy;
  /** rack.aware.assignment.traffic_cost / non_overlap_cost; null: Kafka's defaults per task kind. */
  rackAwareTrafficCost: number | null;
  rackAwareNonOverlapCost: number | null;
  replicationFactor: number;
  defaultKeySerde: Serde<unknown>;
  defaultValueSerde: Serde<unknown>;
  deserializationExceptionHandler: DeserializationExceptionHandler;
  /** processing.exception.handler: what a processor's error does to its record (LogAndFail by default). */
  processingExceptionHandler: ProcessingExceptionHandler;
  /** default.production.exception.handler: what a record that cannot be written does (FAIL by default). */
  productionExceptionHandler: ProductionExceptionHandler;
  defaultTimestampExtractor: TimestampExtractor;
  /**
   * The base of the clients' ids: client.id, or when it is unset or empty Kafka's `<application.id>-<process id>`,
   * which withProcessId() completes once the process id is known (until then the application id alone).
   */
  clientId: string;
  /** client.id as given (null: unset or empty, the client id is generated). */
  userClientId: string | null;
  /** statestore.cache.max.bytes (or the older cache.max.bytes.buffering): all threads' record caches together. */
  cacheMaxBytes: number;
  /** application.server: this instance's `host:port` for interactive queries (null: none). */
  applicationServer: string | null;
  /** How much longer a window or session store's changelog keeps records than the store (1 day). */
  windowStoreChangelogAdditionalRetentionMs: number;
  /**
   * The `topic.`-prefixed properties without their prefix (Kafka's StreamsConfig.topicPrefix): configs of every
   * internal topic the application creates, over the library's defaults and under a store's own log config.
   */
  topicConfigs: Record<string, string>;
  /**
   * The settings of the instance's clients from the client keys of the properties: unprefixed, `consumer.`,
   * `main.consumer.`, `restore.consumer.`, `global.consumer.`, `producer.`, `admin.` (Kafka's layering).
   */
  clients: StreamsClientConfigs;
  /** How long a task waits for data on an input partition known to have none before it processes the others; -1: never. */
  maxTaskIdleMs: number;
  /** Records a task holds per input partition before the partition is paused. */
  bufferedRecordsPerPartition: number;
  /** brook.topology.module as a URL: stream threads run in worker threads that import it (null: on the event loop). */
  topologyModule: string | null;
  /** brook.topology.module.export: the export of that module that builds the topology. */
  topologyModuleExport: string;
  /** brook.assignment.latest.supported.version: the latest user data version spoken (11). */
  assignmentLatestSupportedVersion: number;
  /** upgrade.from: the release a rolling upgrade starts from (null: none). */
  upgradeFrom: UpgradeFrom | null;
  /** topology.optimization: the optimizations asked for ("all" spelled out; none: empty). Brook applies none. */
  topologyOptimizations: string[];
}

function int(props: StreamsProperties, key: string, fallback: number, min: number): number {
  const raw = props[key];
  if (raw === undefined || raw === null) return fallback;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration ${key}: at least ${min} expected`,
    );
  return n;
}

/** brook.assignment.latest.supported.version: 7 (the oldest AssignmentInfo layout Brook writes) to 11. */
function assignmentVersion(props: StreamsProperties): number {
  const key = 'brook.assignment.latest.supported.version';
  const v = int(props, key, 11, 7);
  if (v > 11)
    throw new StreamsConfigError(`Invalid value ${v} for configuration ${key}: at most 11 expected`);
  return v;
}

/**
 * The serde used where none was given and none is configured. Kafka 3 has none and fails; Brook writes a string
 * as UTF-8 and a Buffer as it is, and reads bytes back as a UTF-8 string, so that an application of strings
 * (word count) runs without configuring serdes, in the bytes Kafka's StringSerde writes. Anything else gets
 * Kafka's error.
 */
function unconfiguredSerde(kind: 'key' | 'value'): Serde<unknown> {
  const fail = (): never => {
    throw new MissingSerdeError(
      `Please specify a ${kind} serde or set one through StreamsConfig#DEFAULT_${kind.toUpperCase()}_SERDE_CLASS_CONFIG`,
    );
  };
  return {
    serialize: (_topic, data) => {
      if (data === null || data === undefined) return null;
      if (typeof data === 'string') return Buffer.from(data, 'utf8');
      if (Buffer.isBuffer(data)) return data;
      return fail();
    },
    deserialize: (_topic, data) => (data === null || data === undefined ? null : data.toString('utf8')),
  };
}

function serde(props: StreamsProperties, key: string, kind: 'key' | 'value'): Serde<unknown> {
  const raw = props[key];
  if (raw === undefined || raw === null) return unconfiguredSerde(kind);
  if (typeof raw === 'string') return serdeByName(raw);
  return raw as Serde<unknown>;
}

export const logAndContinue: DeserializationExceptionHandler = () => 'CONTINUE';
export const logAndFail: DeserializationExceptionHandler = () => 'FAIL';

function handler(props: StreamsProperties): DeserializationExceptionHandler {
  const raw = props['default.deserialization.exception.handler'];
  if (raw === undefined || raw === null) return logAndFail;
  if (typeof raw === 'function') return raw as DeserializationExceptionHandler;
  const name = String(raw).replace(/^org\.apache\.kafka\.streams\.errors\./, '');
  if (name === 'LogAndContinueExceptionHandler' || name === 'LogAndContinue') return logAndContinue;
  if (name === 'LogAndFailExceptionHandler' || name === 'LogAndFail') return logAndFail;
  throw new StreamsConfigError(`Invalid value ${name} for default.deserialization.exception.handler`);
}

function applicationServer(props: StreamsProperties): string | null {
  const raw = props['application.server'];
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || !/^[^:]+:\d+$/.test(raw))
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration application.server: host:port expected`,
    );
  return raw;
}

/** Kafka's limits on client tags (StreamsConfig): five tags, keys of 20 and values of 30 characters at most. */
const MAX_CLIENT_TAGS = 5;
const MAX_TAG_KEY_LENGTH = 20;
const MAX_TAG_VALUE_LENGTH = 30;

/** rack.aware.assignment.tags and the client.tag.* keys, checked as Kafka checks them. */
function rackAwareness(props: StreamsProperties): {
  rackAwareAssignmentTags: string[];
  clientTags: Record<string, string>;
} {
  const clientTags: Record<string, string> = {};
  for (const [key, value] of Object.entries(props)) {
    if (!key.startsWith('client.tag.')) continue;
    const tag = key.slice('client.tag.'.length);
    const v = String(value);
    if (tag.length === 0 || tag.length > MAX_TAG_KEY_LENGTH)
      throw new StreamsConfigError(
        `Invalid value ${tag} for configuration client.tag.: Tag key exceeds maximum length of ${MAX_TAG_KEY_LENGTH}.`,
      );
    if (v.length > MAX_TAG_VALUE_LENGTH)
      throw new StreamsConfigError(
        `Invalid value ${v} for configuration client.tag.: Tag value exceeds maximum length of ${MAX_TAG_VALUE_LENGTH}.`,
      );
    clientTags[tag] = v;
  }
  if (Object.keys(clientTags).length > MAX_CLIENT_TAGS)
    throw new StreamsConfigError(
      `Invalid value ${Object.keys(clientTags).length} for configuration client.tag.: At most ${MAX_CLIENT_TAGS} client tags can be specified using client.tag. prefix.`,
    );
  const raw = props['rack.aware.assignment.tags'];
  const tags = (Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(',') : [])
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  if (tags.length > MAX_CLIENT_TAGS)
    throw new StreamsConfigError(
      `Invalid value ${tags.join(',')} for configuration rack.aware.assignment.tags: exceeds maximum list size of ${MAX_CLIENT_TAGS}.`,
    );
  for (const t of tags)
    if (!(t in clientTags))
      throw new StreamsConfigError(
        `Invalid value ${tags.join(',')} for configuration rack.aware.assignment.tags: Contains invalid value [${t}] which doesn't have corresponding tag set via [client.tag.] prefix.`,
      );
  return { rackAwareAssignmentTags: tags, clientTags };
}

/** The `topic.<name>` properties as `<name>` -> value text; null values are left out, as Kafka leaves them. */
function topicConfigs(props: StreamsProperties): Record<string, string> {
  const out: Record<string, string> = {};
  const prefix = StreamsConfig.TOPIC_PREFIX;
  for (const [key, value] of Object.entries(props)) {
    if (!key.startsWith(prefix) || key.length === prefix.length) continue;
    if (value === null || value === undefined) continue;
    out[key.slice(prefix.length)] = String(value);
  }
  return out;
}

const OPTIMIZATIONS = ['reuse.ktable.source.topics', 'merge.repartition.topics', 'single.store.self.join'];

/**
 * topology.optimization, checked as Kafka's StreamsConfig.verifyTopologyOptimizationConfigs: "none" (default),
 * "all", or a comma-separated list of single optimizations; "none" or "all" only alone. Answers the optimizations
 * asked for, "all" spelled out.
 */
export function topologyOptimizations(props: Readonly<Record<string, unknown>>): string[] {
  const raw = props['topology.optimization'];
  if (raw === undefined || raw === null) return [];
  const given = String(raw)
    .trim()
    .split(/\s*,\s*/);
  const accepted =
    'Acceptable values are: "none", "all", or a comma separated list of specific optimizations: ' +
    `(${OPTIMIZATIONS.map((o) => `"${o}"`).join(', ')}).`;
  if ((given.includes('none') || given.includes('all')) && given.length > 1)
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration topology.optimization: "${String(raw)}" is not a valid ` +
        `optimization config. ${accepted}`,
    );
  for (const o of given)
    if (o !== 'none' && o !== 'all' && !OPTIMIZATIONS.includes(o))
      throw new StreamsConfigError(
        `Invalid value ${String(raw)} for configuration topology.optimization: Unrecognized config. ${accepted}`,
      );
  if (given[0] === 'all') return [...OPTIMIZATIONS];
  return given[0] === 'none' ? [] : [...new Set(given)];
}

/** upgrade.from: null or one of Kafka's UpgradeFromValues, checked as Kafka's ValidString does. */
function upgradeFrom(props: StreamsProperties): UpgradeFrom | null {
  const raw = props['upgrade.from'];
  if (raw === undefined || raw === null) return null;
  if (!isUpgradeFrom(raw))
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration upgrade.from: String must be one of: ${['null', ...UPGRADE_FROM_VALUES].join(', ')}`,
    );
  return raw;
}

function rackAwareStrategy(props: StreamsProperties): RackAwareStrategy {
  const raw = props['rack.aware.assignment.strategy'] ?? 'none';
  if (!RACK_AWARE_STRATEGIES.includes(raw as RackAwareStrategy))
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration rack.aware.assignment.strategy: String must be one of: ${RACK_AWARE_STRATEGIES.join(', ')}`,
    );
  return raw as RackAwareStrategy;
}

/** Checks and completes the properties; `requireConnection` for KafkaStreams (not for the test driver). */
export function resolveConfig(props: StreamsProperties, requireConnection: boolean): ResolvedConfig {
  const applicationId = props['application.id'];
  if (requireConnection && (typeof applicationId !== 'string' || applicationId.length === 0))
    throw new StreamsConfigError(
      'Missing required configuration "application.id" which has no default value.',
    );
  const bootstrapServers = props['bootstrap.servers'];
  if (requireConnection && (typeof bootstrapServers !== 'string' || bootstrapServers.length === 0))
    throw new StreamsConfigError(
      'Missing required configuration "bootstrap.servers" which has no default value.',
    );
  const guarantee = props['processing.guarantee'] ?? 'at_least_once';
  if (guarantee !== 'at_least_once' && guarantee !== 'exactly_once_v2')
    throw new StreamsConfigError(
      `Invalid value ${String(guarantee)} for configuration processing.guarantee: String must be one of: at_least_once, exactly_once_v2`,
    );
  const appId = applicationId ?? 'dummy-topology-test-driver-app-id';
  const givenClientId = userClientId(props);
  return {
    applicationId: appId,
    appConfigs: { ...props },
    bootstrapServers: bootstrapServers ?? '',
    processingGuarantee: guarantee,
    commitIntervalMs: int(props, 'commit.interval.ms', guarantee === 'at_least_once' ? 30_000 : 100, 0),
    repartitionPurgeIntervalMs: int(props, 'repartition.purge.interval.ms', 30_000, 0),
    maxTaskIdleMs: int(props, 'max.task.idle.ms', 0, -1),
    bufferedRecordsPerPartition: int(props, 'buffered.records.per.partition', 1000, 1),
    stateDir: props['state.dir'] ?? join(tmpdir(), 'kafka-streams'),
    numStreamThreads: int(props, 'num.stream.threads', 1, 1),
    numStandbyReplicas: int(props, 'num.standby.replicas', 0, 0),
    acceptableRecoveryLag: int(props, 'acceptable.recovery.lag', 10_000, 0),
    maxWarmupReplicas: int(props, 'max.warmup.replicas', 2, 1),
    // Kafka refuses less than a minute; Brook takes any positive interval (tests probe within seconds).
    probingRebalanceIntervalMs: int(props, 'probing.rebalance.interval.ms', 600_000, 1),
    ...rackAwareness(props),
    rackAwareAssignmentStrategy: rackAwareStrategy(props),
    rackAwareTrafficCost:
      props['rack.aware.assignment.traffic_cost'] === undefined
        ? null
        : int(props, 'rack.aware.assignment.traffic_cost', 0, 0),
    rackAwareNonOverlapCost:
      props['rack.aware.assignment.non_overlap_cost'] === undefined
        ? null
        : int(props, 'rack.aware.assignment.non_overlap_cost', 0, 0),
    replicationFactor: int(props, 'replication.factor', -1, -1),
    defaultKeySerde: serde(props, 'default.key.serde', 'key'),
    defaultValueSerde: serde(props, 'default.value.serde', 'value'),
    deserializationExceptionHandler: handler(props),
    processingExceptionHandler: processingExceptionHandlerOf(props['processing.exception.handler']),
    productionExceptionHandler: productionExceptionHandlerOf(props['default.production.exception.handler']),
    defaultTimestampExtractor: timestampExtractorOf(props['default.timestamp.extractor']),
    clientId: givenClientId ?? appId,
    userClientId: givenClientId,
    applicationServer: applicationServer(props),
    cacheMaxBytes:
      props['statestore.cache.max.bytes'] !== undefined
        ? int(props, 'statestore.cache.max.bytes', DEFAULT_CACHE_MAX_BYTES, 0)
        : int(props, 'cache.max.bytes.buffering', DEFAULT_CACHE_MAX_BYTES, 0),
    windowStoreChangelogAdditionalRetentionMs: int(
      props,
      'windowstore.changelog.additional.retention.ms',
      86_400_000,
      0,
    ),
    topicConfigs: topicConfigs(props),
    clients: streamsClientConfigs(props, guarantee === 'exactly_once_v2'),
    topologyModule: topologyModule(props),
    topologyModuleExport: nonEmpty(props, 'brook.topology.module.export') ?? 'buildTopology',
    assignmentLatestSupportedVersion: assignmentVersion(props),
    upgradeFrom: upgradeFrom(props),
    topologyOptimizations: topologyOptimizations(props),
  };
}

/** client.id; Kafka takes an empty one (its default) as unset. */
function userClientId(props: StreamsProperties): string | null {
  const raw = props['client.id'];
  return raw === undefined || raw === null || raw === '' ? null : raw;
}

/**
 * The config with the client id Kafka's KafkaStreams gives an instance without client.id:
 * `<application.id>-<process id>`, so its threads' clients are `<that>-StreamThread-<n>-consumer` and so on.
 */
export function withProcessId(config: ResolvedConfig, processId: string): ResolvedConfig {
  if (config.userClientId !== null) return config;
  return { ...config, clientId: `${config.applicationId}-${processId}` };
}

function nonEmpty(props: StreamsProperties, key: string): string | null {
  const raw = props[key];
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || raw.length === 0)
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration ${key}: a non-empty string expected`,
    );
  return raw;
}

/** brook.topology.module as a URL a worker can import: a URL as given, a path resolved against the working directory. */
function topologyModule(props: StreamsProperties): string | null {
  const raw = nonEmpty(props, 'brook.topology.module');
  if (raw === null) return null;
  return /^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^[a-z]:[\\/]/i.test(raw)
    ? raw
    : pathToFileURL(resolve(raw)).href;
}

export type { RawRecord };
