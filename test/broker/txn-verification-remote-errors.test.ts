// What a partition's leader answers a transactional Produce when the transaction coordinator, on another broker,
// refuses or cannot answer the KIP-890 verification (AddPartitionsToTxn v4 verifyOnly), as Kafka 3.9's
// AddPartitionsToTxnManager and ReplicaManager.appendRecords convert it for producers:
// - a partition not added: the coordinator answers TRANSACTION_ABORTABLE; Produce v11+ gets it as is, older
//   versions INVALID_TXN_STATE ("Partition was not added to the transaction");
// - CLUSTER_AUTHORIZATION_FAILED for the whole verification (the leader may not ask): INVALID_TXN_STATE, never the
//   producer's own authorization error;
// - NOT_COORDINATOR (the coordinator moved): NOT_ENOUGH_REPLICAS, which every producer retries;
// - PRODUCER_FENCED (the coordinator has left the batch's epoch): INVALID_PRODUCER_EPOCH, with no error message;
// - the transaction ended (a marker reached the partition) while the answer was on its way: INVALID_TXN_STATE with
//   no error message, as Kafka's UnifiedLog.append refuses it (InvalidTxnStateException, answered by its code).
// Two brokers in this process share a ZooKeeper; the coordinator's request interceptor answers the verification
// where a case needs it. Nothing is appended for a refused partition.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResponse,
} from '../../src/protocol/messages/24-add-partitions-to-txn.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'verification-errors';
const TID = 'verification-errors-tid';

/** The coordinator's verification answer: `errorCode` for the whole request or for each partition. */
function verificationAnswer(
  request: AddPartitionsToTxnRequest,
  errorCode: number,
  whole: boolean,
): AddPartitionsToTxnResponse {
  return {
    throttleTimeMs: 0,
    errorCode: whole ? errorCode : ErrorCode.NONE,
    resultsByTransaction: whole
      ? []
      : request.transactions.map((t) => ({
          transactionalId: t.transactionalId,
          topicResults: t.topics.map((topic) => ({
            name: topic.name,
            resultsByPartition: topic.partitions.map((partitionIndex) => ({
              partitionIndex,
              partitionErrorCode: errorCode,
            })),
          })),
        })),
    resultsByTopicV3AndBelow: [],
  };
}

