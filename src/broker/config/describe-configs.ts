// DescribeConfigs entries for TOPIC and BROKER resources: value, source, synonyms, type, read-only and
// sensitivity, in the shape of the response's DescribeConfigsResourceResult (field names are the camelCase of
// the specification's). Sensitive values (passwords, and keys of unknown type, which might be passwords) are
// reported as null, in synonyms too.
//
// Synonyms are listed exactly as Kafka's ConfigHelper lists them: for the key's broker synonym group, every layer
// in turn (dynamic per-broker, dynamic default, static, then Kafka's defaults), each in the group's order, and
// then everything before the first entry of the key itself is dropped. For a topic key the key looked for is its
// first broker synonym, and the topic override, when there is one, goes in front. So a topic's retention.ms
// with a static log.retention.ms lists [retention.ms TOPIC, log.retention.ms STATIC, log.retention.hours
// DEFAULT 168], and without any log.retention.ms set lists nothing after the override (the hours are dropped
// with everything before the first log.retention.ms): its source is then the override's, or DEFAULT_CONFIG,
// even when a static log.retention.hours is the value in force. The value is always the one in force.

import { BROKER_KEYS, brokerKey, brokerSynonyms } from './broker-keys.js';
import {
  type BrokerConfigLayers,
  brokerValueChain,
  type LayeredValue,
  mergeBrokerLayers,
  parsedOrText,
} from './config-layers.js';
import { type ConfigKeyDef, ConfigSource, ConfigType, type ConfigValue } from './config-types.js';
import { DESCRIBED_KAFKA_ONLY_KEYS, kafkaOnlyKey } from './kafka-only-key-defs.js';
import { kafkaDynamicKey } from './kafka-only-keys.js';
import { parseKey } from './parsed-config.js';
import { resolveTopicConfig } from './topic-config.js';
import { TOPIC_KEYS } from './topic-keys.js';
import { formatConfigValue } from './value-codec.js';

export interface DescribeOptions {
  /** Keys to describe; null or empty describes all (as Kafka). Names that are not config keys are left out. */
  readonly keys: readonly string[] | null;
  readonly includeSynonyms: boolean;
  readonly includeDocumentation: boolean;
}

export interface DescribedSynonym {
  readonly name: string;
  readonly value: string | null;
  readonly source: ConfigSource;
}

export interface DescribedConfig {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  /** For version 0, which has no configSource. */
  readonly isDefault: boolean;
  readonly configSource: ConfigSource;
  readonly isSensitive: boolean;
  readonly synonyms: readonly DescribedSynonym[];
  readonly configType: ConfigType;
  readonly documentation: string | null;
}

function typeOf(name: string): ConfigType {
  return describedBrokerKey(name)?.type ?? TOPIC_KEYS.get(name)?.type ?? ConfigType.UNKNOWN;
}

/**
 * A broker key's definition: Brook's own, or Kafka's for a Kafka key Brook accepts without defining it; a
 * listener-prefixed key without one of its own takes its base key's (Kafka's KafkaConfig.configType).
 */
function describedBrokerKey(name: string): ConfigKeyDef | undefined {
  const def = brokerKey(name) ?? kafkaOnlyKey(name)?.def;
  if (def !== undefined) return def;
  const base = listenerBaseName(name);
  const baseDef = base === undefined ? undefined : (brokerKey(base) ?? kafkaOnlyKey(base)?.def);
  return baseDef === undefined ? undefined : { ...baseDef, name };
}

/** SASL keys Kafka sets per listener and mechanism (`listener.name.<l>.<mechanism>.<key>`). */
const LISTENER_MECHANISM_KEYS = [
  'sasl.jaas.config',
  'sasl.login.callback.handler.class',
  'sasl.login.class',
  'sasl.server.callback.handler.class',
  'connections.max.reauth.ms',
];

/**
 * The base key of `listener.name.<listener>.<rest>` as Kafka's DynamicBrokerConfig.brokerConfigSynonyms finds it,
 * whatever `rest` is: the mechanism key `rest` ends with, else `rest` itself; undefined for other names.
 */
function listenerBaseName(name: string): string | undefined {
  const rest = /^listener\.name\.[^.]*\.(.*)$/.exec(name)?.[1];
  if (rest === undefined) return undefined;
  return LISTENER_MECHANISM_KEYS.find((key) => rest.endsWith(key)) ?? rest;
}

/**
 * The synonyms DescribeConfigs lists for a broker key (brokerSynonyms); a listener-prefixed key that Brook does not
 * read per listener (a Kafka-only base) has them as Kafka does: itself, then its base key.
 */
function describedSynonymGroup(name: string): readonly string[] {
  const group = brokerSynonyms(name);
  const base = group.length > 1 ? undefined : listenerBaseName(name);
  return base === undefined ? group : [name, base];
}

/** A value as DescribeConfigs reports it; a Kafka key's stored value that its type refuses is kept as written. */
function describedText(type: ConfigType, value: ConfigValue): string | null {
  return typeof value === 'string' ? value : formatConfigValue(type, value);
}

function isSensitiveType(type: ConfigType): boolean {
  return type === ConfigType.PASSWORD || type === ConfigType.UNKNOWN;
}

function format(v: LayeredValue, sensitive: boolean): DescribedSynonym {
  return {
    name: v.name,
    value: sensitive ? null : describedText(typeOf(v.name), v.value),
    source: v.source,
  };
}

