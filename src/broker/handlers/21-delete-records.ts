// DeleteRecords (21): moves a partition's log start offset forward (offset -1 means the high watermark), so
// records below it are no longer served and whole segments below it are deleted. As Kafka's leader does
// (DelayedDeleteRecords), the answer waits until every live follower of the replica set has moved its own log
// start there too (followers follow the leader's log start as they fetch, and say theirs in their fetches), at
// most the request's timeout_ms: a partition whose followers are not there by then is answered REQUEST_TIMED_OUT
// (the deletion stands and goes on), one whose leadership moved meanwhile NOT_LEADER_OR_FOLLOWER. Each partition's
// low_watermark is the lowest log start among them. As Kafka's ReplicaManager, it refuses the internal topics
// (INVALID_TOPIC_EXCEPTION), a topic whose cleanup.policy lacks delete (POLICY_VIOLATION) and an offset below 0
// or above the high watermark (OFFSET_OUT_OF_RANGE), each with low_watermark -1. A partition named twice is
// deleted to its last offset and answered once (byPartitionOnce).

import type { BrokerId } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  DeleteRecordsRequest,
  DeleteRecordsResponse,
  DeleteRecordsResponseDeleteRecordsPartitionResult,
} from '../../protocol/messages/21-delete-records.js';
import { ApiKey } from '../../protocol/registry.js';
import { StorageErrorCode } from '../../storage/error-codes.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import { INTERNAL_TOPICS } from '../metadata/metadata-cache.js';
import { leaderPartition } from '../replica/leader-lookup.js';
import type { Partition } from '../replica/partition.js';

const HIGH_WATERMARK = -1n;

/**
 * The request's partitions once each, under one entry per topic, as Kafka's KafkaApis.handleDeleteRecordsRequest
 * reads them into a map by partition: a partition named again (in its topic's list or under the topic named again)
 * takes the later offset, and keeps the place where it was first named.
 */
function byPartitionOnce(topics: DeleteRecordsRequest['topics']): DeleteRecordsRequest['topics'] {
  const offsets = new Map<string, Map<number, bigint>>();
  for (const topic of topics) {
    let partitions = offsets.get(topic.name);
    if (partitions === undefined) offsets.set(topic.name, (partitions = new Map()));
    for (const p of topic.partitions) partitions.set(p.partitionIndex, p.offset);
  }
  return [...offsets].map(([name, partitions]) => ({
    name,
    partitions: [...partitions].map(([partitionIndex, offset]) => ({ partitionIndex, offset })),
  }));
}

/** A partition whose log start moved here, waiting for its followers'. */
interface Waiting {
  readonly partition: Partition;
  /** The offset asked for (the high watermark for -1): every follower must start at or above it (requiredOffset). */
  readonly required: number;
  /** Its entry of the response, completed when the wait ends. */
  readonly result: DeleteRecordsResponseDeleteRecordsPartitionResult;
}

export const deleteRecordsHandler = defineHandler<DeleteRecordsRequest, DeleteRecordsResponse>({
  apiKey: ApiKey.DELETE_RECORDS,
  minVersion: 0,
  maxVersion: 2,
  handle(context, request) {
    const waiting: Waiting[] = [];
    const response: DeleteRecordsResponse = {
      throttleTimeMs: 0,
      topics: byPartitionOnce(request.topics).map((topic) => {
        // Kafka's check: DELETE on the topic.
        const allowed = authorizeTopic(context, AclOperation.DELETE, topic.name);
        return {
          name: topic.name,
          partitions: topic.partitions.map((p) => {
            if (!allowed) {
              return {
                partitionIndex: p.partitionIndex,
                lowWatermark: -1n,
                errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              };
            }
            const refused = (errorCode: number) => ({
              partitionIndex: p.partitionIndex,
              lowWatermark: -1n,
              errorCode,
            });
            const partition = leaderPartition(context.services, topic.name, p.partitionIndex);
            if (partition === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return refused(partition);
            // The coordinators' topics hold their state: Kafka refuses them whoever leads them.
            if (INTERNAL_TOPICS.has(topic.name)) return refused(ErrorCode.INVALID_TOPIC_EXCEPTION);
            if (typeof partition === 'number') return refused(partition);
            const log = partition.log;
            // A topic that is only compacted keeps every key's latest record until compaction replaces it.
            if (!log.config.cleanupPolicy.includes('delete')) return refused(ErrorCode.POLICY_VIOLATION);
            const target = p.offset === HIGH_WATERMARK ? log.highWatermark : Number(p.offset);
            const deleted = log.deleteRecordsBefore(target);
            if (deleted.errorCode !== StorageErrorCode.None) return refused(ErrorCode.OFFSET_OUT_OF_RANGE);
            const result = {
              partitionIndex: p.partitionIndex,
              lowWatermark: BigInt(deleted.lowWatermark),
              errorCode: ErrorCode.NONE,
            };
            waiting.push({ partition, required: target, result });
            return result;
          }),
        };
      }),
    };
    if (waiting.length === 0) return response;
    const metadata = context.services.metadata;
    const isAlive = (id: BrokerId): boolean => metadata.broker(id) !== undefined;
    return new Promise<DeleteRecordsResponse>((resolve) => {
      const parked = !context.services.producePurgatory.tryCompleteElseWatch(
        {
          tryComplete: () =>
            waiting.every((w) => !w.partition.isLeader || w.partition.lowWatermark(isAlive) >= w.required),
          onComplete: () => {
            for (const w of waiting) {
              if (!w.partition.isLeader) {
                w.result.errorCode = ErrorCode.NOT_LEADER_OR_FOLLOWER;
                continue;
              }
              const low = w.partition.lowWatermark(isAlive);
              w.result.lowWatermark = BigInt(low);
              if (low < w.required) w.result.errorCode = ErrorCode.REQUEST_TIMED_OUT;
            }
            resolve(response);
          },
        },
        waiting.map((w) => w.partition.key),
        request.timeoutMs,
      );
      if (parked) context.markWaiting();
    });
  },
});
