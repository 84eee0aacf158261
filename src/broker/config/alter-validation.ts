// Validation of config changes from CreateTopics, AlterConfigs and IncrementalAlterConfigs, for topics and for
// this broker's dynamic layers. Each function takes the current stored values and the request's entries and
// returns the complete new set to store, or Kafka's error code and a message naming the key: INVALID_REQUEST
// for malformed requests (null values to set, duplicate keys, unknown operations) and for whatever a dynamic
// broker layer is refused for (Kafka 3.9's ConfigAdminManager), INVALID_CONFIG for topic values and keys the
// broker refuses, for APPEND or SUBTRACT on a key that is not a list and, as Kafka, for null values in
// CreateTopics. Nothing here stores anything.

import { resolveBrokerConfig } from './broker-config.js';
import { BROKER_KEYS, brokerKey, listenerKeyName } from './broker-keys.js';
import { ConfigError } from './config-error.js';
import {
  AlterConfigOp,
  type ConfigChangeResult,
  ConfigErrorCode,
  configFailure,
} from './config-error-codes.js';
import { type BrokerConfigLayers, mergeBrokerLayers } from './config-layers.js';
import { type ConfigKeyDef, ConfigType } from './config-types.js';
import { isKafkaPerBrokerKey, isKafkaReadOnlyKey, kafkaDynamicKey } from './kafka-only-keys.js';
import type { Listener } from './listeners.js';
import { METRIC_REPORTERS, reportersChangeRefusal, unloadableReporter } from './metric-reporters.js';
import { parseKey } from './parsed-config.js';
import { passwordEncoderSettings } from './password-encoder.js';
import { resolveTopicConfig } from './topic-config.js';
import { TOPIC_KEYS } from './topic-keys.js';
import { resolveTopicLogSettings } from './topic-log-settings.js';
import { splitList } from './value-codec.js';

export interface ConfigEntry {
  readonly name: string;
  readonly value: string | null;
}

export interface ConfigOperation extends ConfigEntry {
  readonly configOperation: number;
}

/**
 * A ConfigError as INVALID_CONFIG. Given the topic an AlterConfigs request names, Kafka's ConfigException text
 * is prefixed with the resource as ZkAdminManager does ("Invalid config value for resource
 * ConfigResource(type=TOPIC, name='t'): ..."); CreateTopics passes it on as it is.
 */
function invalidConfig(error: unknown, topic?: string): ConfigChangeResult {
  if (!(error instanceof ConfigError)) throw error;
  const prefix =
    topic === undefined || error.invalidConfiguration
      ? ''
      : `Invalid config value for resource ConfigResource(type=TOPIC, name='${topic}'): `;
  return configFailure(ConfigErrorCode.INVALID_CONFIG, prefix + error.message);
}

/** Rules between topic keys, checked on the effective values (overrides over broker defaults). */
function checkTopicRules(configs: ReadonlyMap<string, string>, layers: BrokerConfigLayers): void {
  const effective = resolveTopicConfig(configs, layers);
  const minLag = effective.get('min.compaction.lag.ms')?.value as bigint;
  const maxLag = effective.get('max.compaction.lag.ms')?.value as bigint;
  if (minLag > maxLag) {
    throw ConfigError.invalidConfiguration(
      'min.compaction.lag.ms',
      `conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${maxLag})`,
    );
  }
  // Kafka 3.9's LogConfig, in its order: in ZooKeeper mode the KIP-950 switches may not be turned on; then
  // remote.storage.enable=true needs tiered storage in the broker, which Brook never has.
  if (
    effective.get('remote.log.delete.on.disable')?.value === true ||
    effective.get('remote.log.copy.disable')?.value === true
  ) {
    throw ConfigError.invalidConfiguration(
      'remote.log.copy.disable',
      "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` under Zookeeper's mode.",
    );
  }
  if (effective.get('remote.storage.enable')?.value === true) {
    throw ConfigError.rule(
      'remote.storage.enable',
      'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.',
    );
  }
  // Never plaintext where encryption at rest was asked for: without a provider there is no key to encrypt with.
  if (
    effective.get('brook.encryption.enable')?.value === true &&
    !mergeBrokerLayers(layers).get('brook.encryption.key.provider')
  ) {
    throw new ConfigError('brook.encryption.enable', true, 'the broker has no brook.encryption.key.provider');
  }
}

/**
 * Validates a complete set of topic overrides: every key known, every value valid, the rules between keys.
 * `topic`: the topic an AlterConfigs request names, which its errors name (see invalidConfig).
 */
