// BrokerConfig: the typed, resolved configuration the broker runs with, built from a merged text map (see
// config-layers.ts). This is where Kafka's precedence rules and cross-key checks live: node.id and broker.id
// name the same thing, log.dirs wins over log.dir, advertised.listeners defaults to listeners, the
// .ms/.minutes/.hours families are resolved through the topic defaults (logDefaults), and ZooKeeper's
// connection timeout defaults to its session timeout. Immutable once built; a dynamic change builds a new one.

import { BROKER_KEYS, brokerKey, listenerKeyName } from './broker-keys.js';
import { ConfigError } from './config-error.js';
import { staticOnly } from './config-layers.js';
import type { ConfigValue } from './config-types.js';
import { type Listener, resolveListeners, type SecurityProtocol } from './listeners.js';
import { ParsedConfig } from './parsed-config.js';
import { resolveTopicConfig } from './topic-config.js';
import { type TopicLogSettings, toTopicLogSettings } from './topic-log-settings.js';
import { splitList } from './value-codec.js';

/**
 * How Kafka's KafkaConfig words a requirement between keys (Scala's require), at startup and in a dynamic change's
 * refusal alike.
 */
const REQUIREMENT = 'requirement failed: ';

export interface BrokerConfig {
  /** -1 when neither broker.id nor node.id is set: take the id from meta.properties or generate one. */
  readonly brokerId: number;
  readonly brokerIdGenerationEnable: boolean;
  readonly reservedBrokerMaxId: number;
  readonly brokerRack: string | null;
  /** replica.selector.class: whether consumers are pointed to a replica in their rack (KIP-392). */
  readonly replicaSelector: ReplicaSelector;

  readonly listeners: readonly Listener[];
  /** listeners when advertised.listeners is unset. A '' host is advertised as this machine's host name. */
  readonly advertisedListeners: readonly Listener[];
  readonly interBrokerListenerName: string;
  readonly interBrokerSecurityProtocol: SecurityProtocol;

  /** null: the embedded single-node metadata store under the first log dir. */
  readonly zookeeperConnect: string | null;
  readonly zookeeperSessionTimeoutMs: number;
  readonly zookeeperConnectionTimeoutMs: number;
  readonly zookeeperMaxInFlightRequests: number;

  readonly logDirs: readonly string[];
  readonly numPartitions: number;
  readonly defaultReplicationFactor: number;
  readonly autoCreateTopicsEnable: boolean;
  readonly deleteTopicEnable: boolean;
  /** Broker-wide defaults of every topic-level setting (what a topic without overrides gets). */
  readonly logDefaults: TopicLogSettings;
  readonly logRetentionCheckIntervalMs: number;
  readonly logFlushOffsetCheckpointIntervalMs: number;
  readonly logFlushStartOffsetCheckpointIntervalMs: number;
  readonly logCleanerEnable: boolean;
  readonly logCleanerThreads: number;
  readonly logCleanerDedupeBufferSize: number;
  readonly logCleanerBackoffMs: number;
  readonly brookLogFlushGroupCommitEnable: boolean;
  readonly brookLogFlushGroupCommitMaxDelayMs: number;
  readonly brookNetworkFramePoolBytes: number;
  /** brook.metrics.listener: http://host:port of /metrics, /healthz and /readyz; null: none. */
  readonly brookMetricsListener: string | null;
  /** brook.console.listener: http://host:port of the web console served by the broker; null: none. */
  readonly brookConsoleListener: string | null;
  /** brook.self.healing.broker.failure.timeout.ms; -1: no self-healing. */
  readonly brookSelfHealingBrokerFailureTimeoutMs: number;
  /** brook.self.healing.replication.throttled.rate (B/s); -1: moves are not throttled. */
  readonly brookSelfHealingReplicationThrottledRate: number;

  readonly socketSendBufferBytes: number;
  readonly socketReceiveBufferBytes: number;
  readonly socketRequestMaxBytes: number;
  readonly socketListenBacklogSize: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
  readonly maxConnectionsPerIpOverrides: ReadonlyMap<string, number>;
  readonly connectionsMaxIdleMs: number;
  readonly queuedMaxRequests: number;
  /** -1: no byte bound. */
  readonly queuedMaxRequestBytes: number;
  readonly messageMaxBytes: number;
  readonly fetchMaxBytes: number;
  readonly maxIncrementalFetchSessionCacheSlots: number;
  readonly fetchPurgatoryPurgeIntervalRequests: number;
  readonly producerPurgatoryPurgeIntervalRequests: number;
  readonly deleteRecordsPurgatoryPurgeIntervalRequests: number;

