// TxnOffsetCommit (28): offsets of a transaction, sent to the group coordinator after AddOffsetsToTxn. They are
// written to the group's __consumer_offsets partition as a transactional batch of the producer and stay pending
// until the transaction's marker reaches that partition (see GroupCoordinator.commitTransactionalOffsets).
// Partitions of unknown topics or partitions are answered UNKNOWN_TOPIC_OR_PARTITION and not written
// (offset-commit-topics.ts). With transaction.partition.verification.enable (KIP-890 part 1, as Kafka 3.9), the
// group's partition must be in the producer's ongoing transaction first (AddOffsetsToTxn): otherwise nothing is
// written, INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v4, which only adds that error).

import { toOffset } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  TxnOffsetCommitRequest,
  TxnOffsetCommitResponse,
} from '../../protocol/messages/28-txn-offset-commit.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTransactionalId } from '../authorization.js';
import { OFFSETS_TOPIC } from './10-find-coordinator.js';
import { commitKnownPartitions, commitReadableTopics, failAll } from './offset-commit-topics.js';
import { verifyTxnOffsetCommit } from './produce-txn-verification.js';

/** The first TxnOffsetCommit version whose producers handle TRANSACTION_ABORTABLE (KIP-890; Kafka's genericError). */
const TRANSACTION_ABORTABLE_TXN_OFFSET_COMMIT_VERSION = 4;

export const txnOffsetCommitHandler = defineHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse>({
  apiKey: ApiKey.TXN_OFFSET_COMMIT,
  minVersion: 0,
  maxVersion: 4,
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
          verify: (offsetsPartition) =>
            verifyTxnOffsetCommit(
              context.services,
              request.transactionalId,
              { producerId: Number(request.producerId), producerEpoch: request.producerEpoch },
              OFFSETS_TOPIC,
              offsetsPartition,
              version >= TRANSACTION_ABORTABLE_TXN_OFFSET_COMMIT_VERSION,
            ),
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
