// One transactional producer driven over the wire, for tests of transactions that commit consumer offsets
// (KIP-98's consume-transform-produce): InitProducerId, AddOffsetsToTxn, TxnOffsetCommit and EndTxn, each sent to
// the coordinator that FindCoordinator names and retried while coordinators load, move or finish the previous
// transaction. `brokers` is asked again on every try, so a test may restart or kill brokers between calls.

import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from './broker-process.js';
import { WireClient } from './wire-client.js';

const RETRIABLE = new Set<number>([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.CONCURRENT_TRANSACTIONS,
]);

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

export interface OffsetToCommit {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

export class TxnSession {
  producerId = -1n;
  producerEpoch = -1;

  constructor(
    private readonly brokers: () => readonly BrokerProcess[],
    readonly transactionalId: string,
  ) {}

  // biome-ignore lint/suspicious/noExplicitAny: as callCoordinator.
  private txnCall(apiKey: number, version: number, body: unknown, errorOf: (r: any) => number) {
    return callCoordinator(this.brokers, 1, this.transactionalId, apiKey, version, body, errorOf);
  }

  async init(): Promise<void> {
    const r = await this.txnCall(
      ApiKey.INIT_PRODUCER_ID,
      4,
      {
        transactionalId: this.transactionalId,
        transactionTimeoutMs: 60_000,
        producerId: -1n,
        producerEpoch: -1,
      },
      (x) => x.errorCode,
    );
    assert.equal(r.errorCode, ErrorCode.NONE, 'InitProducerId');
    this.producerId = r.producerId;
    this.producerEpoch = r.producerEpoch;
  }

  /** AddOffsetsToTxn then TxnOffsetCommit; answers the TxnOffsetCommit's per-partition error codes. */
  async commitOffsets(groupId: string, offsets: readonly OffsetToCommit[], version = 3): Promise<number[]> {
    const added = await this.txnCall(
      ApiKey.ADD_OFFSETS_TO_TXN,
      3,
      {
        transactionalId: this.transactionalId,
        producerId: this.producerId,
        producerEpoch: this.producerEpoch,
        groupId,
      },
      (x) => x.errorCode,
    );
    assert.equal(added.errorCode, ErrorCode.NONE, 'AddOffsetsToTxn');
    const topics = new Map<string, OffsetToCommit[]>();
    for (const o of offsets) topics.set(o.topic, [...(topics.get(o.topic) ?? []), o]);
    const r = await callCoordinator(
      this.brokers,
      0,
      groupId,
      ApiKey.TXN_OFFSET_COMMIT,
      version,
      {
        transactionalId: this.transactionalId,
        groupId,
        producerId: this.producerId,
        producerEpoch: this.producerEpoch,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [...topics].map(([name, list]) => ({
          name,
          partitions: list.map((o) => ({
            partitionIndex: o.partition,
            committedOffset: BigInt(o.offset),
            committedLeaderEpoch: -1,
            committedMetadata: `m${o.offset}`,
          })),
        })),
      },
      (x) => x.topics[0]?.partitions[0]?.errorCode ?? 0,
    );
    return r.topics.flatMap((t: { partitions: { errorCode: number }[] }) =>
      t.partitions.map((p) => p.errorCode),
    );
  }

  /** EndTxn, then waits until the transaction is complete (its markers written everywhere). */
  async end(commit: boolean): Promise<void> {
    const r = await this.txnCall(
      ApiKey.END_TXN,
      3,
      {
        transactionalId: this.transactionalId,
        producerId: this.producerId,
        producerEpoch: this.producerEpoch,
        committed: commit,
      },
      (x) => x.errorCode,
    );
    assert.equal(r.errorCode, ErrorCode.NONE, 'EndTxn');
    const want = commit ? 'CompleteCommit' : 'CompleteAbort';
    const started = Date.now();
    for (;;) {
      const d = await this.txnCall(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        { transactionalIds: [this.transactionalId] },
        (x) => x.transactionStates[0].errorCode,
      );
      if (d.transactionStates[0].transactionState === want) return;
      if (Date.now() - started > 30_000) throw new Error(`transaction never reached ${want}`);
      await new Promise((r) => setTimeout(r, 100));
    }
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
