// The check every partition-addressed request starts with: the partition this broker leads, or the Kafka error
// the request gets for it (unknown partition, not the leader, or a client leader epoch that does not match:
// FENCED_LEADER_EPOCH when the client's is older, UNKNOWN_LEADER_EPOCH when it is newer). -1 skips the epoch.
//
// Order, as Kafka's Partition.getLocalLog: a partition hosted here is checked against the client's leader epoch
// before its leadership, so a follower answers a client whose epoch is not its own FENCED_LEADER_EPOCH (the client
// is behind: it refreshes its metadata) or UNKNOWN_LEADER_EPOCH (this broker is behind: the client retries), and
// NOT_LEADER_OR_FOLLOWER only to a client at its epoch.

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
  const epochError =
    partition === undefined ? ErrorCode.NONE : leaderEpochError(partition, currentLeaderEpoch);
  if (epochError !== ErrorCode.NONE) return epochError;
  if (partition === undefined || !partition.isLeader) return notServedHere(services, topic, index);
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
  if (partition === undefined || partition.leaderEpoch < 0) return notServedHere(services, topic, index);
  const epochError = leaderEpochError(partition, currentLeaderEpoch);
  if (epochError !== ErrorCode.NONE) return epochError;
  return partition;
}

/** The client's leader epoch against this replica's (Kafka's checkCurrentLeaderEpoch); NONE when it matches or is -1. */
function leaderEpochError(partition: Partition, currentLeaderEpoch: number): number {
  if (currentLeaderEpoch < 0 || currentLeaderEpoch === partition.leaderEpoch) return ErrorCode.NONE;
  return currentLeaderEpoch > partition.leaderEpoch
    ? ErrorCode.UNKNOWN_LEADER_EPOCH
    : ErrorCode.FENCED_LEADER_EPOCH;
}

/** A partition this broker cannot serve: its directory is offline, it is not a replica here, or it is unknown. */
function notServedHere(
  services: { readonly replicas: ReplicaManager; readonly metadata: MetadataCache },
  topic: string,
  index: number,
): number {
  if (services.replicas.isOffline(topic, index)) return ErrorCode.KAFKA_STORAGE_ERROR;
  const known = services.metadata.partition(topic, index) !== undefined;
  return known ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
}
