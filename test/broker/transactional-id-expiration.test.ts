// transactional.id.expiration.ms over the wire, as Kafka's TransactionStateManager expires ids: a transactional id
// whose transaction is not running (Empty, CompleteCommit, CompleteAbort) and that has not changed for the
// expiration time is forgotten at the next transaction.remove.expired.transaction.cleanup.interval.ms check.
// DescribeTransactions then answers TRANSACTIONAL_ID_NOT_FOUND, ListTransactions leaves it out, and an
// InitProducerId for it starts over with a new producer id at epoch 0. The coordinator writes a tombstone for it,
// so a restarted broker loading __transaction_state does not bring it back. An Ongoing transaction keeps its id.
// Before, both keys were accepted and ignored: every id stayed in memory and in the log for ever.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { callCoordinator } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'expiring-txn-topic';
const BASE = {
  'transaction.state.log.num.partitions': 1,
  'transaction.state.log.replication.factor': 1,
  'transaction.state.log.min.isr': 1,
};
const EXPIRING = {
  ...BASE,
  'transactional.id.expiration.ms': 1000,
  'transaction.remove.expired.transaction.cleanup.interval.ms': 300,
};

interface TxnState {
  errorCode: number;
  transactionState: string;
  producerId: bigint;
  producerEpoch: number;
}

describe('transactional.id.expiration.ms', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-txn-expiration-'));
  let broker: BrokerProcess | undefined;
  let client: WireClient;

  const start = async (overrides: Record<string, number>): Promise<void> => {
    broker = await startBroker({ dataDir, overrides });
    client = await WireClient.connect(broker.host, broker.port);
  };

  const init = async (id: string): Promise<{ producerId: bigint; producerEpoch: number }> => {
    const r = await callCoordinator(
      () => [broker!],
      1,
      id,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (x) => x.errorCode,
      60_000,
    );
    assert.equal(r.errorCode, ErrorCode.NONE, `InitProducerId of ${id}`);
    return { producerId: r.producerId, producerEpoch: r.producerEpoch };
  };

  const describeTxn = async (id: string): Promise<TxnState> => {
    const r = await callCoordinator(
      () => [broker!],
      1,
      id,
      ApiKey.DESCRIBE_TRANSACTIONS,
      0,
      { transactionalIds: [id] },
      (x) => x.transactionStates[0].errorCode,
    );
    return r.transactionStates[0];
  };

  const listed = async (): Promise<string[]> => {
    const r = await client.call(ApiKey.LIST_TRANSACTIONS, 0, { stateFilters: [], producerIdFilters: [] });
    assert.equal(r.errorCode, ErrorCode.NONE);
    return r.transactionStates.map((t: { transactionalId: string }) => t.transactionalId).sort();
  };

  before(async () => {
    await start(EXPIRING);
    await createTopic(client, TOPIC, { numPartitions: 1, replicationFactor: 1 });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('forgets an idle id (a new producer id at epoch 0 next time), keeps an ongoing one, and writes a tombstone', async () => {
    const first = await init('idle');
    await init('gone-after-restart');
    const ongoing = await init('ongoing');
    const added = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: 'ongoing',
      v3AndBelowProducerId: ongoing.producerId,
      v3AndBelowProducerEpoch: ongoing.producerEpoch,
      v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
    });
    assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);

    const forgotten = async (id: string) =>
      (await describeTxn(id)).errorCode === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND;
    await waitFor(
      'the idle ids expire',
      async () => ((await forgotten('idle')) && (await forgotten('gone-after-restart'))) || undefined,
      15_000,
    );
    assert.deepEqual(await listed(), ['ongoing']);
    const running = await describeTxn('ongoing');
    assert.deepEqual([running.errorCode, running.transactionState], [ErrorCode.NONE, 'Ongoing']);

    // The id starts over, as a new one: Kafka's coordinator gives it a new producer id at epoch 0.
    const again = await init('idle');
    assert.equal(again.producerEpoch, 0, 'a forgotten id is initialized as a new one');
    assert.notEqual(again.producerId, first.producerId);

    // The expiration was written: a broker loading the log (with the default expiration of seven days, so that
    // nothing expires again meanwhile) does not know the id.
    client.close();
    assert.equal(await broker!.stop(), 0);
    await start(BASE);
    assert.equal((await describeTxn('gone-after-restart')).errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    assert.equal((await describeTxn('ongoing')).transactionState, 'Ongoing');
  });
});
