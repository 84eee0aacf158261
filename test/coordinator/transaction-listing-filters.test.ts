// ListTransactions v1's duration filter and DescribeTransactions of an empty id, over the wire, as Kafka 3.x
// answers them (TransactionStateManager.listTransactionStates, TransactionCoordinator.handleDescribeTransactions):
// - a duration filter d >= 0 keeps the ids whose now - transaction start time is strictly greater than d; an id
//   with no start time (-1: never began a transaction) has a huge running time and is kept; Brook used to drop such
//   ids and to keep those running exactly d;
// - DescribeTransactions of "" answers INVALID_REQUEST for it (Brook looked the empty id up: TRANSACTIONAL_ID_NOT_FOUND
//   or NOT_COORDINATOR).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { initTransactionalId } from '../helpers/txn-session.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const TOPIC = 'txn-listed';
const HOUR_MS = 3_600_000;

describe('transaction listing filters', () => {
  let broker: InProcessBroker;
  let client: WireClient;

  before(async () => {
    broker = await startInProcessBroker({
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1 });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  const listed = async (durationFilter: bigint): Promise<string[]> => {
    const r = await client.call(ApiKey.LIST_TRANSACTIONS, 1, {
      stateFilters: [],
      producerIdFilters: [],
      durationFilter,
    });
    assert.equal(r.errorCode, E.NONE);
    return r.transactionStates.map((t: { transactionalId: string }) => t.transactionalId).sort();
  };

  it('a duration filter keeps ids with no start time and drops transactions younger than it', async () => {
    await initTransactionalId(client, 'never-began');
    const ongoing = await initTransactionalId(client, 'just-began');
    const added = await untilValue('the partition added', async () => {
      const r = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
        transactions: [],
        v3AndBelowTransactionalId: 'just-began',
        v3AndBelowProducerId: ongoing.producerId,
        v3AndBelowProducerEpoch: ongoing.producerEpoch,
        v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
      });
      const code = r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode;
      return code === E.UNKNOWN_TOPIC_OR_PARTITION ? null : code;
    });
    assert.equal(added, E.NONE);
    assert.deepEqual(await listed(-1n), ['just-began', 'never-began']);
    // The Empty id has no start time (-1): Kafka's now - (-1) > d keeps it; the ongoing one began just now.
    assert.deepEqual(await listed(BigInt(HOUR_MS)), ['never-began']);
  });

  it('DescribeTransactions of an empty id answers INVALID_REQUEST', async () => {
    const r = await client.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, { transactionalIds: ['', 'never-began'] });
    assert.deepEqual(
      r.transactionStates.map((t: { transactionalId: string; errorCode: number }) => [
        t.transactionalId,
        t.errorCode,
      ]),
      [
        ['', E.INVALID_REQUEST],
        ['never-began', E.NONE],
      ],
    );
  });
});
