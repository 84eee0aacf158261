// The vocabulary shared by every config definition: Kafka's config types, sources, importance and dynamic
// update modes, and the shape of one key's definition. The numeric values of ConfigType and ConfigSource are
// the ones DescribeConfigs puts on the wire, so handlers can copy them into responses unchanged.

import type { Validator } from './validators.js';

/** DescribeConfigs v3+ `ConfigType`; 0 means unknown (older clients and keys Brook does not define). */
export const ConfigType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;
export type ConfigType = (typeof ConfigType)[keyof typeof ConfigType];

/** DescribeConfigs v1+ `ConfigSource`: where the reported value came from, with Kafka's wire numbers. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;
export type ConfigSource = (typeof ConfigSource)[keyof typeof ConfigSource];

export type Importance = 'high' | 'medium' | 'low';

/**
 * How a broker key may change without a restart, as Kafka's documentation names it: `read-only` needs a restart,
 * `per-broker` may be altered for one broker id, `cluster-wide` may also be altered as the cluster default.
 */
export type UpdateMode = 'read-only' | 'per-broker' | 'cluster-wide';

/**
 * What Brook intends for a key. `honoured`: part of the single-node broker's scope (issue 4) and exposed as a
 * typed field of BrokerConfig or TopicLogSettings for it to read. `planned`: accepted, validated and reported,
 * waiting for the feature that will read it (replication, security, quotas). `no-op`: accepted for
 * compatibility, meaningless in Node.js. The field records intent; whether a reader exists is the reader's to say.
 */
export type BrookSupport = 'honoured' | 'planned' | 'no-op';

/** A password value; its text never reaches logs or DescribeConfigs. */
export class Password {
  constructor(readonly value: string) {}
  toString(): string {
    return '[hidden]';
  }
  toJSON(): string {
    return '[hidden]';
  }
}

/**
 * A parsed config value. LONG values are bigint so that Kafka's Long.MAX_VALUE defaults survive unchanged into
 * DescribeConfigs; the resolved BrokerConfig and TopicLogSettings turn them into numbers.
 */
export type ConfigValue = boolean | number | bigint | string | readonly string[] | Password | null;

export interface ConfigKeyDef {
  readonly name: string;
  readonly type: Exclude<ConfigType, 0>;
  /** Kafka's default written as it would be in server.properties; null when Kafka's default is null. */
  readonly defaultValue: string | null;
  readonly validator: Validator | undefined;
  readonly importance: Importance;
  readonly updateMode: UpdateMode;
  readonly support: BrookSupport;
  /** One line in Brook's words, returned by DescribeConfigs v3+ when documentation is asked for. */
  readonly doc: string;
}

/** DescribeConfigs / AlterConfigs resource types that carry configs. */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
} as const;
