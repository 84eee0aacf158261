// OffsetCommit (8): a group's consumed positions, written to __consumer_offsets and answered once durable there.
// v1 carries a commit timestamp per partition, v2-v4 a retention time, v5 drops both, v6 adds the leader epoch,
// v7 group.instance.id; v9 (KIP-848) names the generation a member epoch, which for a classic group is the
// generation. Partitions of unknown topics or partitions are answered UNKNOWN_TOPIC_OR_PARTITION and not written
// (offset-commit-topics.ts). v0 offsets go to the coordination store, as Kafka writes them to ZooKeeper.

import { toOffset } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../protocol/messages/08-offset-commit.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
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
    if (version === 0) {
      const topics = await commitReadableTopics(context, requested, (allowed) =>
        commitKnownPartitions(metadata, allowed, (known) => commitToStore(context, request.groupId, known)),
      );
      return { throttleTimeMs: 0, topics };
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

/**
 * Version 0 (Kafka's commitOffsetsToZookeeper): each offset goes to the coordination store, under the group's
 * ZooKeeper path, with no group or generation check; the metadata is checked for size but not kept.
 */
async function commitToStore(
  context: RequestContext,
  groupId: string,
  topics: readonly {
    name: string;
    partitions: readonly {
      partitionIndex: number;
      committedOffset: number;
      committedMetadata: string | null;
    }[];
  }[],
) {
  const { config, zooKeeperConsumerOffsets } = context.services;
  return Promise.all(
    topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(
        t.partitions.map(async (p) => {
          let errorCode: number = ErrorCode.NONE;
          if (p.committedMetadata !== null && p.committedMetadata.length > config.offsetMetadataMaxBytes) {
            errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
          } else {
            const offset = BigInt(p.committedOffset);
            const written = await zooKeeperConsumerOffsets.commit(groupId, t.name, p.partitionIndex, offset);
            if (!written.ok) errorCode = ErrorCode.UNKNOWN_SERVER_ERROR;
          }
          return { partitionIndex: p.partitionIndex, errorCode };
        }),
      ),
    })),
  );
}
