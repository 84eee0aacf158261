// A topic deleted while a transaction holds offsets of it (sendOffsetsToTransaction, not yet committed): as Kafka's
// GroupMetadata.removeOffsets (and the new coordinator's OffsetMetadataManager.onPartitionsDeleted), the deletion
// drops the transaction's pending offsets of the topic too, so the transaction's COMMIT marker does not bring them
// back, and a topic created again under the same name does not resume from the old topic's offset. Their
// tombstones keep it so after a restart, when the coordinator reads the transaction's records and marker again.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { fetchOffset, transactionCompleted } from '../helpers/txn-session.js';

const GONE = 'txn-gone';
const KEPT = 'txn-kept';

describe('a deleted topic and the pending transactional offsets of it', () => {
  let broker: BrokerProcess;
  const brokers = () => [broker];
  const overrides = {
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
  };
  before(async () => {
    broker = await startBroker({ overrides, keepDataDir: true });
    await createTopicOn(broker, GONE, { numPartitions: 1, replicationFactor: 1 });
    await createTopicOn(broker, KEPT, { numPartitions: 1, replicationFactor: 1 });
  });
  after(async () => {
    await broker?.stop();
    if (broker !== undefined) rmSync(broker.dataDir, { recursive: true, force: true });
  });

  it('a COMMIT after the deletion does not bring the offset back', async () => {
    const groupId = 'deleted-txn-group';
    const txn = new Producer({ bootstrapServers: broker.bootstrap, transactionalId: 'deleted-txn' });
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      await txn.initTransactions();
      txn.beginTransaction();
      await txn.sendOffsetsToTransaction(
        [
          { topic: GONE, partition: 0, offset: 7 },
          { topic: KEPT, partition: 0, offset: 4 },
        ],
        groupId,
      );
      const [deleted] = await admin.deleteTopics([GONE]);
      assert.equal(deleted?.error, null, 'DeleteTopics');
      await txn.commitTransaction();
      await transactionCompleted(brokers, 'deleted-txn', true);
    } finally {
      await txn.close();
      await admin.close();
    }
    assert.deepEqual(await fetchOffset(brokers, groupId, KEPT, 0, true), [ErrorCode.NONE, 4]);
    await createTopicOn(broker, GONE, { numPartitions: 1, replicationFactor: 1 });
    assert.deepEqual(await fetchOffset(brokers, groupId, GONE, 0, true), [ErrorCode.NONE, -1]);
    const dataDir = broker.dataDir;
    await broker.stop();
    broker = await startBroker({ overrides, dataDir });
    assert.deepEqual(await fetchOffset(brokers, groupId, GONE, 0, true), [ErrorCode.NONE, -1]);
    assert.deepEqual(await fetchOffset(brokers, groupId, KEPT, 0, true), [ErrorCode.NONE, 4]);
  });
});
