// A minimal transactional producer for the chaos harness's read-process-write workload, on Brook's client
// (its Cluster: bootstrap, metadata, connections, coordinator lookup) and Brook's batch builder, since the
// client's Producer is idempotent only. One transaction at a time, one batch in flight per partition, each
// request retried while its error is retriable:
//   init()                InitProducerId for the transactional id: fences an older session of the same id and
//                         finishes its open transaction (aborted, or a prepared commit completed);
//   send(partition, vs)   AddPartitionsToTxn the first time a partition is written in a transaction, then one
//                         transactional Produce (acks=all) with this epoch's next sequence for the partition;
//   sendOffsets(g, offs)  AddOffsetsToTxn, then TxnOffsetCommit at the group's coordinator;
//   end(commit)           EndTxn.
// Any error that is not retriable ends the session: the caller calls init() again (with a new TxnProducer),
// which is what Kafka's producer asks of an application after a fatal or abortable error it cannot handle.

import { Cluster } from '../../src/client/cluster.js';
import { isRetriableError, KafkaClientError, KafkaProtocolError } from '../../src/client/errors.js';
import { CoordinatorType, findCoordinator } from '../../src/client/requests.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ProduceResponse } from '../../src/protocol/messages/00-produce.js';
import type { InitProducerIdResponse } from '../../src/protocol/messages/22-init-producer-id.js';
import type { AddPartitionsToTxnResponse } from '../../src/protocol/messages/24-add-partitions-to-txn.js';
import type { AddOffsetsToTxnResponse } from '../../src/protocol/messages/25-add-offsets-to-txn.js';
import type { EndTxnResponse } from '../../src/protocol/messages/26-end-txn.js';
import type { TxnOffsetCommitResponse } from '../../src/protocol/messages/28-txn-offset-commit.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';

export interface TxnProducerOptions {
  bootstrapServers: string;
  transactionalId: string;
  topic: string;
  transactionTimeoutMs: number;
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  /** How long one call keeps retrying retriable errors before it gives up. */
  callTimeoutMs: number;
}

/** Errors after which the coordinator must be looked up again. */
const COORDINATOR_MOVED = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

export class TxnProducer {
  readonly cluster: Cluster;
  producerId = -1n;
  producerEpoch = -1;
  private txnCoordinator = -1;
  private readonly groupCoordinators = new Map<string, number>();
  /** The next sequence of each partition under the current epoch. */
  private readonly sequences = new Map<number, number>();
  /** Partitions added to the open transaction. */
  private readonly added = new Set<number>();
  private offsetsAdded = false;

  constructor(private readonly o: TxnProducerOptions) {
    this.cluster = new Cluster({
      bootstrapServers: o.bootstrapServers,
      clientId: `chaos-${o.transactionalId}`,
      requestTimeoutMs: o.requestTimeoutMs,
      connectionTimeoutMs: o.connectionTimeoutMs,
    });
    this.cluster.addTopics([o.topic]);
  }

  async init(): Promise<void> {
    const r = await this.txnCall<InitProducerIdResponse>(
      ApiKey.INIT_PRODUCER_ID,
      {
        transactionalId: this.o.transactionalId,
        transactionTimeoutMs: this.o.transactionTimeoutMs,
        producerId: -1n,
        producerEpoch: -1,
      },
      4,
      (x) => x.errorCode,
    );
    this.producerId = r.producerId;
    this.producerEpoch = r.producerEpoch;
    this.sequences.clear();
    this.begin();
  }

  /** Starts the next transaction (client-side only, as in Kafka: the coordinator learns of it from AddPartitionsToTxn). */
  begin(): void {
    this.added.clear();
    this.offsetsAdded = false;
  }

