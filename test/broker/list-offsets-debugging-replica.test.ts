// ListOffsets from a debugging client (replica id -2, Kafka's DEBUGGING_REPLICA_ID) is not a consumer's: as Kafka
// 3.9's ReplicaManager.fetchOffsets, only replica id -1 gets the isolation level's bound (the high watermark, or
// the last stable offset under read_committed); any other replica id reads up to the log end offset, whatever
// isolation level it sends. An open transaction holds the last stable offset below the log end here, so a
// read_committed consumer and a debugging client get different answers from one broker.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic } from '../helpers/wire-client.js';

const TOPIC = 'debugging-replica';
const CONSUMER = -1;
const DEBUGGING = -2;
const READ_COMMITTED = 1;
const LATEST = -1;
const BASE_MS = 1_700_000_000_000;

describe('ListOffsets from a debugging replica (-2)', () => {
  const suite = useBrokerWithClient({
    overrides: {
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    },
  });

  /** ListOffsets v`version` of partition 0 as `replicaId` under read_committed: [error, offset]. */
  const listOffset = async (
    version: number,
    replicaId: number,
    timestamp: number,
  ): Promise<[number, bigint]> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, version, {
      replicaId,
      isolationLevel: READ_COMMITTED,
      topics: [
        {
          name: TOPIC,
          partitions: [
            { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets: 1 },
          ],
        },
      ],
      timeoutMs: 5000,
    });
    const p = response.topics[0].partitions[0];
    return [p.errorCode, p.offset];
  };

  it('answers a debugging client up to the log end offset, a consumer up to the last stable offset', async () => {
    await createTopic(suite.client, TOPIC, { numPartitions: 1 });
    const plain = new Producer({ bootstrapServers: suite.broker.bootstrap });
    const txn = new Producer({
      bootstrapServers: suite.broker.bootstrap,
      transactionalId: 'debugging-replica-txn',
      transactionTimeoutMs: 60_000,
      maxBlockMs: 20_000,
    });
    try {
      // Offset 0 committed; offsets 1 and 2 in a transaction left open: last stable offset 1, log end 3.
      await plain.send({ topic: TOPIC, partition: 0, value: Buffer.from('plain'), timestamp: BASE_MS });
      await txn.initTransactions();
      txn.beginTransaction();
      for (const i of [1, 2])
        await txn.send({
          topic: TOPIC,
          partition: 0,
          value: Buffer.from(`t${i}`),
          timestamp: BASE_MS + i * 1000,
        });

      assert.deepEqual(await listOffset(7, CONSUMER, LATEST), [ErrorCode.NONE, 1n], 'a consumer: LSO');
      assert.deepEqual(
        await listOffset(7, DEBUGGING, LATEST),
        [ErrorCode.NONE, 3n],
        'a debugging client: LEO',
      );
      // A timestamp lookup finds the open transaction's record for the debugging client only.
      assert.deepEqual(await listOffset(7, CONSUMER, BASE_MS + 2000), [ErrorCode.NONE, -1n]);
      assert.deepEqual(await listOffset(7, DEBUGGING, BASE_MS + 2000), [ErrorCode.NONE, 2n]);
      await txn.abortTransaction();
    } finally {
      await txn.close();
      await plain.close();
    }
  });
});
