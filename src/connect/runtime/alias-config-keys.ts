// The config keys a connector config gains from the transformations and predicates it names, with their values
// (Kafka's ConnectorConfig.enrich with EnrichablePlugin, as AbstractHerder.validateConnectorConfig uses it): for each
// alias of `transforms` and of `predicates`, in order and once, a required `<kind>.<alias>.type` key in the group
// `Transforms: <alias>` (or `Predicates: <alias>`), then, when that class is found, its own keys embedded under the
// alias's prefix in the same group (Kafka's ConfigDef.embed), a transformation's preceded by the implicit
// `predicate` and `negate` keys. A class that is not found leaves only the type key, with the error on it.
//
// Pure: it reads the plugins and the config and returns definitions and values; the herder puts them in the answer
// of PUT /connector-plugins/{type}/config/validate.

import { ConfigDef, type ConfigKey, type ConfigValue, type Importance } from '../api/config-def.js';
import { splitList } from './connector-config.js';
import type { Plugins } from './plugins.js';

export interface AliasConfigKeys {
  keys: ConfigKey[];
  values: ConfigValue[];
}

interface AliasKind {
  /** The list key naming the aliases: `transforms` or `predicates`. */
  list: 'transforms' | 'predicates';
  /** Kafka's group name before `: <alias>`. */
  group: string;
  /** Kafka's base class name, as the type key's display name says it. */
  baseClass: string;
  /** The ConfigDef of the named class; throws when the class is not one of this kind. */
  configOf(plugins: Plugins, className: string): ConfigDef;
  /** Keys every alias of this kind has before its class's own (Kafka's initialConfigDef). */
  implicit: ConfigKey[];
  /** Errors of the alias's keys taken together, reported on its type key (Kafka's validateProps). */
  propsErrors(prefix: string, config: Readonly<Record<string, string>>): string[];
}

const TRANSFORMATION: AliasKind = {
  list: 'transforms',
  group: 'Transforms',
  baseClass: 'Transformation',
  configOf: (plugins, className) => new (plugins.transformation(className))().config(),
  implicit: [
    {
      name: 'predicate',
      type: 'STRING',
      defaultValue: null,
      importance: 'MEDIUM',
      documentation: 'The alias of a predicate used to determine whether to apply this transformation.',
      required: false,
    },
    {
      name: 'negate',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation: 'Whether the configured predicate should be negated.',
      required: false,
    },
  ],
  // Kafka checks that the keys are present, whatever their values: `negate=false` alone is refused too.
  propsErrors: (prefix, config) =>
    `${prefix}negate` in config && !(`${prefix}predicate` in config)
      ? [
          `Config '${prefix}negate' was provided but there is no config '${prefix}predicate' defining a predicate to be negated.`,
        ]
      : [],
};

const PREDICATE: AliasKind = {
  list: 'predicates',
  group: 'Predicates',
  baseClass: 'Predicate',
  configOf: (plugins, className) => new (plugins.predicate(className))().config(),
  implicit: [],
  propsErrors: () => [],
};

/** The keys and values of every transformation and predicate alias the config names. */
export function aliasConfigKeys(plugins: Plugins, config: Readonly<Record<string, string>>): AliasConfigKeys {
  const out: AliasConfigKeys = { keys: [], values: [] };
  for (const kind of [TRANSFORMATION, PREDICATE]) {
    for (const alias of new Set(splitList(config[kind.list]))) addAlias(out, kind, alias, plugins, config);
  }
  return out;
}

function addAlias(
  out: AliasConfigKeys,
  kind: AliasKind,
  alias: string,
  plugins: Plugins,
  config: Readonly<Record<string, string>>,
): void {
  const prefix = `${kind.list}.${alias}.`;
  const group = `${kind.group}: ${alias}`;
  const typeName = `${prefix}type`;
  out.keys.push({
    name: typeName,
    type: 'CLASS',
    importance: 'HIGH',
    documentation: `Class for the '${alias}' ${kind.baseClass.toLowerCase()}.`,
    group,
    orderInGroup: 0,
    width: 'LONG',
    displayName: `${kind.baseClass} type for ${alias}`,
    dependents: [],
    required: true,
  });
  const className = config[typeName];
  const typeValue: ConfigValue = {
    name: typeName,
    value: className ?? null,
    recommendedValues: [],
    errors: [],
    visible: true,
  };
  out.values.push(typeValue);
  // As Kafka's ConfigDef: the type is parsed first (a missing or unknown class is its first error), then its
  // validator runs whatever the parse gave, and that validator checks the alias's keys together.
  let own: ConfigDef | null = null;
  if (className === undefined || className.trim() === '') {
    typeValue.errors.push(`Missing required configuration "${typeName}" which has no default value.`);
  } else {
    try {
      own = kind.configOf(plugins, className);
    } catch (err) {
      typeValue.errors.push(
        `Invalid value ${className} for configuration ${typeName}: ${(err as Error).message}`,
      );
    }
  }
  typeValue.errors.push(...kind.propsErrors(prefix, config));
  if (own === null) return;
  const child = new ConfigDef();
  const implicit = new Set(kind.implicit.map((k) => k.name));
  // As Kafka: the implicit keys mask a class's keys of the same name.
  for (const k of [...kind.implicit, ...own.keys().filter((k) => !implicit.has(k.name))]) child.define(k);
  const embedded = sortedAsKafka(child).map((k, i) => embed(k, prefix, group, i + 1));
  out.keys.push(...embedded);
  for (const v of child.validate(withoutPrefix(config, prefix)))
    out.values.push({ ...v, name: prefix + v.name });
}

/** Kafka's ConfigDef.embed of one key: its name and dependents under the prefix, its group under the alias's. */
function embed(k: ConfigKey, prefix: string, group: string, orderInGroup: number): ConfigKey {
  return {
    ...k,
    name: prefix + k.name,
    group: k.group === undefined ? group : `${group}: ${k.group}`,
    orderInGroup,
    // A key's display name is its own name unless it has one: the name before the prefix.
    displayName: k.displayName ?? k.name,
    dependents: (k.dependents ?? []).map((d) => prefix + d),
  };
}

const IMPORTANCE_ORDER: Record<Importance, number> = { HIGH: 0, MEDIUM: 1, LOW: 2 };

/**
 * Kafka's ConfigDef.sortedConfigs, the order embed() walks: keys without a group first, then by group in the order
 * groups appear; within one, by orderInGroup (-1 when unset), then required keys first, then by importance, then
 * by name.
 */
function sortedAsKafka(def: ConfigDef): ConfigKey[] {
  const groups = def.groups();
  const groupRank = (k: ConfigKey) => (k.group === undefined ? -1 : groups.indexOf(k.group));
  return def
    .keys()
    .sort(
      (a, b) =>
        groupRank(a) - groupRank(b) ||
        (a.orderInGroup ?? -1) - (b.orderInGroup ?? -1) ||
        Number(b.required) - Number(a.required) ||
        IMPORTANCE_ORDER[a.importance] - IMPORTANCE_ORDER[b.importance] ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
}

function withoutPrefix(config: Readonly<Record<string, string>>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out;
}
