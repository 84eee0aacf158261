// ListOffsets (2): earliest, latest (the high watermark, or the last stable offset under read_committed), the
// offset of the largest timestamp, or the first record at or after a timestamp. The storage engine finds the
// batch by its time index; the record inside it is found here by decoding that one batch. v0 is Kafka's older
// API, by segment modification time (see oldStyle). As Kafka's KafkaApis, a negative timestamp the version does not
// know is answered UNSUPPORTED_VERSION, and from v1 a partition named twice in the request INVALID_REQUEST.
// Only a consumer (replica id -1) is bound by its isolation level; a follower or a debugging client (-2) reads up
// to the log end offset, and a debugging client may ask a follower of the partition too (Kafka's ReplicaManager).
//
// The latest offset under read_committed is where an exactly-once reader restores up to (a Streams task's
// changelog): it is answered only once this broker is shown to still lead the partition
// (replica/leadership-confirmations.ts), NOT_LEADER_OR_FOLLOWER otherwise, so that a leader cut off from
// ZooKeeper, not told that the controller moved its partition, does not answer an end its successor has passed.
//
// No answer goes out while the partition's leader-epoch-checkpoint is still being written (see storedFirst).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  ListOffsetsRequest,
  ListOffsetsResponse,
  ListOffsetsResponseListOffsetsPartitionResponse,
} from '../../protocol/messages/02-list-offsets.js';
import { batchHeader } from '../../protocol/records/batch-header.js';
import { iterateRecords } from '../../protocol/records/batch-records.js';
import { ApiKey } from '../../protocol/registry.js';
import { ListOffsetsTimestamp, type LocatedRecord } from '../../storage/log.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import { leaderPartition, readablePartition } from '../replica/leader-lookup.js';
import type { Partition } from '../replica/partition.js';

const READ_COMMITTED = 1;
/** The replica id a consumer's ListOffsets carries (followers send their broker id, debugging clients -2). */
const CONSUMER_REPLICA_ID = -1;
/** Kafka's DEBUGGING_REPLICA_ID: a tool that may ask a follower too, and reads up to the log end offset. */
const DEBUGGING_REPLICA_ID = -2;
/** How long a read_committed latest offset waits for the followers to confirm the leader (v10's timeout if less). */
const CONFIRM_TIMEOUT_MS = 5000;
/** ListOffsets v5 brought OFFSET_NOT_AVAILABLE (KIP-207). */
const OFFSET_NOT_AVAILABLE_VERSION_MIN = 5;
/**
 * The version from which each special (negative) timestamp is answered, as Kafka's KafkaApis checks it
 * (KAFKA-17331): a special sent with an older version, or a negative timestamp that is none of them, is answered
 * UNSUPPORTED_VERSION for its partition. Kafka's map says v1 for latest and earliest, but v0 (its older handler,
 * see oldStyle) takes those two as well, and only those.
 */
const SPECIAL_TIMESTAMP_VERSION_MIN: ReadonlyMap<number, number> = new Map([
  [ListOffsetsTimestamp.Latest, 0],
  [ListOffsetsTimestamp.Earliest, 0],
  [ListOffsetsTimestamp.MaxTimestamp, 7],
  [ListOffsetsTimestamp.EarliestLocal, 8],
  [ListOffsetsTimestamp.LatestTiered, 9],
]);

function timestampSupported(timestamp: number, version: number): boolean {
  return (
    timestamp >= 0 || version >= (SPECIAL_TIMESTAMP_VERSION_MIN.get(timestamp) ?? Number.POSITIVE_INFINITY)
  );
}

/** Partitions the request names more than once (Kafka's ListOffsetsRequest.duplicatePartitions): topic NUL index. */
function duplicatePartitions(request: ListOffsetsRequest): Set<string> {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const topic of request.topics) {
    for (const p of topic.partitions) {
      const key = `${topic.name}\0${p.partitionIndex}`;
      if (seen.has(key)) duplicates.add(key);
      else seen.add(key);
    }
  }
  return duplicates;
}

/**
 * The first record of a batch at or after `minOffset` (the log start offset) whose timestamp reaches the target;
 * null when there is none (the search goes on with the next batch). A batch that fails to decode is answered by
 * its first offset at or after `minOffset` and its max timestamp, as a lookup without a decoder would be.
 */
