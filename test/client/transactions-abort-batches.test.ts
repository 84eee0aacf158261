// What a transactional producer does with its batches when the transaction cannot commit, as Kafka 3.9's
// TransactionManager, Sender and RecordAccumulator do, against an in-process broker whose request interceptor
// answers or holds chosen requests (test/helpers/in-process-broker.ts):
// - abortTransaction() fails only the batches never numbered (RecordAccumulator.abortUndrainedBatches); a batch
//   waiting for its retry already has its sequences, so it is sent and the abort waits for it: no epoch bump;
// - any batch that fails inside a transaction asks for an epoch bump (maybeTransitionToErrorState), one that
//   expired before it was ever sent too;
// - a batch the broker refused while the commit is under way gives its sequences back and the partition's later
//   batches, in flight or waiting, move down to fill them (adjustSequencesDueToFailedBatch): no epoch bump;
// - the error reported for the transaction is the latest one (TransactionManager.lastError);
// - after a fatal error every incomplete batch fails at once with it, those in flight too, and the answer that
//   comes back later for one of them changes nothing (Sender.maybeAbortBatches, RecordAccumulator.abortBatches,
//   ProducerBatch.done ignoring the late answer).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DeliveryTimeoutError,
  KafkaClientError,
  KafkaProtocolError,
  TransactionAbortedError,
} from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ProduceRequest, ProduceResponse } from '../../src/protocol/messages/00-produce.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import type { InitProducerIdRequest } from '../../src/protocol/messages/22-init-producer-id.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { batchesOf, produceAnswer, type SeenBatch, until } from '../helpers/produce-proxy.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'txn-abort-batches';

/** A Produce answer with one error code per partition (NONE for the others). */
function answerByPartition(request: ProduceRequest, codes: Record<number, number>): ProduceResponse {
  const answer = produceAnswer(request, ErrorCode.NONE);
  for (const t of answer.responses) for (const p of t.partitionResponses) p.errorCode = codes[p.index] ?? 0;
  return answer;
}

