// The settings of an instance's clients from its properties, layered as Kafka's StreamsConfig layers them
// (getMainConsumerConfigs, getRestoreConsumerConfigs, getGlobalConsumerConfigs, getProducerConfigs,
// getAdminConfigs): an unprefixed client key goes to every client that has it (security.protocol and sasl.* to
// all, linger.ms to the producer, max.poll.records to the consumers); `consumer.` keys override them for the three
// consumers, and `main.consumer.`, `restore.consumer.` and `global.consumer.` override those for one of them;
// `producer.` keys for the producer, `admin.` keys for the admin client. Kafka names are mapped onto Brook's
// client options by the client's own table (src/client/client-properties.ts).
//
// Under the properties lie Kafka Streams' own defaults for its clients (StreamsConfig's CONSUMER_DEFAULT_OVERRIDES,
// PRODUCER_DEFAULT_OVERRIDES, PRODUCER_EOS_OVERRIDES): every consumer polls up to 1000 records, the main consumer
// starts from the earliest offset, the producer lingers 100 ms, and under exactly-once its delivery timeout is
// Integer.MAX_VALUE (a record is not expired by the producer) and its transaction timeout 10 s.
// group.instance.id (static membership) is the main consumer's only; each stream thread suffixes it with its index.
//
// What Streams controls itself is not taken from the properties: group.id and client.id (generated from
// application.id and client.id), bootstrap.servers, the assignor, enable.auto.commit (always false), and under
// exactly-once isolation.level (read_committed), enable.idempotence and transactional.id. As in Kafka, a user value
// for these is overridden with a log line, not refused; only max.in.flight.requests.per.connection above 5 under
// exactly-once is an error. Prefixed keys Brook's client does not have are ignored with a log line, as Kafka's
// clients log the configurations they do not know.

import { clientOptionsFromLayers, isClientKey, type PropertyLayer } from '../client/client-properties.js';
import type { ConsumerOptions } from '../client/consumer.js';
import { ConfigError } from '../client/errors.js';
import type { ClientOptions } from '../client/options.js';
import type { ProducerOptions } from '../client/producer.js';
import { PRODUCER_TIMEOUT_MS_MAX } from '../client/producer-settings.js';
import { StreamsConfigError } from './errors.js';

/** The options the properties give each client of the instance, before the ones Streams sets itself. */
export interface StreamsClientConfigs {
  mainConsumer: Partial<ConsumerOptions>;
  restoreConsumer: Partial<ConsumerOptions>;
  globalConsumer: Partial<ConsumerOptions>;
  producer: Partial<ProducerOptions>;
  admin: Partial<ClientOptions>;
  /**
   * group.instance.id from the main consumer's layers (null: dynamic members); stream thread n's consumer is the
   * static member `<groupInstanceId>-<n>`, as Kafka's getMainConsumerConfigs makes each thread's unique.
   */
  groupInstanceId: string | null;
  /** Lines to log when the instance starts: user values Streams overrides, keys the clients ignore. */
  warnings: string[];
}

/** Keys Streams sets itself whatever the properties say, silently as Kafka does (they name the clients). */
const SET_BY_STREAMS = new Set(['client.id', 'group.id', 'bootstrap.servers']);

/** Keys Streams overrides with a log line (below); not reported again as unknown. */
const OVERRIDDEN = new Set(['enable.auto.commit', 'transactional.id']);

/** Keys Streams reads itself from the properties rather than through the client's table (group.instance.id). */
const READ_BY_STREAMS = new Set(['group.instance.id']);

/**
 * Kafka Streams' defaults for all its consumers (CONSUMER_DEFAULT_OVERRIDES), under the properties' values:
 * internal.leave.group.on.close=false, so a closing thread's consumer stays in the group until its session times
 * out and an instance restarted within it takes its tasks back without a rebalance (KafkaStreams' CloseOptions
 * leaveGroup(true), or the property set true, leaves at once).
 */
const CONSUMER_DEFAULTS: Partial<ConsumerOptions> = { maxPollRecords: 1000, leaveGroupOnClose: false };

/** Kafka Streams' defaults for its producer (PRODUCER_DEFAULT_OVERRIDES), under the properties' values. */
const PRODUCER_DEFAULTS: Partial<ProducerOptions> = { lingerMs: 100 };

/**
 * What exactly-once adds to the producer defaults (PRODUCER_EOS_OVERRIDES): a record is never expired by the
 * producer, and a shorter transaction timeout than the client's 60 s, so that a dead thread's open transaction is
 * aborted and its pending offsets dropped sooner. The properties may set both.
 */
const PRODUCER_EOS_DEFAULTS: Partial<ProducerOptions> = {
  ...PRODUCER_DEFAULTS,
  deliveryTimeoutMs: PRODUCER_TIMEOUT_MS_MAX,
  transactionTimeoutMs: 10_000,
};

const PREFIXES: readonly [prefix: string, kind: 'consumer' | 'producer' | 'admin'][] = [
  ['main.consumer.', 'consumer'],
  ['restore.consumer.', 'consumer'],
  ['global.consumer.', 'consumer'],
  ['consumer.', 'consumer'],
  ['producer.', 'producer'],
  ['admin.', 'admin'],
];

