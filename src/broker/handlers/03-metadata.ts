// Metadata (3): brokers, controller, cluster id and topics with their partitions, as this broker's metadata
// cache knows them. Unknown topics are created when the request allows it (v4+ allow_auto_topic_creation) and
// auto.create.topics.enable is on; the answer waits for the creation so the client sees leaders at once.

import { topicNameProblem } from '../../controller/topic-names.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  MetadataRequest,
  MetadataResponse,
  MetadataResponseMetadataResponseBroker,
  MetadataResponseMetadataResponseTopic,
} from '../../protocol/messages/03-metadata.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations } from '../authorized-operations.js';
import { INTERNAL_TOPICS, type TopicInfo } from '../metadata/metadata-cache.js';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export const metadataHandler = defineHandler<MetadataRequest, MetadataResponse>({
  apiKey: ApiKey.METADATA,
  minVersion: 0,
  maxVersion: 12,
  async handle(context, request) {
    const { metadata, config } = context.services;
    const topics: MetadataResponseMetadataResponseTopic[] = [];
    // v0 has no null: an empty list means every topic. From v1, null means every topic and empty means none.
    const all = request.topics === null || (context.apiVersion === 0 && request.topics.length === 0);
    if (all) {
      for (const t of metadata.topics()) topics.push(describeTopic(context, t));
    } else {
      const toCreate: string[] = [];
      for (const wanted of request.topics!) {
        if (wanted.name === null || wanted.name === '') {
          const t = metadata.topicById(wanted.topicId);
          topics.push(
            t === undefined
              ? errorTopic(null, wanted.topicId, ErrorCode.UNKNOWN_TOPIC_ID)
              : describeTopic(context, t),
          );
          continue;
        }
        const t = metadata.topic(wanted.name);
        if (t !== undefined) {
          topics.push(describeTopic(context, t));
        } else if (topicNameProblem(wanted.name) !== null) {
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION));
        } else if (request.allowAutoTopicCreation && config.autoCreateTopicsEnable) {
          toCreate.push(wanted.name);
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.LEADER_NOT_AVAILABLE));
        } else {
          topics.push(errorTopic(wanted.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        }
      }
      if (toCreate.length > 0) {
        await context.services.autoCreateTopics(toCreate);
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
        if (t.name !== null) t.topicAuthorizedOperations = authorizedOperations('topic', true);
    }
    return {
      throttleTimeMs: 0,
      brokers: brokers(context),
      clusterId: metadata.clusterId,
      controllerId: metadata.controllerId,
      topics,
      clusterAuthorizedOperations: authorizedOperations(
        'cluster',
        request.includeClusterAuthorizedOperations,
      ),
    };
  },
});

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