function locateRecord(batch: Buffer, targetMs: number, minOffset: number): LocatedRecord | null {
  try {
    for (const record of iterateRecords(batch, 0)) {
      if (record.timestamp >= targetMs && record.offset >= minOffset) {
        return { offset: record.offset, timestampMs: record.timestamp };
      }
    }
  } catch {
    return {
      offset: Math.max(batchHeader.baseOffset(batch, 0), minOffset),
      timestampMs: batchHeader.maxTimestamp(batch, 0),
    };
  }
  return null;
}

export const listOffsetsHandler = defineHandler<ListOffsetsRequest, ListOffsetsResponse>({
  apiKey: ApiKey.LIST_OFFSETS,
  minVersion: 0,
  maxVersion: 10,
  handle(context, request) {
    // Answers that wait: for the followers' confirmation of the leader, or for the epoch file (storedFirst).
    const confirming: Promise<void>[] = [];
    const duplicates = context.apiVersion === 0 ? new Set<string>() : duplicatePartitions(request);
    const response: ListOffsetsResponse = {
      throttleTimeMs: 0,
      topics: request.topics.map((topic) => {
        // Kafka's check: DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED for each of its partitions.
        const allowed = authorizeTopic(context, AclOperation.DESCRIBE, topic.name);
        return {
          name: topic.name,
          partitions: topic.partitions.map((p): ListOffsetsResponseListOffsetsPartitionResponse => {
            if (!allowed) return answer(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
            // Kafka's order: a partition named twice, then a timestamp the version does not know, then the lookup.
            if (duplicates.size > 0 && duplicates.has(`${topic.name}\0${p.partitionIndex}`))
              return answer(p.partitionIndex, ErrorCode.INVALID_REQUEST);
            if (!timestampSupported(Number(p.timestamp), context.apiVersion))
              return answer(p.partitionIndex, ErrorCode.UNSUPPORTED_VERSION);
            // As Kafka's fetchOnlyFromLeader: only a debugging client may be answered by a follower.
            const partition = readablePartition(
              context.services,
              topic.name,
              p.partitionIndex,
              p.currentLeaderEpoch,
              request.replicaId === DEBUGGING_REPLICA_ID,
            );
            if (typeof partition === 'number') return answer(p.partitionIndex, partition);
            const timestamp = Number(p.timestamp);
            const readCommitted = request.isolationLevel === READ_COMMITTED;
            if (context.apiVersion === 0)
              return storedFirst(
                partition,
                oldStyle(partition, p.partitionIndex, timestamp, p.maxNumOffsets, request.replicaId),
                confirming,
              );
            // Kafka's isClientRequest: any other replica id (a follower, a debugging client) reads to the log end.
            const fromReplica = request.replicaId !== CONSUMER_REPLICA_ID;
            if (!readCommitted || fromReplica || timestamp !== ListOffsetsTimestamp.Latest)
              return storedFirst(
                partition,
                lookup(
                  partition,
                  p.partitionIndex,
                  timestamp,
                  readCommitted,
                  fromReplica,
                  context.apiVersion,
                ),
                confirming,
              );
            // Filled in once confirmed, from the partition as it is then.
            const slot = answer(p.partitionIndex, ErrorCode.NONE);
            const timeoutMs =
              request.timeoutMs > 0 ? Math.min(request.timeoutMs, CONFIRM_TIMEOUT_MS) : CONFIRM_TIMEOUT_MS;
            confirming.push(
              context.services.leadershipConfirmations.confirm(partition, timeoutMs).then((confirmed) => {
                const now = leaderPartition(
                  context.services,
                  topic.name,
                  p.partitionIndex,
                  p.currentLeaderEpoch,
                );
                const code = typeof now === 'number' ? now : ErrorCode.NOT_LEADER_OR_FOLLOWER;
                if (!confirmed || typeof now === 'number') {
                  Object.assign(slot, answer(p.partitionIndex, code));
                  return;
                }
                const stored: Promise<void>[] = [];
                Object.assign(
                  slot,
                  storedFirst(
                    now,
                    lookup(now, p.partitionIndex, timestamp, true, false, context.apiVersion),
                    stored,
                  ),
                );
                return stored[0];
              }),
            );
            return slot;
          }),
        };
      }),
    };
    return confirming.length === 0 ? response : Promise.all(confirming).then(() => response);
  },
});

/**
 * Kafka's makeLeader records the new epoch's start and flushes leader-epoch-checkpoint under the partition's lock,
 * so no ListOffsets is answered before the file holds it. Brook writes the file off the event loop, and its
 * answers name epochs a crash could take back while the write is on its way (earliest's from the cache, latest's
 * the leader's, an epoch with no batch having nothing to rebuild it from): a consumer would then fail to validate
 * its position against them. So an answer waits, in `waits`, while the file is being written; a failed write makes
 * it a storage error, as the directory now is. Answers the (possibly still to be changed) answer.
 */
function storedFirst(
  partition: Partition,
  answered: ListOffsetsResponseListOffsetsPartitionResponse,
  waits: Promise<void>[],
): ListOffsetsResponseListOffsetsPartitionResponse {
  const cache = partition.log.epochCache;
  if (answered.errorCode !== ErrorCode.NONE || !cache.persisting) return answered;
  waits.push(
    cache.whenPersisted().catch(() => {
      Object.assign(answered, answer(answered.partitionIndex, ErrorCode.KAFKA_STORAGE_ERROR));
    }),
  );
  return answered;
}

function lookup(
  partition: Partition,
  index: number,
  timestamp: number,
  readCommitted: boolean,
  fromReplica: boolean,
  version: number,
): ListOffsetsResponseListOffsetsPartitionResponse {
  const log = partition.log;
  // KIP-207: a consumer does not get offsets from a new leader's high watermark while it is behind the epoch's
  // start (see Partition.highWatermarkBehindEpochStart); v0-v4 clients do not know the code and get Kafka's
  // LEADER_NOT_AVAILABLE, retriable too.
  const notAvailable =
    !fromReplica && partition.highWatermarkBehindEpochStart
      ? version >= OFFSET_NOT_AVAILABLE_VERSION_MIN
        ? ErrorCode.OFFSET_NOT_AVAILABLE
        : ErrorCode.LEADER_NOT_AVAILABLE
      : ErrorCode.NONE;
  if (timestamp === ListOffsetsTimestamp.Latest) {
    if (notAvailable !== ErrorCode.NONE) return answer(index, notAvailable);
    const offset = fromReplica ? log.logEndOffset : readCommitted ? log.lastStableOffset : log.highWatermark;
    return answer(index, ErrorCode.NONE, -1, offset, partition.leaderEpoch);
  }
  const found = log.offsetForTimestamp(timestamp, locateRecord);
  // The log start offset is the earliest answer even when nothing is readable yet (an empty partition).
  if (
    found !== null &&
    (timestamp === ListOffsetsTimestamp.Earliest || timestamp === ListOffsetsTimestamp.EarliestLocal)
  ) {
    return answer(index, ErrorCode.NONE, -1, found.offset, found.leaderEpoch);
  }
  // Records above the high watermark are not visible to consumers yet.
  const limit = fromReplica ? log.logEndOffset : readCommitted ? log.lastStableOffset : log.highWatermark;
  // Not found below the limit may only mean that the high watermark has not caught up yet (KIP-207).
  if (found === null || found.offset >= limit) return answer(index, notAvailable, -1, -1, -1);
  return answer(index, ErrorCode.NONE, found.timestampMs, found.offset, found.leaderEpoch);
}

/**
 * v0 answers a list of offsets, newest first: Kafka's legacyFetchOffsetsForTimestamp, by segment modification
 * time (Log.legacyOffsetsBefore), so an old client's lookup by time gets what it got from Kafka, coarse as it is.
 * A consumer (replica id -1, not a follower or a debugging client) is not shown offsets beyond the high
 * watermark: when there are any, they give way to the high watermark itself.
 */
function oldStyle(
  partition: Partition,
  index: number,
  timestamp: number,
  maxNumOffsets: number,
  replicaId: number,
): ListOffsetsResponseListOffsetsPartitionResponse {
  const log = partition.log;
  let offsets = log.legacyOffsetsBefore(timestamp, Math.max(0, maxNumOffsets));
  const hw = log.highWatermark;
  if (replicaId === CONSUMER_REPLICA_ID && offsets.some((o) => o > hw))
    offsets = [hw, ...offsets.filter((o) => o <= hw)];
  const response = answer(index, ErrorCode.NONE);
  response.oldStyleOffsets = offsets.map(BigInt);
  return response;
}

function answer(
  partitionIndex: number,
  errorCode: number,
  timestamp = -1,
  offset = -1,
  leaderEpoch = -1,
): ListOffsetsResponseListOffsetsPartitionResponse {
  return {
    partitionIndex,
    errorCode,
    oldStyleOffsets: [],
    timestamp: BigInt(timestamp),
    offset: BigInt(offset),
    leaderEpoch,
  };
}
