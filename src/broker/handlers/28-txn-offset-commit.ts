// TxnOffsetCommit (28): offsets of a transaction, sent to the group coordinator after AddOffsetsToTxn. They are
// written to the group's __consumer_offsets partition as a transactional batch of the producer and stay pending
// until the transaction's marker reaches that partition (see GroupCoordinator.commitTransactionalOffsets).
// Partitions of unknown topics or partitions are answered UNKNOWN_TOPIC_OR_PARTITION and not written
// (offset-commit-topics.ts).

import { toOffset } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  TxnOffsetCommitRequest,
  TxnOffsetCommitResponse,
} from '../../protocol/messages/28-txn-offset-commit.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTransactionalId } from '../authorization.js';
import { commitKnownPartitions, commitReadableTopics, failAll } from './offset-commit-topics.js';

export const txnOffsetCommitHandler = defineHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse>({
  apiKey: ApiKey.TXN_OFFSET_COMMIT,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const version = context.apiVersion;
    const { groupCoordinator, metadata } = context.services;
    const requested = request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        committedOffset: toOffset(p.committedOffset),
        committedLeaderEpoch: version >= 2 ? p.committedLeaderEpoch : -1,
        commitTimestampMs: -1,
        committedMetadata: p.committedMetadata,
      })),
    }));
    // Kafka's checks: WRITE on the transactional id, READ on the group, READ on each topic.
    if (!authorizeTransactionalId(context, AclOperation.WRITE, request.transactionalId)) {
      return {
        throttleTimeMs: 0,
        topics: failAll(requested, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
      };
    }
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return { throttleTimeMs: 0, topics: failAll(requested, ErrorCode.GROUP_AUTHORIZATION_FAILED) };
    }
    const topics = await commitReadableTopics(context, requested, (allowed) =>
      commitKnownPartitions(metadata, allowed, (known) =>
        groupCoordinator.commitTransactionalOffsets({
          groupId: request.groupId,
          producerId: Number(request.producerId),
          producerEpoch: request.producerEpoch,
          generationId: version >= 3 ? request.generationId : -1,
          memberId: version >= 3 ? request.memberId : '',
          groupInstanceId: version >= 3 ? request.groupInstanceId : null,
          topics: known,
        }),
      ),
    );
    // Producers before 2.0 (v0, v1) may crash on COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296): they get
    // COORDINATOR_NOT_AVAILABLE, as from Kafka.
    if (version < 2) {
      for (const t of topics)
        for (const p of t.partitions)
          if (p.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            p.errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
    return { throttleTimeMs: 0, topics };
  },
});