  readonly replicaLagTimeMaxMs: number;
  readonly replicaFetchMaxBytes: number;
  readonly replicaFetchResponseMaxBytes: number;
  readonly replicaFetchWaitMaxMs: number;
  readonly replicaFetchMinBytes: number;
  readonly replicaFetchBackoffMs: number;
  readonly replicaSocketTimeoutMs: number;
  readonly replicaHighWatermarkCheckpointIntervalMs: number;
  readonly numReplicaFetchers: number;
  readonly autoLeaderRebalanceEnable: boolean;
  readonly leaderImbalancePerBrokerPercentage: number;
  readonly leaderImbalanceCheckIntervalSeconds: number;
  readonly controlledShutdownEnable: boolean;
  readonly controlledShutdownMaxRetries: number;
  readonly controlledShutdownRetryBackoffMs: number;
  readonly controllerSocketTimeoutMs: number;

  readonly offsetsTopicNumPartitions: number;
  readonly offsetsTopicReplicationFactor: number;
  readonly offsetsTopicSegmentBytes: number;
  readonly offsetsTopicCompressionCodec: number;
  readonly offsetsLoadBufferSize: number;
  readonly offsetsRetentionMinutes: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetsCommitTimeoutMs: number;
  readonly offsetMetadataMaxBytes: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupMaxSize: number;
  readonly groupCoordinatorRebalanceProtocols: readonly string[];
  readonly groupConsumerSessionTimeoutMs: number;
  readonly groupConsumerMinSessionTimeoutMs: number;
  readonly groupConsumerMaxSessionTimeoutMs: number;
  readonly groupConsumerHeartbeatIntervalMs: number;
  readonly groupConsumerMinHeartbeatIntervalMs: number;
  readonly groupConsumerMaxHeartbeatIntervalMs: number;
  readonly groupConsumerMaxSize: number;

  readonly transactionStateLogNumPartitions: number;
  readonly transactionStateLogReplicationFactor: number;
  readonly transactionStateLogMinIsr: number;
  readonly transactionStateLogSegmentBytes: number;
  readonly transactionStateLogLoadBufferSize: number;
  readonly transactionMaxTimeoutMs: number;
  readonly transactionalIdExpirationMs: number;
  readonly transactionAbortTimedOutTransactionCleanupIntervalMs: number;
  readonly transactionRemoveExpiredTransactionCleanupIntervalMs: number;
  readonly transactionPartitionVerificationEnable: boolean;
  readonly producerIdExpirationMs: number;
  readonly producerIdExpirationCheckIntervalMs: number;

  readonly authorizerClassName: string;
  readonly superUsers: string;
  readonly allowEveryoneIfNoAclFound: boolean;
  /** brook.authorizer.log.level: what the authorization log (kafka.authorizer.logger) writes. */
  readonly brookAuthorizerLogLevel: 'OFF' | 'INFO' | 'DEBUG';
  readonly saslEnabledMechanisms: readonly string[];

  /** Every key, parsed, for the ones not lifted into fields above. */
  readonly values: ParsedConfig;
  /** Keys that were set but that Brook does not define; kept, and reported once at startup. */
  readonly unknownKeys: readonly string[];
}

/**
 * A key's value for one listener: `listener.name.<listener>.<mechanism>.<key>` when a mechanism is given and set,
 * else `listener.name.<listener>.<key>`, else the key itself. This is how TLS and SASL settings are read per
 * listener, as in Kafka.
 */
export function listenerValue(
  config: BrokerConfig,
  listenerName: string,
  key: string,
  mechanism: string | null = null,
): ConfigValue {
  const candidates = [listenerKeyName(listenerName, key, mechanism), listenerKeyName(listenerName, key), key];
  const name = candidates.find((n) => config.values.isSet(n)) ?? key;
  return config.values.value(name);
}

