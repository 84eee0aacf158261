// transaction.partition.verification.enable (KIP-890 part 1) over the wire, on one broker that leads the partitions
// and coordinates the transaction: a transactional batch to a partition the producer added to its transaction is
// appended; one to a partition it did not add is answered INVALID_TXN_STATE and not appended (before, it was
// appended and opened a transaction no marker would end). With the key set to false on the cluster default
// (dynamic), the same write is appended unverified; once a transaction is open in a partition, later batches there
// need no verification. A batch under an epoch the coordinator has left is answered INVALID_PRODUCER_EPOCH, with no
// error message, as Kafka's.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { alterConfigs, CLUSTER_DEFAULT } from '../helpers/dynamic-configs.js';
import { callCoordinator } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'verified';
const TID = 'verified-txn';

describe('transaction.partition.verification.enable', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  let producerId: number;
  let producerEpoch: number;

  before(async () => {
    broker = await startBroker({ overrides: { 'transaction.state.log.replication.factor': 1 } });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 3, replicationFactor: 1 });
    // FindCoordinator makes the transaction state topic; its coordinator answers once loaded.
    const init = await callCoordinator(
      () => [broker],
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
    const added = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: TID,
      v3AndBelowProducerId: BigInt(producerId),
      v3AndBelowProducerEpoch: producerEpoch,
      v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
    });
    assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** A transactional batch of the producer to `partition`; answers that partition's produce response. */
  // biome-ignore lint/suspicious/noExplicitAny: as WireClient's responses.
  async function produceTransactional(partition: number, baseSequence: number): Promise<any> {
    const records = buildBatch([{ value: `p${partition}-${baseSequence}` }], {
      producerId,
      producerEpoch,
      baseSequence,
      transactional: true,
    });
    const r = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId: TID,
      acks: 1,
      timeoutMs: 10_000,
      topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }],
    });
    return r.responses[0].partitionResponses[0];
  }

  async function logEnd(partition: number): Promise<bigint> {
    const r = await client.call(ApiKey.LIST_OFFSETS, 5, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        { name: TOPIC, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n }] },
      ],
    });
    return r.topics[0].partitions[0].offset;
  }

  const setVerification = (value: string | null) =>
    alterConfigs(client, CLUSTER_DEFAULT, { 'transaction.partition.verification.enable': value });

  it('appends to an added partition and refuses one not added with INVALID_TXN_STATE', async () => {
    const added = await produceTransactional(0, 0);
    assert.equal(added.errorCode, ErrorCode.NONE);
    const refused = await produceTransactional(1, 0);
    assert.equal(refused.errorCode, ErrorCode.INVALID_TXN_STATE);
    assert.equal(refused.errorMessage, 'Partition was not added to the transaction');
    assert.equal(await logEnd(1), 0n, 'nothing appended to the partition not added');
    // Once the transaction is open in partition 0, its next batch is not asked about again.
    assert.equal((await produceTransactional(0, 1)).errorCode, ErrorCode.NONE);
  });

  it('appends unverified once the key is set to false on the cluster default', async () => {
    await setVerification('false');
    try {
      const unverified = await produceTransactional(2, 0);
      assert.equal(unverified.errorCode, ErrorCode.NONE, 'no verification when off');
      assert.equal(await logEnd(2), 1n);
    } finally {
      await setVerification(null);
    }
    // On again (the default): a partition not added is refused again.
    assert.equal((await produceTransactional(1, 0)).errorCode, ErrorCode.INVALID_TXN_STATE);
  });

  it("answers INVALID_PRODUCER_EPOCH, not the coordinator's PRODUCER_FENCED, to a batch of an epoch it has left", async () => {
    // A new session of the transactional id moves the coordinator's epoch on (aborting the open transaction).
    const again = await callCoordinator(
      () => [broker],
      1,
      TID,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: TID, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(again.errorCode, ErrorCode.NONE);
    assert.ok(again.producerEpoch > producerEpoch);
    // Producers take INVALID_PRODUCER_EPOCH from a Produce as abortable (KIP-588), as Kafka's
    // AddPartitionsToTxnManager converts the verification's PRODUCER_FENCED for them.
    const stale = await produceTransactional(1, 0);
    assert.equal(stale.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
    // Kafka gives the converted error no message of its own (ReplicaManager's postVerificationCallback: no custom
    // exception for it, so LogAppendResult.errorMessage is null).
    assert.equal(stale.errorMessage, null);
    assert.equal(await logEnd(1), 0n, 'nothing appended');
  });
});
