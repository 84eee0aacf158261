// DescribeConfigs (32): topic and broker configs with their values, sources and synonyms, as resolved by the
// config module over the broker's layers and the topic's overrides; and this broker's loggers with their levels
// (BROKER_LOGGER, KIP-412; broker-loggers.ts).

import { topicNameProblem } from '../../controller/topic-names.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeConfigsRequest,
  DescribeConfigsResponse,
  DescribeConfigsResponseDescribeConfigsResult,
} from '../../protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AclOperation, authorizeCluster, authorizeGroup, authorizeTopic } from '../authorization.js';
import { describeBrokerLoggers } from '../broker-loggers.js';
import { brokerResource } from '../config/broker-resource.js';
import {
  type DescribedConfig,
  describeBrokerConfigs,
  describeTopicConfigs,
} from '../config/describe-configs.js';

export const ResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;

/**
 * The resource types a Kafka 3.9 broker knows but keeps only in KRaft mode (KIP-714 subscriptions, KIP-848 group
 * configs), by the name its refusals give them.
 */
export const KRAFT_ONLY_RESOURCES: ReadonlyMap<
  number,
  { readonly type: string; readonly configType: string }
> = new Map([
  [ResourceType.CLIENT_METRICS, { type: 'CLIENT_METRICS', configType: 'client-metrics' }],
  [ResourceType.GROUP, { type: 'GROUP', configType: 'groups' }],
]);

export const describeConfigsHandler = defineHandler<DescribeConfigsRequest, DescribeConfigsResponse>({
  apiKey: ApiKey.DESCRIBE_CONFIGS,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    return {
      throttleTimeMs: 0,
      results: request.resources.map((resource) => describe(context, request, resource)),
    };
  },
});

function describe(
  context: RequestContext,
  request: DescribeConfigsRequest,
  resource: DescribeConfigsRequest['resources'][number],
): DescribeConfigsResponseDescribeConfigsResult {
  const { metadata, topicConfigs, brokerId } = context.services;
  const options = {
    keys: resource.configurationKeys,
    includeSynonyms: request.includeSynonyms,
    includeDocumentation: request.includeDocumentation,
  };
  const result = (errorCode: number, errorMessage: string | null, configs: DescribedConfig[]) => ({
    errorCode,
    errorMessage,
    resourceType: resource.resourceType,
    resourceName: resource.resourceName,
    configs: configs.map((c) => ({ ...c, synonyms: [...c.synonyms] })),
  });
  // Kafka's checks: DESCRIBE_CONFIGS on the topic, or on the cluster for broker and broker-logger configs. Its
  // ConfigHelper answers a refusal with the error's own message (Errors.message).
  if (
    resource.resourceType === ResourceType.TOPIC &&
    !authorizeTopic(context, AclOperation.DESCRIBE_CONFIGS, resource.resourceName)
  ) {
    return result(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.', []);
  }
  if (
    (resource.resourceType === ResourceType.BROKER ||
      resource.resourceType === ResourceType.BROKER_LOGGER ||
      resource.resourceType === ResourceType.CLIENT_METRICS) &&
    !authorizeCluster(context, AclOperation.DESCRIBE_CONFIGS)
  ) {
    return result(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.', []);
  }
  if (
    resource.resourceType === ResourceType.GROUP &&
    !authorizeGroup(context, AclOperation.DESCRIBE_CONFIGS, resource.resourceName)
  ) {
    return result(ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.', []);
  }
  // Kafka's ConfigHelper checks the name, then its ZooKeeper config repository refuses the type.
  const kraftOnly = KRAFT_ONLY_RESOURCES.get(resource.resourceType);
  if (kraftOnly !== undefined) {
    const nameless =
      resource.resourceType === ResourceType.GROUP
        ? 'Group name must not be empty'
        : 'Client metrics subscription name must not be empty';
    const message =
      resource.resourceName === ''
        ? nameless
        : `Config type ${kraftOnly.configType} is only supported on KRaft clusters`;
    return result(ErrorCode.INVALID_REQUEST, message, []);
  }
  if (resource.resourceType === ResourceType.TOPIC) {
    // Kafka's ConfigHelper: the name's rules first (Topic.validate), then a missing topic, without a message.
    const problem = topicNameProblem(resource.resourceName);
    if (problem !== null) return result(ErrorCode.INVALID_TOPIC_EXCEPTION, problem, []);
    if (metadata.topic(resource.resourceName) === undefined) {
      return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null, []);
    }
    const overrides = topicConfigs.overridesFor(resource.resourceName);
    return result(ErrorCode.NONE, null, describeTopicConfigs(overrides, topicConfigs.layers, options));
  }
  if (resource.resourceType === ResourceType.BROKER) {
    const target = brokerResource(resource.resourceName, brokerId);
    if (!target.ok) return result(target.errorCode, target.errorMessage, []);
    return result(
      ErrorCode.NONE,
      null,
      describeBrokerConfigs(topicConfigs.layers, target.perBroker, options),
    );
  }
  if (resource.resourceType === ResourceType.BROKER_LOGGER) {
    const described = describeBrokerLoggers(
      context.services.logLevels,
      brokerId,
      resource.resourceName,
      resource.configurationKeys,
    );
    return described.ok
      ? result(ErrorCode.NONE, null, described.configs)
      : result(described.errorCode, described.errorMessage, []);
  }
  return result(ErrorCode.INVALID_REQUEST, `Resource type ${resource.resourceType} is not supported.`, []);
}
