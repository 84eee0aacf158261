// Error responses built from a request, as Kafka's AbstractRequest.getErrorResponse builds them: the response of
// the request's own API, with the error at the top level where the response has an ErrorCode there, and else on
// every topic, partition, group or resource the request named (the client then sees the error where it looks).
// Used where the broker refuses a whole request without handling it (a request during SASL authentication).
//
// Written per API for the APIs clients send most; an API without a builder here gets null, and the caller decides
// what to do without an answer.

import type { ProduceRequest, ProduceResponse } from './messages/00-produce.js';
import type { FetchRequest, FetchResponse } from './messages/01-fetch.js';
import type { ListOffsetsRequest, ListOffsetsResponse } from './messages/02-list-offsets.js';
import type { MetadataRequest, MetadataResponse } from './messages/03-metadata.js';
import type { OffsetCommitRequest, OffsetCommitResponse } from './messages/08-offset-commit.js';
import type { OffsetFetchRequest, OffsetFetchResponse } from './messages/09-offset-fetch.js';
import type { FindCoordinatorRequest, FindCoordinatorResponse } from './messages/10-find-coordinator.js';
import type { DescribeGroupsRequest, DescribeGroupsResponse } from './messages/15-describe-groups.js';
import type { CreateTopicsRequest, CreateTopicsResponse } from './messages/19-create-topics.js';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from './messages/20-delete-topics.js';
import type { DescribeConfigsRequest, DescribeConfigsResponse } from './messages/32-describe-configs.js';
import { ApiKey } from './messages/index.js';

/** Kafka's default of the authorized-operations fields: not asked for. */
const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export interface ErrorDetail {
  readonly code: number;
  readonly message: string;
}

type Builder = (request: never, version: number, error: ErrorDetail) => unknown;

/** Responses that are a top-level ErrorCode and otherwise defaults. */
const TOP_LEVEL_ONLY: Partial<Record<number, (error: ErrorDetail) => unknown>> = {
  [ApiKey.JOIN_GROUP]: (error) => ({
    throttleTimeMs: 0,
    errorCode: error.code,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: '',
    skipAssignment: false,
    memberId: '',
    members: [],
  }),
  [ApiKey.HEARTBEAT]: (error) => ({ throttleTimeMs: 0, errorCode: error.code }),
  [ApiKey.INIT_PRODUCER_ID]: (error) => ({
    throttleTimeMs: 0,
    errorCode: error.code,
    producerId: -1n,
    producerEpoch: -1,
  }),
  [ApiKey.LIST_GROUPS]: (error) => ({ throttleTimeMs: 0, errorCode: error.code, groups: [] }),
};

const BUILDERS: Partial<Record<number, Builder>> = {
  [ApiKey.PRODUCE]: produce,
  [ApiKey.FETCH]: fetch,
  [ApiKey.LIST_OFFSETS]: listOffsets,
  [ApiKey.METADATA]: metadata,
  [ApiKey.OFFSET_COMMIT]: offsetCommit,
  [ApiKey.OFFSET_FETCH]: offsetFetch,
  [ApiKey.FIND_COORDINATOR]: findCoordinator,
  [ApiKey.DESCRIBE_GROUPS]: describeGroups,
  [ApiKey.CREATE_TOPICS]: createTopics,
  [ApiKey.DELETE_TOPICS]: deleteTopics,
  [ApiKey.DESCRIBE_CONFIGS]: describeConfigs,
};

/**
 * The body of `apiKey`'s response to `request` (a decoded body of that API at `version`) carrying `error` as
 * Kafka's getErrorResponse places it; null when Brook has no error response for the API.
 */
export function errorResponseBody(
  apiKey: number,
  version: number,
  request: unknown,
  error: ErrorDetail,
): unknown {
  const topLevel = TOP_LEVEL_ONLY[apiKey];
  if (topLevel !== undefined) return topLevel(error);
  const builder = BUILDERS[apiKey];
  return builder === undefined ? null : builder(request as never, version, error);
}

function produce(request: ProduceRequest, _version: number, error: ErrorDetail): ProduceResponse {
  return {
    responses: request.topicData.map((topic) => ({
      name: topic.name,
      partitionResponses: topic.partitionData.map((partition) => ({
        index: partition.index,
        errorCode: error.code,
        baseOffset: -1n,
        logAppendTimeMs: -1n,
        logStartOffset: -1n,
        recordErrors: [],
        errorMessage: error.message,
        currentLeader: { leaderId: -1, leaderEpoch: -1 },
      })),
    })),
    throttleTimeMs: 0,
    nodeEndpoints: [],
  };
}

