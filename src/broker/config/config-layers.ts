// The layers a broker value can come from, highest precedence first: dynamic per-broker config
// (/config/brokers/<id>), dynamic cluster default (/config/brokers/<default>), the static file with its
// --override flags, and Kafka's default. This file looks values up through the layers with their
// DescribeConfigs source, and merges the layers into the one text map the broker runs with.
//
// Synonyms (log.retention.ms/.minutes/.hours) are resolved layer first: the highest layer that sets any key of
// the group decides, and inside it the most precise key wins. This is the order DescribeConfigs lists
// synonyms in, so the value in force is always the first synonym reported.

import { BROKER_SYNONYM_GROUPS, brokerKey } from './broker-keys.js';
import { ConfigError } from './config-error.js';
import { type ConfigKeyDef, ConfigSource, type ConfigValue } from './config-types.js';
import { kafkaOnlyKey } from './kafka-only-key-defs.js';
import { parseKey } from './parsed-config.js';

export interface BrokerConfigLayers {
  /** This broker's dynamic configs. */
  readonly dynamicBroker: ReadonlyMap<string, string>;
  /** Dynamic configs set for every broker (the default resource, name ""). */
  readonly dynamicDefault: ReadonlyMap<string, string>;
  /** server.properties with --override applied. */
  readonly staticConfig: ReadonlyMap<string, string>;
}

export const EMPTY_CONFIG: ReadonlyMap<string, string> = new Map();

export function staticOnly(staticConfig: ReadonlyMap<string, string>): BrokerConfigLayers {
  return { dynamicBroker: EMPTY_CONFIG, dynamicDefault: EMPTY_CONFIG, staticConfig };
}

export interface LayeredValue {
  readonly name: string;
  /** The parsed value; unknown keys keep their text. */
  readonly value: ConfigValue;
  readonly source: ConfigSource;
}

type Layer = readonly [ReadonlyMap<string, string>, ConfigSource];

function layersOf(layers: BrokerConfigLayers): readonly Layer[] {
  return [
    [layers.dynamicBroker, ConfigSource.DYNAMIC_BROKER_CONFIG],
    [layers.dynamicDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    [layers.staticConfig, ConfigSource.STATIC_BROKER_CONFIG],
  ];
}

function valueIn(name: string, text: string | undefined, source: ConfigSource): LayeredValue | undefined {
  const own = brokerKey(name);
  const def = own ?? kafkaOnlyKey(name)?.def;
  if (text === undefined) {
    if (source !== ConfigSource.DEFAULT_CONFIG || def === undefined || def.defaultValue === null)
      return undefined;
    return { name, value: parseKey(def, undefined), source };
  }
  if (def === undefined) return { name, value: text, source };
  return { name, value: own === undefined ? parsedOrText(def, text) : parseKey(def, text), source };
}

/**
 * A Kafka key Brook does not define is checked by Kafka's type in the static config and in a dynamic change, but a
 * value stored under /config/brokers by hand is not: one its type refuses is kept as written.
 */
export function parsedOrText(def: ConfigKeyDef, text: string): ConfigValue {
  try {
    return parseKey(def, text);
  } catch (error) {
    if (error instanceof ConfigError) return text;
    throw error;
  }
}

/**
 * Every value the given broker keys have across the layers, layer first and then in the given key order,
 * ending with Kafka's defaults. This is Kafka's DescribeConfigs synonym list.
 */
export function brokerValueChain(layers: BrokerConfigLayers, names: readonly string[]): LayeredValue[] {
  const chain: LayeredValue[] = [];
  for (const [map, source] of layersOf(layers)) {
    for (const name of names) {
      const v = valueIn(name, map.get(name), source);
      if (v !== undefined) chain.push(v);
    }
  }
  for (const name of names) {
    const v = valueIn(name, undefined, ConfigSource.DEFAULT_CONFIG);
    if (v !== undefined) chain.push(v);
  }
  return chain;
}

/** The value a single broker key has in the first layer that sets it, or its default. */
export function brokerValue(layers: BrokerConfigLayers, name: string): LayeredValue | undefined {
  return brokerValueChain(layers, [name])[0];
}

/**
 * The text map the broker runs with. Plain keys take the highest layer that sets them. For a synonym group,
 * only the keys of the highest layer that sets any of them are kept, so that a dynamic log.retention.hours
 * overrides a static log.retention.ms instead of being shadowed by it.
 */
export function mergeBrokerLayers(layers: BrokerConfigLayers): Map<string, string> {
  const merged = new Map<string, string>();
  const ordered = [...layersOf(layers)].reverse();
  for (const [map] of ordered) for (const [name, text] of map) merged.set(name, text);
  const handled = new Set<string>();
  for (const name of [...merged.keys()]) {
    // Only unit synonyms are merged as a group; a listener override and its base key are separate settings.
    const group = BROKER_SYNONYM_GROUPS.find((g) => g.includes(name));
    if (group === undefined || handled.has(group[0] ?? name)) continue;
    handled.add(group[0] ?? name);
    const winner = layersOf(layers).find(([map]) => group.some((n) => map.has(n)));
    for (const n of group) {
      const text = winner?.[0].get(n);
      if (text === undefined) merged.delete(n);
      else merged.set(n, text);
    }
  }
  return merged;
}
