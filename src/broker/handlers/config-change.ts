// The common part of AlterConfigs and IncrementalAlterConfigs: each resource (a topic, this broker, or the
// cluster-wide broker default) is validated by the handler's own rule, then written (unless validate_only)
// through the dynamic config store, which notifies every broker. A change that edits the stored configs
// (IncrementalAlterConfigs) reads them from the store first, as Kafka reads them from ZooKeeper.

import { ErrorCode } from '../../protocol/errors.js';
import { listenerChangeRefusal } from '../../security/dynamic-listeners.js';
import type { RequestContext } from '../api-handler.js';
import { AclOperation, authorizeCluster, authorizeTopic } from '../authorization.js';
import { type ConfigEntry, malformedEntries } from '../config/alter-validation.js';
import { brokerResource } from '../config/broker-resource.js';
import type { ConfigChangeResult } from '../config/config-error-codes.js';
import type { BrokerConfigLayers } from '../config/config-layers.js';
import type { DynamicConfig } from '../dynamic-config.js';
import { ResourceType } from './32-describe-configs.js';

export interface ConfigResource<Entry extends ConfigEntry> {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: readonly Entry[];
}

/** How one handler turns a resource's entries into the complete new config, or a Kafka error. */
export interface ConfigValidation<Entry extends ConfigEntry> {
  /**
   * Whether the entries edit the resource's stored configs (IncrementalAlterConfigs) rather than replace them
   * (AlterConfigs). The stored configs are then read from the store for each request, not taken from this
   * broker's copy: another broker may have changed them a moment ago, and its notification may not be here yet.
   */
  readonly editsStored: boolean;
  /** `stored`: the topic's overrides as the store holds them (empty when the change does not edit them). */
  topic(
    topic: string,
    entries: readonly Entry[],
    layers: BrokerConfigLayers,
    stored: ReadonlyMap<string, string>,
  ): ConfigChangeResult;
  /** `layers`: with the addressed dynamic layer as the store holds it when the change edits it. */
  broker(
    entries: readonly Entry[],
    perBroker: boolean,
    layers: BrokerConfigLayers,
    resourceName: string,
  ): ConfigChangeResult;
  /**
   * Changes this broker's log levels (a BROKER_LOGGER resource, KIP-412; broker-loggers.ts). Without it (legacy
   * AlterConfigs) the resource type is refused INVALID_REQUEST before any authorization, as Kafka refuses it.
   */
  brokerLogger?(
    entries: readonly Entry[],
    resourceName: string,
    validateOnly: boolean,
  ): { readonly errorCode: number; readonly errorMessage: string | null };
}

export interface ConfigResourceResponse {
  errorCode: number;
  errorMessage: string | null;
  resourceType: number;
  resourceName: string;
}

