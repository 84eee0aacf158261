// How the admin's partition calls read a Metadata answer and a leader's per-partition answer, as Kafka's
// PartitionLeaderStrategy (unknown topics not tolerated) and DeleteRecordsHandler do: which partitions have a
// leader to send to, which are looked up again (no leader yet, a partition the topic does not list yet, a leader
// that moved), and which fail for good. Pure functions over decoded answers; no I/O.

import { ErrorCode } from '../protocol/errors.js';
import type { MetadataSnapshot } from './cluster.js';
import { KafkaProtocolError } from './errors.js';

/** A topic error of a Metadata answer after which Kafka looks the topic up again. */
const TOPIC_LOOKUP_AGAIN: ReadonlySet<number> = new Set([
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.BROKER_NOT_AVAILABLE,
]);

/** A partition error of a Metadata answer after which Kafka looks the partition up again. */
const PARTITION_LOOKUP_AGAIN: ReadonlySet<number> = new Set([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.BROKER_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
]);

/**
 * Where a partition's request goes, from a Metadata answer that asked for its topic: the leader's broker id, null
 * to look it up again (Kafka leaves it unmapped: retried until the call's deadline), or the error it fails with. A
 * topic the answer does not know fails with UNKNOWN_TOPIC_OR_PARTITION at once, as any other topic error but a
 * leader or broker not available yet.
 */
export function partitionLeader(
  snapshot: MetadataSnapshot,
  topic: string,
  partition: number,
): number | null | KafkaProtocolError {
  const t = snapshot.topics.get(topic);
  const topicError = t === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : t.errorCode;
  if (topicError !== ErrorCode.NONE) {
    if (TOPIC_LOOKUP_AGAIN.has(topicError)) return null;
    return new KafkaProtocolError(
      topicError,
      `metadata of topic ${topic} for partition ${topic}-${partition}`,
    );
  }
  const p = t!.partitions.find((candidate) => candidate.partition === partition);
  if (p === undefined) return null;
  if (p.errorCode !== ErrorCode.NONE) {
    if (PARTITION_LOOKUP_AGAIN.has(p.errorCode)) return null;
    return new KafkaProtocolError(p.errorCode, `metadata of partition ${topic}-${partition}`);
  }
  return p.leader >= 0 ? p.leader : null;
}

/**
 * The partition errors of a leader's answer that Kafka's clients read as stale metadata (the codes of its
 * InvalidMetadataException subclasses): the partition's leader is looked up again before the next attempt. Any
 * other retriable error (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS, UNKNOWN_LEADER_EPOCH) leaves the leader standing,
 * and the request goes to the same broker again (DeleteRecordsHandler.handlePartitionError, AdminApiDriver).
 */
const LEADER_INVALIDATED: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.NETWORK_EXCEPTION,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.LISTENER_NOT_FOUND,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
  ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
  ErrorCode.ELECTION_NOT_NEEDED,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INCONSISTENT_TOPIC_ID,
]);

/** Whether a leader's partition answer with `code` means the leader must be looked up again. */
export function invalidatesLeader(code: number): boolean {
  return LEADER_INVALIDATED.has(code);
}
