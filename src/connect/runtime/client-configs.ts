// Kafka client settings for the clients of tasks: the worker's `producer.` and `consumer.` keys, then a
// connector's `producer.override.` and `consumer.override.` keys (as connector.client.config.override.policy
// allows: All, the default, every key; Principal the three that choose a principal; None none), as Kafka's
// property names mapped onto Brook's client options (the client's own mapping, client-properties.ts). Keys Brook's
// client does not have are ignored; a value that does not parse is a ConfigException naming the key.

import {
  type ClientKind,
  clientOptionsFromLayers,
  isSecurityKey,
  type PropertyLayer,
} from '../../client/client-properties.js';
import { ConfigError } from '../../client/errors.js';
import type { ConsumerOptions, ProducerOptions } from '../../client/index.js';
import { bootstrapServerList } from '../../client/options.js';
import { PRODUCER_TIMEOUT_MS_MAX } from '../../client/producer-settings.js';
import { securityOptionsFromProperties } from '../../client/security-config.js';
import { ConfigException, ConnectException } from '../errors.js';

/**
 * The client options of the layers' keys (Brook's one mapping of Kafka's client keys), as a ConfigException, with
 * the layers' `client.id` as `clientId`: Kafka's Worker puts its default client id (`connector-producer-<task>`)
 * first and lets the worker's and the connector's keys replace it, so a connector moved from Kafka Connect keeps
 * the client ids its quotas and monitoring name. The layers' `bootstrap.servers` is `bootstrapServers` in the same
 * way (Kafka's Worker starts from the worker's and lets the prefixed keys replace it): a connector's clients may
 * reach another cluster than the worker's.
 */
function mapped(kind: ClientKind, layers: PropertyLayer[]): Record<string, unknown> {
  let options: Record<string, unknown>;
  try {
    options = clientOptionsFromLayers(kind, layers);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigException(err.message);
    throw err;
  }
  const clientId = layered(layers, 'client.id');
  if (clientId !== undefined) options = { ...options, clientId };
  const bootstrap = layered(layers, 'bootstrap.servers');
  if (bootstrap !== undefined) options = { ...options, bootstrapServers: bootstrapList(bootstrap) };
  return options;
}

/** The value of `key` in the last layer that sets it, trimmed. */
function layered(layers: PropertyLayer[], key: string): string | undefined {
  let found: string | undefined;
  for (const { prefix, config } of layers) {
    const value = config[`${prefix}${key}`];
    if (value !== undefined) found = value.trim();
  }
  return found;
}

/** A bootstrap.servers list as Kafka parses it (comma-separated, each entry trimmed), as Brook's clients take it. */
function bootstrapList(value: string): string {
  const servers = bootstrapServerList(value);
  if (servers.length === 0)
    throw ConfigException.invalid('bootstrap.servers', value, 'No resolvable bootstrap urls given');
  return servers.join(',');
}

/** Whether two bootstrap.servers lists name the same servers, in any order (Kafka's sameOffsetTopicAsWorker). */
export function sameBootstrapServers(a: string | readonly string[], b: string | readonly string[]): boolean {
  const set = (v: string | readonly string[]) => new Set(bootstrapServerList(v));
  const x = set(a);
  const y = set(b);
  return x.size === y.size && [...x].every((s) => y.has(s));
}

/** Kafka's ConnectorClientConfigOverridePolicy plugins, by the alias of each. */
export type OverridePolicy = 'All' | 'None' | 'Principal';

const OVERRIDE_POLICIES: readonly OverridePolicy[] = ['All', 'None', 'Principal'];
const POLICY_PACKAGE = 'org.apache.kafka.connect.connector.policy.';
const POLICY_SUFFIX = 'ConnectorClientConfigOverridePolicy';

/**
 * Every name connector.client.config.override.policy takes: as for any Kafka plugin, the alias (`None`), the
 * simple class name (`NoneConnectorClientConfigOverridePolicy`) and the full class name.
 */
function policyNames(p: OverridePolicy): string[] {
  return [p, `${p}${POLICY_SUFFIX}`, `${POLICY_PACKAGE}${p}${POLICY_SUFFIX}`];
}

