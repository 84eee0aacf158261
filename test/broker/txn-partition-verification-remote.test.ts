// KIP-890 verification when the partition's leader is not the transaction's coordinator (two brokers): the leader
// asks the coordinator's broker with AddPartitionsToTxn v4 verifyOnly before it appends a producer's first
// transactional batch; a partition the producer added is appended, one it did not add is answered INVALID_TXN_STATE
// (Produce v9) and stays empty. AddPartitionsToTxn v4 verifyOnly asked of the coordinator directly answers per
// partition, TRANSACTION_ABORTABLE for one not added, as Kafka 3.9.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, partitionView, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { callCoordinator } from '../helpers/txn-session.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'verified-remote';
const TID = 'remote-txn';

describe('transaction verification with a coordinator on another broker', () => {
  let cluster: TestCluster | undefined;
  let leader: WireClient | undefined;
  let coordinatorId = -1;
  let producerId = -1;
  let producerEpoch = -1;

  before(async () => {
    cluster = await startCluster({
      brokers: 2,
      overrides: {
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.num.partitions': 1,
        'transaction.state.log.min.isr': 1,
      },
    });
    const brokers = cluster.brokers;
    await agreedController(brokers);
    const init = await callCoordinator(
      () => brokers,
      1,
      TID,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: TID, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(init.errorCode, ErrorCode.NONE);
    producerId = Number(init.producerId);
    producerEpoch = init.producerEpoch;
    const found = await waitFor('the coordinator', async () => {
      const c = await WireClient.connect(brokers[0]!.host, brokers[0]!.port);
      try {
        const r = await c.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 1, coordinatorKeys: [TID] });
        return r.coordinators[0].errorCode === ErrorCode.NONE ? r.coordinators[0] : undefined;
      } finally {
        c.close();
      }
    });
    coordinatorId = found.nodeId;
    const leaderId = 1 - coordinatorId;
    await createTopicOn(brokers[leaderId]!, TOPIC, { assignments: { 0: [leaderId], 1: [leaderId] } });
    await waitFor('the topic led by the other broker', async () => {
      const v = await partitionView(brokers[leaderId]!, TOPIC);
      return v !== undefined && v.leaderId === leaderId ? v : undefined;
    });
    const added = await callCoordinator(
      () => brokers,
      1,
      TID,
      ApiKey.ADD_PARTITIONS_TO_TXN,
      3,
      {
        transactions: [],
        v3AndBelowTransactionalId: TID,
        v3AndBelowProducerId: BigInt(producerId),
        v3AndBelowProducerEpoch: producerEpoch,
        v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
      },
      (r) => r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode,
    );
    assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
    leader = await WireClient.connect(brokers[leaderId]!.host, brokers[leaderId]!.port);
  });
  after(async () => {
    leader?.close();
    await cluster?.stop();
  });

  // biome-ignore lint/suspicious/noExplicitAny: as WireClient's responses.
  async function produceTransactional(partition: number): Promise<any> {
    const records = buildBatch([{ value: `p${partition}` }], {
      producerId,
      producerEpoch,
      baseSequence: 0,
      transactional: true,
    });
    // The leader may learn of the topic a moment after the view above: retry while it does not lead it yet.
    return waitFor(`a produce answer from partition ${partition}'s leader`, async () => {
      const r = await leader!.call(ApiKey.PRODUCE, 9, {
        transactionalId: TID,
        acks: 1,
        timeoutMs: 10_000,
        topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }],
      });
      const p = r.responses[0].partitionResponses[0];
      return p.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER ||
        p.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ||
        p.errorCode === ErrorCode.NOT_ENOUGH_REPLICAS
        ? undefined
        : p;
    });
  }

  it('the leader asks the remote coordinator and refuses a partition not added', {
    timeout: 120_000,
  }, async () => {
    assert.equal(
      (await produceTransactional(0)).errorCode,
      ErrorCode.NONE,
      'the added partition is appended',
    );
    const refused = await produceTransactional(1);
    assert.equal(refused.errorCode, ErrorCode.INVALID_TXN_STATE);
    assert.equal(refused.errorMessage, 'Partition was not added to the transaction');
    const end = await leader!.call(ApiKey.LIST_OFFSETS, 5, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    assert.equal(end.topics[0].partitions[0].offset, 0n, 'nothing appended');
  });

  it('AddPartitionsToTxn v4 verifyOnly answers per partition on the coordinator', async () => {
    const brokers = cluster!.brokers;
    const c = await WireClient.connect(brokers[coordinatorId]!.host, brokers[coordinatorId]!.port);
    try {
      const r = await c.call(ApiKey.ADD_PARTITIONS_TO_TXN, 4, {
        transactions: [
          {
            transactionalId: TID,
            producerId: BigInt(producerId),
            producerEpoch,
            verifyOnly: true,
            topics: [{ name: TOPIC, partitions: [0, 1] }],
          },
        ],
        v3AndBelowTransactionalId: '',
        v3AndBelowProducerId: 0n,
        v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: [],
      });
      assert.equal(r.errorCode, ErrorCode.NONE);
      const results = r.resultsByTransaction[0].topicResults[0].resultsByPartition;
      assert.deepEqual(
        results.map((p: { partitionIndex: number; partitionErrorCode: number }) => [
          p.partitionIndex,
          p.partitionErrorCode,
        ]),
        [
          [0, ErrorCode.NONE],
          [1, ErrorCode.TRANSACTION_ABORTABLE],
        ],
      );
    } finally {
      c.close();
    }
  });
});