describe('a transactional producer’s batches when the transaction cannot commit', () => {
  let broker: InProcessBroker;
  /** Batches the broker's Produce handler saw, in order. */
  let forwarded: SeenBatch[] = [];
  /** InitProducerId requests, with the producer id and epoch they carried (-1: a new session). */
  let initProducerIds: { producerId: bigint; producerEpoch: number }[] = [];
  /** Answers a Produce request instead of the broker (undefined: the broker handles it). */
  let onProduce: (request: ProduceRequest) => unknown = () => undefined;
  /** Changes the broker's Metadata answers. */
  let onMetadata: (response: MetadataResponse) => void = () => {};
  const open: Producer[] = [];

  before(async () => {
    broker = await startInProcessBroker({
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.INIT_PRODUCER_ID) {
        const body = request.body as InitProducerIdRequest;
        initProducerIds.push({ producerId: body.producerId, producerEpoch: body.producerEpoch });
        return undefined;
      }
      if (request.apiKey === ApiKey.METADATA) {
        return request.handle().then((response) => {
          onMetadata(response as MetadataResponse);
          return response;
        });
      }
      if (request.apiKey !== ApiKey.PRODUCE) return undefined;
      const produce = request.body as ProduceRequest;
      const answer = onProduce(produce);
      if (answer !== undefined) return answer;
      forwarded.push(...batchesOf(produce));
      return undefined;
    });
    const wire = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(wire, TOPIC, { numPartitions: 2, replicationFactor: 1 });
    } finally {
      wire.close();
    }
  });

  after(async () => {
    for (const p of open) await p.close().catch(() => {});
    await broker.stop();
  });

  function reset(): void {
    forwarded = [];
    initProducerIds = [];
    onProduce = () => undefined;
    onMetadata = () => {};
  }

  async function transactionalProducer(id: string, extra: Record<string, unknown> = {}): Promise<Producer> {
    const producer = new Producer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      transactionalId: id,
      ...extra,
    });
    open.push(producer);
    await producer.initTransactions();
    return producer;
  }

  it('abortTransaction() sends a batch waiting for its retry (it has sequences) and fails only the unsent one', async () => {
    reset();
    // A long backoff keeps the retry waiting while abortTransaction() is called.
    const producer = await transactionalProducer('abort-retry', {
      retryBackoffMs: 2000,
      retryBackoffMaxMs: 2000,
    });
    const first = producer.producerIdAndEpoch;
    let refused = 0;
    onProduce = (request) => {
      if (refused > 0) return undefined;
      refused++;
      return produceAnswer(request, ErrorCode.NOT_ENOUGH_REPLICAS);
    };
    producer.beginTransaction();
    const retried = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('retried') });
    retried.catch(() => {});
    await until('the first attempt answered', () => refused === 1);
    // Into the open batch behind the retry: never numbered, never sent.
    const unsent = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('unsent') });
    unsent.catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
    await producer.abortTransaction();

    const written = await retried;
    assert.equal(written.partition, 0, 'the numbered batch was sent during the abort, and written');
    await assert.rejects(unsent, (e: Error) => e instanceof TransactionAbortedError);
    assert.deepEqual(
      forwarded.map((b) => [b.values, b.baseSequence]),
      [[['retried'], 0]],
      'only the numbered batch reached the log, with its sequence',
    );
    assert.equal(initProducerIds.length, 1, 'no epoch bump: nothing of the epoch was left unresolved');
    assert.deepEqual(producer.producerIdAndEpoch, first);

    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('next') });
    await producer.commitTransaction();
    assert.deepEqual(forwarded.at(-1)!.baseSequence, 1, 'the partition goes on after the sent batch');
  });

  it('a batch that expires before it was ever sent makes the abort bump the epoch', async () => {
    reset();
    const producer = await transactionalProducer('expire-unsent', {
      requestTimeoutMs: 1000,
      deliveryTimeoutMs: 1500,
    });
    const first = producer.producerIdAndEpoch;
    // The partition has no leader: its batch waits in the accumulator until delivery.timeout.ms.
    onMetadata = (response) => {
      for (const t of response.topics)
        if (t.name === TOPIC) for (const p of t.partitions) if (p.partitionIndex === 1) p.leaderId = -1;
    };
    producer.beginTransaction();
    await assert.rejects(
      producer.send({ topic: TOPIC, partition: 1, value: Buffer.from('expired') }),
      (e: Error) => e instanceof DeliveryTimeoutError,
    );
    assert.equal(producer.transactionState, 'ABORTABLE_ERROR');
    onMetadata = () => {};
    await producer.abortTransaction();
    // The coordinator may answer the first attempt CONCURRENT_TRANSACTIONS while the abort completes: it is sent again.
    const bumps = initProducerIds.slice(1).map((r) => [Number(r.producerId), r.producerEpoch]);
    assert.ok(bumps.length > 0, 'the abort bumped the epoch (KIP-360)');
    for (const bump of bumps)
      assert.deepEqual(
        bump,
        [first.producerId, first.producerEpoch],
        'with the current producer id and epoch',
      );
    assert.equal(producer.producerIdAndEpoch.producerEpoch, first.producerEpoch + 1);
    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 1, value: Buffer.from('next') });
    await producer.commitTransaction();
  });

  it('a batch refused during the commit moves the partition’s later in-flight batch down: no epoch bump', async () => {
    reset();
    const producer = await transactionalProducer('adjust-sequences');
    const first = producer.producerIdAndEpoch;
    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-1') });
    await producer.commitTransaction();

    // The next transaction's first batch is held; the second goes behind it and is answered out of sequence.
    let release: ((answer: ProduceResponse) => void) | null = null;
    let held: ProduceRequest | null = null;
    onProduce = (request) => {
      if (held !== null) return undefined;
      held = request;
      return new Promise<ProduceResponse>((resolve) => (release = resolve));
    };
    producer.beginTransaction();
    const refusedRecord = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('refused') });
    refusedRecord.catch(() => {});
    await until('the first batch held', () => held !== null);
    const moved = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('moved-down') });
    moved.catch(() => {});
    await until('the second batch sent', () => forwarded.some((b) => b.values[0] === 'moved-down'));
    assert.equal(forwarded.at(-1)!.baseSequence, 2);
    const commit = producer.commitTransaction();
    commit.catch(() => {});
    release!(produceAnswer(held!, ErrorCode.INVALID_RECORD));

    await assert.rejects(
      refusedRecord,
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.INVALID_RECORD,
    );
    await moved;
    const last = forwarded.at(-1)!;
    assert.deepEqual([last.values, last.baseSequence], [['moved-down'], 1], 'sent again one sequence down');
    await assert.rejects(commit, /INVALID_RECORD|invalid/i);
    await producer.abortTransaction();
    assert.equal(initProducerIds.length, 1, 'no epoch bump');
    assert.deepEqual(producer.producerIdAndEpoch, first);

    producer.beginTransaction();
    await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-2') });
    await producer.commitTransaction();
    assert.deepEqual(
      [forwarded.at(-1)!.values, forwarded.at(-1)!.baseSequence],
      [['committed-2'], 2],
      'the partition goes on after the last batch written',
    );
  });

  it('the error a broken transaction reports is the latest one, as Kafka’s lastError', async () => {
    reset();
    const producer = await transactionalProducer('latest-error', { lingerMs: 60_000 });
    onProduce = (request) =>
      answerByPartition(request, { 0: ErrorCode.INVALID_RECORD, 1: ErrorCode.INVALID_TIMESTAMP });
    producer.beginTransaction();
    const r0 = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('p0') });
    const r1 = producer.send({ topic: TOPIC, partition: 1, value: Buffer.from('p1') });
    r0.catch(() => {});
    r1.catch(() => {});
    await producer.flush();
    await assert.rejects(
      r0,
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.INVALID_RECORD,
    );
    await assert.rejects(
      r1,
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.INVALID_TIMESTAMP,
    );
    assert.equal(producer.transactionState, 'ABORTABLE_ERROR');
    await assert.rejects(producer.commitTransaction(), (e: Error) => {
      assert.ok(e instanceof KafkaClientError);
      const cause = e.cause as KafkaProtocolError;
      assert.equal(cause.code, ErrorCode.INVALID_TIMESTAMP, 'the latest error, not the first');
      return true;
    });
    await producer.abortTransaction();
  });
  it('a fatal error fails the batches in flight at once with it; their late answers change nothing', async () => {
    reset();
    // Partition 1 is led by a "broker 1" at the same address: the client opens a connection of its own to it, so
    // its answer does not wait behind partition 0's held one (a connection's answers come in order).
    onMetadata = (response) => {
      const self = response.brokers.find((b) => b.nodeId === 0)!;
      if (!response.brokers.some((b) => b.nodeId === 1)) response.brokers.push({ ...self, nodeId: 1 });
      for (const t of response.topics)
        if (t.name === TOPIC) for (const p of t.partitions) if (p.partitionIndex === 1) p.leaderId = 1;
    };
    const producer = await transactionalProducer('fatal-in-flight');
    // Partition 0's request is held; partition 1's, sent behind it, is answered PRODUCER_FENCED.
    let release: ((answer: ProduceResponse) => void) | null = null;
    let held: ProduceRequest | null = null;
    let fence = false;
    onProduce = (request) => {
      const partitions = batchesOf(request).map((b) => b.partition);
      if (held === null && partitions.includes(0)) {
        held = request;
        return new Promise<ProduceResponse>((resolve) => (release = resolve));
      }
      return fence ? produceAnswer(request, ErrorCode.PRODUCER_FENCED) : undefined;
    };
    producer.beginTransaction();
    // Partition 1 joins the transaction first: AddPartitionsToTxn goes to the coordinator on broker 0's
    // connection, which the held request is about to block.
    await producer.send({ topic: TOPIC, partition: 1, value: Buffer.from('written') });
    fence = true;
    const inFlight = producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('in-flight') });
    let inFlightOutcome: 'pending' | Error | 'written' = 'pending';
    inFlight.then(
      () => (inFlightOutcome = 'written'),
      (e: Error) => (inFlightOutcome = e),
    );
    await until('the partition 0 batch held', () => held !== null);
    const fencedRecord = producer.send({ topic: TOPIC, partition: 1, value: Buffer.from('fenced') });
    await assert.rejects(
      fencedRecord,
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.PRODUCER_FENCED,
    );
    assert.equal(producer.transactionState, 'FATAL_ERROR');
    await until(
      'the in-flight record failed before its answer came',
      () => inFlightOutcome !== 'pending',
      2000,
    );
    const failed = inFlightOutcome as unknown as Error;
    assert.ok(failed instanceof KafkaProtocolError, `failed with ${failed}`);
    assert.equal(failed.code, ErrorCode.PRODUCER_FENCED, 'with the fatal error');
    // flush() waits for no batch any more: each has its outcome.
    await producer.flush();

    // The broker's answer, a success, arrives after the abort: ignored.
    release!(produceAnswer(held!, ErrorCode.NONE, 7n));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(inFlightOutcome, failed, 'the late success does not change the outcome');
    assert.equal(producer.transactionState, 'FATAL_ERROR');
    await assert.rejects(
      producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('after') }),
      (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.PRODUCER_FENCED,
    );
  });
});
