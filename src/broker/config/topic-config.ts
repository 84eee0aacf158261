// The effective config of one topic: for every topic key, its value and where it came from, resolved from the
// topic's own overrides (/config/topics/<t>), then the broker keys that are its synonyms through the broker's
// config layers, then the topic key's default. The result carries what DescribeConfigs reports (value, source,
// synonyms) and is what TopicLogSettings is built from.

import { type BrokerConfigLayers, brokerValueChain, type LayeredValue } from './config-layers.js';
import { ConfigSource, type ConfigValue } from './config-types.js';
import { parseKey } from './parsed-config.js';
import { TOPIC_KEYS, type TopicKeyDef } from './topic-keys.js';

export interface TopicConfigEntry {
  readonly name: string;
  /** The value in force, in the topic key's type and unit. */
  readonly value: ConfigValue;
  readonly source: ConfigSource;
  /**
   * Where the value could come from, highest precedence first: the topic override if any, then each broker
   * synonym per layer, values in the broker key's own unit (as DescribeConfigs reports them).
   */
  readonly synonyms: readonly LayeredValue[];
}

export type EffectiveTopicConfig = ReadonlyMap<string, TopicConfigEntry>;

function resolveKey(
  def: TopicKeyDef,
  override: string | undefined,
  layers: BrokerConfigLayers,
): TopicConfigEntry {
  const synonyms: LayeredValue[] = [];
  if (override !== undefined) {
    synonyms.push({
      name: def.name,
      value: parseKey(def, override),
      source: ConfigSource.DYNAMIC_TOPIC_CONFIG,
    });
  }
  synonyms.push(
    ...brokerValueChain(
      layers,
      def.synonyms.map((s) => s.name),
    ),
  );
  const first = synonyms[0];
  if (first === undefined) {
    return { name: def.name, value: parseKey(def, undefined), source: ConfigSource.DEFAULT_CONFIG, synonyms };
  }
  const convert = def.synonyms.find((s) => s.name === first.name)?.toTopicValue;
  const value = convert === undefined ? first.value : convert(first.value);
  // A broker value must also be a valid topic value (log.roll.ms=0 would be segment.ms=0). The error names
  // the broker key that was set, which is what the operator wrote.
  if (first.source !== ConfigSource.DYNAMIC_TOPIC_CONFIG && value !== null)
    def.validator?.check(first.name, value);
  return { name: def.name, value, source: first.source, synonyms };
}

/**
 * Resolves every topic key. Override keys that are not topic keys are ignored here; CreateTopics and
 * AlterConfigs validation refuses them before they are stored.
 */
export function resolveTopicConfig(
  overrides: ReadonlyMap<string, string>,
  layers: BrokerConfigLayers,
): EffectiveTopicConfig {
  const entries = new Map<string, TopicConfigEntry>();
  for (const def of TOPIC_KEYS.values())
    entries.set(def.name, resolveKey(def, overrides.get(def.name), layers));
  return entries;
}