/** Kafka's ZooKeeper-mode ACL authorizer is the one authorizer Brook has; another class name cannot load. */
function resolveAuthorizer(values: ParsedConfig): string {
  const name = values.string('authorizer.class.name').trim();
  if (name !== '' && name !== 'kafka.security.authorizer.AclAuthorizer') {
    throw ConfigError.rule(
      'authorizer.class.name',
      `authorizer.class.name ${name} is not available: Brook implements kafka.security.authorizer.AclAuthorizer`,
    );
  }
  return name;
}

/** node.id and broker.id are one id under two names; setting both to different values is an error. */
function resolveBrokerId(values: ParsedConfig): number {
  const brokerId = values.int('broker.id');
  const nodeId = values.int('node.id');
  const id = brokerId !== -1 ? brokerId : nodeId;
  if (brokerId !== -1 && nodeId !== -1 && brokerId !== nodeId) {
    throw ConfigError.rule(
      'node.id',
      `node.id (${nodeId}) must be the same as broker.id (${brokerId}) when both are set`,
    );
  }
  // With generation on, configured ids stay at or below reserved.broker.max.id so they cannot collide with
  // generated ones; with it off, an id must be configured.
  if (values.boolean('broker.id.generation.enable')) {
    if (id < -1 || id > values.int('reserved.broker.max.id')) {
      throw ConfigError.rule(
        'broker.id',
        'broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id',
      );
    }
  } else if (id < 0) {
    throw ConfigError.rule(
      'broker.id',
      'broker.id must be greater than or equal to 0 when broker.id.generation.enable is false',
    );
  }
  return id;
}

function resolveLogDirs(values: ParsedConfig): string[] {
  const key = values.stringOrNull('log.dirs') !== null ? 'log.dirs' : 'log.dir';
  const text = values.string(key);
  const dirs = splitList(text);
  if (dirs.length === 0) throw new ConfigError(key, text, 'At least one log directory is required');
  if (new Set(dirs).size !== dirs.length)
    throw new ConfigError(key, text, 'Log directories must be distinct');
  return dirs;
}

function parseConnectionOverrides(values: ParsedConfig): Map<string, number> {
  const key = 'max.connections.per.ip.overrides';
  const text = values.string(key);
  const overrides = new Map<string, number>();
  for (const entry of splitList(text)) {
    const colon = entry.lastIndexOf(':');
    const host = entry.slice(0, colon).trim();
    const count = entry.slice(colon + 1).trim();
    if (colon <= 0 || !/^\d+$/.test(count)) {
      throw new ConfigError(key, text, `Entry '${entry}' is not in the form host:count`);
    }
    overrides.set(host, Number(count));
  }
  if (values.int('max.connections.per.ip') === 0 && overrides.size === 0) {
    throw ConfigError.rule(
      key,
      `${REQUIREMENT}max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides ` +
        'property is set.',
    );
  }
  return overrides;
}

/** 'leader': consumers read from the leader (Kafka's default, no selector); 'rack-aware': Kafka's selector. */
export type ReplicaSelector = 'leader' | 'rack-aware';

export const RACK_AWARE_REPLICA_SELECTOR = 'org.apache.kafka.common.replica.RackAwareReplicaSelector';

/** The one selector Kafka ships is built in; any other class would be a Java plug-in, refused as those are. */
function resolveReplicaSelector(values: ParsedConfig): ReplicaSelector {
  const text = values.stringOrNull('replica.selector.class');
  if (text === null || text === '') return 'leader';
  if (text === RACK_AWARE_REPLICA_SELECTOR) return 'rack-aware';
  throw new ConfigError(
    'replica.selector.class',
    text,
    `Brook does not load Java plug-ins; the selector it has built in is ${RACK_AWARE_REPLICA_SELECTOR}`,
  );
}

/** Kafka loads these as Java plug-ins. Brook has none, so a set value would be silently unenforced: refuse it. */
function refusePlugins(values: ParsedConfig): void {
  for (const key of [
    'create.topic.policy.class.name',
    'alter.config.policy.class.name',
    'client.quota.callback.class',
  ]) {
    const text = values.stringOrNull(key);
    if (text !== null && text !== '') throw new ConfigError(key, text, 'Brook does not load Java plug-ins');
  }
}

