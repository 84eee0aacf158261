// Coordinator requests over the wire for tests that look at a coordinator's answers themselves: any request sent
// to the coordinator that FindCoordinator names, retried while coordinators load, move or finish the previous
// transaction; OffsetFetch of one partition; waiting for a transaction's markers. `brokers` is asked again on
// every try, so a test may restart or kill brokers between calls. (Transactions themselves are driven with the
// client's transactional Producer.)

import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from './broker-process.js';
import { untilValue } from './wait.js';
import { WireClient } from './wire-client.js';

/** Answers a coordinator gives while it loads, moves or its metadata catches up: asked again. */
const RETRIABLE = new Set<number>([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.CONCURRENT_TRANSACTIONS,
]);

/** A TxnOffsetCommit body committing `offset` for partition 0 of `topic`, outside any consumer generation. */
export function txnOffsetCommitBody(
  producer: { transactionalId: string; producerId: bigint; producerEpoch: number },
  groupId: string,
  topic: string,
  offset: bigint,
) {
  return {
    ...producer,
    groupId,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [
      {
        name: topic,
        partitions: [
          { partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: '' },
        ],
      },
    ],
  };
}

/** Calls until the answer is not a coordinator's "not now" (or `timeoutMs` passed); answers the last response. */
export async function untilSettled<T>(
  call: () => Promise<T>,
  errorOf: (response: T) => number,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await call();
    if (!RETRIABLE.has(errorOf(response)) || Date.now() > deadline) return response;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Calls `apiKey` on the coordinator of `key` (FindCoordinator key type 0 group, 1 transaction) until it is not retriable. */
export async function callCoordinator(
  brokers: () => readonly BrokerProcess[],
  keyType: 0 | 1,
  key: string,
  apiKey: number,
  version: number,
  body: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: responses are read field by field, as WireClient's.
  errorOf: (response: any) => number,
  timeoutMs = 30_000,
  // biome-ignore lint/suspicious/noExplicitAny: as above.
): Promise<any> {
  const started = Date.now();
  let last = 'no broker answered';
  for (;;) {
    for (const broker of brokers()) {
      try {
        const client = await WireClient.connect(broker.host, broker.port);
        try {
          const found = await client.call(ApiKey.FIND_COORDINATOR, 4, {
            key: '',
            keyType,
            coordinatorKeys: [key],
          });
          const c = found.coordinators[0];
          if (c.errorCode !== ErrorCode.NONE) {
            last = `FindCoordinator error ${c.errorCode}`;
            continue;
          }
          const coordinator = await WireClient.connect(c.host, c.port);
          try {
            const response = await coordinator.call(apiKey, version, body);
            const errorCode = errorOf(response);
            if (!RETRIABLE.has(errorCode)) return response;
            last = `error ${errorCode} from broker ${c.nodeId}`;
          } finally {
            coordinator.close();
          }
        } finally {
          client.close();
        }
      } catch (err) {
        last = String(err);
      }
      break;
    }
    if (Date.now() - started > timeoutMs) throw new Error(`API ${apiKey} for ${key} kept failing: ${last}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Waits until the coordinator reports the transaction of `transactionalId` complete (CompleteCommit or
 * CompleteAbort: its markers written everywhere). The client Producer's commitTransaction() returns once EndTxn is
 * answered, as Kafka's does; a test that reads the group's stable offsets next waits for the markers with this.
 */
export async function transactionCompleted(
  brokers: () => readonly BrokerProcess[],
  transactionalId: string,
  commit: boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const want = commit ? 'CompleteCommit' : 'CompleteAbort';
  const started = Date.now();
  for (;;) {
    const d = await callCoordinator(
      brokers,
      1,
      transactionalId,
      ApiKey.DESCRIBE_TRANSACTIONS,
      0,
      { transactionalIds: [transactionalId] },
      (x) => x.transactionStates[0].errorCode,
    );
    if (d.transactionStates[0].transactionState === want) return;
    if (Date.now() - started > timeoutMs) throw new Error(`transaction never reached ${want}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** OffsetFetch v7 of one partition from the group's coordinator: [error code, committed offset]. */
export async function fetchOffset(
  brokers: () => readonly BrokerProcess[],
  groupId: string,
  topic: string,
  partition: number,
  requireStable: boolean,
): Promise<[number, number]> {
  const r = await callCoordinator(
    brokers,
    0,
    groupId,
    ApiKey.OFFSET_FETCH,
    7,
    { groupId, topics: [{ name: topic, partitionIndexes: [partition] }], requireStable, groups: [] },
    (x) => x.errorCode,
  );
  assert.equal(r.errorCode, ErrorCode.NONE, 'OffsetFetch');
  const p = r.topics[0].partitions[0];
  return [p.errorCode, Number(p.committedOffset)];
}

/**
 * InitProducerId of a transactional id on a one-broker cluster, through `client`: FindCoordinator first (it creates
 * __transaction_state), then InitProducerId until the coordinator has loaded and answers NONE.
 */
export async function initTransactionalId(
  client: WireClient,
  transactionalId: string,
): Promise<{ producerId: bigint; producerEpoch: number }> {
  return untilValue(`InitProducerId of ${transactionalId}`, async () => {
    await client.call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 1,
      coordinatorKeys: [transactionalId],
    });
    const r = await client.call(ApiKey.INIT_PRODUCER_ID, 4, {
      transactionalId,
      transactionTimeoutMs: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    });
    return r.errorCode === ErrorCode.NONE
      ? { producerId: r.producerId as bigint, producerEpoch: r.producerEpoch }
      : null;
  });
}
