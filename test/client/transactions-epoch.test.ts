// KIP-360 in the transactional producer, against a broker whose request interceptor answers a chosen Produce
// request itself (test/helpers/in-process-broker.ts; no proxy in between): a batch
// that fails after it was numbered (the broker never saw it, so its sequences leave a gap) makes the transaction
// abortable; abortTransaction() then bumps the epoch with InitProducerId carrying the current producer id and
// epoch, and the next transaction's batches start again at sequence 0 of the new epoch (without the bump the
// broker would refuse them as out of sequence). read_committed sees only the committed transactions.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ProduceRequest } from '../../src/protocol/messages/00-produce.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { batchesOf, produceAnswer, type SeenBatch } from '../helpers/produce-proxy.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'txn-epoch';

it('an abortable error with a sequence gap: the abort bumps the epoch (KIP-360) and the producer goes on', async () => {
  const broker = await startInProcessBroker({
    'transaction.state.log.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
  });
  /** Batches the broker's Produce handler saw, in order. */
  const forwarded: SeenBatch[] = [];
  /** Set to catch the next Produce request: it is answered by the test and never reaches the handler. */
  let holdNext: ((request: ProduceRequest) => void) | null = null;
  broker.interception.set((request) => {
    if (request.apiKey !== ApiKey.PRODUCE) return undefined;
    const produce = request.body as ProduceRequest;
    const catcher = holdNext;
    if (catcher !== null && batchesOf(produce).some((b) => b.partition === 0)) {
      holdNext = null;
      catcher(produce);
      return produceAnswer(produce, ErrorCode.INVALID_RECORD);
    }
    forwarded.push(...batchesOf(produce));
    return undefined;
  });
  const wire = await WireClient.connect(broker.host, broker.port);
  const producer = new Producer({
    bootstrapServers: `127.0.0.1:${broker.port}`,
    transactionalId: 'txn-epoch-1',
  });
  try {
    await createTopic(wire, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    await producer.initTransactions();
    const first = producer.producerIdAndEpoch;
    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-1') });
    await producer.commitTransaction();

    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('aborted-1') });
    const caught = new Promise<ProduceRequest>((resolve) => (holdNext = resolve));
    const lost = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('never-written') });
    const held = await caught;
    assert.deepEqual(
      batchesOf(held).flatMap((b) => b.values),
      ['never-written'],
    );
    await assert.rejects(
      lost,
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.INVALID_RECORD,
    );
    assert.equal(producer.transactionState, 'ABORTABLE_ERROR');
    await assert.rejects(producer.commitTransaction(), /must be aborted/);
    await producer.abortTransaction();
    const bumped = producer.producerIdAndEpoch;
    assert.equal(bumped.producerId, first.producerId, 'the same producer id');
    assert.equal(bumped.producerEpoch, first.producerEpoch + 1, 'the next epoch');

    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-2') });
    await producer.commitTransaction();
    const last = forwarded.at(-1)!;
    assert.deepEqual(
      [last.values, last.epoch, last.baseSequence],
      [['committed-2'], first.producerEpoch + 1, 0],
      'the new epoch starts its sequences at 0',
    );
    const consumer = new Consumer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      isolationLevel: 'read_committed',
    });
    try {
      consumer.assign([{ topic: TOPIC, partition: 0 }]);
      consumer.seek({ topic: TOPIC, partition: 0 }, 0);
      const seen: string[] = [];
      const deadline = Date.now() + 20_000;
      while (seen.length < 2 && Date.now() < deadline)
        for (const r of await consumer.poll(200)) seen.push(r.value!.toString());
      for (const r of await consumer.poll(500)) seen.push(r.value!.toString());
      assert.deepEqual(seen, ['committed-1', 'committed-2']);
    } finally {
      await consumer.close();
    }
  } finally {
    await producer.close();
    wire.close();
    await broker.stop();
  }
});

it('a batch refused while the commit is under way asks for no epoch bump: the abort sends no InitProducerId', async () => {
  const broker = await startInProcessBroker({
    'transaction.state.log.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
  });
  const forwarded: SeenBatch[] = [];
  let initProducerIds = 0;
  let refuseNext = false;
  broker.interception.set((request) => {
    if (request.apiKey === ApiKey.INIT_PRODUCER_ID) initProducerIds++;
    if (request.apiKey !== ApiKey.PRODUCE) return undefined;
    const produce = request.body as ProduceRequest;
    if (refuseNext) {
      refuseNext = false;
      return produceAnswer(produce, ErrorCode.INVALID_RECORD);
    }
    forwarded.push(...batchesOf(produce));
    return undefined;
  });
  const wire = await WireClient.connect(broker.host, broker.port);
  // A long linger keeps each batch back until commitTransaction() flushes it: it fails while COMMITTING.
  const producer = new Producer({
    bootstrapServers: `127.0.0.1:${broker.port}`,
    transactionalId: 'txn-epoch-completing',
    lingerMs: 60_000,
  });
  try {
    await createTopic(wire, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    await producer.initTransactions();
    const first = producer.producerIdAndEpoch;
    producer.beginTransaction();
    const committed1 = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-1') });
    await producer.commitTransaction();
    await committed1;

    producer.beginTransaction();
    const lost = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('refused-in-commit') });
    lost.catch(() => {});
    refuseNext = true;
    await assert.rejects(producer.commitTransaction(), /INVALID_RECORD|invalid/i);
    await assert.rejects(
      lost,
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.INVALID_RECORD,
    );
    assert.equal(producer.transactionState, 'ABORTABLE_ERROR');
    await producer.abortTransaction();
    assert.equal(initProducerIds, 1, 'only initTransactions() sent InitProducerId');
    assert.deepEqual(producer.producerIdAndEpoch, first, 'the epoch did not move');

    producer.beginTransaction();
    const committed2 = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-2') });
    await producer.commitTransaction();
    await committed2;
    const last = forwarded.at(-1)!;
    assert.deepEqual(
      [last.values, last.epoch, last.baseSequence],
      [['committed-2'], first.producerEpoch, 1],
      'the refused batch gave its sequence back: the next one follows the last written',
    );
  } finally {
    await producer.close();
    wire.close();
    await broker.stop();
  }
});
