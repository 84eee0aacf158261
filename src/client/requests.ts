// Requests that producer, consumer and admin share: ListOffsets grouped by partition leader, and finding a
// group or transaction coordinator. Each returns plain results and throws only for failures that retries did
// not cure.

import { ErrorCode } from '../protocol/errors.js';
import type { ListOffsetsResponse } from '../protocol/messages/02-list-offsets.js';
import type { FindCoordinatorResponse } from '../protocol/messages/10-find-coordinator.js';
import { ApiKey } from '../protocol/registry.js';
import type { Cluster } from './cluster.js';
import { CallTimeoutError, isRetriableError, KafkaClientError, KafkaProtocolError } from './errors.js';

/** A partition of a topic. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

/**
 * Refuses an offset that cannot be committed or sought to, before anything is sent: Kafka's OffsetAndMetadata
 * throws "Invalid negative offset", and a fraction or an unsafe integer would not reach the broker intact.
 */
export function checkCommittableOffset(offset: number): void {
  if (offset < 0) throw new RangeError(`Invalid negative offset ${offset}`);
  if (!Number.isSafeInteger(offset)) throw new RangeError(`Invalid offset ${offset}: not a safe integer`);
}

/** Refuses a close timeout that is negative or not a number, as Kafka's close(Duration) (IllegalArgumentException). */
export function checkCloseTimeout(timeoutMs: number): void {
  if (!(timeoutMs >= 0))
    throw new RangeError(`the close timeout must be a non-negative number, not ${timeoutMs}`);
}

/**
 * A leader epoch as the client carries it: a negative or missing one is no epoch, -1 on the wire (Kafka's
 * OffsetAndMetadata.leaderEpoch() and a batch's maybeLeaderEpoch both treat negative epochs as unknown).
 */
export function epochOrNone(leaderEpoch: number | undefined): number {
  return leaderEpoch !== undefined && leaderEpoch >= 0 ? leaderEpoch : -1;
}

export function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** Kafka's special ListOffsets timestamps. */
export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
/** KIP-734: the offset of the record with the largest timestamp. */
export const MAX_TIMESTAMP = -3;

export interface OffsetQuery extends TopicPartition {
  timestamp: number;
}