  /** Writes values to a partition in the open transaction; answers the base offset. */
  async send(partition: number, values: readonly string[]): Promise<number> {
    if (!this.added.has(partition)) {
      await this.txnCall<AddPartitionsToTxnResponse>(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        {
          transactions: [],
          v3AndBelowTransactionalId: this.o.transactionalId,
          v3AndBelowProducerId: this.producerId,
          v3AndBelowProducerEpoch: this.producerEpoch,
          v3AndBelowTopics: [{ name: this.o.topic, partitions: [partition] }],
        },
        3,
        (x) => x.resultsByTopicV3AndBelow[0]?.resultsByPartition[0]?.partitionErrorCode ?? x.errorCode,
      );
      this.added.add(partition);
    }
    const baseSequence = this.sequences.get(partition) ?? 0;
    const now = Date.now();
    const batch = buildBatch(
      values.map((v) => ({ key: null, value: Buffer.from(v), headers: [], timestamp: now })),
      {
        producerId: Number(this.producerId),
        producerEpoch: this.producerEpoch,
        baseSequence,
        transactional: true,
      },
    );
    const offset = await this.retrying(`Produce ${this.o.topic}-${partition}`, async () => {
      await this.cluster.topic(this.o.topic);
      const leader = this.cluster.leaderOf(this.o.topic, partition);
      if (leader < 0)
        throw new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, `${this.o.topic}-${partition}`);
      const res = await this.cluster.send<ProduceResponse>(
        leader,
        ApiKey.PRODUCE,
        {
          transactionalId: this.o.transactionalId,
          acks: -1,
          timeoutMs: this.o.requestTimeoutMs,
          topicData: [{ name: this.o.topic, partitionData: [{ index: partition, records: batch }] }],
        },
        { maxVersion: 11 },
      );
      const p = res.responses[0]?.partitionResponses[0];
      if (p === undefined) throw new KafkaClientError('Produce answered no partition', true);
      // A retry of a batch the broker already has (its answer was lost): it is in the log once.
      if (p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) return Number(p.baseOffset);
      if (p.errorCode !== ErrorCode.NONE) throw new KafkaProtocolError(p.errorCode, p.errorMessage);
      return Number(p.baseOffset);
    });
    this.sequences.set(partition, baseSequence + values.length);
    return offset;
  }

  /** Adds the group's offsets to the open transaction (the consume-transform-produce commit). */
  async sendOffsets(
    groupId: string,
    offsets: readonly { topic: string; partition: number; offset: number }[],
  ): Promise<void> {
    if (!this.offsetsAdded) {
      await this.txnCall<AddOffsetsToTxnResponse>(
        ApiKey.ADD_OFFSETS_TO_TXN,
        {
          transactionalId: this.o.transactionalId,
          producerId: this.producerId,
          producerEpoch: this.producerEpoch,
          groupId,
        },
        3,
        (x) => x.errorCode,
      );
      this.offsetsAdded = true;
    }
    const topics = new Map<string, { partition: number; offset: number }[]>();
    for (const o of offsets) topics.set(o.topic, [...(topics.get(o.topic) ?? []), o]);
    await this.retrying(`TxnOffsetCommit ${groupId}`, async () => {
      let coordinator = this.groupCoordinators.get(groupId);
      if (coordinator === undefined) {
        coordinator = await findCoordinator(this.cluster, groupId, CoordinatorType.GROUP);
        this.groupCoordinators.set(groupId, coordinator);
      }
      const res = await this.cluster
        .send<TxnOffsetCommitResponse>(
          coordinator,
          ApiKey.TXN_OFFSET_COMMIT,
          {
            transactionalId: this.o.transactionalId,
            groupId,
            producerId: this.producerId,
            producerEpoch: this.producerEpoch,
            generationId: -1,
            memberId: '',
            groupInstanceId: null,
            topics: [...topics].map(([name, list]) => ({
              name,
              partitions: list.map((x) => ({
                partitionIndex: x.partition,
                committedOffset: BigInt(x.offset),
                committedLeaderEpoch: -1,
                committedMetadata: null,
              })),
            })),
          },
          { maxVersion: 3 },
        )
        .catch((e: unknown) => {
          this.groupCoordinators.delete(groupId);
          throw e;
        });
      for (const t of res.topics) {
        for (const p of t.partitions) {
          if (p.errorCode === ErrorCode.NONE) continue;
          if (COORDINATOR_MOVED.has(p.errorCode)) this.groupCoordinators.delete(groupId);
          throw new KafkaProtocolError(p.errorCode, `TxnOffsetCommit ${t.name}-${p.partitionIndex}`);
        }
      }
    });
  }

  async end(commit: boolean): Promise<void> {
    await this.txnCall<EndTxnResponse>(
      ApiKey.END_TXN,
      {
        transactionalId: this.o.transactionalId,
        producerId: this.producerId,
        producerEpoch: this.producerEpoch,
        committed: commit,
      },
      4,
      (x) => x.errorCode,
    );
    this.begin();
  }

  async close(): Promise<void> {
    await this.cluster.close();
  }

  /** A request to the transaction coordinator, found (again) as needed, retried while its error is retriable. */
  private txnCall<T>(
    apiKey: number,
    body: unknown,
    maxVersion: number,
    errorOf: (r: T) => number,
  ): Promise<T> {
    return this.retrying(`API ${apiKey}`, async () => {
      if (this.txnCoordinator < 0)
        this.txnCoordinator = await findCoordinator(
          this.cluster,
          this.o.transactionalId,
          CoordinatorType.TRANSACTION,
        );
      const res = await this.cluster
        .send<T>(this.txnCoordinator, apiKey, body, { maxVersion })
        .catch((e: unknown) => {
          this.txnCoordinator = -1;
          throw e;
        });
      const code = errorOf(res);
      if (code === ErrorCode.NONE) return res;
      if (COORDINATOR_MOVED.has(code)) this.txnCoordinator = -1;
      throw new KafkaProtocolError(code, `API ${apiKey}`);
    });
  }

  private async retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.o.callTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (!isRetriableError(e) || Date.now() > deadline) {
          if (e instanceof Error) e.message = `${what}: ${e.message}`;
          throw e;
        }
        this.cluster.invalidate();
        await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * 2 ** attempt)));
      }
    }
  }
}
