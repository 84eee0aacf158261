// The admin's calls that go to each partition's leader (DeleteRecords, ListOffsets), driven as Kafka 3.9's
// AdminApiDriver drives a handler with PartitionLeaderStrategy: look the leaders up, send one request per leader,
// and read each partition's answer as done, failed for good, to send to the same leader again, or to look up
// again. Each partition ends with its own answer or error, so one partition that fails does not fail the others.
// One call per function run; the state lives in its local maps.

import assert from 'node:assert/strict';
import { ErrorCode, isRetriable } from '../protocol/errors.js';
import { beforeDeadline, type Cluster } from './cluster.js';
import { CallTimeoutError, isRetriableError, KafkaProtocolError } from './errors.js';
import { partitionLeader } from './partition-leader-lookup.js';
import type { TopicPartition } from './requests.js';

/** A leader's answer for one partition: its error code, and the value when the code is NONE. */
export interface LeaderPartitionAnswer<V> {
  readonly code: number;
  readonly value: V | null;
}

/** A partition's outcome: its value, or the error it failed with. */
export type PartitionOutcome<V> =
  | { readonly value: V; readonly error: null }
  | { readonly value: null; readonly error: KafkaProtocolError };

export interface PartitionLeaderCall<E extends TopicPartition, V> {
  /** The API's name in messages ("deleteRecords"). */
  readonly name: string;
  readonly deadlineMs: number;
  /** Attempts after the first before the last failure is the answer (the admin's `retries`; infinite: none). */
  readonly retries: number;
  /** One request to `leader` for `entries`; answers by partitionKey. */
  send(leader: number, entries: readonly E[]): Promise<Map<string, LeaderPartitionAnswer<V>>>;
  /** Whether a retriable partition error means the leader moved: the partition is looked up again. */
  invalidatesLeader(code: number): boolean;
}

export function partitionKey(topic: string, partition: number): string {
  // The integer partition first: "0/a-1" and "10/a" cannot be mixed up, as "a-1-0" and "a-10" would.
  return `${partition}/${topic}`;
}

/** A retriable failure as the Kafka error a partition's answer carries: its own code, else NETWORK_EXCEPTION. */
function asProtocolError(failure: unknown, detail: string): KafkaProtocolError {
  if (failure instanceof KafkaProtocolError) return failure;
  const message = failure instanceof Error ? `${detail}: ${failure.message}` : detail;
  return new KafkaProtocolError(ErrorCode.NETWORK_EXCEPTION, message, { cause: failure });
}

function appendTo<K, E>(map: Map<K, E[]>, key: K, items: readonly E[]): void {
  map.set(key, [...(map.get(key) ?? []), ...items]);
}

/**
 * Runs `call` for `entries` (no partition twice) and answers each partition's outcome, by partitionKey. A
 * partition without a known leader is looked up (one Metadata request per round for all of them); one its leader
 * answers with an error that invalidates the leader, or whose request failed on the connection (Kafka's
 * disconnect), is looked up again; one answered with another retriable error is sent to the same leader again,
 * as Kafka's AdminApiDriver keeps it mapped. One the answer left out fails (UNKNOWN_SERVER_ERROR), unless another
 * partition of that answer went back to the lookup: then it goes to the same leader again. Each round after the first waits the backoff. At `deadlineMs` the
 * partitions still unanswered fail with REQUEST_TIMED_OUT (Kafka's TimeoutException), the cause the call's
 * timeout; when `retries` run out first, with the last retriable failure.
 */