/** The properties that are plain values, as text (a properties file's form); objects and nulls are not client keys. */
function asText(props: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(props))
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[key] = String(value);
  return out;
}

function options(kind: 'consumer' | 'producer' | 'admin', layers: PropertyLayer[]): Record<string, unknown> {
  try {
    return clientOptionsFromLayers(kind, layers);
  } catch (err) {
    if (err instanceof ConfigError) throw new StreamsConfigError(err.message);
    throw err;
  }
}

/** Kafka's line for a user value of a key Streams does not let be configured. */
function overridden(client: string, key: string, who: string, value: string, streamsValue: string): string {
  return (
    `Unexpected user-specified ${client} config '${key}' found. ${who} setting (${value}) will be ignored and ` +
    `the Streams default setting (${streamsValue}) will be used.`
  );
}

export function streamsClientConfigs(
  props: Readonly<Record<string, unknown>>,
  eos: boolean,
): StreamsClientConfigs {
  const text = asText(props);
  const warnings: string[] = [];
  const eosWho = `'processing.guarantee' is set to "exactly_once_v2". Hence, user`;
  // Kafka checks the unprefixed and `consumer.` / `producer.` values (its getClientPropsWithPrefix), later wins.
  const given = (prefix: string, key: string): string | undefined => text[`${prefix}${key}`] ?? text[key];

  const autoCommit = given('consumer.', 'enable.auto.commit');
  if (autoCommit !== undefined && autoCommit.trim().toLowerCase() !== 'false')
    warnings.push(overridden('consumer', 'enable.auto.commit', 'User', autoCommit, 'false'));
  if (eos) {
    const isolation = given('consumer.', 'isolation.level');
    if (isolation !== undefined && isolation.trim() !== 'read_committed')
      warnings.push(overridden('consumer', 'isolation.level', eosWho, isolation, 'read_committed'));
    const idempotence = given('producer.', 'enable.idempotence');
    if (idempotence !== undefined && idempotence.trim().toLowerCase() !== 'true')
      warnings.push(overridden('producer', 'enable.idempotence', eosWho, idempotence, 'true'));
    const transactionalId = given('producer.', 'transactional.id');
    if (transactionalId !== undefined)
      warnings.push(
        overridden('producer', 'transactional.id', eosWho, transactionalId, '<appId>-<generatedSuffix>'),
      );
  }

  const consumer = (own: string): Partial<ConsumerOptions> => {
    const o: Partial<ConsumerOptions> = {
      ...CONSUMER_DEFAULTS,
      ...(options('consumer', [
        { prefix: '', config: text },
        { prefix: 'consumer.', config: text },
        { prefix: own, config: text },
      ]) as Partial<ConsumerOptions>),
    };
    // The main consumer's group is application.id; the restore and global consumers have none.
    delete o.groupId;
    // Exactly-once reads only committed records, whatever the properties say; at least once reads what the
    // properties ask for (Kafka's consumer default, read_uncommitted, otherwise).
    o.isolationLevel = eos ? 'read_committed' : (o.isolationLevel ?? 'read_uncommitted');
    return o;
  };
  const producer: Partial<ProducerOptions> = {
    ...(eos ? PRODUCER_EOS_DEFAULTS : PRODUCER_DEFAULTS),
    ...(options('producer', [
      { prefix: '', config: text },
      { prefix: 'producer.', config: text },
    ]) as Partial<ProducerOptions>),
  };
  if (eos) {
    delete producer.idempotent;
    const inFlight = producer.maxInFlightRequestsPerConnection;
    if (inFlight !== undefined && inFlight > 5)
      throw new StreamsConfigError(
        `Invalid value ${inFlight} for configuration max.in.flight.requests.per.connection: ` +
          "Can't exceed 5 when exactly-once processing is enabled",
      );
  }

  for (const key of Object.keys(text)) {
    const match = PREFIXES.find(([prefix]) => key.startsWith(prefix));
    if (match === undefined) continue;
    const name = key.slice(match[0].length);
    if (isClientKey(match[1], name) || SET_BY_STREAMS.has(name) || OVERRIDDEN.has(name)) continue;
    if (match[1] === 'consumer' && READ_BY_STREAMS.has(name)) continue;
    warnings.push(
      `The configuration '${key}' was supplied but is not a ${match[1]} configuration Brook's client has; ` +
        'it is ignored.',
    );
  }

  return {
    // Kafka Streams' default for the main consumer, which the properties may change: start from the earliest offset.
    mainConsumer: { autoOffsetReset: 'earliest', ...consumer('main.consumer.') },
    restoreConsumer: consumer('restore.consumer.'),
    globalConsumer: consumer('global.consumer.'),
    producer,
    admin: options('admin', [
      { prefix: '', config: text },
      { prefix: 'admin.', config: text },
    ]) as Partial<ClientOptions>,
    // Kafka layers it as any consumer key, then takes it off the restore and global consumers.
    groupInstanceId:
      text['main.consumer.group.instance.id'] ?? given('consumer.', 'group.instance.id') ?? null,
    warnings,
  };
}