/** The broker's retention in milliseconds as its synonyms give it, before negative values become -1. */
function retentionInForceMs(values: ParsedConfig): bigint {
  const ms = values.value('log.retention.ms');
  if (ms !== null) return BigInt(ms as bigint);
  const minutes = values.intOrNull('log.retention.minutes');
  if (minutes !== null) return BigInt(minutes) * 60_000n;
  return BigInt(values.int('log.retention.hours')) * 3_600_000n;
}

function checkRules(values: ParsedConfig): void {
  const waitMs = values.int('replica.fetch.wait.max.ms');
  if (waitMs > values.int('replica.socket.timeout.ms')) {
    throw ConfigError.rule(
      'replica.socket.timeout.ms',
      `${REQUIREMENT}replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent ` +
        'unnecessary socket timeouts',
    );
  }
  if (waitMs > values.long('replica.lag.time.max.ms')) {
    throw ConfigError.rule(
      'replica.fetch.wait.max.ms',
      `${REQUIREMENT}replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to ` +
        'prevent frequent changes in ISR',
    );
  }
  // Kafka's rule on the retention in force (log.retention.ms, else .minutes, else .hours): any negative value
  // means unlimited, but 0 would make every segment expire as it is written.
  if (retentionInForceMs(values) === 0n) {
    throw ConfigError.rule(
      'log.retention.ms',
      `${REQUIREMENT}log.retention.ms must be unlimited (-1) or, greater than or equal to 1`,
    );
  }
  // The dedupe map is split between cleaner threads; each needs room for a useful number of keys.
  const threads = values.int('log.cleaner.threads');
  if (threads > 0 && Math.floor(values.long('log.cleaner.dedupe.buffer.size') / threads) <= 1024 * 1024) {
    throw ConfigError.rule(
      'log.cleaner.dedupe.buffer.size',
      `${REQUIREMENT}log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.`,
    );
  }
  // Kafka's rule: a failed authentication's delayed answer must leave before the idle timeout closes the connection
  // (when there is one: a negative connections.max.idle.ms never closes idle connections).
  const failedAuthenticationDelayMs = values.int('connection.failed.authentication.delay.ms');
  const connectionsMaxIdleMs = values.long('connections.max.idle.ms');
  if (connectionsMaxIdleMs >= 0 && failedAuthenticationDelayMs >= connectionsMaxIdleMs) {
    throw ConfigError.rule(
      'connection.failed.authentication.delay.ms',
      `${REQUIREMENT}connection.failed.authentication.delay.ms=${failedAuthenticationDelayMs} should always be ` +
        `less than connections.max.idle.ms=${connectionsMaxIdleMs} to prevent failed authentication responses ` +
        'from timing out',
    );
  }
  const acks = values.int('offsets.commit.required.acks');
  if (acks < -1 || acks > values.int('offsets.topic.replication.factor')) {
    throw ConfigError.rule(
      'offsets.commit.required.acks',
      'offsets.commit.required.acks must be at least -1 and at most offsets.topic.replication.factor',
    );
  }
}

