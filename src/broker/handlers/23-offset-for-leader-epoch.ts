// OffsetForLeaderEpoch (23): the end offset of a leader epoch in this leader's log (the start offset of the
// next higher epoch, or the log end offset for the latest). A follower that became one after a leader change
// truncates to it, which is how Brook avoids the data loss of truncating to the high watermark (KIP-101).

import type { LeaderEpoch } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
  OffsetForLeaderEpochResponseEpochEndOffset,
} from '../../protocol/messages/23-offset-for-leader-epoch.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster, authorizeTopic } from '../authorization.js';
import { leaderPartition } from '../replica/leader-lookup.js';

export const offsetForLeaderEpochHandler = defineHandler<
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse
>({
  apiKey: ApiKey.OFFSET_FOR_LEADER_EPOCH,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    // Kafka's checks: a follower (replica id set, v3+) needs CLUSTER_ACTION, a consumer DESCRIBE on each topic.
    const follower = context.apiVersion >= 3 && request.replicaId >= 0;
    const clusterDenied = follower && !authorizeCluster(context, AclOperation.CLUSTER_ACTION);
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => {
        const denied = clusterDenied
          ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED
          : !follower && !authorizeTopic(context, AclOperation.DESCRIBE, t.topic)
            ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
            : ErrorCode.NONE;
        return {
          topic: t.topic,
          partitions: t.partitions.map((p): OffsetForLeaderEpochResponseEpochEndOffset => {
            const answer = (errorCode: number, leaderEpoch = -1, endOffset = -1) => ({
              errorCode,
              partition: p.partition,
              leaderEpoch,
              endOffset: BigInt(endOffset),
            });
            if (denied !== ErrorCode.NONE) return answer(denied);
            const partition = leaderPartition(context.services, t.topic, p.partition, p.currentLeaderEpoch);
            if (typeof partition === 'number') return answer(partition);
            const log = partition.log;
            const end = log.epochCache.endOffsetFor(p.leaderEpoch as LeaderEpoch, log.logEndOffset);
            return answer(ErrorCode.NONE, end.epoch, end.endOffset);
          }),
        };
      }),
    };
  },
});