/** Kafka's configSynonyms: the chain of the group, from the first entry named `name` on (nothing if none). */
function synonymsFrom(layers: BrokerConfigLayers, name: string, group: readonly string[]): LayeredValue[] {
  const chain = brokerValueChain(layers, group);
  const first = chain.findIndex((v) => v.name === name);
  return first < 0 ? [] : chain.slice(first);
}

function wanted(names: Iterable<string>, options: DescribeOptions): string[] {
  const all = [...names].sort();
  if (options.keys === null || options.keys.length === 0) return all;
  const keys = new Set(options.keys);
  return all.filter((n) => keys.has(n));
}

/** A topic's configs: the override first, then the broker's layers, then defaults. Topic configs are never read-only. */
export function describeTopicConfigs(
  overrides: ReadonlyMap<string, string>,
  layers: BrokerConfigLayers,
  options: DescribeOptions,
): DescribedConfig[] {
  const effective = resolveTopicConfig(overrides, layers);
  return wanted(TOPIC_KEYS.keys(), options).map((name) => {
    const def = TOPIC_KEYS.get(name)!;
    const entry = effective.get(name)!;
    const sensitive = def.type === ConfigType.PASSWORD;
    const value = sensitive ? null : formatConfigValue(def.type, entry.value);
    const group = def.synonyms.map((s) => s.name);
    const fromBroker = group.length === 0 ? [] : synonymsFrom(layers, group[0]!, group);
    const synonyms: DescribedSynonym[] = fromBroker.map((s) => format(s, sensitive));
    if (overrides.has(name)) synonyms.unshift({ name, value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    const configSource = synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG;
    return {
      name,
      value,
      readOnly: false,
      isDefault: configSource === ConfigSource.DEFAULT_CONFIG,
      configSource,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? synonyms : [],
      configType: def.type,
      documentation: options.includeDocumentation ? def.doc : null,
    };
  });
}

/**
 * A broker resource's configs. For this broker (perBroker) every known key plus any unknown key that was set;
 * for the default resource "" only the keys set in the dynamic default layer, without per-broker values.
 */
export function describeBrokerConfigs(
  layers: BrokerConfigLayers,
  perBroker: boolean,
  options: DescribeOptions,
): DescribedConfig[] {
  const names = perBroker
    ? new Set([
        ...BROKER_KEYS.keys(),
        ...DESCRIBED_KAFKA_ONLY_KEYS,
        ...layers.staticConfig.keys(),
        ...layers.dynamicDefault.keys(),
        ...layers.dynamicBroker.keys(),
      ])
    : new Set(layers.dynamicDefault.keys());
  // The value in force, as Kafka's merged config holds it: a dynamic log.retention.hours removes a static
  // log.retention.ms from the merge, so log.retention.ms then has no value even though it is listed as a synonym.
  const merged = perBroker ? mergeBrokerLayers(layers) : layers.dynamicDefault;
  return wanted(names, options).map((name) => {
    const def = describedBrokerKey(name);
    const type = def?.type ?? ConfigType.UNKNOWN;
    const sensitive = isSensitiveType(type);
    // The default resource reports only its own layer, synonyms included.
    const synonyms = synonymsFrom(layers, name, describedSynonymGroup(name)).filter(
      (v) => perBroker || v.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    );
    const configSource = synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG;
    return {
      name,
      value: sensitive ? null : brokerValueText(def, merged.get(name), perBroker),
      readOnly: describedReadOnly(name, def),
      isDefault: configSource === ConfigSource.DEFAULT_CONFIG,
      configSource,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? synonyms.map((s) => format(s, sensitive)) : [],
      configType: type,
      documentation: options.includeDocumentation ? (def?.doc ?? null) : null,
    };
  });
}

/**
 * Keys Brook changes dynamically that are not in Kafka's DynamicBrokerConfig.AllDynamicConfigs, so that Kafka's
 * DescribeConfigs calls them read-only: the broker quota keys (dynamic in Kafka through DynamicConfig.Broker), and
 * the log keys that are a topic config's lower-priority broker synonyms (Kafka's set takes only the first of each,
 * log.retention.ms but not log.retention.minutes or .hours, as its DynamicBrokerReconfigurationTest checks).
 */
const DESCRIBED_READ_ONLY = new Set([
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
  'replica.alter.log.dirs.io.max.bytes.per.second',
  'log.retention.minutes',
  'log.retention.hours',
  'log.roll.hours',
  'log.roll.jitter.hours',
  'log.flush.scheduler.interval.ms',
]);

/**
 * A broker key's read_only flag as Kafka's ConfigHelper sets it: not in DynamicBrokerConfig.AllDynamicConfigs.
 * That set names plain keys only, so a listener-prefixed key is read-only in the answer even where AlterConfigs
 * takes it (alter-validation.ts decides what may change; this is only what DescribeConfigs says).
 */
function describedReadOnly(name: string, def: ConfigKeyDef | undefined): boolean {
  if (kafkaDynamicKey(name) !== undefined) return false;
  if (def === undefined || def.updateMode === 'read-only') return true;
  return !BROKER_KEYS.has(name) || DESCRIBED_READ_ONLY.has(name);
}

function brokerValueText(
  def: ConfigKeyDef | undefined,
  text: string | undefined,
  perBroker: boolean,
): string | null {
  if (def === undefined) return text ?? null;
  if (text === undefined && (!perBroker || def.defaultValue === null)) return null;
  if (text !== undefined && !BROKER_KEYS.has(def.name))
    return describedText(def.type, parsedOrText(def, text));
  return formatConfigValue(def.type, parseKey(def, text));
}