/** Builds the broker's config from its merged text map. Throws ConfigError on the first bad value or rule. */
export function resolveBrokerConfig(merged: ReadonlyMap<string, string>): BrokerConfig {
  const v = ParsedConfig.parse(BROKER_KEYS, merged, brokerKey);
  refusePlugins(v);
  checkRules(v);
  const listeners = resolveListeners({
    listeners: v.string('listeners'),
    advertisedListeners: v.stringOrNull('advertised.listeners'),
    securityProtocolMap: v.string('listener.security.protocol.map'),
    interBrokerListenerName: v.stringOrNull('inter.broker.listener.name'),
    securityInterBrokerProtocol: v.string('security.inter.broker.protocol'),
    securityInterBrokerProtocolSet: v.isSet('security.inter.broker.protocol'),
  });
  const logDefaults = toTopicLogSettings(resolveTopicConfig(new Map(), staticOnly(merged)));
  return {
    brokerId: resolveBrokerId(v),
    brokerIdGenerationEnable: v.boolean('broker.id.generation.enable'),
    reservedBrokerMaxId: v.int('reserved.broker.max.id'),
    brokerRack: v.stringOrNull('broker.rack'),
    replicaSelector: resolveReplicaSelector(v),
    ...listeners,
    zookeeperConnect: v.stringOrNull('zookeeper.connect'),
    zookeeperSessionTimeoutMs: v.int('zookeeper.session.timeout.ms'),
    zookeeperConnectionTimeoutMs:
      v.intOrNull('zookeeper.connection.timeout.ms') ?? v.int('zookeeper.session.timeout.ms'),
    zookeeperMaxInFlightRequests: v.int('zookeeper.max.in.flight.requests'),
    logDirs: resolveLogDirs(v),
    numPartitions: v.int('num.partitions'),
    defaultReplicationFactor: v.int('default.replication.factor'),
    autoCreateTopicsEnable: v.boolean('auto.create.topics.enable'),
    deleteTopicEnable: v.boolean('delete.topic.enable'),
    logDefaults,
    logRetentionCheckIntervalMs: v.long('log.retention.check.interval.ms'),
    logFlushOffsetCheckpointIntervalMs: v.int('log.flush.offset.checkpoint.interval.ms'),
    logFlushStartOffsetCheckpointIntervalMs: v.int('log.flush.start.offset.checkpoint.interval.ms'),
    logCleanerEnable: v.boolean('log.cleaner.enable'),
    logCleanerThreads: v.int('log.cleaner.threads'),
    logCleanerDedupeBufferSize: v.long('log.cleaner.dedupe.buffer.size'),
    logCleanerBackoffMs: v.long('log.cleaner.backoff.ms'),
    brookLogFlushGroupCommitEnable: v.boolean('brook.log.flush.group.commit.enable'),
    brookLogFlushGroupCommitMaxDelayMs: v.int('brook.log.flush.group.commit.max.delay.ms'),
    brookNetworkFramePoolBytes: v.long('brook.network.frame.pool.bytes'),
    brookMetricsListener: v.stringOrNull('brook.metrics.listener'),
    brookConsoleListener: v.stringOrNull('brook.console.listener'),
    brookSelfHealingBrokerFailureTimeoutMs: v.long('brook.self.healing.broker.failure.timeout.ms'),
    brookSelfHealingReplicationThrottledRate: v.long('brook.self.healing.replication.throttled.rate'),
    socketSendBufferBytes: v.int('socket.send.buffer.bytes'),
    socketReceiveBufferBytes: v.int('socket.receive.buffer.bytes'),
    socketRequestMaxBytes: v.int('socket.request.max.bytes'),
    socketListenBacklogSize: v.int('socket.listen.backlog.size'),
    maxConnections: v.int('max.connections'),
    maxConnectionsPerIp: v.int('max.connections.per.ip'),
    maxConnectionsPerIpOverrides: parseConnectionOverrides(v),
    connectionsMaxIdleMs: v.long('connections.max.idle.ms'),
    queuedMaxRequests: v.int('queued.max.requests'),
    queuedMaxRequestBytes: v.long('queued.max.request.bytes'),
    messageMaxBytes: v.int('message.max.bytes'),
    fetchMaxBytes: v.int('fetch.max.bytes'),
    maxIncrementalFetchSessionCacheSlots: v.int('max.incremental.fetch.session.cache.slots'),
    fetchPurgatoryPurgeIntervalRequests: v.int('fetch.purgatory.purge.interval.requests'),
    producerPurgatoryPurgeIntervalRequests: v.int('producer.purgatory.purge.interval.requests'),
    deleteRecordsPurgatoryPurgeIntervalRequests: v.int('delete.records.purgatory.purge.interval.requests'),
    replicaLagTimeMaxMs: v.long('replica.lag.time.max.ms'),
    replicaFetchMaxBytes: v.int('replica.fetch.max.bytes'),
    replicaFetchResponseMaxBytes: v.int('replica.fetch.response.max.bytes'),
    replicaFetchWaitMaxMs: v.int('replica.fetch.wait.max.ms'),
    replicaFetchMinBytes: v.int('replica.fetch.min.bytes'),
    replicaFetchBackoffMs: v.int('replica.fetch.backoff.ms'),
    replicaSocketTimeoutMs: v.int('replica.socket.timeout.ms'),
    replicaHighWatermarkCheckpointIntervalMs: v.long('replica.high.watermark.checkpoint.interval.ms'),
    numReplicaFetchers: v.int('num.replica.fetchers'),
    autoLeaderRebalanceEnable: v.boolean('auto.leader.rebalance.enable'),
    leaderImbalancePerBrokerPercentage: v.int('leader.imbalance.per.broker.percentage'),
    leaderImbalanceCheckIntervalSeconds: v.long('leader.imbalance.check.interval.seconds'),
    controlledShutdownEnable: v.boolean('controlled.shutdown.enable'),
    controlledShutdownMaxRetries: v.int('controlled.shutdown.max.retries'),
    controlledShutdownRetryBackoffMs: v.long('controlled.shutdown.retry.backoff.ms'),
    controllerSocketTimeoutMs: v.int('controller.socket.timeout.ms'),
    offsetsTopicNumPartitions: v.int('offsets.topic.num.partitions'),
    offsetsTopicReplicationFactor: v.int('offsets.topic.replication.factor'),
    offsetsTopicSegmentBytes: v.int('offsets.topic.segment.bytes'),
    offsetsTopicCompressionCodec: v.int('offsets.topic.compression.codec'),
    offsetsLoadBufferSize: v.int('offsets.load.buffer.size'),
    offsetsRetentionMinutes: v.int('offsets.retention.minutes'),
    offsetsRetentionCheckIntervalMs: v.long('offsets.retention.check.interval.ms'),
    offsetsCommitTimeoutMs: v.int('offsets.commit.timeout.ms'),
    offsetMetadataMaxBytes: v.int('offset.metadata.max.bytes'),
    groupInitialRebalanceDelayMs: v.int('group.initial.rebalance.delay.ms'),
    groupMinSessionTimeoutMs: v.int('group.min.session.timeout.ms'),
    groupMaxSessionTimeoutMs: v.int('group.max.session.timeout.ms'),
    groupMaxSize: v.int('group.max.size'),
    groupCoordinatorRebalanceProtocols: v.list('group.coordinator.rebalance.protocols'),
    groupConsumerSessionTimeoutMs: v.int('group.consumer.session.timeout.ms'),
    groupConsumerMinSessionTimeoutMs: v.int('group.consumer.min.session.timeout.ms'),
    groupConsumerMaxSessionTimeoutMs: v.int('group.consumer.max.session.timeout.ms'),
    groupConsumerHeartbeatIntervalMs: v.int('group.consumer.heartbeat.interval.ms'),
    groupConsumerMinHeartbeatIntervalMs: v.int('group.consumer.min.heartbeat.interval.ms'),
    groupConsumerMaxHeartbeatIntervalMs: v.int('group.consumer.max.heartbeat.interval.ms'),
    groupConsumerMaxSize: v.int('group.consumer.max.size'),
    transactionStateLogNumPartitions: v.int('transaction.state.log.num.partitions'),
    transactionStateLogReplicationFactor: v.int('transaction.state.log.replication.factor'),
    transactionStateLogMinIsr: v.int('transaction.state.log.min.isr'),
    transactionStateLogSegmentBytes: v.int('transaction.state.log.segment.bytes'),
    transactionStateLogLoadBufferSize: v.int('transaction.state.log.load.buffer.size'),
    transactionMaxTimeoutMs: v.int('transaction.max.timeout.ms'),
    transactionalIdExpirationMs: v.int('transactional.id.expiration.ms'),
    transactionAbortTimedOutTransactionCleanupIntervalMs: v.int(
      'transaction.abort.timed.out.transaction.cleanup.interval.ms',
    ),
    transactionRemoveExpiredTransactionCleanupIntervalMs: v.int(
      'transaction.remove.expired.transaction.cleanup.interval.ms',
    ),
    transactionPartitionVerificationEnable: v.boolean('transaction.partition.verification.enable'),
    producerIdExpirationMs: v.int('producer.id.expiration.ms'),
    producerIdExpirationCheckIntervalMs: v.int('producer.id.expiration.check.interval.ms'),
    authorizerClassName: resolveAuthorizer(v),
    superUsers: v.string('super.users'),
    allowEveryoneIfNoAclFound: v.boolean('allow.everyone.if.no.acl.found'),
    brookAuthorizerLogLevel: v.string('brook.authorizer.log.level').toUpperCase() as 'OFF' | 'INFO' | 'DEBUG',
    saslEnabledMechanisms: v.list('sasl.enabled.mechanisms'),
    values: v,
    unknownKeys: v.unknownKeys,
  };
}
