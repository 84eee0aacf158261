// FindCoordinator (10): which broker coordinates a group. A group's coordinator is the leader of its partition
// of __consumer_offsets (Utils.abs(groupId.hashCode) % partitions, see coordinator/group/group-partitioner.ts).
// The topic is created on first use; until its partition has a live leader the answer is
// COORDINATOR_NOT_AVAILABLE and clients retry. v4+ answers several keys at once. Transaction coordinators do not
// exist yet, so key type 1 answers COORDINATOR_NOT_AVAILABLE.

import { groupPartition } from '../../coordinator/group/group-partitioner.js';
import { TRANSACTION_STATE_TOPIC } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode, errorByCode } from '../../protocol/errors.js';
import type {
  FindCoordinatorRequest,
  FindCoordinatorResponse,
  FindCoordinatorResponseCoordinator,
} from '../../protocol/messages/10-find-coordinator.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTransactionalId } from '../authorization.js';

export const OFFSETS_TOPIC = '__consumer_offsets';
const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;

export const findCoordinatorHandler = defineHandler<FindCoordinatorRequest, FindCoordinatorResponse>({
  apiKey: ApiKey.FIND_COORDINATOR,
  minVersion: 0,
  maxVersion: 6,
  async handle(context, request) {
    const batched = context.apiVersion >= 4;
    const keys = batched ? request.coordinatorKeys : [request.key];
    const keyType = context.apiVersion >= 1 ? request.keyType : KEY_TYPE_GROUP;
    const refusals = keys.map((key) => refusal(context, keyType, key));
    // As Kafka, the internal topic is created for a key that passed the checks only: a principal that may
    // describe none of the keys it asks for creates nothing.
    if (refusals.some((r) => r === null)) {
      let created = 0;
      if (keyType === KEY_TYPE_GROUP && context.services.metadata.topic(OFFSETS_TOPIC) === undefined) {
        created = await context.services.groupCoordinator.ensureOffsetsTopic();
      }
      if (
        keyType === KEY_TYPE_TRANSACTION &&
        context.services.metadata.topic(TRANSACTION_STATE_TOPIC) === undefined
      ) {
        created = await context.services.transactionCoordinator.ensureTopic();
      }
      // Kafka creates it through AutoTopicCreationManager with the requester's permissive controller mutation
      // quota, as a Metadata's auto-creation: the partitions count against its controller_mutation_rate (a
      // CreateTopics after it finds the bucket that much emptier), and this answer is not throttled for them.
      if (created > 0) {
        context.services.quotas.controllerMutation.recordMutation(
          context.quotaUser,
          context.clientId,
          created,
          false,
          context.services.clock.nowMs(),
        );
      }
    }
    const coordinators = keys.map((key, i) => locate(context, keyType, key, refusals[i]!));
    if (batched) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        nodeId: -1,
        host: '',
        port: -1,
        coordinators,
      };
    }
    const c = coordinators[0]!;
    return {
      throttleTimeMs: 0,
      errorCode: c.errorCode,
      errorMessage: c.errorMessage,
      nodeId: c.nodeId,
      host: c.host,
      port: c.port,
      coordinators: [],
    };
  },
});

/** Why the key is refused before its coordinator is looked for, or null. */
function refusal(context: RequestContext, keyType: number, key: string): number | null {
  if (keyType !== KEY_TYPE_GROUP && keyType !== KEY_TYPE_TRANSACTION) return ErrorCode.INVALID_REQUEST;
  // Kafka's checks: DESCRIBE on the group or on the transactional id.
  if (keyType === KEY_TYPE_GROUP && !authorizeGroup(context, AclOperation.DESCRIBE, key)) {
    return ErrorCode.GROUP_AUTHORIZATION_FAILED;
  }
  if (keyType === KEY_TYPE_TRANSACTION && !authorizeTransactionalId(context, AclOperation.DESCRIBE, key)) {
    return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
  }
  return null;
}

function locate(
  context: RequestContext,
  keyType: number,
  key: string,
  refused: number | null,
): FindCoordinatorResponseCoordinator {
  const fail = (errorCode: number): FindCoordinatorResponseCoordinator => ({
    key,
    nodeId: -1,
    host: '',
    port: -1,
    errorCode,
    errorMessage: errorByCode(errorCode)?.message ?? null,
  });
  if (refused !== null) return fail(refused);
  const { metadata } = context.services;
  const topicName = keyType === KEY_TYPE_GROUP ? OFFSETS_TOPIC : TRANSACTION_STATE_TOPIC;
  const topic = metadata.topic(topicName);
  if (topic === undefined || topic.partitions.length === 0) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  // Both partitioners are Utils.abs(key.hashCode) % partitions.
  const partition = metadata.partition(topicName, groupPartition(key, topic.partitions.length));
  if (partition === undefined || partition.leader < 0) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const endpoint = metadata.endpointFor(partition.leader, context.listenerName);
  if (endpoint === undefined) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return {
    key,
    nodeId: partition.leader,
    host: endpoint.host,
    port: endpoint.port,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
  };
}
