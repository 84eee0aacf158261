// transaction.partition.verification.enable (KIP-890 part 1) for TxnOffsetCommit, over the wire on one broker that
// coordinates both the group and the transaction, as Kafka 3.9's GroupCoordinator.handleTxnCommitOffsets does it:
// before the offsets are appended, the group's __consumer_offsets partition must be in the producer's ongoing
// transaction (AddOffsetsToTxn put it there). A commit without it is refused, nothing is written: INVALID_TXN_STATE
// to TxnOffsetCommit v3 and older, TRANSACTION_ABORTABLE to v4 (KIP-890's generic error); a commit of an epoch the
// coordinator has left is INVALID_PRODUCER_EPOCH. With the key set to false (cluster default, dynamic), the
// commit is written unverified. Before, Brook wrote the offsets as pending whatever the transaction held.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { alterConfigs, CLUSTER_DEFAULT } from '../helpers/dynamic-configs.js';
import { callCoordinator, txnOffsetCommitBody } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'txn-offsets-verified';
const GROUP = 'txn-offsets-verified-group';

describe('TxnOffsetCommit with transaction.partition.verification.enable', () => {
  let broker: BrokerProcess;
  let client: WireClient;

  before(async () => {
    broker = await startBroker({
      overrides: {
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.num.partitions': 1,
        'offsets.topic.num.partitions': 1,
      },
    });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    // FindCoordinator for the group makes __consumer_offsets; its coordinator answers once loaded.
    await callCoordinator(
      () => [broker],
      0,
      GROUP,
      ApiKey.OFFSET_FETCH,
      1,
      { groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0] }] },
      (r) => r.errorCode ?? ErrorCode.NONE,
      60_000,
    );
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** A new transactional session: its producer id and epoch (the coordinator loaded). */
  async function initProducer(
    transactionalId: string,
  ): Promise<{ producerId: bigint; producerEpoch: number }> {
    const init = await callCoordinator(
      () => [broker],
      1,
      transactionalId,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(init.errorCode, ErrorCode.NONE);
    return { producerId: init.producerId, producerEpoch: init.producerEpoch };
  }

  async function addOffsets(
    transactionalId: string,
    producer: { producerId: bigint; producerEpoch: number },
  ) {
    const r = await client.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, {
      transactionalId,
      groupId: GROUP,
      ...producer,
    });
    assert.equal(r.errorCode, ErrorCode.NONE);
  }

  /** TxnOffsetCommit of offset `offset` for the topic's partition 0, with `version`; the partition's error code. */
  async function commit(
    version: number,
    transactionalId: string,
    producer: { producerId: bigint; producerEpoch: number },
    offset: bigint,
  ): Promise<number> {
    const r = await client.call(
      ApiKey.TXN_OFFSET_COMMIT,
      version,
      txnOffsetCommitBody({ transactionalId, ...producer }, GROUP, TOPIC, offset),
    );
    return r.topics[0].partitions[0].errorCode;
  }

  /** The group's committed offset with require_stable (UNSTABLE_OFFSET_COMMIT while a transaction holds one). */
  async function stableOffset(): Promise<{ errorCode: number; offset: bigint }> {
    const r = await client.call(ApiKey.OFFSET_FETCH, 7, {
      groupId: GROUP,
      topics: [{ name: TOPIC, partitionIndexes: [0] }],
      requireStable: true,
    });
    const p = r.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: p.committedOffset };
  }

  const setVerification = (value: string | null) =>
    alterConfigs(client, CLUSTER_DEFAULT, { 'transaction.partition.verification.enable': value });

  it('refuses a commit whose group partition is not in the transaction: INVALID_TXN_STATE, TRANSACTION_ABORTABLE from v4', async () => {
    const tid = 'no-add-offsets';
    const producer = await initProducer(tid);
    assert.equal(await commit(3, tid, producer, 5n), ErrorCode.INVALID_TXN_STATE);
    assert.equal(await commit(4, tid, producer, 5n), ErrorCode.TRANSACTION_ABORTABLE);
    assert.deepEqual(
      await stableOffset(),
      { errorCode: ErrorCode.NONE, offset: -1n },
      'nothing written, nothing pending',
    );
    // AddOffsetsToTxn puts the group's partition in the transaction: the same commit is written (pending).
    await addOffsets(tid, producer);
    assert.equal(await commit(3, tid, producer, 5n), ErrorCode.NONE);
    assert.equal((await stableOffset()).errorCode, ErrorCode.UNSTABLE_OFFSET_COMMIT);
    const ended = await client.call(ApiKey.END_TXN, 3, {
      transactionalId: tid,
      ...producer,
      committed: false,
    });
    assert.equal(ended.errorCode, ErrorCode.NONE);
  });

  it('refuses a commit of an epoch the coordinator has left with INVALID_PRODUCER_EPOCH', async () => {
    const tid = 'left-epoch';
    const old = await initProducer(tid);
    await initProducer(tid);
    assert.equal(await commit(3, tid, old, 6n), ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('writes the commit unverified once the key is set to false on the cluster default', async () => {
    const tid = 'unverified';
    const producer = await initProducer(tid);
    await setVerification('false');
    try {
      assert.equal(await commit(3, tid, producer, 7n), ErrorCode.NONE, 'no verification when off');
    } finally {
      await setVerification(null);
    }
  });
});