export const OVERRIDE_POLICY_NAMES: readonly string[] = OVERRIDE_POLICIES.flatMap(policyNames);

/** The worker's override policy (All when unset, Kafka 3's default); the worker config checked the name. */
export function overridePolicyOf(worker: Readonly<Record<string, string>>): OverridePolicy {
  const name = (worker['connector.client.config.override.policy'] ?? 'All').trim();
  const policy = OVERRIDE_POLICIES.find((p) => policyNames(p).includes(name));
  if (policy === undefined)
    throw ConfigException.invalid('connector.client.config.override.policy', name, 'Unknown policy');
  return policy;
}

/** What the Principal policy lets a connector override: the keys that choose whom its clients authenticate as. */
const PRINCIPAL_KEYS: ReadonlySet<string> = new Set([
  'sasl.jaas.config',
  'sasl.mechanism',
  'security.protocol',
]);

/** The clients whose settings a connector may override. */
export type { ClientKind };

/** One `<client>.override.<key>` of a connector config as the worker's policy judged it. */
export interface ClientOverride {
  /** The connector's key, prefix included: consumer.override.max.poll.records. */
  key: string;
  value: string;
  /** Kafka's message when the policy does not allow it, else null. */
  refusal: string | null;
}

/**
 * The connector's `<kind>.override.` keys judged by the worker's policy, with the message of Kafka's
 * AbstractConnectorClientConfigOverridePolicy for each one refused. The herder reports them when it validates a
 * config, so that a refused override fails its creation (400), as Kafka's does.
 */
export function clientOverrides(
  kind: ClientKind,
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): ClientOverride[] {
  const policy = overridePolicyOf(worker);
  const prefix = `${kind}.override.`;
  return Object.entries(connector)
    .filter(([key]) => key.startsWith(prefix))
    .map(([key, value]) => {
      const name = key.slice(prefix.length);
      const allowed = policy === 'All' || (policy === 'Principal' && PRINCIPAL_KEYS.has(name));
      return {
        key,
        value,
        refusal: allowed
          ? null
          : `The '${policy}' policy does not allow '${name}' to be overridden in the connector configuration.`,
      };
    });
}

function layers(
  kind: ClientKind,
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): PropertyLayer[] {
  // Validation refuses such a config; a config stored before the worker's policy changed still gets here, and
  // fails its task as Kafka's Worker fails it.
  const refused = clientOverrides(kind, worker, connector).filter((o) => o.refusal !== null);
  if (refused.length > 0)
    throw new ConnectException(
      `Client Config Overrides not allowed: ${refused.map((o) => o.refusal).join(' ')}`,
    );
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
  return mapped('consumer', l) as Partial<ConsumerOptions>;
}

/** Kafka's default for default.api.timeout.ms. */
const DEFAULT_API_TIMEOUT_MS = 60_000;

/**
 * The consumer's default.api.timeout.ms as Kafka's Worker layers it (the worker's `consumer.` key, then the
 * connector's `consumer.override.` one): how long a connector's offsets store may take to open. Brook's consumer
 * has no such setting of its own, so it is read here.
 */
export function defaultApiTimeoutMs(
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): number {
  const key = 'default.api.timeout.ms';
  const raw = connector[`consumer.override.${key}`] ?? worker[`consumer.${key}`];
  if (raw === undefined) return DEFAULT_API_TIMEOUT_MS;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value))
    throw ConfigException.invalid(key, raw, 'Not a number of type INT');
  return value;
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

/**
 * What Kafka's Worker.baseProducerConfigs sets under the worker's `producer.` and the connector's
 * `producer.override.` keys, for a source task's producer and a sink task's dead letter queue producer: sends
 * retried for as long as a retriable error lasts (a broker restart or a leader election stalls the task, where the
 * client's defaults failed it after two minutes), one request in flight so that retries keep the order, and no
 * idempotence (Connect leaves it off, so that it needs no IDEMPOTENT_WRITE on older brokers; an exactly-once task
 * turns it on). max.block.ms (Long.MAX_VALUE in Kafka) and delivery.timeout.ms take the longest timer delay.
 */
