// Kafka 3.9's broker keys that Brook accepts but neither defines nor implements (kafka-only-keys.ts names them), with
// Kafka's type and default, so that DescribeConfigs lists them as Kafka's ConfigHelper lists every KafkaConfig key
// and AlterConfigs checks a dynamic one's value by Kafka's type and bounds. Kafka's internal keys (defined with
// defineInternal) are described only when set, as Kafka's AbstractConfig.nonInternalValues leaves them out. The
// importance of a key is not described and is left low; the doc line says what Brook does with the key.

import type { ConfigKeyDef } from './config-types.js';
import { ConfigType } from './config-types.js';
import { defineKey, LONG_MAX_TEXT } from './define-key.js';
import { atLeast, type Validator } from './validators.js';

const T = ConfigType;

const SECURITY =
  'Kafka security setting (SASL/Kerberos, login, TLS engine) that Brook accepts; it has no effect.';
const TIERED =
  'Kafka tiered storage setting that Brook accepts; Brook has no tiered storage, so it has no effect.';
const SHARE = 'Kafka share group setting (KIP-932) that Brook accepts; it has no effect.';
const KRAFT =
  'Kafka KRaft or migration setting that Brook accepts; Brook runs on ZooKeeper, so it has no effect.';
const GROUPS = "Setting of Kafka's new group coordinator internals that Brook accepts; it has no effect.";
const METRICS =
  'Kafka JMX or telemetry metrics setting that Brook accepts; it has no effect (see brook.metrics.listener).';
const OTHER = 'Kafka broker setting that Brook accepts; it has no effect.';

export interface KafkaOnlyKey {
  readonly def: ConfigKeyDef;
  /** Defined with defineInternal in Kafka: described only when set. */
  readonly internal: boolean;
}

function kafkaKey(
  name: string,
  type: ConfigKeyDef['type'],
  defaultValue: string | null,
  doc: string,
  options: { internal?: boolean; validator?: Validator } = {},
): KafkaOnlyKey {
  const def = defineKey(name, type, defaultValue, 'low', doc, {
    validator: options.validator,
    support: 'no-op',
  });
  return { def, internal: options.internal ?? false };
}

