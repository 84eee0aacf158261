// Metadata (3): brokers, controller, cluster id and topics with their partitions, as this broker's metadata
// cache knows them. Unknown topics are created when the request allows it (v4+ allow_auto_topic_creation) and
// auto.create.topics.enable is on; the answer waits for the creation so the client sees leaders at once.
//
// Authorization, as Kafka's KafkaApis: a request for every topic leaves out those the principal may not DESCRIBE
// (without logging them as denied); a topic asked for by name or id without DESCRIBE is TOPIC_AUTHORIZATION_FAILED;
// auto-creation needs CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED.

import { topicNameProblem } from '../../controller/topic-names.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  MetadataRequest,
  MetadataResponse,
  MetadataResponseMetadataResponseBroker,
  MetadataResponseMetadataResponseTopic,
} from '../../protocol/messages/03-metadata.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import {
  AclOperation,
  authorize,
  authorizedOperations,
  authorizeTopic,
  clusterAuthorizedOperations,
  ResourceType,
} from '../authorization.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../authorized-operations.js';
import { INTERNAL_TOPICS, type TopicInfo } from '../metadata/metadata-cache.js';

export const metadataHandler = defineHandler<MetadataRequest, MetadataResponse>({
  apiKey: ApiKey.METADATA,
  minVersion: 0,
  maxVersion: 12,
  async handle(context, request) {
    const { metadata, config } = context.services;
    const topics: MetadataResponseMetadataResponseTopic[] = [];
    // v0 has no null: an empty list means every topic. From v1, null means every topic and empty means none.
    const all = request.topics === null || (context.apiVersion === 0 && request.topics.length === 0);
    const checking = context.services.authorizer !== null;
    if (all) {
      for (const t of metadata.topics()) {
        if (checking && !authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name, false))
          continue;
        topics.push(describeTopic(context, t));
      }
    } else {
      const toCreate: string[] = [];
      for (const wanted of request.topics!) {
        // By id (v12+) when the name is null, or empty beside an id. An empty name without one is a name, which
        // Kafka refuses as INVALID_TOPIC_EXCEPTION (answered by name: a null name cannot be written before v12).
        if (wanted.name === null || (wanted.name === '' && wanted.topicId !== ZERO_UUID)) {
          const t = metadata.topicById(wanted.topicId);
          topics.push(
            t === undefined
              ? errorTopic(null, wanted.topicId, ErrorCode.UNKNOWN_TOPIC_ID)
              : authorizeTopic(context, AclOperation.DESCRIBE, t.name)
                ? describeTopic(context, t)
                : errorTopic(null, wanted.topicId, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
          );
          continue;
        }
        if (!authorizeTopic(context, AclOperation.DESCRIBE, wanted.name)) {
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
          continue;
        }
        const t = metadata.topic(wanted.name);
        if (t !== undefined) {
          topics.push(describeTopic(context, t));
        } else if (topicNameProblem(wanted.name) !== null) {
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION));
        } else if (request.allowAutoTopicCreation && config.autoCreateTopicsEnable) {
          if (!mayCreate(context, wanted.name)) {
            topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
            continue;
          }
          toCreate.push(wanted.name);
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.LEADER_NOT_AVAILABLE));
        } else {
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        }
      }
      if (toCreate.length > 0) {
        const created = await context.services.autoCreateTopics(toCreate);
        // As Kafka's AutoTopicCreationManager, the partitions created count against the client's
        // controller_mutation_rate (permissively: always created, and the Metadata answer carries no throttle
        // for them); a CreateTopics after it finds the bucket that much emptier. A topic that existed already
        // (a retry that raced its creation) takes nothing, as Kafka checks before it records.
        context.services.quotas.controllerMutation.recordMutation(
          context.quotaUser,
          context.clientId,
          created.length * config.numPartitions,
          false,
          context.services.clock.nowMs(),
        );
        // Answer with the created topics when the controller has made their leaders by now.
        for (let i = 0; i < topics.length; i++) {
          const name = topics[i]!.name;
          if (name === null || !toCreate.includes(name)) continue;
          const created = metadata.topic(name);
          if (created !== undefined) topics[i] = describeTopic(context, created);
        }
      }
    }
    if (request.includeTopicAuthorizedOperations) {
      // As Kafka, every topic named in the answer; one asked for by an unknown id keeps the default.
      for (const t of topics)
        if (t.name !== null && t.errorCode !== ErrorCode.TOPIC_AUTHORIZATION_FAILED)
          t.topicAuthorizedOperations = authorizedOperations(context, 'topic', t.name, true);
    }
    return {
      throttleTimeMs: 0,
      brokers: brokers(context),
      clusterId: metadata.clusterId,
      controllerId: metadata.controllerId,
      topics,
      clusterAuthorizedOperations: clusterAuthorizedOperations(
        context,
        request.includeClusterAuthorizedOperations,
      ),
    };
  },
});

/** Auto-creation needs CREATE on the cluster or on the topic, as in Kafka. */
function mayCreate(context: RequestContext, topic: string): boolean {
  // The cluster-wide grant is asked without logging a denial, as Kafka does before asking for the topic.
  return (
    authorize(context, AclOperation.CREATE, ResourceType.CLUSTER, 'kafka-cluster', false) ||
    authorizeTopic(context, AclOperation.CREATE, topic)
  );
}

function brokers(context: RequestContext): MetadataResponseMetadataResponseBroker[] {
  const out: MetadataResponseMetadataResponseBroker[] = [];
  for (const b of context.services.metadata.aliveBrokers()) {
    const endpoint = b.endpoints.find((e) => e.listenerName === context.listenerName);
    if (endpoint === undefined) continue;
    out.push({ nodeId: b.id, host: endpoint.host, port: endpoint.port, rack: b.rack });
  }
  return out;
}

function describeTopic(context: RequestContext, t: TopicInfo): MetadataResponseMetadataResponseTopic {
  const { metadata } = context.services;
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    isInternal: t.isInternal || INTERNAL_TOPICS.has(t.name),
    partitions: t.partitions.map((p) => ({
      // A partition whose leader is not alive answers LEADER_NOT_AVAILABLE, so the client retries later.
      errorCode:
        p.leader >= 0 && metadata.broker(p.leader) !== undefined
          ? ErrorCode.NONE
          : ErrorCode.LEADER_NOT_AVAILABLE,
      partitionIndex: p.partition,
      leaderId: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: [...p.replicas],
      isrNodes: [...p.isr],
      offlineReplicas: [...p.offlineReplicas],
    })),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}

function errorTopic(
  name: string | null,
  topicId: string,
  errorCode: number,
): MetadataResponseMetadataResponseTopic {
  return {
    errorCode,
    name,
    topicId,
    isInternal: false,
    partitions: [],
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}
