// ListTransactions and DescribeTransactions while the transaction coordinator loads a partition of
// __transaction_state (a broker that has just become its leader), as Kafka 3.x answers:
// - ListTransactions: COORDINATOR_LOAD_IN_PROGRESS for the whole response while any partition led here is loading
//   (TransactionStateManager.listTransactionStates), with no states; admin clients retry it. Answering NONE with
//   the ids of the loaded partitions only showed an operator (kafka-transactions.sh list, find-hanging) a list
//   silently missing the transactions of the loading partition.
// - DescribeTransactions: COORDINATOR_LOAD_IN_PROGRESS for each id of the loading partition, the others described.
//
// The broker runs in this process: its request interceptor makes the coordinator take partition 0 up again (as on
// a leadership change) just before the request's handler runs, so the handler finds it loading.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type TransactionCoordinator,
  transactionPartition,
} from '../../src/coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, loadingOnNext, startInProcessBroker } from '../helpers/in-process-broker.js';
import { initTransactionalId } from '../helpers/txn-session.js';
import { untilValue } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const PARTITIONS = 2;

/** Two ids, the first of partition 0 of __transaction_state, the second of partition 1. */
function idsOfEachPartition(): [string, string] {
  const found: string[] = [];
  for (let i = 0; found.length < PARTITIONS; i++) {
    const id = `listing-${i}`;
    if (transactionPartition(id, PARTITIONS) === found.length) found.push(id);
  }
  return [found[0]!, found[1]!];
}

describe('transaction listing while the coordinator loads a partition', () => {
  let broker: InProcessBroker;
  let client: WireClient;
  const [loadingId, loadedId] = idsOfEachPartition();

  before(async () => {
    broker = await startInProcessBroker({
      'transaction.state.log.num.partitions': PARTITIONS,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    client = await WireClient.connect(broker.host, broker.port);
    // FindCoordinator creates __transaction_state; InitProducerId once both partitions are led and loaded.
    for (const id of [loadingId, loadedId]) await initTransactionalId(client, id);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** Makes the next request of `apiKey` find partition 0 loading; the other requests pass. */
  function loadingFor(apiKey: number): void {
    const services = (
      broker.broker as unknown as { services: { transactionCoordinator: TransactionCoordinator } }
    ).services;
    loadingOnNext(broker, apiKey, services.transactionCoordinator);
  }

  const list = () =>
    client.call(ApiKey.LIST_TRANSACTIONS, 1, {
      stateFilters: [],
      producerIdFilters: [],
      durationFilter: -1n,
    });

  it('ListTransactions answers COORDINATOR_LOAD_IN_PROGRESS, then every id once loaded', async () => {
    loadingFor(ApiKey.LIST_TRANSACTIONS);
    const loading = await list();
    assert.equal(loading.errorCode, E.COORDINATOR_LOAD_IN_PROGRESS);
    assert.deepEqual(loading.transactionStates, []);

    const loaded = await untilValue('the partition loaded', async () => {
      const r = await list();
      return r.errorCode === E.NONE ? r : null;
    });
    const ids = loaded.transactionStates.map((t: { transactionalId: string }) => t.transactionalId).sort();
    assert.deepEqual(ids, [loadingId, loadedId].sort());
  });

  it('DescribeTransactions answers COORDINATOR_LOAD_IN_PROGRESS for the ids of the loading partition only', async () => {
    loadingFor(ApiKey.DESCRIBE_TRANSACTIONS);
    const r = await client.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, { transactionalIds: [loadingId, loadedId] });
    assert.deepEqual(
      r.transactionStates.map(
        (t: { transactionalId: string; errorCode: number; transactionState: string }) => [
          t.transactionalId,
          t.errorCode,
          t.transactionState,
        ],
      ),
      [
        [loadingId, E.COORDINATOR_LOAD_IN_PROGRESS, ''],
        [loadedId, E.NONE, 'Empty'],
      ],
    );
  });
});