const KAFKA_ONLY_KEYS = new Map(
  [
    kafkaKey('alter.log.dirs.replication.quota.window.num', T.INT, '11', OTHER),
    kafkaKey('alter.log.dirs.replication.quota.window.size.seconds', T.INT, '1', OTHER),
    kafkaKey('auto.include.jmx.reporter', T.BOOLEAN, 'true', METRICS),
    kafkaKey('broker.heartbeat.interval.ms', T.INT, '2000', KRAFT),
    kafkaKey('broker.session.timeout.ms', T.INT, '9000', KRAFT),
    kafkaKey('controller.listener.names', T.STRING, null, KRAFT),
    kafkaKey('controller.quorum.append.linger.ms', T.INT, '25', KRAFT),
    kafkaKey('controller.quorum.bootstrap.servers', T.LIST, '', KRAFT),
    kafkaKey('controller.quorum.election.backoff.max.ms', T.INT, '1000', KRAFT),
    kafkaKey('controller.quorum.election.timeout.ms', T.INT, '1000', KRAFT),
    kafkaKey('controller.quorum.fetch.timeout.ms', T.INT, '2000', KRAFT),
    kafkaKey('controller.quorum.request.timeout.ms', T.INT, '2000', KRAFT),
    kafkaKey('controller.quorum.retry.backoff.ms', T.INT, '20', KRAFT),
    kafkaKey('controller.quorum.voters', T.LIST, '', KRAFT),
    kafkaKey('early.start.listeners', T.STRING, null, KRAFT),
    kafkaKey('eligible.leader.replicas.enable', T.BOOLEAN, 'false', KRAFT),
    kafkaKey(
      'group.consumer.assignors',
      T.LIST,
      'org.apache.kafka.coordinator.group.assignor.UniformAssignor,' +
        'org.apache.kafka.coordinator.group.assignor.RangeAssignor',
      GROUPS,
    ),
    kafkaKey('group.consumer.migration.policy', T.STRING, 'disabled', GROUPS, { internal: true }),
    kafkaKey('group.coordinator.append.linger.ms', T.INT, '10', GROUPS),
    kafkaKey('group.coordinator.new.enable', T.BOOLEAN, 'false', GROUPS, { internal: true }),
    kafkaKey('group.coordinator.threads', T.INT, '1', GROUPS),
    kafkaKey('group.share.delivery.count.limit', T.INT, '5', SHARE),
    kafkaKey('group.share.enable', T.BOOLEAN, 'false', SHARE, { internal: true }),
    kafkaKey('group.share.heartbeat.interval.ms', T.INT, '5000', SHARE),
    kafkaKey('group.share.max.groups', T.SHORT, '10', SHARE),
    kafkaKey('group.share.max.heartbeat.interval.ms', T.INT, '15000', SHARE),
    kafkaKey('group.share.max.record.lock.duration.ms', T.INT, '60000', SHARE),
    kafkaKey('group.share.max.session.timeout.ms', T.INT, '60000', SHARE),
    kafkaKey('group.share.max.size', T.SHORT, '200', SHARE),
    kafkaKey('group.share.min.heartbeat.interval.ms', T.INT, '5000', SHARE),
    kafkaKey('group.share.min.record.lock.duration.ms', T.INT, '15000', SHARE),
    kafkaKey('group.share.min.session.timeout.ms', T.INT, '45000', SHARE),
    kafkaKey('group.share.partition.max.record.locks', T.INT, '200', SHARE),
    kafkaKey('group.share.record.lock.duration.ms', T.INT, '30000', SHARE),
    kafkaKey('group.share.session.timeout.ms', T.INT, '45000', SHARE),
    kafkaKey('initial.broker.registration.timeout.ms', T.INT, '60000', KRAFT),
    kafkaKey('kafka.metrics.polling.interval.secs', T.INT, '10', METRICS),
    kafkaKey('kafka.metrics.reporters', T.LIST, '', METRICS),
    kafkaKey('log.dir.failure.timeout.ms', T.LONG, '30000', OTHER),
    kafkaKey('log.initial.task.delay.ms', T.LONG, '30000', OTHER, { internal: true }),
    kafkaKey('log.local.retention.bytes', T.LONG, '-2', TIERED, { validator: atLeast(-2) }),
    kafkaKey('log.local.retention.ms', T.LONG, '-2', TIERED, { validator: atLeast(-2) }),
    kafkaKey('max.request.partition.size.limit', T.INT, '2000', OTHER),
    kafkaKey('metadata.log.dir', T.STRING, null, KRAFT),
    kafkaKey('metadata.log.max.record.bytes.between.snapshots', T.LONG, '20971520', KRAFT),
    kafkaKey('metadata.log.max.snapshot.interval.ms', T.LONG, '3600000', KRAFT),
    kafkaKey('metadata.log.segment.bytes', T.INT, '1073741824', KRAFT),
    kafkaKey('metadata.log.segment.min.bytes', T.INT, '8388608', KRAFT, { internal: true }),
    kafkaKey('metadata.log.segment.ms', T.LONG, '604800000', KRAFT),
    kafkaKey('metadata.max.idle.interval.ms', T.INT, '500', KRAFT),
    kafkaKey('metadata.max.retention.bytes', T.LONG, '104857600', KRAFT),
    kafkaKey('metadata.max.retention.ms', T.LONG, '604800000', KRAFT),
    kafkaKey('password.encoder.old.secret', T.PASSWORD, null, OTHER),
    kafkaKey('process.roles', T.LIST, '', KRAFT),
    kafkaKey('remote.fetch.max.wait.ms', T.INT, '500', TIERED, { validator: atLeast(1) }),
    kafkaKey('remote.log.index.file.cache.total.size.bytes', T.LONG, '1073741824', TIERED, {
      validator: atLeast(1),
    }),
    kafkaKey('remote.log.manager.copier.thread.pool.size', T.INT, '-1', TIERED),
    kafkaKey('remote.log.manager.copy.max.bytes.per.second', T.LONG, LONG_MAX_TEXT, TIERED, {
      validator: atLeast(1),
    }),
    kafkaKey('remote.log.manager.copy.quota.window.num', T.INT, '11', TIERED),
    kafkaKey('remote.log.manager.copy.quota.window.size.seconds', T.INT, '1', TIERED),
    kafkaKey('remote.log.manager.expiration.thread.pool.size', T.INT, '-1', TIERED),
    kafkaKey('remote.log.manager.fetch.max.bytes.per.second', T.LONG, LONG_MAX_TEXT, TIERED, {
      validator: atLeast(1),
    }),
    kafkaKey('remote.log.manager.fetch.quota.window.num', T.INT, '11', TIERED),
    kafkaKey('remote.log.manager.fetch.quota.window.size.seconds', T.INT, '1', TIERED),
    kafkaKey('remote.log.manager.task.interval.ms', T.LONG, '30000', TIERED),
    kafkaKey('remote.log.manager.task.retry.backoff.max.ms', T.LONG, '30000', TIERED, { internal: true }),
    kafkaKey('remote.log.manager.task.retry.backoff.ms', T.LONG, '500', TIERED, { internal: true }),
    kafkaKey('remote.log.manager.task.retry.jitter', T.DOUBLE, '0.2', TIERED, { internal: true }),
    kafkaKey('remote.log.manager.thread.pool.size', T.INT, '10', TIERED),
    kafkaKey('remote.log.metadata.custom.metadata.max.bytes', T.INT, '128', TIERED),
    kafkaKey(
      'remote.log.metadata.manager.class.name',
      T.STRING,
      'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager',
      TIERED,
    ),
    kafkaKey('remote.log.metadata.manager.class.path', T.STRING, null, TIERED),
    kafkaKey('remote.log.metadata.manager.impl.prefix', T.STRING, 'rlmm.config.', TIERED),
    kafkaKey('remote.log.metadata.manager.listener.name', T.STRING, null, TIERED),
    kafkaKey('remote.log.reader.max.pending.tasks', T.INT, '100', TIERED),
    kafkaKey('remote.log.reader.threads', T.INT, '10', TIERED),
    kafkaKey('remote.log.storage.manager.class.name', T.STRING, null, TIERED),
    kafkaKey('remote.log.storage.manager.class.path', T.STRING, null, TIERED),
    kafkaKey('remote.log.storage.manager.impl.prefix', T.STRING, 'rsm.config.', TIERED),
    kafkaKey('remote.log.storage.system.enable', T.BOOLEAN, 'false', TIERED),
    kafkaKey('request.timeout.ms', T.INT, '30000', OTHER),
    kafkaKey('sasl.client.callback.handler.class', T.CLASS, null, SECURITY),
    kafkaKey('sasl.kerberos.kinit.cmd', T.STRING, '/usr/bin/kinit', SECURITY),
    kafkaKey('sasl.kerberos.min.time.before.relogin', T.LONG, '60000', SECURITY),
    kafkaKey('sasl.kerberos.principal.to.local.rules', T.LIST, 'DEFAULT', SECURITY),
    kafkaKey('sasl.kerberos.service.name', T.STRING, null, SECURITY),
    kafkaKey('sasl.kerberos.ticket.renew.jitter', T.DOUBLE, '0.05', SECURITY),
    kafkaKey('sasl.kerberos.ticket.renew.window.factor', T.DOUBLE, '0.8', SECURITY),
    kafkaKey('sasl.login.class', T.CLASS, null, SECURITY),
    kafkaKey('sasl.login.connect.timeout.ms', T.INT, null, SECURITY),
    kafkaKey('sasl.login.read.timeout.ms', T.INT, null, SECURITY),
    kafkaKey('sasl.login.refresh.buffer.seconds', T.SHORT, '300', SECURITY),
    kafkaKey('sasl.login.refresh.min.period.seconds', T.SHORT, '60', SECURITY),
    kafkaKey('sasl.login.refresh.window.factor', T.DOUBLE, '0.8', SECURITY),
    kafkaKey('sasl.login.refresh.window.jitter', T.DOUBLE, '0.05', SECURITY),
    kafkaKey('sasl.login.retry.backoff.max.ms', T.LONG, '10000', SECURITY),
    kafkaKey('sasl.login.retry.backoff.ms', T.LONG, '100', SECURITY),
    kafkaKey('sasl.mechanism.controller.protocol', T.STRING, 'GSSAPI', SECURITY),
    kafkaKey('security.providers', T.STRING, null, SECURITY),
    kafkaKey('server.max.startup.time.ms', T.LONG, LONG_MAX_TEXT, KRAFT, { internal: true }),
    kafkaKey('socket.connection.setup.timeout.max.ms', T.LONG, '30000', OTHER),
    kafkaKey('socket.connection.setup.timeout.ms', T.LONG, '10000', OTHER),
    kafkaKey('ssl.allow.dn.changes', T.BOOLEAN, 'false', SECURITY),
    kafkaKey('ssl.allow.san.changes', T.BOOLEAN, 'false', SECURITY),
    kafkaKey('ssl.engine.factory.class', T.CLASS, null, SECURITY),
    kafkaKey('telemetry.max.bytes', T.INT, '1048576', METRICS),
    kafkaKey('unclean.leader.election.interval.ms', T.LONG, '300000', KRAFT, { internal: true }),
    kafkaKey('unstable.api.versions.enable', T.BOOLEAN, 'false', OTHER, { internal: true }),
    kafkaKey('unstable.feature.versions.enable', T.BOOLEAN, 'false', OTHER, { internal: true }),
    kafkaKey('zookeeper.metadata.migration.enable', T.BOOLEAN, 'false', KRAFT),
    kafkaKey('zookeeper.metadata.migration.min.batch.size', T.INT, '200', KRAFT, { internal: true }),
  ].map((key) => [key.def.name, key]),
);

/** Kafka's definition of a broker key Brook accepts without defining it; undefined for any other name. */
export function kafkaOnlyKey(name: string): KafkaOnlyKey | undefined {
  return KAFKA_ONLY_KEYS.get(name);
}

/** The keys above that DescribeConfigs lists whether set or not (all but Kafka's internal ones). */
export const DESCRIBED_KAFKA_ONLY_KEYS: readonly string[] = [...KAFKA_ONLY_KEYS.values()]
  .filter((key) => !key.internal)
  .map((key) => key.def.name);
