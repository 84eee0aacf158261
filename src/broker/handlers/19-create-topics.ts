// CreateTopics (19): configs are validated here against the broker's config layers, then the controller's topic
// administration writes the assignment and configs to the coordination store and, as Kafka does, answers once this
// broker's metadata shows every new partition with a leader (so the topic is usable when the answer arrives), or
// REQUEST_TIMED_OUT for a topic not there within the request's timeout_ms (its creation goes on); a timeout of 0
// or less answers at once, REQUEST_TIMED_OUT for every topic created. validate_only checks everything and writes
// nothing. From v5 the answer carries the topic's resulting configs.

import type { NewTopic } from '../../controller/topic-admin.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  CreateTopicsRequest,
  CreateTopicsResponse,
  CreateTopicsResponseCreatableTopicResult,
} from '../../protocol/messages/19-create-topics.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AclOperation, authorize, authorizeTopic, ResourceType } from '../authorization.js';
import { validateCreateTopicConfigs } from '../config/alter-validation.js';
import { describeTopicConfigs } from '../config/describe-configs.js';
import { mutationQuota, THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../quota/controller-mutations.js';

export const createTopicsHandler = defineHandler<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: ApiKey.CREATE_TOPICS,
  minVersion: 0,
  maxVersion: 7,
  async handle(context, request) {
    const { topicAdmin, topicConfigs } = context.services;
    const layers = topicConfigs.layers;
    const results = new Map<string, CreateTopicsResponseCreatableTopicResult>();
    const valid: NewTopic[] = [];
    const validated = new Map<string, ReadonlyMap<string, string>>();
    const quota = mutationQuota(context, 6);
    // Kafka's check: CREATE on the cluster (asked without logging a denial), else CREATE on each topic.
    const clusterCreate =
      context.services.authorizer === null ||
      authorize(context, AclOperation.CREATE, ResourceType.CLUSTER, 'kafka-cluster', false);
    const names = request.topics.map((t) => t.name);
    const repeated = new Set(names.filter((name, i) => names.indexOf(name) !== i));
    for (const t of request.topics) {
      if (!clusterCreate && !authorizeTopic(context, AclOperation.CREATE, t.name)) {
        // As Kafka's KafkaApis, a refused topic's configs error still says whether DESCRIBE_CONFIGS is granted.
        results.set(t.name, {
          ...failure(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'),
          topicConfigErrorCode: mayDescribeConfigs(context, t.name)
            ? ErrorCode.NONE
            : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        });
        continue;
      }
      // Kafka's ZkAdminManager looks the topic up in the broker's metadata before anything else of its request:
      // an existing topic is TOPIC_ALREADY_EXISTS whatever configs came with it, which create-or-find callers
      // (Kafka Connect's TopicAdmin) take for "found". A repeated name is left to the duplicate check.
      if (!repeated.has(t.name) && context.services.metadata.topic(t.name) !== undefined) {
        results.set(
          t.name,
          failure(t.name, ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${t.name}' already exists.`),
        );
        continue;
      }
      const checked = validateCreateTopicConfigs(t.configs, layers);
      if (!checked.ok) {
        results.set(t.name, failure(t.name, checked.errorCode, checked.errorMessage));
        continue;
      }
      const partitions = t.assignments.length > 0 ? t.assignments.length : t.numPartitions;
      const permits = partitions > 0 ? partitions : context.services.config.numPartitions;
      if (!request.validateOnly && !quota.record(permits)) {
        results.set(
          t.name,
          failure(t.name, ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE),
        );
        continue;
      }
      validated.set(t.name, checked.configs);
      valid.push({
        name: t.name,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor,
        assignments: t.assignments.map((a) => ({ partitionIndex: a.partitionIndex, brokerIds: a.brokerIds })),
        configs: Object.fromEntries(checked.configs),
      });
    }
    for (const r of await topicAdmin.createTopics(valid, request.validateOnly, request.timeoutMs)) {
      // The configs of the answer need DESCRIBE_CONFIGS on the topic, as in Kafka.
      const configsAllowed =
        r.errorCode !== ErrorCode.NONE || context.apiVersion < 5 || mayDescribeConfigs(context, r.name);
      // As Kafka's KafkaApis: the partition count, replication factor and configs describe a topic created (or
      // validated) whose configs the caller may describe; otherwise, REQUEST_TIMED_OUT included, they keep the
      // response's defaults, -1, -1 and an empty list (never null). The topic id of a topic written stays.
      const described = r.errorCode === ErrorCode.NONE && configsAllowed;
      const configs =
        described && context.apiVersion >= 5
          ? describeTopicConfigs(validated.get(r.name) ?? new Map(), layers, {
              keys: null,
              includeSynonyms: false,
              includeDocumentation: false,
            }).map((c) => ({
              name: c.name,
              value: c.value,
              readOnly: c.readOnly,
              configSource: c.configSource,
              isSensitive: c.isSensitive,
            }))
          : [];
      results.set(r.name, {
        name: r.name,
        topicId: r.topicId,
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        topicConfigErrorCode: configsAllowed ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        numPartitions: described ? r.numPartitions : -1,
        replicationFactor: described ? r.replicationFactor : -1,
        configs,
      });
    }
    // Answer in request order; a name given twice is answered once, as Kafka does.
    const topics = [...new Set(request.topics.map((t) => t.name))].map((name) => results.get(name)!);
    quota.finish();
    return { throttleTimeMs: 0, topics };
  },
});

/** DESCRIBE_CONFIGS on the topic, asked without logging a denial, as Kafka's CreateTopics does. */
function mayDescribeConfigs(context: RequestContext, topic: string): boolean {
  return authorize(context, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, topic, false);
}

function failure(
  name: string,
  errorCode: number,
  errorMessage: string,
): CreateTopicsResponseCreatableTopicResult {
  return {
    name,
    topicId: ZERO_UUID,
    errorCode,
    errorMessage,
    topicConfigErrorCode: ErrorCode.NONE,
    numPartitions: -1,
    replicationFactor: -1,
    configs: [],
  };
}