export async function callPartitionLeaders<E extends TopicPartition, V>(
  cluster: Cluster,
  entries: readonly E[],
  call: PartitionLeaderCall<E, V>,
): Promise<Map<string, PartitionOutcome<V>>> {
  const outcomes = new Map<string, PartitionOutcome<V>>();
  const fail = (r: TopicPartition, error: KafkaProtocolError): void => {
    outcomes.set(partitionKey(r.topic, r.partition), { value: null, error });
  };
  assert.equal(
    new Set(entries.map((r) => partitionKey(r.topic, r.partition))).size,
    entries.length,
    `${call.name}: a partition is sent once per call`,
  );
  let byLeader = new Map<number, E[]>();
  let unmapped: E[] = [...entries];
  let lastFailure: unknown = null;
  try {
    for (let attempt = 0; unmapped.length > 0 || byLeader.size > 0; attempt++) {
      if (attempt > call.retries) {
        for (const r of [...unmapped, ...[...byLeader.values()].flat()])
          fail(r, asProtocolError(lastFailure, `${call.name} of ${r.topic}-${r.partition}`));
        break;
      }
      if (attempt > 0) await cluster.backoffUntil(attempt - 1, call.deadlineMs, lastFailure);
      const lookup = await lookUpLeaders(cluster, unmapped, call.deadlineMs, attempt, fail);
      if (lookup.lastFailure !== null) lastFailure = lookup.lastFailure;
      for (const [leader, list] of lookup.byLeader) appendTo(byLeader, leader, list);
      const sending = byLeader;
      byLeader = new Map();
      unmapped = lookup.unmapped;
      await Promise.all(
        [...sending].map(async ([leader, list]) => {
          let answers: Map<string, LeaderPartitionAnswer<V>>;
          try {
            answers = await beforeDeadline(call.send(leader, list), call.deadlineMs, attempt);
          } catch (err) {
            if (err instanceof CallTimeoutError || !isRetriableError(err)) throw err;
            // As Kafka's admin after a disconnect: the leader may have gone, so look it up again.
            lastFailure = err;
            unmapped.push(...list);
            return;
          }
          const again: E[] = [];
          const leftOut: E[] = [];
          let lookedUpAgain = false;
          for (const r of list) {
            const answer = answers.get(partitionKey(r.topic, r.partition));
            const at = `${r.topic}-${r.partition} at broker ${leader}`;
            if (answer === undefined) {
              leftOut.push(r);
            } else if (answer.code === ErrorCode.NONE) {
              assert.ok(answer.value !== null, `${call.name}: an answer without error carries its value`);
              outcomes.set(partitionKey(r.topic, r.partition), { value: answer.value, error: null });
            } else if (isRetriable(answer.code)) {
              lastFailure = new KafkaProtocolError(answer.code, at);
              if (call.invalidatesLeader(answer.code)) {
                unmapped.push(r);
                lookedUpAgain = true;
              } else again.push(r);
            } else fail(r, new KafkaProtocolError(answer.code, `${call.name} of ${at}`));
          }
          // A partition the answer left out fails its sanity check (Kafka's handlers: ApiException), unless the
          // answer sent another back to the leader lookup: then Kafka's driver keeps it mapped and asks again.
          if (lookedUpAgain) again.push(...leftOut);
          else {
            for (const r of leftOut) {
              const detail = `broker ${leader} did not answer ${r.topic}-${r.partition}`;
              fail(r, new KafkaProtocolError(ErrorCode.UNKNOWN_SERVER_ERROR, detail));
            }
          }
          if (again.length > 0) appendTo(byLeader, leader, again);
        }),
      );
    }
  } catch (err) {
    if (!(err instanceof CallTimeoutError)) throw err;
    for (const r of entries) {
      if (outcomes.has(partitionKey(r.topic, r.partition))) continue;
      fail(
        r,
        new KafkaProtocolError(
          ErrorCode.REQUEST_TIMED_OUT,
          `${call.name} of ${r.topic}-${r.partition}: ${err.message}`,
          { cause: err },
        ),
      );
    }
  }
  return outcomes;
}

/**
 * The leaders of `entries` from one Metadata request for their topics (none when `entries` is empty): by leader,
 * those to look up again (no leader yet, not listed yet) with the reason, and through `fail` those that fail for
 * good. After a retriable failure of the request itself, all of `entries` are to look up again.
 */
async function lookUpLeaders<E extends TopicPartition>(
  cluster: Cluster,
  entries: readonly E[],
  deadlineMs: number,
  attempt: number,
  fail: (r: TopicPartition, error: KafkaProtocolError) => void,
): Promise<{ byLeader: Map<number, E[]>; unmapped: E[]; lastFailure: unknown }> {
  const byLeader = new Map<number, E[]>();
  const unmapped: E[] = [];
  let lastFailure: unknown = null;
  if (entries.length === 0) return { byLeader, unmapped, lastFailure };
  const topics = [...new Set(entries.map((r) => r.topic))];
  let snapshot: Awaited<ReturnType<Cluster['fetchMetadata']>>;
  try {
    snapshot = await beforeDeadline(cluster.fetchMetadata(topics), deadlineMs, attempt);
  } catch (err) {
    if (err instanceof CallTimeoutError || !isRetriableError(err)) throw err;
    return { byLeader, unmapped: [...entries], lastFailure: err };
  }
  for (const r of entries) {
    const leader = partitionLeader(snapshot, r.topic, r.partition);
    if (leader instanceof KafkaProtocolError) fail(r, leader);
    else if (leader === null) {
      lastFailure = new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, `${r.topic}-${r.partition}`);
      unmapped.push(r);
    } else appendTo(byLeader, leader, [r]);
  }
  return { byLeader, unmapped, lastFailure };
}