/** The offset ListOffsets found for a partition, with the timestamp of that record. */
export interface OffsetAnswer extends TopicPartition {
  /** -1 when no record has a timestamp at or after the one asked for. */
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/** How ListOffsets is sent: by a consumer, or by an admin client. */
export interface ListOffsetsOptions {
  /**
   * Send each partition's leader epoch from the metadata as currentLeaderEpoch, as Kafka's consumer does (its
   * OffsetFetcher), so a stale leader refuses the request; Kafka's admin client sends -1 (the default here).
   */
  readonly currentLeaderEpoch?: boolean;
  /**
   * Retry retriable failures until this time (epoch ms), then fail with CallTimeoutError, as the consumer's calls
   * bounded by default.api.timeout.ms; without it, `retries` times.
   */
  readonly deadlineMs?: number;
}

/**
 * The indexes of `queries` in rounds where no partition appears twice (Kafka refuses a partition twice in one
 * ListOffsets request): a partition's first query goes in round 0, its second in round 1, and so on.
 */
export function roundsOfDistinctPartitions(queries: readonly OffsetQuery[]): number[][] {
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  queries.forEach((q, i) => {
    const k = tpKey(q.topic, q.partition);
    const round = seen.get(k) ?? 0;
    seen.set(k, round + 1);
    (rounds[round] ??= []).push(i);
  });
  return rounds;
}

/**
 * ListOffsets for each partition at its leader; retried on leader changes. A partition may be asked about more
 * than once (earliest and latest, say): Kafka refuses a partition twice in one request, so repeats go in later
 * rounds. Answers come back in the order of the queries.
 */
export async function listOffsets(
  cluster: Cluster,
  queries: OffsetQuery[],
  isolationLevel = 0,
  options: ListOffsetsOptions = {},
): Promise<OffsetAnswer[]> {
  const answers: (OffsetAnswer | undefined)[] = new Array(queries.length);
  const rounds = roundsOfDistinctPartitions(queries);
  for (const round of rounds)
    await listOffsetsRound(cluster, queries, round, answers, isolationLevel, options);
  // The earliest offset of an empty partition is its log start offset, which equals its end offset. Kafka answers
  // with that; a broker that answers -1 instead is asked for the end offset, so a consumer never seeks to -1.
  const unknownStart = queries
    .map((_, i) => i)
    .filter((i) => queries[i]!.timestamp === EARLIEST_TIMESTAMP && (answers[i]?.offset ?? 0) < 0);
  if (unknownStart.length > 0) {
    const ends = await listOffsets(
      cluster,
      unknownStart.map((i) => ({ ...queries[i]!, timestamp: LATEST_TIMESTAMP })),
      isolationLevel,
      options,
    );
    unknownStart.forEach((i, j) => {
      answers[i] = ends[j]!;
    });
  }
  return queries.map((q, i) => {
    const a = answers[i];
    if (a === undefined)
      throw new KafkaClientError(`no ListOffsets answer for ${q.topic}-${q.partition}`, false);
    return a;
  });
}

async function listOffsetsRound(
  cluster: Cluster,
  queries: OffsetQuery[],
  indexes: number[],
  answers: (OffsetAnswer | undefined)[],
  isolationLevel: number,
  options: ListOffsetsOptions,
): Promise<void> {
  let pending = indexes;
  const retries = options.deadlineMs === undefined ? undefined : Number.POSITIVE_INFINITY;
  await cluster.withRetry(
    async () => {
      for (const i of pending) await cluster.topic(queries[i]!.topic);
      const byLeader = new Map<number, number[]>();
      for (const i of pending) {
        const q = queries[i]!;
        const leader = cluster.leaderOf(q.topic, q.partition);
        if (leader < 0) {
          const t = cluster.snapshot.topics.get(q.topic);
          if (t !== undefined && q.partition >= t.partitions.length) {
            throw new KafkaProtocolError(3, `partition ${q.topic}-${q.partition} does not exist`);
          }
          throw new KafkaProtocolError(5, `no leader for ${q.topic}-${q.partition}`);
        }
        let list = byLeader.get(leader);
        if (list === undefined) byLeader.set(leader, (list = []));
        list.push(i);
      }
      const failed: number[] = [];
      let failure: Error | null = null;
      await Promise.all(
        [...byLeader].map(async ([leader, list]) => {
          const topics = new Map<string, number[]>();
          for (const i of list) {
            let t = topics.get(queries[i]!.topic);
            if (t === undefined) topics.set(queries[i]!.topic, (t = []));
            t.push(i);
          }
          const res = await cluster.send<ListOffsetsResponse>(leader, ApiKey.LIST_OFFSETS, {
            replicaId: -1,
            isolationLevel,
            timeoutMs: cluster.options.requestTimeoutMs,
            topics: [...topics].map(([name, is]) => ({
              name,
              partitions: is.map((i) => ({
                partitionIndex: queries[i]!.partition,
                currentLeaderEpoch: options.currentLeaderEpoch
                  ? cluster.leaderEpochOf(queries[i]!.topic, queries[i]!.partition)
                  : -1,
                timestamp: BigInt(queries[i]!.timestamp),
                maxNumOffsets: 1,
              })),
            })),
          });
          for (const t of res.topics) {
            for (const p of t.partitions) {
              const i = list.find(
                (x) => queries[x]!.topic === t.name && queries[x]!.partition === p.partitionIndex,
              );
              if (i === undefined) continue;
              if (p.errorCode !== 0) {
                const err = new KafkaProtocolError(p.errorCode, `ListOffsets ${t.name}-${p.partitionIndex}`);
                if (!err.retriable) throw err;
                failed.push(i);
                failure = err;
                continue;
              }
              // ListOffsets v0 answers with a list of old-style offsets instead of one offset.
              const offset = p.oldStyleOffsets.length > 0 ? p.oldStyleOffsets[0]! : p.offset;
              answers[i] = {
                topic: t.name,
                partition: p.partitionIndex,
                offset: Number(offset),
                timestamp: Number(p.timestamp),
                leaderEpoch: p.leaderEpoch,
              };
            }
          }
        }),
      );
      pending = failed;
      if (failure !== null) throw failure;
    },
    retries,
    options.deadlineMs,
  );
}

export const CoordinatorType = { GROUP: 0, TRANSACTION: 1 } as const;

/** How many times a coordinator lookup asks again after a retriable failure, unless a bound is given. */
const FIND_COORDINATORS_RETRIES = 20;

/**
 * How long a coordinator lookup retries: `retries` times and until `deadlineMs` (an admin call's bound), or
 * without a bound given, FIND_COORDINATORS_RETRIES times.
 */
export interface LookupBound {
  retries: number;
  deadlineMs: number;
}

/** The broker id of the coordinator for a group (or transactional id). */
export async function findCoordinator(
  cluster: Cluster,
  key: string,
  keyType: (typeof CoordinatorType)[keyof typeof CoordinatorType] = CoordinatorType.GROUP,
  bound: LookupBound = { retries: FIND_COORDINATORS_RETRIES, deadlineMs: Number.POSITIVE_INFINITY },
): Promise<number> {
  return cluster.withRetry(
    async () => {
      const c = await cluster.anyConnection();
      const version = c.pickVersion(ApiKey.FIND_COORDINATOR);
      const res = await c.request<FindCoordinatorResponse>(
        ApiKey.FIND_COORDINATOR,
        { key, keyType, coordinatorKeys: [key] },
        { version },
      );
      if (version >= 4) {
        const entry = res.coordinators[0];
        if (entry === undefined) throw new KafkaClientError('FindCoordinator answered no coordinator', true);
        if (entry.errorCode !== 0) throw new KafkaProtocolError(entry.errorCode, entry.errorMessage);
        return entry.nodeId;
      }
      if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, res.errorMessage);
      return res.nodeId;
    },
    bound.retries,
    bound.deadlineMs,
  );
}

