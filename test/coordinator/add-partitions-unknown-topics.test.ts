// AddPartitionsToTxn (v0-v3) naming a partition the broker's metadata does not show, over the wire, as Kafka 3.x
// answers it: KafkaApis refuses such partitions before it calls the transaction coordinator, so the answer is
// UNKNOWN_TOPIC_OR_PARTITION for them and OPERATION_NOT_ATTEMPTED for the others whatever the coordinator would
// have said (a fenced or unknown producer, a loading partition of __transaction_state). Brook used to ask the
// coordinator first and answered its error for every partition.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TransactionCoordinator } from '../../src/coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, loadingOnNext, startInProcessBroker } from '../helpers/in-process-broker.js';
import { initTransactionalId } from '../helpers/txn-session.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const TOPIC = 'txn-known';
const TRANSACTIONAL_ID = 'add-unknown-first';

describe('AddPartitionsToTxn with partitions that do not exist', () => {
  let broker: InProcessBroker;
  let client: WireClient;

  before(async () => {
    broker = await startInProcessBroker({
      // One partition: every transactional id belongs to partition 0, which loadingOnNext takes up again.
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1 });
    await untilValue(`${TOPIC} in the metadata`, async () => {
      const md = await client.call(ApiKey.METADATA, 9, {
        topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: TOPIC }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      return md.topics[0].errorCode === E.NONE && md.topics[0].partitions.length === 1 ? true : null;
    });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  const initProducerId = () => initTransactionalId(client, TRANSACTIONAL_ID);

  /** AddPartitionsToTxn v3 of the known partition and of a partition of a topic that does not exist. */
  async function add(producerId: bigint, producerEpoch: number): Promise<Record<string, number>> {
    const r = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: TRANSACTIONAL_ID,
      v3AndBelowProducerId: producerId,
      v3AndBelowProducerEpoch: producerEpoch,
      v3AndBelowTopics: [
        { name: TOPIC, partitions: [0] },
        { name: 'no-such-topic', partitions: [0] },
      ],
    });
    const codes: Record<string, number> = {};
    for (const t of r.resultsByTopicV3AndBelow) {
      for (const p of t.resultsByPartition) codes[`${t.name}-${p.partitionIndex}`] = p.partitionErrorCode;
    }
    return codes;
  }

  const refused = {
    [`${TOPIC}-0`]: E.OPERATION_NOT_ATTEMPTED,
    'no-such-topic-0': E.UNKNOWN_TOPIC_OR_PARTITION,
  };

  it('answers UNKNOWN_TOPIC_OR_PARTITION to a fenced producer, before PRODUCER_FENCED', async () => {
    const first = await initProducerId();
    const second = await initProducerId();
    assert.equal(second.producerEpoch, first.producerEpoch + 1);
    assert.deepEqual(await add(first.producerId, first.producerEpoch), refused);
    // The producer of the current epoch gets the same answer: nothing of the request was added.
    assert.deepEqual(await add(second.producerId, second.producerEpoch), refused);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION to a producer id the coordinator does not know', async () => {
    assert.deepEqual(await add(999_999n, 0), refused);
  });

  /** AddPartitionsToTxn v4 (a broker's batched form) of one transaction, added or verifyOnly: codes by partition. */
  async function addV4(
    producer: { producerId: bigint; producerEpoch: number },
    verifyOnly: boolean,
    topics: { name: string; partitions: number[] }[],
  ): Promise<Record<string, number>> {
    const r = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 4, {
      transactions: [{ transactionalId: TRANSACTIONAL_ID, ...producer, verifyOnly, topics }],
      v3AndBelowTransactionalId: '',
      v3AndBelowProducerId: 0n,
      v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [],
    });
    assert.equal(r.errorCode, E.NONE);
    const codes: Record<string, number> = {};
    for (const t of r.resultsByTransaction[0].topicResults) {
      for (const p of t.resultsByPartition) codes[`${t.name}-${p.partitionIndex}`] = p.partitionErrorCode;
    }
    return codes;
  }

  it('v4, verifyOnly or not, answers UNKNOWN_TOPIC_OR_PARTITION before the coordinator, and adds nothing', async () => {
    // Kafka's KafkaApis checks every partition of a v4 transaction against the metadata cache too, and fails the
    // whole transaction; the coordinator is not asked.
    const current = await initProducerId();
    const producer = { producerId: current.producerId, producerEpoch: current.producerEpoch };
    const topics = [
      { name: TOPIC, partitions: [0, 5] },
      { name: 'no-such-topic', partitions: [0] },
    ];
    const expected = {
      [`${TOPIC}-0`]: E.OPERATION_NOT_ATTEMPTED,
      [`${TOPIC}-5`]: E.UNKNOWN_TOPIC_OR_PARTITION,
      'no-such-topic-0': E.UNKNOWN_TOPIC_OR_PARTITION,
    };
    assert.deepEqual(await addV4(producer, true, topics), expected);
    assert.deepEqual(await addV4(producer, false, topics), expected);
    const known = [{ name: TOPIC, partitions: [0] }];
    assert.deepEqual(
      await addV4(producer, true, known),
      { [`${TOPIC}-0`]: E.TRANSACTION_ABORTABLE },
      'not added',
    );
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION while the coordinator loads, before COORDINATOR_LOAD_IN_PROGRESS', async () => {
    const current = await initProducerId();
    const services = (
      broker.broker as unknown as { services: { transactionCoordinator: TransactionCoordinator } }
    ).services;
    loadingOnNext(broker, ApiKey.ADD_PARTITIONS_TO_TXN, services.transactionCoordinator);
    assert.deepEqual(await add(current.producerId, current.producerEpoch), refused);
  });
});