export function validateTopicConfigs(
  configs: ReadonlyMap<string, string>,
  layers: BrokerConfigLayers,
  topic?: string,
): ConfigChangeResult {
  try {
    for (const [name, text] of configs) {
      const def = TOPIC_KEYS.get(name);
      if (def === undefined)
        return configFailure(ConfigErrorCode.INVALID_CONFIG, `Unknown topic config name: ${name}`);
      parseKey(def, text);
    }
    checkTopicRules(configs, layers);
    return { ok: true, configs };
  } catch (error) {
    return invalidConfig(error, topic);
  }
}

/**
 * CreateTopics configs: a repeated key keeps its last value. Null values are INVALID_CONFIG naming every such key,
 * as Kafka's ZkAdminManager answers them (unlike AlterConfigs, where Kafka takes them for a malformed request).
 */
export function validateCreateTopicConfigs(
  entries: readonly ConfigEntry[],
  layers: BrokerConfigLayers,
): ConfigChangeResult {
  const nullNames = entries.filter((e) => e.value === null).map((e) => e.name);
  if (nullNames.length > 0) {
    return configFailure(
      ConfigErrorCode.INVALID_CONFIG,
      `Null value not supported for topic configs: ${nullNames.join(',')}`,
    );
  }
  const configs = new Map<string, string>();
  for (const { name, value } of entries) if (value !== null) configs.set(name, value);
  return validateTopicConfigs(configs, layers);
}

/** Legacy AlterConfigs replaces all overrides of the topic; `entries` passed malformedEntries (the handler's). */
export function validateAlterTopicConfigs(
  entries: readonly ConfigEntry[],
  layers: BrokerConfigLayers,
  topic?: string,
): ConfigChangeResult {
  const configs = new Map<string, string>();
  for (const { name, value } of entries) if (value !== null) configs.set(name, value);
  return validateTopicConfigs(configs, layers, topic);
}

/**
 * Kafka's ConfigAdminManager.preprocess refuses a resource of either AlterConfigs request, before its type, name
 * or values are looked at, when a key is named twice or a value is null where one is needed (every entry of the
 * legacy request, every operation but DELETE of the incremental one). Returns the refusal, or null. The handler
 * (config-change.ts) checks every resource with it first: the validations below take well-formed entries.
 */
