// Public surface of the broker config module; other modules import from here.

export {
  type ConfigEntry,
  type ConfigOperation,
  validateAlterBrokerConfigs,
  validateAlterTopicConfigs,
  validateCreateTopicConfigs,
  validateDynamicBrokerConfigs,
  validateIncrementalBrokerConfigs,
  validateIncrementalTopicConfigs,
  validateTopicConfigs,
} from './alter-validation.js';
export { type BrokerConfig, listenerValue, resolveBrokerConfig } from './broker-config.js';
export {
  BROKER_KEYS,
  brokerKey,
  brokerSynonyms,
  type ListenerKey,
  listenerKeyName,
  parseListenerKey,
} from './broker-keys.js';
export { type BrokerResource, brokerResource } from './broker-resource.js';
export {
  applyOverrides,
  type ConfigArgs,
  parseConfigArgs,
  parseOverride,
} from './command-line.js';
export { ConfigError } from './config-error.js';
export {
  AlterConfigOp,
  type ConfigChangeResult,
  ConfigErrorCode,
} from './config-error-codes.js';
export {
  type BrokerConfigLayers,
  brokerValue,
  EMPTY_CONFIG,
  type LayeredValue,
  mergeBrokerLayers,
  staticOnly,
} from './config-layers.js';
export {
  type ConfigKeyDef,
  ConfigResourceType,
  ConfigSource,
  ConfigType,
  type ConfigValue,
  Password,
} from './config-types.js';
export {
  type DescribedConfig,
  type DescribedSynonym,
  type DescribeOptions,
  describeBrokerConfigs,
  describeTopicConfigs,
} from './describe-configs.js';
export type { Listener, SecurityProtocol } from './listeners.js';
export { type LoadedConfig, type LoadOptions, loadBrokerConfig } from './load-broker-config.js';
export { toNetworkOptions } from './network-config.js';
export { LONG_AS_NUMBER_MAX } from './parsed-config.js';
export { formatProperties, PropertiesSyntaxError, parseProperties } from './properties-parser.js';
export { toLogManagerConfig, toStorageLogConfig } from './storage-log-config.js';
export { type EffectiveTopicConfig, resolveTopicConfig, type TopicConfigEntry } from './topic-config.js';
export { findTopicKey, TOPIC_KEYS, type TopicKeyDef } from './topic-keys.js';
export {
  resolveTopicLogSettings,
  type TopicLogSettings,
  toTopicLogSettings,
} from './topic-log-settings.js';
