// Transactions whose partitions do not exist when they end, over the wire on one broker process. Kafka's
// TransactionMarkerChannelManager skips a partition whose leader its metadata cache cannot find ("likely deleted
// already") and completes the transaction without it; it never waits for such a partition.
// - A topic deleted while the transaction is open: EndTxn commits, the transaction completes, and the producer
//   goes on (InitProducerId, a next transaction).
// - AddOffsetsToTxn on a fresh cluster, then an abort without TxnOffsetCommit: Kafka's AddOffsetsToTxn does not
//   create __consumer_offsets (FindCoordinator of the group does), so the abort completes and the topic does not
//   exist afterwards. Brook created the topic in AddOffsetsToTxn.
// - The same when __consumer_offsets cannot be created (offsets.topic.replication.factor above the live brokers):
//   Brook's marker for the group's partition was retried for ever, the transaction stayed PrepareAbort and every
//   InitProducerId of the id answered CONCURRENT_TRANSACTIONS.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { callCoordinator, transactionCompleted } from '../helpers/txn-session.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const OFFSETS_TOPIC = '__consumer_offsets';
/** How long a transaction may take to complete once ended; Kafka completes these at once. */
const COMPLETE_WITHIN_MS = 10_000;

interface Producer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

async function initProducer(
  broker: BrokerProcess,
  transactionalId: string,
  timeoutMs = 60_000,
): Promise<Producer> {
  const r = await callCoordinator(
    () => [broker],
    1,
    transactionalId,
    ApiKey.INIT_PRODUCER_ID,
    4,
    { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
    (x) => x.errorCode,
    timeoutMs,
  );
  assert.equal(r.errorCode, ErrorCode.NONE, 'InitProducerId');
  return { transactionalId, producerId: r.producerId, producerEpoch: r.producerEpoch };
}

async function addPartition(client: WireClient, p: Producer, topic: string): Promise<void> {
  const r = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
    transactions: [],
    v3AndBelowTransactionalId: p.transactionalId,
    v3AndBelowProducerId: p.producerId,
    v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: [{ name: topic, partitions: [0] }],
  });
  assert.equal(r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
}

async function produce(client: WireClient, p: Producer, topic: string, value: string): Promise<void> {
  const records = buildBatch([{ value }], {
    producerId: Number(p.producerId),
    producerEpoch: p.producerEpoch,
    baseSequence: 0,
    transactional: true,
  });
  const r = await client.call(ApiKey.PRODUCE, 9, {
    transactionalId: p.transactionalId,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  });
  assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE, `produce to ${topic}`);
}

async function endTxn(client: WireClient, p: Producer, committed: boolean): Promise<void> {
  const r = await client.call(ApiKey.END_TXN, 3, {
    transactionalId: p.transactionalId,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    committed,
  });
  assert.equal(r.errorCode, ErrorCode.NONE, 'EndTxn');
}

async function addOffsets(client: WireClient, p: Producer, groupId: string): Promise<void> {
  const r = await client.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, {
    transactionalId: p.transactionalId,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    groupId,
  });
  assert.equal(r.errorCode, ErrorCode.NONE, 'AddOffsetsToTxn');
}

/** The names of all topics, internal ones included, in the broker's metadata. */
async function topicNames(client: WireClient): Promise<string[]> {
  const r = await client.call(ApiKey.METADATA, 9, {
    topics: null,
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  return r.topics.map((t: { name: string }) => t.name);
}

describe('transactions whose partitions are gone when they end', () => {
  const started: BrokerProcess[] = [];
  const clients: WireClient[] = [];
  after(async () => {
    for (const c of clients) c.close();
    for (const b of started) await b.stop();
  });
  async function start(
    overrides: Record<string, string | number> = {},
  ): Promise<[BrokerProcess, WireClient]> {
    const broker = await startBroker({ overrides });
    started.push(broker);
    const client = await WireClient.connect(broker.host, broker.port);
    clients.push(client);
    return [broker, client];
  }

  it('a topic deleted while the transaction is open: the commit completes and the producer goes on', async () => {
    const [broker, client] = await start();
    await createTopic(client, 'doomed', { numPartitions: 1, replicationFactor: 1 });
    await createTopic(client, 'kept', { numPartitions: 1, replicationFactor: 1 });
    const first = await initProducer(broker, 'deleted-mid-txn');
    await addPartition(client, first, 'doomed');
    await addPartition(client, first, 'kept');
    await produce(client, first, 'doomed', 'lost');
    await produce(client, first, 'kept', 'kept-1');
    const deleted = await client.call(ApiKey.DELETE_TOPICS, 4, {
      topics: [],
      topicNames: ['doomed'],
      timeoutMs: 10_000,
    });
    assert.equal(deleted.responses[0].errorCode, ErrorCode.NONE, 'DeleteTopics');
    await untilValue('doomed gone from the metadata', async () =>
      (await topicNames(client)).includes('doomed') ? null : true,
    );

    await endTxn(client, first, true);
    await transactionCompleted(() => [broker], first.transactionalId, true, COMPLETE_WITHIN_MS);
    const next = await initProducer(broker, first.transactionalId, COMPLETE_WITHIN_MS);
    assert.equal(next.producerId, first.producerId);
    assert.equal(next.producerEpoch, first.producerEpoch + 1);
    await addPartition(client, next, 'kept');
    await endTxn(client, next, false);
    await transactionCompleted(() => [broker], next.transactionalId, false, COMPLETE_WITHIN_MS);
  });

  it('AddOffsetsToTxn on a fresh cluster, then an abort: completes, __consumer_offsets not created', async () => {
    const [broker, client] = await start();
    const p = await initProducer(broker, 'offsets-then-abort');
    await addOffsets(client, p, 'never-committed-group');
    await endTxn(client, p, false);
    await transactionCompleted(() => [broker], p.transactionalId, false, COMPLETE_WITHIN_MS);
    assert.ok(!(await topicNames(client)).includes(OFFSETS_TOPIC), `${OFFSETS_TOPIC} is not created`);
    const next = await initProducer(broker, p.transactionalId, COMPLETE_WITHIN_MS);
    assert.equal(next.producerEpoch, p.producerEpoch + 1);
  });

  it('AddOffsetsToTxn when __consumer_offsets cannot be created: the abort completes', async () => {
    const [broker, client] = await start({ 'offsets.topic.replication.factor': 2 });
    const p = await initProducer(broker, 'offsets-uncreatable');
    await addOffsets(client, p, 'uncreatable-group');
    // The group's coordinator cannot be found (a Java producer's sendOffsetsToTransaction times out on this), so
    // the application aborts.
    const found = await client.call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 0,
      coordinatorKeys: ['uncreatable-group'],
    });
    assert.equal(found.coordinators[0].errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    await endTxn(client, p, false);
    await transactionCompleted(() => [broker], p.transactionalId, false, COMPLETE_WITHIN_MS);
    const next = await initProducer(broker, p.transactionalId, COMPLETE_WITHIN_MS);
    assert.equal(next.producerEpoch, p.producerEpoch + 1);
  });
});