export function malformedEntries(
  entries: readonly (ConfigEntry & { readonly configOperation?: number })[],
): ConfigChangeResult | null {
  const names = entries.map((entry) => entry.name);
  if (new Set(names).size !== names.length)
    return configFailure(ConfigErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys');
  const nullNames = entries
    .filter((entry) => entry.value === null && entry.configOperation !== AlterConfigOp.DELETE)
    .map((entry) => entry.name);
  return nullNames.length === 0
    ? null
    : configFailure(
        ConfigErrorCode.INVALID_REQUEST,
        `Null value not supported for : ${nullNames.join(', ')}`,
      );
}

/**
 * Applies IncrementalAlterConfigs operations (which passed malformedEntries) to the stored values. APPEND and
 * SUBTRACT work on list keys; the list they start from is the stored value or, when none is stored, the key's
 * default.
 */
function applyOperations(
  current: ReadonlyMap<string, string>,
  operations: readonly ConfigOperation[],
  lookup: (name: string) => ConfigKeyDef | undefined,
  unknownMessage: (name: string) => string,
): ConfigChangeResult {
  const next = new Map(current);
  for (const { name, value, configOperation } of operations) {
    if (configOperation === AlterConfigOp.DELETE) {
      next.delete(name);
      continue;
    }
    if (configOperation < AlterConfigOp.SET || configOperation > AlterConfigOp.SUBTRACT) {
      return configFailure(
        ConfigErrorCode.INVALID_REQUEST,
        `Unknown config operation ${configOperation} for ${name}`,
      );
    }
    if (value === null) continue; // refused by malformedEntries
    if (configOperation === AlterConfigOp.SET) {
      next.set(name, value);
      continue;
    }
    const def = lookup(name);
    if (def === undefined) return configFailure(ConfigErrorCode.INVALID_CONFIG, unknownMessage(name));
    // The request is well formed; the key just has no list to edit. Kafka answers INVALID_CONFIG here since 3.3
    // (ConfigAdminManager.prepareIncrementalConfigs), INVALID_REQUEST before.
    if (def.type !== ConfigType.LIST) {
      const verb = configOperation === AlterConfigOp.APPEND ? 'append' : 'subtract';
      return configFailure(
        ConfigErrorCode.INVALID_CONFIG,
        `Config value ${verb} is not allowed for config key: ${name}`,
      );
    }
    const base = splitList(next.get(name) ?? def.defaultValue ?? '');
    const items = splitList(value);
    const list =
      configOperation === AlterConfigOp.APPEND
        ? [...base, ...items.filter((item) => !base.includes(item))]
        : base.filter((item) => !items.includes(item));
    next.set(name, list.join(','));
  }
  return { ok: true, configs: next };
}

export function validateIncrementalTopicConfigs(
  current: ReadonlyMap<string, string>,
  operations: readonly ConfigOperation[],
  layers: BrokerConfigLayers,
  topic?: string,
): ConfigChangeResult {
  const applied = applyOperations(
    current,
    operations,
    (n) => TOPIC_KEYS.get(n),
    (n) => `Unknown topic config name: ${n}`,
  );
  return applied.ok ? validateTopicConfigs(applied.configs, layers, topic) : applied;
}

/**
 * Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: the key and trust store settings, which Kafka lets AlterConfigs change
 * only for one listener (`listener.name.<listener>.ssl.keystore.location`), never for all listeners at once.
 */
const LISTENER_ONLY_SECURITY_KEYS = new Set([
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.keystore.key',
  'ssl.keystore.certificate.chain',
  'ssl.truststore.certificates',
]);

/** A listener-prefixed key as Kafka's DynamicBrokerConfig matches it, capturing what follows the listener name. */
const LISTENER_KEY = /^listener\.name\.[^.]*\.(.*)$/;

/** Listener keys that Kafka 3.9 lets the cluster default set (DynamicBrokerConfig's ClusterLevelListenerConfigs). */
const CLUSTER_LEVEL_LISTENER_KEYS = new Set([
  'max.connections',
  'max.connection.creation.rate',
  'num.network.threads',
]);

/**
 * Whether a key may change only for one broker, as Kafka's DynamicBrokerConfig decides: the per-broker keys by
 * name (Brook's and Kafka's own), and every listener-prefixed key whatever follows the listener name (even a
 * custom one), but the cluster-level connection and thread bounds.
 */
function perBrokerOnly(name: string): boolean {
  const listenerKey = LISTENER_KEY.exec(name);
  if (listenerKey !== null) return !CLUSTER_LEVEL_LISTENER_KEYS.has(listenerKey[1] as string);
  const def = brokerKey(name);
  return def === undefined ? isKafkaPerBrokerKey(name) : def.updateMode === 'per-broker';
}

/** Names as Kafka prints a Scala set in these messages: `Set(a, b)`. */
function scalaSet(names: readonly string[]): string {
  return `Set(${names.join(', ')})`;
}

/**
 * Whether a broker key is one Kafka cannot change dynamically: Brook's read-only keys, and Kafka's own. Kafka
 * looks plain names up, so a listener-prefixed key never is, whatever its base (it is per broker: perBrokerOnly).
 */
export function cannotChangeDynamically(name: string): boolean {
  if (LISTENER_KEY.test(name)) return false;
  const def = brokerKey(name);
  return def === undefined ? isKafkaReadOnlyKey(name) : def.updateMode === 'read-only';
}

/** Keys of a dynamic layer Kafka's DynamicBrokerConfig rejects, with its words on an alteration and at load. */
interface RejectedKeys {
  readonly names: readonly string[];
  /** ConfigException of validateConfigs, on an alteration. */
  readonly refusal: string;
  /** Error line of fromPersistentProps, which drops them from what it read from ZooKeeper. */
  readonly ignored: string;
}

/**
 * Kafka's rules for a dynamic layer, in its order: keys that cannot change dynamically, key store settings without
 * a listener prefix, then (at the cluster default) per-broker keys. Only the groups with keys are returned.
 */
function rejectedKeys(names: readonly string[], perBroker: boolean): RejectedKeys[] {
  const groups: RejectedKeys[] = [
    {
      names: names.filter(cannotChangeDynamically),
      refusal: 'Cannot update these configs dynamically',
      ignored: 'Non-dynamic configs configured in ZooKeeper will be ignored',
    },
    {
      names: names.filter((name) => LISTENER_ONLY_SECURITY_KEYS.has(name)),
      refusal:
        'These security configs can be dynamically updated only per-listener using the listener prefix',
      ignored:
        'Security configs can be dynamically updated only using listener prefix, base configs will be ignored',
    },
    {
      names: perBroker ? [] : names.filter(perBrokerOnly),
      refusal: 'Cannot update these configs at default cluster level, broker id must be specified',
      ignored: 'Per-broker configs defined at default cluster level will be ignored',
    },
  ];
  // A key is named by the first rule it breaks only: Kafka drops it before checking the next rule.
  const named = new Set<string>();
  const rejected: RejectedKeys[] = [];
  for (const group of groups) {
    const fresh = group.names.filter((name) => !named.has(name));
    for (const name of fresh) named.add(name);
    if (fresh.length > 0) rejected.push({ ...group, names: fresh });
  }
  return rejected;
}

/**
 * Kafka's DynamicBrokerConfig.validateConfigs: the first rule a key's name breaks refuses the change,
 * INVALID_REQUEST "<rule>: Set(...)" (see brokerRefusal); then `checkValues` runs, which throws a ConfigError for
 * a bad value; only then are per-broker keys refused at the cluster default. Returns the refusal, or null.
 */
function dynamicUpdateRefusal(
  names: readonly string[],
  perBroker: boolean,
  checkValues: () => void,
): ConfigChangeResult | null {
  const refuse = (group: RejectedKeys) => brokerRefusal(`${group.refusal}: ${scalaSet([...group.names])}`);
  const [byName] = rejectedKeys(names, true);
  if (byName !== undefined) return refuse(byName);
  checkValues();
  const [byScope] = rejectedKeys(names, perBroker);
  return byScope === undefined ? null : refuse(byScope);
}

/**
 * What Kafka's DynamicBrokerConfig.fromPersistentProps drops from a layer read from ZooKeeper (written by an
 * older release, or by hand), by the same rules as an alteration: each group's keys and its error line.
 */
export function ignoredStoredKeys(
  names: readonly string[],
  perBroker: boolean,
): readonly { readonly names: readonly string[]; readonly message: string }[] {
  return rejectedKeys(names, perBroker).map((group) => ({ names: group.names, message: group.ignored }));
}

/**
 * What Kafka 3.9 answers a broker config change that DynamicBrokerConfig.validate refuses: the resource is
 * validated on the receiving broker (ConfigAdminManager.preprocess), which turns every such refusal (a bad value,
 * a rule between keys, a thread count out of bounds) into INVALID_REQUEST with the refusal's own text.
 */
function brokerRefusal(message: string): ConfigChangeResult {
  return configFailure(ConfigErrorCode.INVALID_REQUEST, message);
}

/**
 * Validates the complete new content of one dynamic broker layer (this broker's when perBroker, else the
 * cluster default), then resolves the whole broker config with it so rules between keys are checked too.
 * `resourceName` is the request's ("" or this broker's id), which Kafka's refusals name.
 */
export function validateDynamicBrokerConfigs(
  configs: ReadonlyMap<string, string>,
  perBroker: boolean,
  layers: BrokerConfigLayers,
  resourceName = '',
): ConfigChangeResult {
  try {
    // Kafka allows custom broker configs (DynamicConfig.Broker validates with customPropsAllowed): a key Kafka
    // does not define either is stored, described as sensitive and has no effect.
    const checkValues = () => {
      for (const [name, text] of configs) {
        const def = valueDef(name);
        if (def !== undefined) parseKey(def, text);
      }
      localRetentionCheck(
        layers,
        perBroker ? { ...layers, dynamicBroker: configs } : { ...layers, dynamicDefault: configs },
      );
    };
    const refused = dynamicUpdateRefusal([...configs.keys()], perBroker, checkValues);
    if (refused !== null) return refused;
    for (const [name] of configs) {
      const def = brokerKey(name);
      if (def === undefined) continue;
      // Dynamic passwords are stored encrypted with password.encoder.secret (password-encoder.ts), never in
      // clear text; as in Kafka, only for one broker.
      if (def.type === ConfigType.PASSWORD) {
        if (!perBroker) {
          return configFailure(
            ConfigErrorCode.INVALID_REQUEST,
            `Invalid config value for resource ConfigResource(type=BROKER, name='${resourceName}'): Password config can be defined only at broker level: ${name}`,
          );
        }
        if (passwordEncoderSettings(layers.staticConfig) === null) {
          return configFailure(
            ConfigErrorCode.INVALID_CONFIG,
            `Dynamic password config ${name} needs password.encoder.secret in the broker's static config, to store it encrypted`,
          );
        }
      }
    }
    const next = perBroker ? { ...layers, dynamicBroker: configs } : { ...layers, dynamicDefault: configs };
    const before = mergeBrokerLayers(layers);
    const after = mergeBrokerLayers(next);
    const current = resolveBrokerConfig(before);
    const resolved = resolveBrokerConfig(after);
    const kept = resolved.listeners.filter((l) => current.listeners.some((c) => c.name === l.name));
    const refusal =
      networkThreadsChange(before, after, kept) ??
      connectionLimitsChange(before, after, kept) ??
      // Kafka validates its metrics reporters after the acceptors and before the thread pools.
      metricReportersChange(before, after) ??
      cleanerThreadsChange(current.logCleanerThreads, resolved.logCleanerThreads) ??
      threadPoolsChange(before, after);
    return refusal === null ? { ok: true, configs } : brokerRefusal(refusal);
  } catch (error) {
    if (error instanceof ConfigError) return brokerRefusal(error.message);
    throw error;
  }
}

/**
 * Kafka's DynamicMetricsReporters, validated when the change updates metric.reporters: every class it names must
 * load. The refusal names the keys the change updates (values that differ from those in force).
 */
function metricReportersChange(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string | null {
  const next = after.get(METRIC_REPORTERS);
  if (next === before.get(METRIC_REPORTERS) || unloadableReporter(next) === null) return null;
  const updated = [...after].filter(([name, text]) => before.get(name) !== text).map(([name]) => name);
  return reportersChangeRefusal(scalaSet(updated));
}

/**
 * Kafka's LogCleaner.validateReconfiguration: a running cleaner's thread count may change, but to at least 1,
 * and to no less than half (integer division, as Kafka halves) nor more than double the current count. Returns
 * the refusal, or null.
 */
function cleanerThreadsChange(current: number, next: number): string | null {
  if (next === current) return null;
  if (next < 1) return 'Log cleaner threads should be at least 1';
  if (next < Math.floor(current / 2))
    return `Log cleaner threads cannot be reduced to less than half the current value ${current}`;
  if (next > current * 2)
    return `Log cleaner threads cannot be increased to more than double the current value ${current}`;
  return null;
}

/**
 * Kafka's rule for resizing a thread pool (DynamicThreadPool, and each listener's acceptor for its network
 * threads): a new count of at least 1, no less than half (integer division) and no more than double the current
 * one. Brook has only num.replica.fetchers of these pools, but answers every resize as Kafka does. Returns the
 * refusal, or null.
 */
function threadPoolChange(name: string, current: number, next: number): string | null {
  if (next === current) return null;
  const refused = `Dynamic thread count update validation failed for ${name}=${next}`;
  if (next <= 0) return `${refused}, value should be at least 1`;
  if (next < Math.floor(current / 2))
    return `${refused}, value should be at least half the current value ${current}`;
  if (next > current * 2)
    return `${refused}, value should not be greater than double the current value ${current}`;
  return null;
}

/** Kafka's DynamicThreadPool.ReconfigurableConfigs, in its order. */
const THREAD_POOL_KEYS = [
  'num.io.threads',
  'num.replica.fetchers',
  'num.recovery.threads.per.data.dir',
  'background.threads',
];

/** An INT broker key's value in a merged set of layers, checked as its definition says (its default when unset). */
function intValue(
  merged: ReadonlyMap<string, string>,
  name: string,
  def = brokerKey(name) as ConfigKeyDef,
): number {
  return Number(parseKey(def, merged.get(name)));
}

/** DynamicThreadPool.validateReconfiguration: each of its pools, from the current layers to the new ones. */
function threadPoolsChange(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string | null {
  for (const name of THREAD_POOL_KEYS) {
    const refusal = threadPoolChange(name, intValue(before, name), intValue(after, name));
    if (refusal !== null) return refusal;
  }
  return null;
}

/**
 * Each kept listener's acceptor (Kafka's DataPlaneAcceptor.validateReconfiguration) resizes its network threads:
 * `listener.name.<listener>.num.network.threads` when set, else num.network.threads.
 */
function networkThreadsChange(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  listeners: readonly Listener[],
): string | null {
  const base = brokerKey('num.network.threads') as ConfigKeyDef;
  const count = (merged: ReadonlyMap<string, string>, listener: string) => {
    const name = listenerKeyName(listener, base.name);
    return merged.has(name) ? intValue(merged, name, { ...base, name }) : intValue(merged, base.name);
  };
  for (const { name } of listeners) {
    const refusal = threadPoolChange(base.name, count(before, name), count(after, name));
    if (refusal !== null) return refusal;
  }
  return null;
}

/**
 * Each kept listener's connection quota (Kafka's ConnectionQuotas.ListenerConnectionQuota): when its
 * max.connections or max.connection.creation.rate changes (`listener.name.<listener>.` value over the broker's),
 * both must be at least 1, though 0 is a valid static value.
 */
function connectionLimitsChange(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  listeners: readonly Listener[],
): string | null {
  const keys = ['max.connections', 'max.connection.creation.rate'];
  const limit = (merged: ReadonlyMap<string, string>, listener: string, key: string) => {
    const name = listenerKeyName(listener, key);
    return intValue(merged, merged.has(name) ? name : key);
  };
  for (const { name } of listeners) {
    if (keys.every((key) => limit(before, name, key) === limit(after, name, key))) continue;
    for (const key of keys) {
      const value = limit(after, name, key);
      if (value <= 0) return `Invalid ${key} ${value}`;
    }
  }
  return null;
}

/**
 * The definition a dynamic value is checked with, as Kafka's DynamicBrokerConfig.validateConfigTypes checks it: a
 * listener-prefixed key as its base key (which the refusal names), Kafka's dynamic keys that Brook does not define
 * by Kafka's definition. Brook's listener keys scoped to a SASL mechanism keep their base key's check.
 */
function valueDef(name: string): ConfigKeyDef | undefined {
  const listenerKey = LISTENER_KEY.exec(name);
  const base = listenerKey === null ? name : (listenerKey[1] as string);
  return BROKER_KEYS.get(base) ?? kafkaDynamicKey(base) ?? brokerKey(name);
}

/**
 * Kafka's DynamicLogConfig.validateReconfiguration: a local retention (tiered storage; -2 follows the total one)
 * may be neither unbounded (-1) nor larger than the total retention, when that is bounded. Checked only when the
 * change moves either, so that a static value Kafka would not check at startup does not block other changes.
 */
function localRetentionCheck(before: BrokerConfigLayers, after: BrokerConfigLayers): void {
  const bounds = (
    layers: BrokerConfigLayers,
  ): [local: string, total: string, local: number, total: number][] => {
    const merged = mergeBrokerLayers(layers);
    const local = (name: string) => Number(parseKey(kafkaDynamicKey(name) as ConfigKeyDef, merged.get(name)));
    const defaults = resolveTopicLogSettings(new Map(), layers);
    return [
      ['log.local.retention.ms', 'log.retention.ms', local('log.local.retention.ms'), defaults.retentionMs],
      [
        'log.local.retention.bytes',
        'log.retention.bytes',
        local('log.local.retention.bytes'),
        defaults.retentionBytes,
      ],
    ];
  };
  const current = bounds(before);
  bounds(after).forEach(([localName, totalName, local, total], i) => {
    const [, , currentLocal, currentTotal] = current[i] as (typeof current)[number];
    if ((local === currentLocal && total === currentTotal) || total < 0 || local === -2) return;
    if (local === -1)
      throw new ConfigError(
        localName,
        local,
        `Value must not be -1 as ${totalName} value is set as ${total}.`,
      );
    if (local > total)
      throw new ConfigError(
        localName,
        local,
        `Value must not be more than ${totalName} property value: ${total}`,
      );
  });
}

/** Legacy AlterConfigs for a broker resource replaces the whole layer; `entries` passed malformedEntries. */
export function validateAlterBrokerConfigs(
  entries: readonly ConfigEntry[],
  perBroker: boolean,
  layers: BrokerConfigLayers,
  resourceName = '',
): ConfigChangeResult {
  const configs = new Map<string, string>();
  for (const { name, value } of entries) if (value !== null) configs.set(name, value);
  return validateDynamicBrokerConfigs(configs, perBroker, layers, resourceName);
}

export function validateIncrementalBrokerConfigs(
  operations: readonly ConfigOperation[],
  perBroker: boolean,
  layers: BrokerConfigLayers,
  resourceName = '',
): ConfigChangeResult {
  const current = perBroker ? layers.dynamicBroker : layers.dynamicDefault;
  const applied = applyOperations(current, operations, brokerKey, (n) => `Unknown broker config name: ${n}`);
  return applied.ok
    ? validateDynamicBrokerConfigs(applied.configs, perBroker, layers, resourceName)
    : applied;
}
