// A transaction left in PrepareCommit across a restart of its coordinator, whose partition's topic is then deleted.
// Two broker processes on ZooKeeper: the topic's only replica is on the broker that does not coordinate the
// transaction. With that broker down the commit's marker has no leader and the transaction stays PrepareCommit;
// the coordinator restarts and finds it so in __transaction_state. Deleting the topic then (its replica still
// offline) removes its partitions from the metadata, as Kafka's controller does with its LeaderDuringDelete
// UpdateMetadata at the start of a deletion, and the reloaded coordinator completes the transaction without the
// marker, as Kafka's TransactionMarkerChannelManager skips a partition it cannot find. The producer then goes on.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { startCluster } from '../helpers/test-cluster.js';
import { callCoordinator, transactionCompleted } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'deleted-while-pending';
const TID = 'pending-across-restart';

it('a PrepareCommit reloaded after a restart completes once its topic is deleted', async () => {
  const cluster = await startCluster({
    brokers: 2,
    overrides: {
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    },
  });
  const clients: WireClient[] = [];
  const connect = async (id: number): Promise<WireClient> => {
    const b = cluster.brokers[id]!;
    const client = await WireClient.connect(b.host, b.port);
    clients.push(client);
    return client;
  };
  const live = () => cluster.brokers.filter((_, id) => id === coordinatorId);
  let coordinatorId = -1;
  try {
    const init = await callCoordinator(
      () => cluster.brokers,
      1,
      TID,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: TID, transactionTimeoutMs: 600_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(init.errorCode, ErrorCode.NONE, 'InitProducerId');
    const producer = { transactionalId: TID, producerId: init.producerId, producerEpoch: init.producerEpoch };
    const found = await (await connect(0)).call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 1,
      coordinatorKeys: [TID],
    });
    coordinatorId = found.coordinators[0].nodeId;
    const otherId = 1 - coordinatorId;
    const coordinator = await connect(coordinatorId);
    await createTopic(coordinator, TOPIC, { assignments: { 0: [otherId] } });

    const added = await coordinator.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: TID,
      v3AndBelowProducerId: producer.producerId,
      v3AndBelowProducerEpoch: producer.producerEpoch,
      v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
    });
    assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
    const leader = await connect(otherId);
    const produced = await leader.call(ApiKey.PRODUCE, 9, {
      transactionalId: TID,
      acks: -1,
      timeoutMs: 10_000,
      topicData: [
        {
          name: TOPIC,
          partitionData: [
            {
              index: 0,
              records: buildBatch([{ value: 'never-marked' }], {
                producerId: Number(producer.producerId),
                producerEpoch: producer.producerEpoch,
                baseSequence: 0,
                transactional: true,
              }),
            },
          ],
        },
      ],
    });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE, 'produce');

    await cluster.brokers[otherId]!.stop();
    await waitFor(`${TOPIC} without a leader on the coordinator`, async () => {
      const m = await coordinator.call(ApiKey.METADATA, 9, {
        topics: [{ name: TOPIC }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      return m.topics[0].partitions[0]?.leaderId === -1 ? true : undefined;
    });
    const ended = await coordinator.call(ApiKey.END_TXN, 3, { ...producer, committed: true });
    assert.equal(ended.errorCode, ErrorCode.NONE, 'EndTxn');
    const stateOf = async (): Promise<string> => {
      const d = await callCoordinator(
        live,
        1,
        TID,
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        { transactionalIds: [TID] },
        (x) => x.transactionStates[0].errorCode,
      );
      return d.transactionStates[0].transactionState;
    };
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await stateOf(), 'PrepareCommit', 'the marker has no leader to go to');

    await cluster.brokers[coordinatorId]!.stop();
    await cluster.start(coordinatorId);
    assert.equal(await stateOf(), 'PrepareCommit', 'reloaded from __transaction_state');

    const restarted = await connect(coordinatorId);
    const deleted = await restarted.call(ApiKey.DELETE_TOPICS, 4, {
      topics: [],
      topicNames: [TOPIC],
      timeoutMs: 0,
    });
    assert.ok(
      [ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT].includes(deleted.responses[0].errorCode),
      `DeleteTopics: ${deleted.responses[0].errorCode}`,
    );
    await transactionCompleted(live, TID, true, 15_000);
    const next = await callCoordinator(
      live,
      1,
      TID,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: TID, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      10_000,
    );
    assert.equal(next.errorCode, ErrorCode.NONE, 'InitProducerId after the commit');
    assert.equal(next.producerEpoch, producer.producerEpoch + 1);
  } finally {
    for (const c of clients) c.close();
    await cluster.stop();
  }
});
