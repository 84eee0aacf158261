// Kafka client settings for the clients of tasks: the worker's `producer.` and `consumer.` keys, then a
// connector's `producer.override.` and `consumer.override.` keys (connector.client.config.override.policy All,
// the default; None refuses them), as Kafka's property names mapped onto Brook's client options. Keys Brook's
// client does not have are ignored; a value that does not parse is a ConfigException naming the key.

import { ConfigError } from '../../client/errors.js';
import type { ConsumerOptions, ProducerOptions } from '../../client/index.js';
import { securityOptionsFromProperties } from '../../client/security-config.js';
import { ConfigException } from '../errors.js';

type Kind = 'int' | 'string' | 'bool';

const COMMON: Record<string, [field: string, kind: Kind]> = {
  'request.timeout.ms': ['requestTimeoutMs', 'int'],
  'retry.backoff.ms': ['retryBackoffMs', 'int'],
  'retry.backoff.max.ms': ['retryBackoffMaxMs', 'int'],
  'metadata.max.age.ms': ['metadataMaxAgeMs', 'int'],
  'socket.connection.setup.timeout.ms': ['connectionTimeoutMs', 'int'],
  'max.in.flight.requests.per.connection': ['maxInFlightRequestsPerConnection', 'int'],
};

const CONSUMER: Record<string, [field: string, kind: Kind]> = {
  ...COMMON,
  // A sink's group: connect-<name> unless set here (Kafka's Worker puts group.id first and lets the worker's
  // consumer.group.id, then the connector's consumer.override.group.id, replace it). See sinkGroupId().
  'group.id': ['groupId', 'string'],
  'session.timeout.ms': ['sessionTimeoutMs', 'int'],
  'heartbeat.interval.ms': ['heartbeatIntervalMs', 'int'],
  'max.poll.records': ['maxPollRecords', 'int'],
  'max.poll.interval.ms': ['maxPollIntervalMs', 'int'],
  'fetch.min.bytes': ['fetchMinBytes', 'int'],
  'fetch.max.bytes': ['fetchMaxBytes', 'int'],
  'fetch.max.wait.ms': ['fetchMaxWaitMs', 'int'],
  'max.partition.fetch.bytes': ['maxPartitionFetchBytes', 'int'],
  'auto.offset.reset': ['autoOffsetReset', 'string'],
  'isolation.level': ['isolationLevel', 'string'],
  'client.rack': ['clientRack', 'string'],
};

const PRODUCER: Record<string, [field: string, kind: Kind]> = {
  ...COMMON,
  'linger.ms': ['lingerMs', 'int'],
  'batch.size': ['batchSize', 'int'],
  'buffer.memory': ['bufferMemory', 'int'],
  'max.block.ms': ['maxBlockMs', 'int'],
  'max.request.size': ['maxRequestSize', 'int'],
  'compression.type': ['compression', 'string'],
  'enable.idempotence': ['idempotent', 'bool'],
  'delivery.timeout.ms': ['deliveryTimeoutMs', 'int'],
  acks: ['acks', 'string'],
};

function mapped(
  table: Record<string, [string, Kind]>,
  layers: { prefix: string; config: Readonly<Record<string, string>> }[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { prefix, config } of layers) {
    for (const [key, raw] of Object.entries(config)) {
      if (!key.startsWith(prefix)) continue;
      const name = key.slice(prefix.length);
      const spec = table[name];
      if (spec === undefined) continue;
      const [field, kind] = spec;
      const text = raw.trim();
      if (kind === 'int') {
        if (!/^-?\d+$/.test(text)) throw ConfigException.invalid(key, raw, 'Not a number of type INT');
        out[field] = Number(text);
      } else if (kind === 'bool') {
        if (!/^(true|false)$/i.test(text))
          throw ConfigException.invalid(key, raw, 'Expected value to be either true or false');
        out[field] = text.toLowerCase() === 'true';
      } else if (field === 'acks') {
        out[field] = text === 'all' || text === '-1' ? 'all' : Number(text);
      } else out[field] = text;
    }
  }
  return out;
}

