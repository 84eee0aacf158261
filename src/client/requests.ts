// Requests that producer, consumer and admin share: ListOffsets grouped by partition leader, and finding a
// group or transaction coordinator. Each returns plain results and throws only for failures that retries did
// not cure.

import type { ListOffsetsResponse } from '../protocol/messages/02-list-offsets.js';
import type { FindCoordinatorResponse } from '../protocol/messages/10-find-coordinator.js';
import { ApiKey } from '../protocol/registry.js';
import type { Cluster } from './cluster.js';
import { KafkaClientError, KafkaProtocolError } from './errors.js';

export interface TopicPartition {
  topic: string;
  partition: number;
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

export interface OffsetAnswer extends TopicPartition {
  /** -1 when no record has a timestamp at or after the one asked for. */
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/** ListOffsets for each partition at its leader; retried on leader changes. */
export async function listOffsets(
  cluster: Cluster,
  queries: OffsetQuery[],
  isolationLevel = 0,
): Promise<OffsetAnswer[]> {
  const answers = new Map<string, OffsetAnswer>();
  let pending = queries;
  await cluster.withRetry(async () => {
    for (const q of pending) await cluster.topic(q.topic);
    const byLeader = new Map<number, OffsetQuery[]>();
    for (const q of pending) {
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
      list.push(q);
    }
    const failed: OffsetQuery[] = [];
    let failure: Error | null = null;
    await Promise.all(
      [...byLeader].map(async ([leader, list]) => {
        const topics = new Map<string, OffsetQuery[]>();
        for (const q of list) {
          let t = topics.get(q.topic);
          if (t === undefined) topics.set(q.topic, (t = []));
          t.push(q);
        }
        const res = await cluster.send<ListOffsetsResponse>(
          leader,
          ApiKey.LIST_OFFSETS,
          {
            replicaId: -1,
            isolationLevel,
            timeoutMs: cluster.options.requestTimeoutMs,
            topics: [...topics].map(([name, qs]) => ({
              name,
              partitions: qs.map((q) => ({
                partitionIndex: q.partition,
                currentLeaderEpoch: -1,
                timestamp: BigInt(q.timestamp),
                maxNumOffsets: 1,
              })),
            })),
          },
          // v0 answers with a list of old-style offsets; every broker since 0.10.1 speaks v1.
          {},
        );
        for (const t of res.topics) {
          for (const p of t.partitions) {
            const q = list.find((x) => x.topic === t.name && x.partition === p.partitionIndex);
            if (q === undefined) continue;
            if (p.errorCode !== 0) {
              const err = new KafkaProtocolError(p.errorCode, `ListOffsets ${t.name}-${p.partitionIndex}`);
              if (!err.retriable) throw err;
              failed.push(q);
              failure = err;
              continue;
            }
            answers.set(tpKey(t.name, p.partitionIndex), {
              topic: t.name,
              partition: p.partitionIndex,
              offset: Number(p.offset),
              timestamp: Number(p.timestamp),
              leaderEpoch: p.leaderEpoch,
            });
          }
        }
      }),
    );
    pending = failed;
    if (failure !== null) throw failure;
  });
  return queries.map((q) => {
    const a = answers.get(tpKey(q.topic, q.partition));
    if (a === undefined)
      throw new KafkaClientError(`no ListOffsets answer for ${q.topic}-${q.partition}`, false);
    return a;
  });
}

export const CoordinatorType = { GROUP: 0, TRANSACTION: 1 } as const;

/** The broker id of the coordinator for a group (or transactional id). */
export async function findCoordinator(
  cluster: Cluster,
  key: string,
  keyType = CoordinatorType.GROUP,
): Promise<number> {
  return cluster.withRetry(async () => {
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
  }, 20);
}
