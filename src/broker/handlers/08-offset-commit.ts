// OffsetCommit (8): a group's consumed positions, written to __consumer_offsets and answered once durable there.
// v1 carries a commit timestamp per partition, v2-v4 a retention time, v5 drops both, v6 adds the leader epoch,
// v7 group.instance.id; v9 (KIP-848) names the generation a member epoch, which for a classic group is the
// generation. Partitions of unknown topics or partitions are answered UNKNOWN_TOPIC_OR_PARTITION and not written
// (offset-commit-topics.ts).

import { toOffset } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../protocol/messages/08-offset-commit.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup } from '../authorization.js';
import { commitKnownPartitions, commitReadableTopics, failAll } from './offset-commit-topics.js';

export const offsetCommitHandler = defineHandler<OffsetCommitRequest, OffsetCommitResponse>({
  apiKey: ApiKey.OFFSET_COMMIT,
  minVersion: 0,
  maxVersion: 9,
  async handle(context, request) {
    const version = context.apiVersion;
    const { groupCoordinator, metadata } = context.services;
    const requested = request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        committedOffset: toOffset(p.committedOffset),
        committedLeaderEpoch: version >= 6 ? p.committedLeaderEpoch : -1,
        commitTimestampMs: version === 1 ? Number(p.commitTimestamp) : -1,
        committedMetadata: p.committedMetadata,
      })),
    }));
    // Kafka's checks: READ on the group (else every partition is GROUP_AUTHORIZATION_FAILED), then READ on each
    // topic (TOPIC_AUTHORIZATION_FAILED for its partitions).
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return { throttleTimeMs: 0, topics: failAll(requested, ErrorCode.GROUP_AUTHORIZATION_FAILED) };
    }
    const topics = await commitReadableTopics(context, requested, (allowed) =>
      commitKnownPartitions(metadata, allowed, (known) =>
        groupCoordinator.commitOffsets({
          groupId: request.groupId,
          generationId: version >= 1 ? request.generationIdOrMemberEpoch : -1,
          memberId: version >= 1 ? request.memberId : '',
          groupInstanceId: version >= 7 ? request.groupInstanceId : null,
          retentionTimeMs: version >= 2 && version <= 4 ? Number(request.retentionTimeMs) : -1,
          topics: known,
        }),
      ),
    );
    return { throttleTimeMs: 0, topics };
  },
});