describe('the leader converts a remote coordinator’s verification errors for the producer', () => {
  let zk: TestZooKeeper | undefined;
  const brokers: InProcessBroker[] = [];
  let coordinator: InProcessBroker;
  let leader: WireClient | undefined;
  let producerId = -1;
  let producerEpoch = -1;

  before(async () => {
    zk = await startTestZooKeeper();
    for (const id of [0, 1]) {
      brokers.push(
        await startInProcessBroker({
          'broker.id': id,
          'zookeeper.connect': zk.connect,
          'transaction.state.log.num.partitions': 1,
          'offsets.topic.num.partitions': 1,
        }),
      );
    }
    const wire = await WireClient.connect(brokers[0]!.host, brokers[0]!.port);
    try {
      const coordinatorId = await waitFor('the transaction coordinator', async () => {
        const r = await wire.call(ApiKey.FIND_COORDINATOR, 4, {
          key: '',
          keyType: 1,
          coordinatorKeys: [TID],
        });
        const c = r.coordinators[0];
        return c.errorCode === ErrorCode.NONE ? (c.nodeId as number) : undefined;
      });
      coordinator = brokers[coordinatorId]!;
      const leaderId = 1 - coordinatorId;
      const assignments = Object.fromEntries([0, 1, 2, 3, 4, 5, 6].map((p) => [p, [leaderId]]));
      await createTopic(wire, TOPIC, { assignments });
    } finally {
      wire.close();
    }
    const c = await WireClient.connect(coordinator.host, coordinator.port);
    try {
      const init = await waitFor('InitProducerId', async () => {
        const r = await c.call(ApiKey.INIT_PRODUCER_ID, 4, {
          transactionalId: TID,
          transactionTimeoutMs: 60_000,
          producerId: -1n,
          producerEpoch: -1,
        });
        return r.errorCode === ErrorCode.NONE ? r : undefined;
      });
      producerId = Number(init.producerId);
      producerEpoch = init.producerEpoch;
      const added = await waitFor('partition 0 added to the transaction', async () => {
        const r = await c.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
          transactions: [],
          v3AndBelowTransactionalId: TID,
          v3AndBelowProducerId: BigInt(producerId),
          v3AndBelowProducerEpoch: producerEpoch,
          v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
        });
        const code = r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode;
        return code === ErrorCode.NONE ? true : undefined;
      });
      assert.ok(added);
    } finally {
      c.close();
    }
    const leaderBroker = brokers.find((b) => b !== coordinator)!;
    leader = await WireClient.connect(leaderBroker.host, leaderBroker.port);
    // The leader knows its partitions once the added one is appended.
    const first = await produce(0, 9, (code) => code === ErrorCode.NONE);
    assert.equal(first.errorCode, ErrorCode.NONE);
  });

  after(async () => {
    leader?.close();
    for (const b of brokers) await b.stop().catch(() => {});
    await zk?.stop();
  });

  /**
   * A transactional batch to `partition` with Produce `version`, sent again while the leader does not know the
   * partition yet (or, unless `accept` takes it, answers a retriable error); the partition's answer.
   */
  // biome-ignore lint/suspicious/noExplicitAny: as WireClient's responses.
  async function produce(partition: number, version: number, accept = (_code: number) => true): Promise<any> {
    const records = buildBatch([{ value: `p${partition}` }], {
      producerId,
      producerEpoch,
      baseSequence: 0,
      transactional: true,
    });
    return waitFor(`partition ${partition}'s answer`, async () => {
      const r = await leader!.call(ApiKey.PRODUCE, version, {
        transactionalId: TID,
        acks: 1,
        timeoutMs: 10_000,
        topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }],
      });
      const p = r.responses[0].partitionResponses[0];
      const unknown =
        p.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER ||
        p.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return unknown || !accept(p.errorCode) ? undefined : p;
    });
  }

  async function endOffset(partition: number, client = leader!): Promise<bigint> {
    const r = await client.call(ApiKey.LIST_OFFSETS, 5, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        { name: TOPIC, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n }] },
      ],
    });
    return r.topics[0].partitions[0].offset;
  }

  it('a partition not added: TRANSACTION_ABORTABLE for Produce v11, INVALID_TXN_STATE before', async () => {
    const v11 = await produce(1, 11);
    assert.deepEqual([v11.errorCode, v11.errorMessage], [ErrorCode.TRANSACTION_ABORTABLE, null]);
    const v10 = await produce(1, 10);
    assert.deepEqual(
      [v10.errorCode, v10.errorMessage],
      [ErrorCode.INVALID_TXN_STATE, 'Partition was not added to the transaction'],
    );
    assert.equal(await endOffset(1), 0n, 'nothing appended');
  });

  it('a coordinator that answers TRANSACTION_ABORTABLE to an old producer: INVALID_TXN_STATE', async () => {
    coordinator.interception.set(
      onKey<AddPartitionsToTxnRequest>(ApiKey.ADD_PARTITIONS_TO_TXN, (request) =>
        request.apiVersion >= 4
          ? verificationAnswer(request.body, ErrorCode.TRANSACTION_ABORTABLE, false)
          : undefined,
      ),
    );
    try {
      const refused = await produce(2, 9);
      assert.deepEqual(
        [refused.errorCode, refused.errorMessage],
        [ErrorCode.INVALID_TXN_STATE, 'Partition was not added to the transaction'],
      );
    } finally {
      coordinator.interception.clear();
    }
  });

  it('the leader may not ask (CLUSTER_AUTHORIZATION_FAILED): INVALID_TXN_STATE, not an authorization error', async () => {
    coordinator.interception.set(
      onKey<AddPartitionsToTxnRequest>(ApiKey.ADD_PARTITIONS_TO_TXN, (request) =>
        request.apiVersion >= 4
          ? verificationAnswer(request.body, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, true)
          : undefined,
      ),
    );
    try {
      for (const version of [9, 11]) {
        const refused = await produce(3, version);
        assert.deepEqual(
          [refused.errorCode, refused.errorMessage],
          [ErrorCode.INVALID_TXN_STATE, 'Partition was not added to the transaction'],
          `Produce v${version}`,
        );
      }
      assert.equal(await endOffset(3), 0n, 'nothing appended');
    } finally {
      coordinator.interception.clear();
    }
  });

  it('a coordinator that moved (NOT_COORDINATOR): NOT_ENOUGH_REPLICAS, retried by every producer', async () => {
    coordinator.interception.set(
      onKey<AddPartitionsToTxnRequest>(ApiKey.ADD_PARTITIONS_TO_TXN, (request) =>
        request.apiVersion >= 4
          ? verificationAnswer(request.body, ErrorCode.NOT_COORDINATOR, false)
          : undefined,
      ),
    );
    try {
      const refused = await produce(4, 11);
      assert.equal(refused.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
      assert.match(refused.errorMessage, /Unable to verify the partition has been added to the transaction/);
    } finally {
      coordinator.interception.clear();
    }
    // With the coordinator answering again, the partition (never added) is refused as not added.
    assert.equal((await produce(4, 11)).errorCode, ErrorCode.TRANSACTION_ABORTABLE);
  });
  it('a coordinator that has left the epoch (PRODUCER_FENCED): INVALID_PRODUCER_EPOCH with no message', async () => {
    coordinator.interception.set(
      onKey<AddPartitionsToTxnRequest>(ApiKey.ADD_PARTITIONS_TO_TXN, (request) =>
        request.apiVersion >= 4
          ? verificationAnswer(request.body, ErrorCode.PRODUCER_FENCED, false)
          : undefined,
      ),
    );
    try {
      for (const version of [9, 11]) {
        const refused = await produce(5, version);
        // AddPartitionsToTxnManager converts it; ReplicaManager's postVerificationCallback gives it no message.
        assert.deepEqual(
          [refused.errorCode, refused.errorMessage],
          [ErrorCode.INVALID_PRODUCER_EPOCH, null],
          `Produce v${version}`,
        );
      }
      assert.equal(await endOffset(5), 0n, 'nothing appended');
    } finally {
      coordinator.interception.clear();
    }
  });

  it('the transaction ends while the verification answer is on its way: INVALID_TXN_STATE, with no message', async () => {
    const c = await WireClient.connect(coordinator.host, coordinator.port);
    let release: (() => void) | null = null;
    try {
      const added = await c.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
        transactions: [],
        v3AndBelowTransactionalId: TID,
        v3AndBelowProducerId: BigInt(producerId),
        v3AndBelowProducerEpoch: producerEpoch,
        v3AndBelowTopics: [{ name: TOPIC, partitions: [6] }],
      });
      assert.equal(
        added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode,
        ErrorCode.NONE,
      );
      // The coordinator verifies partition 6 (added: NONE), and its answer is held until the transaction ended.
      const held = new Promise<void>((resolve) => (release = resolve));
      let verified = false;
      coordinator.interception.set(
        onKey<AddPartitionsToTxnRequest>(ApiKey.ADD_PARTITIONS_TO_TXN, (request) => {
          if (request.apiVersion < 4) return undefined;
          return request.handle().then(async (answer) => {
            verified = true;
            await held;
            return answer;
          });
        }),
      );
      const refused = produce(6, 9);
      await waitFor('the verification answered and held', async () => (verified ? true : undefined));
      const ended = await c.call(ApiKey.END_TXN, 3, {
        transactionalId: TID,
        producerId: BigInt(producerId),
        producerEpoch,
        committed: false,
      });
      assert.equal(ended.errorCode, ErrorCode.NONE);
      // Asked on a connection of its own: the leader's answers on the produce's connection come in order.
      const leaderBroker = brokers.find((b) => b !== coordinator)!;
      const other = await WireClient.connect(leaderBroker.host, leaderBroker.port);
      try {
        await waitFor('the abort marker in partition 6', async () =>
          (await endOffset(6, other)) > 0n ? true : undefined,
        );
      } finally {
        other.close();
      }
      release!();
      const answer = await refused;
      assert.deepEqual([answer.errorCode, answer.errorMessage], [ErrorCode.INVALID_TXN_STATE, null]);
      assert.equal(await endOffset(6), 1n, 'only the marker is in the partition');
    } finally {
      (release as (() => void) | null)?.();
      coordinator.interception.clear();
      c.close();
    }
  });
});
