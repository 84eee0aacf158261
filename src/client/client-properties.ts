// Kafka's Java client property names (linger.ms, max.poll.records, security.protocol, ...) mapped onto Brook's
// client options, for whoever configures clients from Kafka-style properties in layers: Connect's workers
// (`producer.`, then a connector's `producer.override.`) and Streams (unprefixed, `consumer.`, then
// `main.consumer.`). A later layer's key wins over an earlier one's. Keys Brook's client does not have are left
// out (Kafka's clients ignore unknown keys with a warning); a value that does not parse is a ConfigError naming
// the key as it was spelled, with Kafka's ConfigException text.

import { ConfigError } from './errors.js';
import { securityOptionsFromProperties } from './security-config.js';

export type ClientKind = 'producer' | 'consumer' | 'admin';

/** Properties whose keys start with `prefix` (which is taken off before the key is looked up). */
export interface PropertyLayer {
  prefix: string;
  config: Readonly<Record<string, string>>;
}

type Kind = 'int' | 'string' | 'bool';

const COMMON: Record<string, [field: string, kind: Kind]> = {
  'request.timeout.ms': ['requestTimeoutMs', 'int'],
  'retry.backoff.ms': ['retryBackoffMs', 'int'],
  'retry.backoff.max.ms': ['retryBackoffMaxMs', 'int'],
  'reconnect.backoff.ms': ['reconnectBackoffMs', 'int'],
  'reconnect.backoff.max.ms': ['reconnectBackoffMaxMs', 'int'],
  'metadata.max.age.ms': ['metadataMaxAgeMs', 'int'],
  'socket.connection.setup.timeout.ms': ['connectionTimeoutMs', 'int'],
  'max.in.flight.requests.per.connection': ['maxInFlightRequestsPerConnection', 'int'],
};

const CONSUMER: Record<string, [field: string, kind: Kind]> = {
  ...COMMON,
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
  'internal.leave.group.on.close': ['leaveGroupOnClose', 'bool'],
  'default.api.timeout.ms': ['defaultApiTimeoutMs', 'int'],
};

// `retries` is a producer and an admin key in Kafka, not a consumer one.
const ADMIN: Record<string, [field: string, kind: Kind]> = {
  ...COMMON,
  'default.api.timeout.ms': ['defaultApiTimeoutMs', 'int'],
  retries: ['retries', 'int'],
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
  'transaction.timeout.ms': ['transactionTimeoutMs', 'int'],
  retries: ['retries', 'int'],
  acks: ['acks', 'string'],
};

const TABLES: Record<ClientKind, Record<string, [string, Kind]>> = {
  producer: PRODUCER,
  consumer: CONSUMER,
  admin: ADMIN,
};

/** security.protocol, ssl.* and sasl.*: keys every client (producer, consumer, admin) takes. */
export function isSecurityKey(name: string): boolean {
  return name === 'security.protocol' || name.startsWith('ssl.') || name.startsWith('sasl.');
}

/** Whether Brook's client of this kind takes the Kafka key `name` (security keys included). */
export function isClientKey(kind: ClientKind, name: string): boolean {
  return Object.hasOwn(TABLES[kind], name) || isSecurityKey(name);
}

function parsed(key: string, raw: string, field: string, kind: Kind): unknown {
  const text = raw.trim();
  if (kind === 'int') {
    if (!/^-?\d+$/.test(text))
      throw new ConfigError(`Invalid value ${raw} for configuration ${key}: Not a number of type INT`);
    return Number(text);
  }
  if (kind === 'bool') {
    if (!/^(true|false)$/i.test(text))
      throw new ConfigError(
        `Invalid value ${raw} for configuration ${key}: Expected value to be either true or false`,
      );
    return text.toLowerCase() === 'true';
  }
  if (field === 'acks') return text === 'all' || text === '-1' ? 'all' : Number(text);
  return text;
}

/**
 * The options of a client of `kind` that the layers' Kafka keys ask for: the mapped keys, and tls and sasl from
 * the security keys merged key by key across the layers (a later layer's sasl.jaas.config with an earlier one's
 * sasl.mechanism). A ConfigError when a value is wrong.
 */
export function clientOptionsFromLayers(
  kind: ClientKind,
  layers: readonly PropertyLayer[],
): Record<string, unknown> {
  const table = TABLES[kind];
  const out: Record<string, unknown> = {};
  const security: Record<string, string> = {};
  for (const { prefix, config } of layers) {
    for (const [key, raw] of Object.entries(config)) {
      if (!key.startsWith(prefix)) continue;
      const name = key.slice(prefix.length);
      if (isSecurityKey(name)) {
        security[name] = raw;
        continue;
      }
      const spec = table[name];
      if (spec === undefined) continue;
      out[spec[0]] = parsed(key, raw, spec[0], spec[1]);
    }
  }
  if (Object.keys(security).length > 0) Object.assign(out, securityOptionsFromProperties(security));
  return out;
}
