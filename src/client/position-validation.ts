// Position validation (KIP-320): before a consumer fetches from a position that carries a leader epoch (restored
// from a committed offset, given to seek(), or after the partition's leader epoch changed) it asks the leader with
// OffsetsForLeaderEpoch where that epoch ends in its log. A log that ends the epoch below the position was
// truncated (an unclean leader election): reading on would skip records or read others under the same offsets.
// This module builds the request and judges an answer; the consumer owns the partition states.

import { ErrorCode } from '../protocol/errors.js';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../protocol/messages/23-offset-for-leader-epoch.js';
import { ApiKey } from '../protocol/registry.js';
import type { Cluster } from './cluster.js';
import { KafkaProtocolError } from './errors.js';

/** The consumer form of OffsetsForLeaderEpoch (replicaId -1) first came with version 3, as in Kafka's client. */
const CONSUMER_FORM_MIN_VERSION = 3;
/** Kafka's OffsetsForLeaderEpochRequest.CONSUMER_REPLICA_ID. */
const CONSUMER_REPLICA_ID = -1;

/** One partition to validate: its position, the position's epoch and the leader epoch of the metadata. */
export interface PositionToValidate {
  topic: string;
  partition: number;
  offset: number;
  offsetEpoch: number;
  currentLeaderEpoch: number;
}

/** What an answer means for a position (Kafka's SubscriptionState.maybeCompleteValidation). */
export type ValidationOutcome =
  | { kind: 'valid' }
  | { kind: 'retry'; error: KafkaProtocolError }
  | { kind: 'failed'; error: KafkaProtocolError }
  /** The leader knows nothing of the epoch: only auto.offset.reset can place the position. */
  | { kind: 'unknown-epoch' }
  /** The log ends the epoch at `offset`, below the position: the first offset known to diverge. */
  | { kind: 'truncated'; offset: number; leaderEpoch: number };

/**
 * Asks `node` where each position's epoch ends. Resolves to null when the broker serves no version with the
 * consumer form: the positions are then taken as they are, as Kafka's updatePositionLeaderNoValidation does.
 */
export async function fetchEpochEndOffsets(
  cluster: Cluster,
  node: number,
  positions: PositionToValidate[],
): Promise<OffsetForLeaderEpochResponse | null> {
  const connection = await cluster.connection(node);
  const range = connection.versionRange(ApiKey.OFFSET_FOR_LEADER_EPOCH);
  if (range === undefined || range.max < CONSUMER_FORM_MIN_VERSION) return null;
  const byTopic = new Map<string, PositionToValidate[]>();
  for (const p of positions) {
    let list = byTopic.get(p.topic);
    if (list === undefined) byTopic.set(p.topic, (list = []));
    list.push(p);
  }
  const request: OffsetForLeaderEpochRequest = {
    replicaId: CONSUMER_REPLICA_ID,
    topics: [...byTopic].map(([topic, list]) => ({
      topic,
      partitions: list.map((p) => ({
        partition: p.partition,
        currentLeaderEpoch: p.currentLeaderEpoch,
        leaderEpoch: p.offsetEpoch,
      })),
    })),
  };
  return connection.request<OffsetForLeaderEpochResponse>(ApiKey.OFFSET_FOR_LEADER_EPOCH, request);
}

/** Judges the leader's answer for one position. */
export function judgeEpochEndOffset(
  position: PositionToValidate,
  answer: { errorCode: number; leaderEpoch: number; endOffset: bigint },
): ValidationOutcome {
  if (answer.errorCode !== ErrorCode.NONE) {
    const error = new KafkaProtocolError(
      answer.errorCode,
      `OffsetsForLeaderEpoch ${position.topic}-${position.partition}`,
    );
    return error.retriable ? { kind: 'retry', error } : { kind: 'failed', error };
  }
  const endOffset = Number(answer.endOffset);
  if (endOffset < 0 || answer.leaderEpoch < 0) return { kind: 'unknown-epoch' };
  if (endOffset < position.offset)
    return { kind: 'truncated', offset: endOffset, leaderEpoch: answer.leaderEpoch };
  return { kind: 'valid' };
}
