// Broker keys Apache Kafka 3.9 knows that Brook neither defines nor implements: SASL/Kerberos and OAuth login,
// TLS details, JMX and metric reporters, the password encoder's old secret, tiered storage and KRaft. A Kafka
// server.properties carries them, so
// they are accepted like any key Brook does not know (kept, no effect); they differ only in how the startup
// warning names them: as Kafka names configs that were supplied but are not used, rather than as possible typos.
//
// Kept as names and prefixes; the keys Kafka 3.9 defines among them carry Kafka's type and default
// (kafka-only-key-defs.ts), so that DescribeConfigs lists them as Kafka does and AlterConfigs checks a dynamic
// one's value by Kafka's type and bounds.

import type { ConfigKeyDef } from './config-types.js';
import { kafkaOnlyKey } from './kafka-only-key-defs.js';

/** Whole families, by prefix (also under a `listener.name.<listener>.` prefix). */
const KAFKA_PREFIXES = [
  'sasl.kerberos.',
  'sasl.login.',
  'sasl.oauthbearer.',
  'sasl.server.',
  'sasl.client.',
  'ssl.',
  'kafka.metrics.',
  'metrics.',
  'remote.log.',
  'log.local.retention.',
  'controller.quorum.',
  'delegation.token.',
  'group.share.',
  'confluent.',
];

const KAFKA_NAMES = new Set([
  'auto.include.jmx.reporter',
  'zookeeper.metadata.migration.enable',
  'security.providers',
  'early.start.listeners',
  'process.roles',
  'controller.listener.names',
  'metadata.log.dir',
  'sasl.mechanism.controller.protocol',
  'socket.connection.setup.timeout.ms',
  'socket.connection.setup.timeout.max.ms',
  'socket.listen.backlog.size',
  'client.telemetry.max.bytes',
  'telemetry.max.bytes',
  'kafka.metrics.polling.interval.secs',
  'reserved.broker.max.id',
  'broker.id.generation.enable',
  'broker.heartbeat.interval.ms',
  'broker.session.timeout.ms',
  'unstable.api.versions.enable',
  'unstable.feature.versions.enable',
  'password.encoder.old.secret',
  'remote.fetch.max.wait.ms',
  'request.timeout.ms',
  'log.dir.failure.timeout.ms',
  'log.initial.task.delay.ms',
  // Internal or KRaft-only in Kafka 3.9, yet in its KafkaConfig, so read-only there too.
  'alter.log.dirs.replication.quota.window.num',
  'alter.log.dirs.replication.quota.window.size.seconds',
  'eligible.leader.replicas.enable',
  'group.coordinator.new.enable',
  'group.coordinator.threads',
  'group.coordinator.append.linger.ms',
  'group.consumer.assignors',
  'group.consumer.migration.policy',
  'initial.broker.registration.timeout.ms',
  'max.request.partition.size.limit',
  'metadata.log.segment.bytes',
  'metadata.log.segment.min.bytes',
  'metadata.log.segment.ms',
  'metadata.log.max.record.bytes.between.snapshots',
  'metadata.log.max.snapshot.interval.ms',
  'metadata.max.retention.bytes',
  'metadata.max.retention.ms',
  'metadata.max.idle.interval.ms',
  'server.max.startup.time.ms',
  'unclean.leader.election.interval.ms',
  'zookeeper.metadata.migration.min.batch.size',
]);

/**
 * The keys above that Kafka 3.9 lets AlterConfigs change (DynamicBrokerConfig's AllDynamicConfigs: SASL listener
 * settings, tiered storage bounds and the local retention defaults). Every other Kafka-only key is read-only in
 * Kafka and refused there with "Cannot update these configs dynamically"; so it is here.
 */
const KAFKA_DYNAMIC_NAMES = new Set([
  'sasl.kerberos.service.name',
  'sasl.kerberos.kinit.cmd',
  'sasl.kerberos.ticket.renew.window.factor',
  'sasl.kerberos.ticket.renew.jitter',
  'sasl.kerberos.min.time.before.relogin',
  'sasl.kerberos.principal.to.local.rules',
  'sasl.login.refresh.window.factor',
  'sasl.login.refresh.window.jitter',
  'sasl.login.refresh.min.period.seconds',
  'sasl.login.refresh.buffer.seconds',
  'ssl.engine.factory.class',
  'remote.log.index.file.cache.total.size.bytes',
  'remote.log.manager.copy.max.bytes.per.second',
  'remote.log.manager.fetch.max.bytes.per.second',
  'log.local.retention.ms',
  'log.local.retention.bytes',
  'remote.fetch.max.wait.ms',
]);

/**
 * The keys above that Kafka 3.9 changes only for one broker (DynamicListenerConfig's SASL and TLS settings), never
 * at the cluster default; the other dynamic ones are cluster-wide.
 */
const KAFKA_PER_BROKER_PREFIXES = ['sasl.kerberos.', 'sasl.login.refresh.', 'ssl.engine.factory.class'];

/** Whether `name` (a key Brook does not define) is a Kafka key that may be changed dynamically only per broker. */
export function isKafkaPerBrokerKey(name: string): boolean {
  return KAFKA_DYNAMIC_NAMES.has(name) && KAFKA_PER_BROKER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The definition Kafka gives a dynamic key Brook does not define, for checking a value; undefined otherwise. */
export function kafkaDynamicKey(name: string): ConfigKeyDef | undefined {
  return KAFKA_DYNAMIC_NAMES.has(name) ? kafkaOnlyKey(name)?.def : undefined;
}

/** `listener.name.<listener>.` and, for SASL keys, `listener.name.<listener>.<mechanism>.`. */
const LISTENER_PREFIXES = [/^listener\.name\.[^.]+\./, /^listener\.name\.[^.]+\.[^.]+\./];

function isKafkaName(name: string): boolean {
  return KAFKA_NAMES.has(name) || KAFKA_PREFIXES.some((p) => name.startsWith(p));
}

/** Whether `name`, a key Brook does not define, is one of Kafka's broker keys (see the file header). */
export function isKafkaOnlyKey(name: string): boolean {
  if (isKafkaName(name)) return true;
  return LISTENER_PREFIXES.some((prefix) => prefix.test(name) && isKafkaName(name.replace(prefix, '')));
}

/**
 * Whether `name` (a key Brook does not define) is one of Kafka's own keys that Kafka cannot change dynamically.
 * Listener-prefixed names are not: Kafka does not know them by name and checks them only per broker. Keys under
 * `confluent.` are not Apache Kafka's and count as custom keys, which Kafka stores.
 */
export function isKafkaReadOnlyKey(name: string): boolean {
  return isKafkaName(name) && !name.startsWith('confluent.') && !KAFKA_DYNAMIC_NAMES.has(name);
}
