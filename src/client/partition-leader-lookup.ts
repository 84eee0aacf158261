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
