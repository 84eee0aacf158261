// DescribeConfigs entries for TOPIC and BROKER resources: value, source, synonyms, type, read-only and
// sensitivity, in the shape of the response's DescribeConfigsResourceResult (field names are the camelCase of
// the specification's). Sensitive values (passwords, and keys of unknown type, which might be passwords) are
// reported as null, in synonyms too.

import { BROKER_KEYS, brokerKey, brokerSynonyms } from './broker-keys.js';
import { type BrokerConfigLayers, brokerValueChain, type LayeredValue } from './config-layers.js';
import { ConfigSource, ConfigType } from './config-types.js';
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
  return brokerKey(name)?.type ?? TOPIC_KEYS.get(name)?.type ?? ConfigType.UNKNOWN;
}

function isSensitiveType(type: ConfigType): boolean {
  return type === ConfigType.PASSWORD || type === ConfigType.UNKNOWN;
}

function format(v: LayeredValue, sensitive: boolean): DescribedSynonym {
  return {
    name: v.name,
    value: sensitive ? null : formatConfigValue(typeOf(v.name), v.value),
    source: v.source,
  };
}

function wanted(names: Iterable<string>, options: DescribeOptions): string[] {
  const all = [...names].sort();
  if (options.keys === null || options.keys.length === 0) return all;
  const keys = new Set(options.keys);
  return all.filter((n) => keys.has(n));
}

/** A topic's configs: overrides first, then the broker's layers, then defaults. Topic configs are never read-only. */
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
    return {
      name,
      value: sensitive ? null : formatConfigValue(def.type, entry.value),
      readOnly: false,
      isDefault: entry.source === ConfigSource.DEFAULT_CONFIG,
      configSource: entry.source,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? entry.synonyms.map((s) => format(s, sensitive)) : [],
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
        ...layers.staticConfig.keys(),
        ...layers.dynamicDefault.keys(),
        ...layers.dynamicBroker.keys(),
      ])
    : new Set(layers.dynamicDefault.keys());
  return wanted(names, options).map((name) => {
    const def = brokerKey(name);
    const type = def?.type ?? ConfigType.UNKNOWN;
    const sensitive = isSensitiveType(type);
    // The default resource reports only its own layer, synonyms included.
    const chain = brokerValueChain(layers, brokerSynonyms(name)).filter(
      (v) => perBroker || v.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    );
    // Synonyms of more precise keys that come before this one are not this key's synonyms.
    const fromHere = chain.slice(
      Math.max(
        0,
        chain.findIndex((v) => v.name === name),
      ),
    );
    const own = chain.find((v) => v.name === name);
    const configSource = own?.source ?? ConfigSource.DEFAULT_CONFIG;
    return {
      name,
      value: own === undefined || sensitive ? null : formatConfigValue(type, own.value),
      readOnly: def === undefined || def.updateMode === 'read-only',
      isDefault: configSource === ConfigSource.DEFAULT_CONFIG,
      configSource,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms && own !== undefined ? fromHere.map((s) => format(s, sensitive)) : [],
      configType: type,
      documentation: options.includeDocumentation ? (def?.doc ?? null) : null,
    };
  });
}