export const TASK_PRODUCER_DEFAULTS = {
  acks: 'all',
  idempotent: false,
  maxInFlightRequestsPerConnection: 1,
  deliveryTimeoutMs: PRODUCER_TIMEOUT_MS_MAX,
  maxBlockMs: PRODUCER_TIMEOUT_MS_MAX,
} as const satisfies Partial<ProducerOptions>;

export function producerOverrides(
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): Partial<ProducerOptions> {
  const l = layers('producer', worker, connector);
  return mapped('producer', l) as Partial<ProducerOptions>;
}

/**
 * The settings of a task's admin client (the dead letter queue's topic creation), layered as Kafka's
 * Worker.adminConfigs layers them: the worker's unprefixed keys (kept for the admin, unlike the producer and the
 * consumer, for compatibility with releases before the `admin.` prefix, so a worker whose security keys are only
 * unprefixed still creates its DLQ topics on a secured cluster), then the worker's `admin.` keys, then the
 * connector's `admin.override.` keys as the override policy allows them.
 */
export function adminOverrides(
  worker: Readonly<Record<string, string>>,
  connector: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const unprefixed: Record<string, string> = {};
  for (const [key, value] of Object.entries(worker))
    if (!/^(admin|producer|consumer)\./.test(key)) unprefixed[key] = value;
  const l = [{ prefix: '', config: unprefixed }, ...layers('admin', worker, connector)];
  return mapped('admin', l);
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

/**
 * Settings a group member needs and an assigned consumer that never commits does not (Kafka's KafkaBasedLog
 * consumer gets the worker's group.id and session keys too, and has no use for them: it assigns its partitions and
 * does not commit). Left out so that the store consumers stay group-less.
 */
const GROUP_MEMBER_OPTIONS = [
  'groupId',
  'sessionTimeoutMs',
  'heartbeatIntervalMs',
  'maxPollIntervalMs',
  'leaveGroupOnClose',
] as const;

/**
 * The client options of the worker config's own (unprefixed) keys for one client of the internal stores, as Kafka's
 * KafkaConfigBackingStore, KafkaStatusBackingStore, KafkaOffsetBackingStore and the shared admin of
 * ConnectDistributed start each client from `config.originals()`: `compression.type`, `linger.ms`,
 * `request.timeout.ms`, the security keys... Prefixed keys (`producer.linger.ms`) are not Kafka client keys and stay
 * out, as they do in Kafka. The client id and the bootstrap servers are the store's to set.
 */
export function workerOriginalsOptions(
  kind: ClientKind,
  worker: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const {
    clientId: _clientId,
    bootstrapServers: _bootstrap,
    ...options
  } = mapped(kind, [{ prefix: '', config: worker }]);
  if (kind === 'consumer') for (const key of GROUP_MEMBER_OPTIONS) delete options[key];
  return options;
}

/**
 * The worker keys Kafka's WorkerGroupMember gives the network client of its group membership (the ones Brook's
 * client has): the group member is no consumer, and takes no other client key of the worker.
 */
const GROUP_MEMBER_CLIENT_KEYS = [
  'request.timeout.ms',
  'retry.backoff.ms',
  'retry.backoff.max.ms',
  'reconnect.backoff.ms',
  'reconnect.backoff.max.ms',
  'metadata.max.age.ms',
  'socket.connection.setup.timeout.ms',
] as const;

/** DistributedConfig's request.timeout.ms default, longer than the clients' own 30 s. */
const WORKER_REQUEST_TIMEOUT_MS_DEFAULT = 40_000;

/**
 * The client options of a distributed worker's group member from the worker config (Kafka's WorkerGroupMember):
 * request.timeout.ms (40 s unless set), the retry and reconnect backoffs, metadata.max.age.ms and
 * socket.connection.setup.timeout.ms. The security keys come with the worker's internal client options.
 */
export function groupMemberClientOptions(worker: Readonly<Record<string, string>>): Record<string, unknown> {
  const own: Record<string, string> = {};
  for (const key of GROUP_MEMBER_CLIENT_KEYS) if (worker[key] !== undefined) own[key] = worker[key];
  return {
    requestTimeoutMs: WORKER_REQUEST_TIMEOUT_MS_DEFAULT,
    ...mapped('admin', [{ prefix: '', config: own }]),
  };
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
