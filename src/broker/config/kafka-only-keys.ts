// Broker keys Apache Kafka 3.9 knows that Brook neither defines nor implements: SASL/Kerberos and OAuth login,
// TLS details, JMX and metric reporters, the password encoder, tiered storage and KRaft. A Kafka
// server.properties carries them, so
// they are accepted like any key Brook does not know (kept, no effect); they differ only in how the startup
// warning names them: as Kafka names configs that were supplied but are not used, rather than as possible typos.
//
// Kept as names and prefixes, not definitions: Brook does not type, default or describe them.

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
  'password.encoder.',
  'remote.log.',
  'log.local.retention.',
  'controller.quorum.',
  'delegation.token.',
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
]);

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