export async function alterConfigResources<Entry extends ConfigEntry>(
  context: RequestContext,
  resources: readonly ConfigResource<Entry>[],
  validateOnly: boolean,
  validation: ConfigValidation<Entry>,
): Promise<ConfigResourceResponse[]> {
  const { topicConfigs, brokerId, metadata, dynamicConfig } = context.services;
  const responses: ConfigResourceResponse[] = [];
  const repeated = repeatedResources(resources);
  for (const resource of resources) {
    const respond = (errorCode: number, errorMessage: string | null) =>
      responses.push({
        errorCode,
        errorMessage,
        resourceType: resource.resourceType,
        resourceName: resource.resourceName,
      });
    // Kafka's ConfigAdminManager refuses every occurrence of a resource named more than once, before any other
    // check, and applies the rest of the request: which of the two changes was meant cannot be told.
    if (repeated.has(resourceKey(resource))) {
      respond(ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.');
      continue;
    }
    // Then, as Kafka's preprocess, keys named twice and missing values, before the type, the name or the ACLs.
    const malformed = malformedEntries(resource.configs);
    if (malformed !== null && !malformed.ok) {
      respond(malformed.errorCode, malformed.errorMessage);
      continue;
    }
    // Kafka 3.9's preprocess knows topics, brokers, client metrics and (incremental only) broker loggers; GROUP
    // (32) came with Kafka 4.0.
    const known =
      resource.resourceType === ResourceType.TOPIC ||
      resource.resourceType === ResourceType.BROKER ||
      resource.resourceType === ResourceType.CLIENT_METRICS ||
      (resource.resourceType === ResourceType.BROKER_LOGGER && validation.brokerLogger !== undefined);
    if (!known) {
      respond(ErrorCode.INVALID_REQUEST, `Unknown resource type ${resource.resourceType}`);
      continue;
    }
    // Kafka's checks: ALTER_CONFIGS on the topic, or on the cluster for broker configs and loggers.
    if (
      resource.resourceType === ResourceType.TOPIC &&
      !authorizeTopic(context, AclOperation.ALTER_CONFIGS, resource.resourceName)
    ) {
      respond(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null);
      continue;
    }
    if (
      (resource.resourceType === ResourceType.BROKER ||
        resource.resourceType === ResourceType.BROKER_LOGGER ||
        resource.resourceType === ResourceType.CLIENT_METRICS) &&
      !authorizeCluster(context, AclOperation.ALTER_CONFIGS)
    ) {
      respond(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
      continue;
    }
    // Kafka's ZkAdminManager has no store for client metrics subscriptions (KRaft only).
    if (resource.resourceType === ResourceType.CLIENT_METRICS) {
      respond(
        ErrorCode.INVALID_REQUEST,
        'AlterConfigs is only supported for topics and brokers, but resource type is CLIENT_METRICS',
      );
      continue;
    }
    if (resource.resourceType === ResourceType.BROKER_LOGGER && validation.brokerLogger !== undefined) {
      const changed = validation.brokerLogger(resource.configs, resource.resourceName, validateOnly);
      respond(changed.errorCode, changed.errorMessage);
      continue;
    }
    const layers = topicConfigs.layers;
    let checked: ConfigChangeResult;
    let write: (configs: ReadonlyMap<string, string>) => Promise<boolean>;
    if (resource.resourceType === ResourceType.TOPIC) {
      const topic = resource.resourceName;
      // Kafka's ZkAdminManager: "" would be the default topic resource, which ZooKeeper mode does not have.
      if (topic === '') {
        respond(ErrorCode.INVALID_REQUEST, 'Default topic resources are not allowed.');
        continue;
      }
      if (metadata.topic(topic) === undefined) {
        respond(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${topic}' does not exist.`);
        continue;
      }
      const stored = validation.editsStored ? await dynamicConfig.storedTopicConfig(topic) : new Map();
      if (!(stored instanceof Map)) {
        respond(ErrorCode.UNKNOWN_SERVER_ERROR, storedRefusalMessage(stored));
        continue;
      }
      checked = validation.topic(topic, resource.configs, layers, stored);
      write = (configs) => dynamicConfig.writeTopicConfig(topic, configs);
    } else if (resource.resourceType === ResourceType.BROKER) {
      const target = brokerResource(resource.resourceName, brokerId, true);
      if (!target.ok) {
        respond(target.errorCode, target.errorMessage);
        continue;
      }
      const edited = validation.editsStored
        ? await storedLayers(dynamicConfig, layers, target.perBroker)
        : layers;
      if ('failed' in edited) {
        respond(ErrorCode.UNKNOWN_SERVER_ERROR, storedRefusalMessage(edited.failed));
        continue;
      }
      checked = validation.broker(resource.configs, target.perBroker, edited, resource.resourceName);
      // Listeners and their SASL settings change at runtime: a change that could not apply is refused here.
      if (checked.ok)
        checked =
          listenerChangeRefusal(layers, target.perBroker, checked.configs, resource.resourceName) ?? checked;
      write = (configs) => dynamicConfig.writeBrokerConfig(target.perBroker, configs);
    } else {
      respond(ErrorCode.INVALID_REQUEST, `Resource type ${resource.resourceType} is not supported.`);
      continue;
    }
    if (!checked.ok) {
      respond(checked.errorCode, checked.errorMessage);
    } else if (validateOnly || (await write(checked.configs))) {
      respond(ErrorCode.NONE, null);
    } else {
      respond(ErrorCode.UNKNOWN_SERVER_ERROR, 'the coordination store refused the change');
    }
  }
  return responses;
}

/**
 * The message of an edit whose stored document could not be used. A refused one (a value that is not a string)
 * has none: Kafka answers the exception its decode throws as UNKNOWN_SERVER_ERROR, whose message it never sends.
 */
function storedRefusalMessage(failed: 'unreadable' | 'refused'): string | null {
  return failed === 'unreadable' ? 'the coordination store could not be read' : null;
}

/** A resource's identity as Kafka compares them: its type and its name as given (so "" and "0" differ). */
function resourceKey(resource: ConfigResource<ConfigEntry>): string {
  return `${resource.resourceType}:${resource.resourceName}`;
}

/** The keys of the resources that the request names more than once. */
function repeatedResources(resources: readonly ConfigResource<ConfigEntry>[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const resource of resources) {
    const key = resourceKey(resource);
    if (seen.has(key)) repeated.add(key);
    else seen.add(key);
  }
  return repeated;
}

/** The broker's layers with the addressed dynamic layer as the store holds it now, or null when unreadable. */
async function storedLayers(
  dynamicConfig: DynamicConfig,
  layers: BrokerConfigLayers,
  perBroker: boolean,
): Promise<BrokerConfigLayers | { failed: 'unreadable' | 'refused' }> {
  const stored = await dynamicConfig.storedBrokerConfig(perBroker);
  if (!(stored instanceof Map)) return { failed: stored };
  return perBroker ? { ...layers, dynamicBroker: stored } : { ...layers, dynamicDefault: stored };
}
