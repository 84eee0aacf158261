// AddPartitionsToTxn (24): a transactional producer names the partitions it is about to write. v0-v3 carry one
// transaction. v4 is the brokers' batched form (KIP-890): several transactions, each either added or, with
// verifyOnly, only checked (a partition leader asking whether a partition was added before it appends a
// transactional batch); it needs CLUSTER_ACTION, as in Kafka, and every version refuses partitions the metadata
// does not show before the coordinator is asked. PRODUCER_FENCED is answered as
// INVALID_PRODUCER_EPOCH before v2, as Kafka does for older clients.

import { tpKey } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResponse,
} from '../../protocol/messages/24-add-partitions-to-txn.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import {
  AclOperation,
  authorizeCluster,
  authorizeTopic,
  authorizeTransactionalId,
} from '../authorization.js';
import { INTERNAL_TOPICS } from '../metadata/metadata-cache.js';

export function fencedForVersion(errorCode: number, version: number, firstVersion: number): number {
  return errorCode === ErrorCode.PRODUCER_FENCED && version < firstVersion
    ? ErrorCode.INVALID_PRODUCER_EPOCH
    : errorCode;
}

export const addPartitionsToTxnHandler = defineHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>(
  {
    apiKey: ApiKey.ADD_PARTITIONS_TO_TXN,
    minVersion: 0,
    maxVersion: 4,
    async handle(context, request) {
      if (context.apiVersion >= 4) return batched(context, request);
      const topics = request.v3AndBelowTopics;
      const refused = refusedPartitions(context, request);
      if (refused !== null) {
        return {
          throttleTimeMs: 0,
          errorCode: ErrorCode.NONE,
          resultsByTransaction: [],
          resultsByTopicV3AndBelow: topics.map((t) => ({
            name: t.name,
            resultsByPartition: t.partitions.map((p) => ({
              partitionIndex: p,
              partitionErrorCode: refused.get(tpKey(t.name, p)) ?? ErrorCode.OPERATION_NOT_ATTEMPTED,
            })),
          })),
        };
      }
      const partitions = topics.flatMap((t) =>
        t.partitions.map((partition) => ({ topic: t.name, partition })),
      );
      const errors = await context.services.transactionCoordinator.addPartitions(
        request.v3AndBelowTransactionalId,
        Number(request.v3AndBelowProducerId),
        request.v3AndBelowProducerEpoch,
        partitions,
      );
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        resultsByTransaction: [],
        resultsByTopicV3AndBelow: topics.map((t) => ({
          name: t.name,
          resultsByPartition: t.partitions.map((p) => ({
            partitionIndex: p,
            partitionErrorCode: fencedForVersion(
              errors.get(tpKey(t.name, p)) ?? ErrorCode.NONE,
              context.apiVersion,
              2,
            ),
          })),
        })),
      };
    },
  },
);

/**
 * v0-v3, Kafka's checks before the coordinator is asked (KafkaApis.handleAddPartitionsToTxnRequest): WRITE on the
 * transactional id, else every partition fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then, per partition,
 * TOPIC_AUTHORIZATION_FAILED for a topic without WRITE or an internal one (a client never adds __consumer_offsets
 * or __transaction_state itself, authorizer or not: AddOffsetsToTxn adds the group's partition), else
 * UNKNOWN_TOPIC_OR_PARTITION for a partition the metadata does not show. Answers the refused partitions' errors
 * keyed by tpKey (the others are OPERATION_NOT_ATTEMPTED: nothing is added), or null when all passed.
 */
function refusedPartitions(
  context: RequestContext,
  request: AddPartitionsToTxnRequest,
): Map<string, number> | null {
  const refused = new Map<string, number>();
  const topics = request.v3AndBelowTopics;
  if (!authorizeTransactionalId(context, AclOperation.WRITE, request.v3AndBelowTransactionalId)) {
    for (const t of topics)
      for (const p of t.partitions)
        refused.set(tpKey(t.name, p), ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    return refused;
  }
  const { metadata } = context.services;
  for (const t of topics) {
    const denied = INTERNAL_TOPICS.has(t.name) || !authorizeTopic(context, AclOperation.WRITE, t.name);
    for (const p of t.partitions) {
      if (denied) refused.set(tpKey(t.name, p), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      else if (metadata.partition(t.name, p) === undefined)
        refused.set(tpKey(t.name, p), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    }
  }
  return refused.size > 0 ? refused : null;
}

/**
 * v4+, Kafka's check before the coordinator is asked, verifyOnly or not: a partition the metadata does not show is
 * UNKNOWN_TOPIC_OR_PARTITION and fails its whole transaction (the others OPERATION_NOT_ATTEMPTED). Null when all
 * are known. Topics are not authorized here: the caller has CLUSTER_ACTION.
 */
function unknownPartitionsRefused(
  context: RequestContext,
  partitions: readonly { topic: string; partition: number }[],
): Map<string, number> | null {
  const { metadata } = context.services;
  const unknown = partitions.filter((tp) => metadata.partition(tp.topic, tp.partition) === undefined);
  if (unknown.length === 0) return null;
  const refused = new Map<string, number>(
    partitions.map((tp) => [tpKey(tp.topic, tp.partition), ErrorCode.OPERATION_NOT_ATTEMPTED]),
  );
  for (const tp of unknown) refused.set(tpKey(tp.topic, tp.partition), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  return refused;
}

/** v4+: each transaction of the request added or (verifyOnly) checked; the broker's own principal may ask. */
async function batched(
  context: RequestContext,
  request: AddPartitionsToTxnRequest,
): Promise<AddPartitionsToTxnResponse> {
  if (!authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
      resultsByTransaction: [],
      resultsByTopicV3AndBelow: [],
    };
  }
  const coordinator = context.services.transactionCoordinator;
  const resultsByTransaction = await Promise.all(
    request.transactions.map(async (t) => {
      const partitions = t.topics.flatMap((topic) =>
        topic.partitions.map((partition) => ({ topic: topic.name, partition })),
      );
      const producerId = Number(t.producerId);
      const errors =
        unknownPartitionsRefused(context, partitions) ??
        (t.verifyOnly
          ? coordinator.verifyPartitions(t.transactionalId, producerId, t.producerEpoch, partitions)
          : await coordinator.addPartitions(t.transactionalId, producerId, t.producerEpoch, partitions));
      return {
        transactionalId: t.transactionalId,
        topicResults: t.topics.map((topic) => ({
          name: topic.name,
          resultsByPartition: topic.partitions.map((p) => ({
            partitionIndex: p,
            partitionErrorCode: errors.get(tpKey(topic.name, p)) ?? ErrorCode.NONE,
          })),
        })),
      };
    }),
  );
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction, resultsByTopicV3AndBelow: [] };
}
