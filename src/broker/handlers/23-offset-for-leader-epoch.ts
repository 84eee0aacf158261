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
import { CLUSTER_RESOURCE_NAME } from '../../security/authorizer/acl-types.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorize, authorizeTopic, ResourceType } from '../authorization.js';
import { leaderPartition } from '../replica/leader-lookup.js';

export const offsetForLeaderEpochHandler = defineHandler<
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse
>({
  apiKey: ApiKey.OFFSET_FOR_LEADER_EPOCH,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    // Kafka's checks, whatever the replica id: CLUSTER_ACTION passes every topic (the API was the brokers' before
    // KIP-320), else each topic needs DESCRIBE (consumers checking for truncation). The cluster check's denial is
    // not logged, as in Kafka: it is only the first of two ways in.
    const cluster = authorize(
      context,
      AclOperation.CLUSTER_ACTION,
      ResourceType.CLUSTER,
      CLUSTER_RESOURCE_NAME,
      false,
    );
    // Partitions whose answer comes from epoch entries not yet in leader-epoch-checkpoint (see below).
    const unpersisted: Promise<void>[] = [];
    const response: OffsetForLeaderEpochResponse = {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => {
        const denied =
          cluster || authorizeTopic(context, AclOperation.DESCRIBE, t.topic)
            ? ErrorCode.NONE
            : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
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
            const answered = answer(ErrorCode.NONE, end.epoch, end.endOffset);
            if (log.epochCache.persisting) {
              unpersisted.push(
                log.epochCache.whenPersisted().catch(() => {
                  Object.assign(answered, answer(ErrorCode.KAFKA_STORAGE_ERROR));
                }),
              );
            }
            return answered;
          }),
        };
      }),
    };
    // Kafka's LeaderEpochFileCache.assign flushes leader-epoch-checkpoint before the new leader serves, so no
    // follower or consumer acts on an entry that a crash could lose (an epoch without batches has nothing else to
    // rebuild it from). Brook writes the file off the event loop, so an answer computed from entries still on
    // their way waits for them; one whose write failed is a storage error, as the directory now is.
    if (unpersisted.length === 0) return response;
    return Promise.all(unpersisted).then(() => response);
  },
});