function fetch(request: FetchRequest, _version: number, error: ErrorDetail): FetchResponse {
  return {
    throttleTimeMs: 0,
    errorCode: error.code,
    sessionId: request.sessionId,
    responses: request.topics.map((topic) => ({
      topic: topic.topic,
      topicId: topic.topicId,
      partitions: topic.partitions.map((partition) => ({
        partitionIndex: partition.partition,
        errorCode: error.code,
        highWatermark: -1n,
        lastStableOffset: -1n,
        logStartOffset: -1n,
        divergingEpoch: { epoch: -1, endOffset: -1n },
        currentLeader: { leaderId: -1, leaderEpoch: -1 },
        snapshotId: { endOffset: -1n, epoch: -1 },
        abortedTransactions: null,
        preferredReadReplica: -1,
        records: Buffer.alloc(0),
      })),
    })),
    nodeEndpoints: [],
  };
}

function listOffsets(request: ListOffsetsRequest, _version: number, error: ErrorDetail): ListOffsetsResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => ({
        partitionIndex: partition.partitionIndex,
        errorCode: error.code,
        oldStyleOffsets: [],
        timestamp: -1n,
        offset: -1n,
        leaderEpoch: -1,
      })),
    })),
  };
}

function metadata(request: MetadataRequest, _version: number, error: ErrorDetail): MetadataResponse {
  return {
    throttleTimeMs: 0,
    brokers: [],
    clusterId: null,
    controllerId: -1,
    // A request for all topics (null) is answered with none, as Kafka does.
    topics: (request.topics ?? []).map((topic) => ({
      errorCode: error.code,
      name: topic.name ?? '',
      topicId: topic.topicId,
      isInternal: false,
      partitions: [],
      topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    })),
    clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}

function offsetCommit(
  request: OffsetCommitRequest,
  _version: number,
  error: ErrorDetail,
): OffsetCommitResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: error.code })),
    })),
  };
}

/** The partitions of an OffsetFetch, each with the error and no offset. */
function offsetFetchTopics(topics: OffsetFetchRequest['topics'], errorCode: number) {
  return (topics ?? []).map((topic) => ({
    name: topic.name,
    partitions: topic.partitionIndexes.map((partitionIndex) => ({
      partitionIndex,
      committedOffset: -1n,
      committedLeaderEpoch: -1,
      metadata: '',
      errorCode,
    })),
  }));
}

function offsetFetch(request: OffsetFetchRequest, version: number, error: ErrorDetail): OffsetFetchResponse {
  // Before v8 one group: the error at the top level (v2+) and on each partition asked for; v8+ per group.
  const batched = version >= 8;
  return {
    throttleTimeMs: 0,
    topics: batched ? [] : offsetFetchTopics(request.topics, error.code),
    errorCode: batched ? 0 : error.code,
    groups: batched
      ? request.groups.map((group) => ({
          groupId: group.groupId,
          topics: offsetFetchTopics(group.topics, error.code),
          errorCode: error.code,
        }))
      : [],
  };
}

function findCoordinator(
  request: FindCoordinatorRequest,
  version: number,
  error: ErrorDetail,
): FindCoordinatorResponse {
  // v4+ asks for many keys at once and is answered per key.
  const batched = version >= 4;
  return {
    throttleTimeMs: 0,
    errorCode: batched ? 0 : error.code,
    errorMessage: batched ? null : error.message,
    nodeId: -1,
    host: '',
    port: -1,
    coordinators: batched
      ? request.coordinatorKeys.map((key) => ({
          key,
          nodeId: -1,
          host: '',
          port: -1,
          errorCode: error.code,
          errorMessage: error.message,
        }))
      : [],
  };
}

function describeGroups(
  request: DescribeGroupsRequest,
  _version: number,
  error: ErrorDetail,
): DescribeGroupsResponse {
  return {
    throttleTimeMs: 0,
    groups: request.groups.map((groupId) => ({
      errorCode: error.code,
      groupId,
      groupState: '',
      protocolType: '',
      protocolData: '',
      members: [],
      authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    })),
  };
}

function createTopics(
  request: CreateTopicsRequest,
  _version: number,
  error: ErrorDetail,
): CreateTopicsResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      topicId: ZERO_UUID,
      errorCode: error.code,
      errorMessage: error.message,
      topicConfigErrorCode: 0,
      numPartitions: -1,
      replicationFactor: -1,
      configs: [],
    })),
  };
}

function deleteTopics(
  request: DeleteTopicsRequest,
  version: number,
  error: ErrorDetail,
): DeleteTopicsResponse {
  // Before v6 the request names topics; from v6 it lists them with ids.
  const topics =
    version >= 6 ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
  return {
    throttleTimeMs: 0,
    responses: topics.map((topic) => ({
      name: topic.name,
      topicId: topic.topicId,
      errorCode: error.code,
      errorMessage: null,
    })),
  };
}

function describeConfigs(
  request: DescribeConfigsRequest,
  _version: number,
  error: ErrorDetail,
): DescribeConfigsResponse {
  return {
    throttleTimeMs: 0,
    results: request.resources.map((resource) => ({
      errorCode: error.code,
      errorMessage: error.message,
      resourceType: resource.resourceType,
      resourceName: resource.resourceName,
      configs: [],
    })),
  };
}
