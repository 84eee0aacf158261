// KIP-890 verification of TxnOffsetCommit when the transaction coordinator is another broker: the group
// coordinator asks it with AddPartitionsToTxn v4 verifyOnly whether the group's __consumer_offsets partition is in
// the producer's ongoing transaction, as Kafka 3.9's AddPartitionsToTxnManager does. Not added: INVALID_TXN_STATE
// to TxnOffsetCommit v3, nothing written; after AddOffsetsToTxn the same commit is written. Two brokers in this
// process share a ZooKeeper; the transactional id is one coordinated by the broker that does not lead the group.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { txnOffsetCommitBody, untilSettled } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'remote-verified-offsets';
const GROUP = 'remote-verified-group';

it('a TxnOffsetCommit verified by a remote transaction coordinator is refused until AddOffsetsToTxn', async () => {
  const zk = await startTestZooKeeper();
  const brokers: InProcessBroker[] = [];
  const clients: WireClient[] = [];
  try {
    for (const id of [0, 1]) {
      brokers.push(
        await startInProcessBroker({
          'broker.id': id,
          'zookeeper.connect': zk.connect,
          'transaction.state.log.num.partitions': 2,
          'transaction.state.log.replication.factor': 1,
          'transaction.state.log.min.isr': 1,
          'offsets.topic.num.partitions': 1,
        }),
      );
    }
    const connect = async (id: number): Promise<WireClient> => {
      const client = await WireClient.connect(brokers[id]!.host, brokers[id]!.port);
      clients.push(client);
      return client;
    };
    const wire = await connect(0);
    await createTopic(wire, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    const coordinatorOf = async (keyType: 0 | 1, key: string): Promise<number | undefined> => {
      const r = await wire.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType, coordinatorKeys: [key] });
      const c = r.coordinators[0];
      return c.errorCode === ErrorCode.NONE ? (c.nodeId as number) : undefined;
    };
    const groupCoordinatorId = await waitFor('the group coordinator', () => coordinatorOf(0, GROUP));
    const transactionalId = await waitFor('an id coordinated by the other broker', async () => {
      for (let i = 0; i < 20; i++) {
        const id = `remote-verified-${i}`;
        const node = await coordinatorOf(1, id);
        if (node === undefined) return undefined;
        if (node !== groupCoordinatorId) return id;
      }
      return undefined;
    });
    const txnCoordinator = await connect(1 - groupCoordinatorId);
    const groupCoordinator = await connect(groupCoordinatorId);
    const init = await untilSettled(
      () =>
        txnCoordinator.call(ApiKey.INIT_PRODUCER_ID, 4, {
          transactionalId,
          transactionTimeoutMs: 60_000,
          producerId: -1n,
          producerEpoch: -1,
        }),
      (r) => r.errorCode,
    );
    assert.equal(init.errorCode, ErrorCode.NONE, 'InitProducerId');
    const producer = { transactionalId, producerId: init.producerId, producerEpoch: init.producerEpoch };
    const commit = () =>
      untilSettled(
        () =>
          groupCoordinator.call(ApiKey.TXN_OFFSET_COMMIT, 3, txnOffsetCommitBody(producer, GROUP, TOPIC, 9n)),
        (r) => r.topics[0].partitions[0].errorCode,
      ).then((r) => r.topics[0].partitions[0].errorCode as number);

    assert.equal(
      await commit(),
      ErrorCode.INVALID_TXN_STATE,
      'the group partition is not in the transaction',
    );
    const added = await untilSettled(
      () => txnCoordinator.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, { ...producer, groupId: GROUP }),
      (r) => r.errorCode,
    );
    assert.equal(added.errorCode, ErrorCode.NONE, 'AddOffsetsToTxn');
    assert.equal(await commit(), ErrorCode.NONE, 'verified once the group partition is in the transaction');
    const ended = await txnCoordinator.call(ApiKey.END_TXN, 3, { ...producer, committed: false });
    assert.equal(ended.errorCode, ErrorCode.NONE, 'EndTxn');
  } finally {
    for (const c of clients) c.close();
    for (const b of brokers) await b.stop().catch(() => {});
    await zk.stop();
  }
});