function layers(
  kind: 'producer' | 'consumer',
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): { prefix: string; config: Readonly<Record<string, string>> }[] {
  const policy = (worker['connector.client.config.override.policy'] ?? 'All').trim();
  const overrides = Object.keys(connector).filter((k) => k.startsWith(`${kind}.override.`));
  if (policy === 'None' && overrides.length > 0) {
    throw new ConfigException(
      `The connector is not allowed to override ${overrides.join(', ')} (connector.client.config.override.policy=None)`,
    );
  }
  return [
    { prefix: `${kind}.`, config: worker },
    { prefix: `${kind}.override.`, config: connector },
  ];
}

export function consumerOverrides(
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): Partial<ConsumerOptions> {
  const l = layers('consumer', worker, connector);
  return { ...mapped(CONSUMER, l), ...security(l) } as Partial<ConsumerOptions>;
}

/**
 * The consumer group of a sink connector's tasks, whose offsets the KIP-875 endpoints read and alter: as Kafka's
 * Worker.baseConsumerConfigs, `connect-<name>`, unless the worker's `consumer.group.id` or the connector's
 * `consumer.override.group.id` (where the override policy allows it) names another. A connector moved from Kafka
 * Connect with such an override keeps reading from where its group is.
 */
export function sinkGroupId(
  name: string,
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): string {
  return consumerOverrides(worker, connector).groupId ?? `connect-${name}`;
}

export function producerOverrides(
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): Partial<ProducerOptions> {
  const l = layers('producer', worker, connector);
  return { ...mapped(PRODUCER, l), ...security(l) } as Partial<ProducerOptions>;
}

/** The `admin.` keys of the worker (the admin clients of tasks: topic creation for dead letter queues). */
export function adminOverrides(worker: Readonly<Record<string, string>>): Record<string, unknown> {
  const l = [{ prefix: 'admin.', config: worker }];
  return { ...mapped(COMMON, l), ...security(l) };
}

/**
 * Checks the worker's own security keys and its `producer.`, `consumer.` and `admin.` ones when the worker starts,
 * so that a Java store (JKS), Kerberos (GSSAPI) or a missing JAAS config stops the worker with a message naming
 * the key, instead of failing each task as it starts.
 */
export function checkWorkerClientSecurity(worker: Readonly<Record<string, string>>): void {
  for (const prefix of ['', 'producer.', 'consumer.', 'admin.']) {
    const props: Record<string, string> = {};
    for (const [key, value] of Object.entries(worker))
      if (key.startsWith(prefix) && isSecurityKey(key.slice(prefix.length)))
        props[key.slice(prefix.length)] = value;
    if (Object.keys(props).length === 0) continue;
    try {
      securityOptionsFromProperties(props, prefix);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigException(err.message);
      throw err;
    }
  }
}

function isSecurityKey(name: string): boolean {
  return name === 'security.protocol' || name.startsWith('ssl.') || name.startsWith('sasl.');
}

/**
 * security.protocol, ssl.* and sasl.* of the layers (later layers win) as Brook's tls and sasl client options.
 * As in Kafka, the worker's own unprefixed keys are for its internal clients only (clientSecurity): a task's
 * producer needs `producer.security.protocol` and so on.
 */
function security(
  layers: { prefix: string; config: Readonly<Record<string, string>> }[],
): Record<string, unknown> {
  const props: Record<string, string> = {};
  for (const { prefix, config } of layers)
    for (const [key, value] of Object.entries(config))
      if (key.startsWith(prefix) && isSecurityKey(key.slice(prefix.length)))
        props[key.slice(prefix.length)] = value;
  return Object.keys(props).length === 0 ? {} : clientSecurity(props);
}

/** The tls and sasl client options of Kafka's security keys (unprefixed); a ConfigException when they are wrong. */
export function clientSecurity(props: Readonly<Record<string, string>>): Record<string, unknown> {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(props)) if (isSecurityKey(k)) own[k] = v;
  try {
    return securityOptionsFromProperties(own);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigException(err.message);
    throw err;
  }
}
