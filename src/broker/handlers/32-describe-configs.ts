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
import { AclOperation, authorizeCluster, authorizeTopic } from '../authorization.js';
import { describeBrokerLoggers } from '../broker-loggers.js';
import { brokerResource } from '../config/broker-resource.js';
import {
  type DescribedConfig,
  describeBrokerConfigs,
  describeTopicConfigs,
} from '../config/describe-configs.js';

export const ResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;

/** The resource types Kafka 3.9's DescribeConfigs knows; GROUP (32) came with Kafka 4.0. */
const DESCRIBABLE_TYPES: ReadonlySet<number> = new Set([
  ResourceType.TOPIC,
  ResourceType.BROKER,
  ResourceType.BROKER_LOGGER,
  ResourceType.CLIENT_METRICS,
]);

/** Errors.INVALID_REQUEST's own message, which Kafka gives every resource of a request that failed as a whole. */
const MALFORMED_REQUEST =
  'This most likely occurs because of a request being malformed by the client library or the message was sent ' +
  'to an incompatible broker. See the broker logs for more details.';

export const describeConfigsHandler = defineHandler<DescribeConfigsRequest, DescribeConfigsResponse>({
  apiKey: ApiKey.DESCRIBE_CONFIGS,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    // Kafka 3.9's ConfigHelper throws on a type it does not know while sorting the resources by authorization, so
    // the whole request fails: every resource INVALID_REQUEST, with the error's own message (getErrorResponse).
    if (request.resources.some((r) => !DESCRIBABLE_TYPES.has(r.resourceType))) {
      return {
        throttleTimeMs: 0,
        results: request.resources.map((r) => ({
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: MALFORMED_REQUEST,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: [],
        })),
      };
    }
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
  // Kafka's ConfigHelper checks the name, then its ZooKeeper config repository refuses the type (KRaft only).
  if (resource.resourceType === ResourceType.CLIENT_METRICS) {
    const message =
      resource.resourceName === ''
        ? 'Client metrics subscription name must not be empty'
        : 'Config type client-metrics is only supported on KRaft clusters';
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
