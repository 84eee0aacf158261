// The common part of AlterConfigs and IncrementalAlterConfigs: each resource (a topic, this broker, or the
// cluster-wide broker default) is validated by the handler's own rule, then written (unless validate_only)
// through the dynamic config store, which notifies every broker.

import { ErrorCode } from '../../protocol/errors.js';
import { listenerChangeRefusal } from '../../security/dynamic-listeners.js';
import type { RequestContext } from '../api-handler.js';
import { AclOperation, authorizeCluster, authorizeTopic } from '../authorization.js';
import { brokerResource } from '../config/broker-resource.js';
import type { ConfigChangeResult } from '../config/config-error-codes.js';
import type { BrokerConfigLayers } from '../config/config-layers.js';
import { ResourceType } from './32-describe-configs.js';

export interface ConfigResource<Entry> {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: readonly Entry[];
}

/** How one handler turns a resource's entries into the complete new config, or a Kafka error. */
export interface ConfigValidation<Entry> {
  topic(topic: string, entries: readonly Entry[], layers: BrokerConfigLayers): ConfigChangeResult;
  broker(
    entries: readonly Entry[],
    perBroker: boolean,
    layers: BrokerConfigLayers,
    resourceName: string,
  ): ConfigChangeResult;
}

export interface ConfigResourceResponse {
  errorCode: number;
  errorMessage: string | null;
  resourceType: number;
  resourceName: string;
}

export async function alterConfigResources<Entry>(
  context: RequestContext,
  resources: readonly ConfigResource<Entry>[],
  validateOnly: boolean,
  validation: ConfigValidation<Entry>,
): Promise<ConfigResourceResponse[]> {
  const { topicConfigs, brokerId, metadata, dynamicConfig } = context.services;
  const responses: ConfigResourceResponse[] = [];
  for (const resource of resources) {
    const respond = (errorCode: number, errorMessage: string | null) =>
      responses.push({
        errorCode,
        errorMessage,
        resourceType: resource.resourceType,
        resourceName: resource.resourceName,
      });
    // Kafka's checks: ALTER_CONFIGS on the topic, or on the cluster for broker configs.
    if (
      resource.resourceType === ResourceType.TOPIC &&
      !authorizeTopic(context, AclOperation.ALTER_CONFIGS, resource.resourceName)
    ) {
      respond(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null);
      continue;
    }
    if (
      (resource.resourceType === ResourceType.BROKER ||
        resource.resourceType === ResourceType.BROKER_LOGGER) &&
      !authorizeCluster(context, AclOperation.ALTER_CONFIGS)
    ) {
      respond(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
      continue;
    }
    const layers = topicConfigs.layers;
    let checked: ConfigChangeResult;
    let write: (configs: ReadonlyMap<string, string>) => Promise<boolean>;
    if (resource.resourceType === ResourceType.TOPIC) {
      const topic = resource.resourceName;
      if (metadata.topic(topic) === undefined) {
        respond(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${topic} does not exist.`);
        continue;
      }
      checked = validation.topic(topic, resource.configs, layers);
      write = (configs) => dynamicConfig.writeTopicConfig(topic, configs);
    } else if (resource.resourceType === ResourceType.BROKER) {
      const target = brokerResource(resource.resourceName, brokerId);
      if (!target.ok) {
        respond(target.errorCode, target.errorMessage);
        continue;
      }
      checked = validation.broker(resource.configs, target.perBroker, layers, resource.resourceName);
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
