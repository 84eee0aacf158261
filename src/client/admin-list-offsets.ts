// Admin.listOffsets, partition by partition, as Kafka 3.9's ListOffsetsHandler under the AdminApiDriver
// (callPartitionLeaders): each partition's leader is looked up, one ListOffsets goes to each leader, and each
// partition ends with its own offset or error, as Kafka's ListOffsetsResult holds one future per partition. No
// state outlives a call.

import { ErrorCode } from '../protocol/errors.js';
import type { ListOffsetsResponse } from '../protocol/messages/02-list-offsets.js';
import { ApiKey } from '../protocol/registry.js';
import type { Cluster } from './cluster.js';
import type { KafkaProtocolError } from './errors.js';
import {
  callPartitionLeaders,
  type LeaderPartitionAnswer,
  type PartitionOutcome,
  partitionKey,
} from './partition-leader-calls.js';
import {
  EARLIEST_TIMESTAMP,
  LATEST_TIMESTAMP,
  MAX_TIMESTAMP,
  type OffsetQuery,
  roundsOfDistinctPartitions,
} from './requests.js';

/** A partition's answer of listOffsets: the offset found with its record's timestamp and leader epoch. */
export interface ListedOffsetValue {
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/**
 * As ListOffsetsHandler.handlePartitionError: only these send a partition back to the leader lookup; any other
 * retriable error (OFFSET_NOT_AVAILABLE, UNKNOWN_LEADER_EPOCH) asks the same leader again.
 */
function invalidatesListOffsetsLeader(code: number): boolean {
  return code === ErrorCode.NOT_LEADER_OR_FOLLOWER || code === ErrorCode.LEADER_NOT_AVAILABLE;
}

export interface ListOffsetsCall {
  readonly isolationLevel: number;
  readonly deadlineMs: number;
  readonly retries: number;
}

/**
 * The outcome of each query, in the order of `queries`. A partition asked about more than once (earliest and
 * latest, say) is asked again in a later round: Kafka refuses a partition twice in one request. An earliest offset
 * answered as -1 (a broker that knows no log start) is asked again as the latest, which an empty log's start is.
 */
export async function listOffsetsByPartition(
  cluster: Cluster,
  queries: readonly OffsetQuery[],
  call: ListOffsetsCall,
): Promise<PartitionOutcome<ListedOffsetValue>[]> {
  const outcomes: PartitionOutcome<ListedOffsetValue>[] = new Array(queries.length);
  const rounds = roundsOfDistinctPartitions(queries);
  for (const round of rounds) {
    const answered = await listOffsetsRound(
      cluster,
      round.map((i) => queries[i]!),
      call,
    );
    for (const i of round)
      outcomes[i] = answered.get(partitionKey(queries[i]!.topic, queries[i]!.partition))!;
  }
  const unknownStart = queries
    .map((_, i) => i)
    .filter((i) => queries[i]!.timestamp === EARLIEST_TIMESTAMP && (outcomes[i]!.value?.offset ?? 0) < 0);
  if (unknownStart.length > 0) {
    const ends = await listOffsetsByPartition(
      cluster,
      unknownStart.map((i) => ({ ...queries[i]!, timestamp: LATEST_TIMESTAMP })),
      call,
    );
    unknownStart.forEach((i, j) => {
      outcomes[i] = ends[j]!;
    });
  }
  return outcomes;
}

/** The first ListOffsets version that answers MAX_TIMESTAMP (KIP-734). */
const MAX_TIMESTAMP_MIN_VERSION = 7;

/**
 * The queries `leader` can answer. A leader whose ListOffsets stops below v7 would read MAX_TIMESTAMP as a plain
 * timestamp: as Kafka's ListOffsetsHandler.handleUnsupportedVersionException, those partitions fail with
 * UNSUPPORTED_VERSION (put in `answers`) and the others go at the version the leader speaks.
 */
async function askableOf(
  cluster: Cluster,
  leader: number,
  queries: readonly OffsetQuery[],
  answers: Map<string, LeaderPartitionAnswer<ListedOffsetValue>>,
): Promise<readonly OffsetQuery[]> {
  if (!queries.some((q) => q.timestamp === MAX_TIMESTAMP)) return queries;
  const range = (await cluster.connection(leader)).versionRange(ApiKey.LIST_OFFSETS);
  if (range === undefined || range.max >= MAX_TIMESTAMP_MIN_VERSION) return queries;
  const askable: OffsetQuery[] = [];
  for (const q of queries) {
    if (q.timestamp !== MAX_TIMESTAMP) askable.push(q);
    else
      answers.set(partitionKey(q.topic, q.partition), { code: ErrorCode.UNSUPPORTED_VERSION, value: null });
  }
  return askable;
}

function listOffsetsRound(
  cluster: Cluster,
  queries: readonly OffsetQuery[],
  call: ListOffsetsCall,
): Promise<Map<string, PartitionOutcome<ListedOffsetValue>>> {
  return callPartitionLeaders(cluster, queries, {
    name: 'listOffsets',
    deadlineMs: call.deadlineMs,
    retries: call.retries,
    invalidatesLeader: invalidatesListOffsetsLeader,
    send: async (leader, all) => {
      const answers = new Map<string, LeaderPartitionAnswer<ListedOffsetValue>>();
      const list = await askableOf(cluster, leader, all, answers);
      if (list.length === 0) return answers;
      const byTopic = new Map<string, OffsetQuery[]>();
      for (const q of list) byTopic.set(q.topic, [...(byTopic.get(q.topic) ?? []), q]);
      const res = await cluster.send<ListOffsetsResponse>(leader, ApiKey.LIST_OFFSETS, {
        replicaId: -1,
        isolationLevel: call.isolationLevel,
        timeoutMs: cluster.options.requestTimeoutMs,
        topics: [...byTopic].map(([name, qs]) => ({
          name,
          partitions: qs.map((q) => ({
            partitionIndex: q.partition,
            // Kafka's admin client sends no leader epoch: any leader answers.
            currentLeaderEpoch: -1,
            timestamp: BigInt(q.timestamp),
            maxNumOffsets: 1,
          })),
        })),
      });
      for (const t of res.topics) {
        for (const p of t.partitions) {
          // ListOffsets v0 answers with a list of old-style offsets instead of one offset.
          const offset = p.oldStyleOffsets.length > 0 ? p.oldStyleOffsets[0]! : p.offset;
          answers.set(partitionKey(t.name, p.partitionIndex), {
            code: p.errorCode,
            value: { offset: Number(offset), timestamp: Number(p.timestamp), leaderEpoch: p.leaderEpoch },
          });
        }
      }
      return answers;
    },
  });
}

/** The first failed outcome's error, in query order, or null when all were answered (Kafka's all()). */
export function firstError(outcomes: readonly PartitionOutcome<unknown>[]): KafkaProtocolError | null {
  return outcomes.find((o) => o.error !== null)?.error ?? null;
}