/**
 * Kafka's CoordinatorStrategy: the coordinators of several keys from one FindCoordinator (v4+ takes a list of keys;
 * an older broker gets one request per key). Keys answered with a retriable error are asked again, with backoff;
 * any other error, or a retriable one once the retries are spent, is that key's answer.
 */
export async function findCoordinators(
  cluster: Cluster,
  keys: readonly string[],
  keyType: (typeof CoordinatorType)[keyof typeof CoordinatorType] = CoordinatorType.GROUP,
  bound: LookupBound = { retries: FIND_COORDINATORS_RETRIES, deadlineMs: Number.POSITIVE_INFINITY },
): Promise<Map<string, number | KafkaProtocolError>> {
  const out = new Map<string, number | KafkaProtocolError>();
  let left = [...new Set(keys)];
  let lastFailure: unknown = null;
  for (let attempt = 0; left.length > 0; attempt++) {
    if (attempt > 0) await cluster.backoffUntil(attempt - 1, bound.deadlineMs, lastFailure);
    const lastAttempt = attempt >= bound.retries;
    let res: FindCoordinatorResponse;
    try {
      const c = await cluster.anyConnection();
      const version = c.pickVersion(ApiKey.FIND_COORDINATOR);
      if (version < 4) {
        for (const key of left) {
          try {
            out.set(key, await findCoordinator(cluster, key, keyType, bound));
          } catch (err) {
            if (!(err instanceof KafkaProtocolError)) throw err;
            out.set(key, err);
          }
        }
        return out;
      }
      res = await c.request<FindCoordinatorResponse>(
        ApiKey.FIND_COORDINATOR,
        { key: '', keyType, coordinatorKeys: left },
        { version },
      );
    } catch (err) {
      if (lastAttempt || !isRetriableError(err) || err instanceof CallTimeoutError) throw err;
      lastFailure = err;
      cluster.invalidate();
      continue;
    }
    const retry: string[] = [];
    for (const key of left) {
      const entry = res.coordinators.find((e) => e.key === key);
      if (entry !== undefined && entry.errorCode === 0) {
        out.set(key, entry.nodeId);
        continue;
      }
      const err =
        entry === undefined
          ? new KafkaProtocolError(
              ErrorCode.COORDINATOR_NOT_AVAILABLE,
              `FindCoordinator answered nothing for ${key}`,
            )
          : new KafkaProtocolError(entry.errorCode, entry.errorMessage);
      if (err.retriable && !lastAttempt) {
        retry.push(key);
        lastFailure = err;
      } else out.set(key, err);
    }
    left = retry;
  }
  return out;
}
