// The transaction coordinator follows the leadership of __transaction_state: transactions are committed through
// the coordinator broker, which is then killed with SIGKILL; the same transactional id continues on the broker
// that took over its partition (InitProducerId there bumps the epoch, proving the state was loaded), and a
// read_committed consumer sees exactly the committed records.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { transactionPartition } from '../../src/coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, run } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = resolve(import.meta.dirname, '../../../test/compat/scripts/confluent_txn_phase.py');
const TOPIC = 'txn-data';
const TID = 'failover-tid';
const TXN_PARTITIONS = 5;

async function call(broker: BrokerProcess, apiKey: number, version: number, body: unknown) {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return await client.call(apiKey, version, body);
  } finally {
    client.close();
  }
}

describe('transaction coordinator failover in a three-broker cluster', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];

  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'default.replication.factor': 3,
        'min.insync.replicas': 2,
        'offsets.topic.replication.factor': 3,
        'offsets.topic.num.partitions': 5,
        'transaction.state.log.num.partitions': TXN_PARTITIONS,
      },
    });
    brokers = cluster.brokers;
  });
  after(() => cluster?.stop());

  it('moves the coordinator with the partition leadership and the transactional id continues', async () => {
    await createTopicOn(brokers[0]!, TOPIC, { numPartitions: 2, replicationFactor: 3 });
    const bootstrap = brokers.map((b) => b.bootstrap).join(',');
    const first = await run(PYTHON, [SCRIPT, bootstrap, TID, TOPIC, 'a', '10'], { timeoutMs: 120_000 });
    assert.equal(first.code, 0, `first session failed:\n${first.stdout}\n${first.stderr}`);

    const coordinator = await waitFor('the transaction coordinator', async () => {
      const r = await call(brokers[0]!, ApiKey.FIND_COORDINATOR, 3, {
        key: TID,
        keyType: 1,
        coordinatorKeys: [],
      });
      return r.errorCode === ErrorCode.NONE ? (r.nodeId as number) : undefined;
    });
    const partition = transactionPartition(TID, TXN_PARTITIONS);
    const victim = brokers[coordinator]!;
    await victim.kill();
    const survivors = brokers.filter((b) => b !== victim);

    const next = await waitFor(
      'a new leader of the transaction state partition',
      async () => {
        const md = await call(survivors[0]!, ApiKey.METADATA, 9, {
          topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: '__transaction_state' }],
          allowAutoTopicCreation: false,
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
        });
        const p = md.topics[0]?.partitions.find(
          (x: { partitionIndex: number }) => x.partitionIndex === partition,
        );
        return p !== undefined && p.leaderId >= 0 && p.leaderId !== coordinator
          ? (p.leaderId as number)
          : undefined;
      },
      30_000,
    );
    const survivorsBootstrap = survivors.map((b) => b.bootstrap).join(',');
    const second = await run(PYTHON, [SCRIPT, survivorsBootstrap, TID, TOPIC, 'b', '10', '--read'], {
      timeoutMs: 120_000,
    });
    assert.equal(second.code, 0, `second session failed:\n${second.stdout}\n${second.stderr}`);
    const out = JSON.parse(second.stdout.trim().split('\n').pop()!);
    const expected = [
      ...Array.from({ length: 10 }, (_, i) => `a-${i}`),
      ...Array.from({ length: 10 }, (_, i) => `b-${i}`),
    ].sort();
    assert.deepEqual(out.values, expected, 'read_committed sees exactly the committed records');

    // The new coordinator loaded the id's state: a third InitProducerId bumps the epoch to 2 (first session
    // 0, second session 1), where a coordinator without the state would start again at 0.
    const init = await call(brokers[next]!, ApiKey.INIT_PRODUCER_ID, 4, {
      transactionalId: TID,
      transactionTimeoutMs: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    });
    assert.equal(init.errorCode, ErrorCode.NONE);
    assert.equal(init.producerEpoch, 2);

    const described = await call(brokers[next]!, ApiKey.DESCRIBE_TRANSACTIONS, 0, {
      transactionalIds: [TID],
    });
    const state = described.transactionStates[0];
    assert.deepEqual(
      [state.errorCode, state.transactionState, state.producerId, state.producerEpoch],
      [ErrorCode.NONE, 'Empty', init.producerId, 2],
    );
    const listed = await call(brokers[next]!, ApiKey.LIST_TRANSACTIONS, 0, {
      stateFilters: [],
      producerIdFilters: [],
      durationFilter: -1n,
    });
    assert.ok(listed.transactionStates.some((t: { transactionalId: string }) => t.transactionalId === TID));
  });
});
