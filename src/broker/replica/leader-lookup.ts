// The check every partition-addressed request starts with: the partition this broker leads, or the Kafka error
// the request gets for it (unknown partition, not the leader, or a client leader epoch that does not match:
// FENCED_LEADER_EPOCH when the client's is older, UNKNOWN_LEADER_EPOCH when it is newer). -1 skips the epoch.

import { ErrorCode } from '../../protocol/errors.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';
import type { Partition } from './partition.js';
import type { ReplicaManager } from './replica-manager.js';

export function leaderPartition(
  services: { readonly replicas: ReplicaManager; readonly metadata: MetadataCache },
  topic: string,
  index: number,
  currentLeaderEpoch = -1,
): Partition | number {
  const partition = services.replicas.get(topic, index);
  if (partition === undefined || !partition.isLeader) {
    if (services.replicas.isOffline(topic, index)) return ErrorCode.KAFKA_STORAGE_ERROR;
    const known = services.metadata.partition(topic, index) !== undefined;
    return known ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }
  if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== partition.leaderEpoch) {
    return currentLeaderEpoch > partition.leaderEpoch
      ? ErrorCode.UNKNOWN_LEADER_EPOCH
      : ErrorCode.FENCED_LEADER_EPOCH;
  }
  return partition;
}

/**
 * As leaderPartition, for a consumer that may read from a follower too (Fetch v11+, KIP-392): a follower of the
 * partition answers up to its own high watermark, which the leader's fetch responses move.
 */
export function readablePartition(
  services: { readonly replicas: ReplicaManager; readonly metadata: MetadataCache },
  topic: string,
  index: number,
  currentLeaderEpoch: number,
  followerAllowed: boolean,
): Partition | number {
  if (!followerAllowed) return leaderPartition(services, topic, index, currentLeaderEpoch);
  const partition = services.replicas.get(topic, index);
  if (partition === undefined || partition.leaderEpoch < 0) {
    if (services.replicas.isOffline(topic, index)) return ErrorCode.KAFKA_STORAGE_ERROR;
    const known = services.metadata.partition(topic, index) !== undefined;
    return known ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }
  if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== partition.leaderEpoch) {
    return currentLeaderEpoch > partition.leaderEpoch
      ? ErrorCode.UNKNOWN_LEADER_EPOCH
      : ErrorCode.FENCED_LEADER_EPOCH;
  }
  return partition;
}
