// Which errors end a transactional producer and which only its transaction, as Kafka 3.9's TransactionManager
// decides: a failed record batch is fatal only for CLUSTER_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
// PRODUCER_FENCED and UNSUPPORTED_VERSION (maybeTransitionToErrorState), so INVALID_PRODUCER_EPOCH from a Produce is
// abortable (KIP-588); each coordinator request has its own classes (EndTxnHandler: INVALID_PRODUCER_EPOCH is
// PRODUCER_FENCED and fatal, UNKNOWN_PRODUCER_ID abortable with an epoch bump; InitProducerIdHandler: an
// authorization error lets initTransactions() be called again). Against an in-process broker: a real transaction
// timeout on its coordinator, and answers made up by its request interceptor.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Consumer, type IsolationLevel } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ProduceRequest } from '../../src/protocol/messages/00-produce.js';
import type { InitProducerIdRequest } from '../../src/protocol/messages/22-init-producer-id.js';
import type { EndTxnRequest } from '../../src/protocol/messages/26-end-txn.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { produceAnswer } from '../helpers/produce-proxy.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

let broker: InProcessBroker;
let wire: WireClient;

before(async () => {
  broker = await startInProcessBroker({
    'transaction.state.log.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    // The coordinator looks for timed-out transactions every 100 ms (Kafka's default is 10 s).
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': 100,
  });
  wire = await WireClient.connect(broker.host, broker.port);
});

after(async () => {
  wire?.close();
  await broker?.stop();
});

function producer(transactionalId: string, transactionTimeoutMs = 30_000): Producer {
  return new Producer({
    bootstrapServers: `127.0.0.1:${broker.port}`,
    transactionalId,
    transactionTimeoutMs,
    maxBlockMs: 10_000,
  });
}

function hasCode(code: number): (e: Error) => boolean {
  return (e) => e instanceof KafkaProtocolError && e.code === code;
}

/** Every value of partition 0 up to its end (the last stable offset for read_committed). */
async function readAll(topic: string, isolationLevel: IsolationLevel): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${broker.port}`, isolationLevel });
  try {
    const tp = { topic, partition: 0 };
    consumer.assign([tp]);
    consumer.seek(tp, 0);
    const [end] = await consumer.endOffsets([tp]);
    const seen: string[] = [];
    const deadline = Date.now() + 20_000;
    while ((await consumer.position(tp)) < end!.offset) {
      assert.ok(Date.now() < deadline, `${topic} was not read to its end in time`);
      for (const r of await consumer.poll(200)) seen.push(r.value!.toString());
    }
    return seen;
  } finally {
    await consumer.close();
  }
}

/** Waits until the partition's last stable offset passes `offset` (the transaction holding it has ended). */
async function awaitStableBeyond(topic: string, offset: number): Promise<void> {
  const consumer = new Consumer({
    bootstrapServers: `127.0.0.1:${broker.port}`,
    isolationLevel: 'read_committed',
  });
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [end] = await consumer.endOffsets([{ topic, partition: 0 }]);
      if (end!.offset > offset) return;
      assert.ok(Date.now() < deadline, 'the coordinator did not abort the timed-out transaction in time');
      await sleep(100);
    }
  } finally {
    await consumer.close();
  }
}

describe('transactional producer error classes', () => {
  it('a transaction the coordinator timed out: the next record fails INVALID_PRODUCER_EPOCH and only the transaction is lost; the abort is answered PRODUCER_FENCED (fatal), as on Kafka 3.9', async () => {
    const topic = 'txn-timed-out';
    await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
    /** The transaction coordinator requests the producer sends, in order. */
    const sent: string[] = [];
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.END_TXN) {
        const b = request.body as EndTxnRequest;
        sent.push(`EndTxn(committed=${b.committed}) ${b.producerId}/${b.producerEpoch}`);
      } else if (request.apiKey === ApiKey.INIT_PRODUCER_ID) {
        const b = request.body as InitProducerIdRequest;
        sent.push(`InitProducerId ${b.producerId}/${b.producerEpoch}`);
      }
      return undefined;
    });
    const timedOut = producer('txn-timed-out-1', 1000);
    const successor = producer('txn-timed-out-1');
    try {
      await timedOut.initTransactions();
      const { producerId, producerEpoch } = timedOut.producerIdAndEpoch;
      timedOut.beginTransaction();
      await timedOut.send({ topic, partition: 0, value: Buffer.from('timed-out') });
      // The coordinator aborts the transaction under epoch + 1 after transaction.timeout.ms.
      await awaitStableBeyond(topic, 0);

      const late = timedOut.send({ topic, partition: 0, value: Buffer.from('late') });
      await assert.rejects(late, hasCode(ErrorCode.INVALID_PRODUCER_EPOCH));
      assert.equal(
        timedOut.transactionState,
        'ABORTABLE_ERROR',
        'INVALID_PRODUCER_EPOCH from a Produce is abortable',
      );
      await assert.rejects(timedOut.commitTransaction(), hasCode(ErrorCode.INVALID_PRODUCER_EPOCH));
      assert.equal(timedOut.transactionState, 'ABORTABLE_ERROR');

      // Kafka 3.9 sends EndTxn(abort) under the old epoch; its coordinator, whose epoch moved on, answers
      // PRODUCER_FENCED, and the epoch bump queued behind it is never sent.
      sent.length = 0;
      await assert.rejects(timedOut.abortTransaction(), hasCode(ErrorCode.PRODUCER_FENCED));
      assert.deepEqual(sent, [`EndTxn(committed=false) ${producerId}/${producerEpoch}`]);
      assert.equal(timedOut.transactionState, 'FATAL_ERROR');
      assert.throws(() => timedOut.beginTransaction(), hasCode(ErrorCode.PRODUCER_FENCED));

      await successor.initTransactions();
      assert.equal(successor.producerIdAndEpoch.producerId, producerId);
      assert.ok(successor.producerIdAndEpoch.producerEpoch > producerEpoch + 1, 'past the coordinator bump');
      successor.beginTransaction();
      await successor.send({ topic, partition: 0, value: Buffer.from('committed') });
      await successor.commitTransaction();
    } finally {
      broker.interception.clear();
      await timedOut.close();
      await successor.close();
    }
    assert.deepEqual(await readAll(topic, 'read_committed'), ['committed']);
    assert.deepEqual(await readAll(topic, 'read_uncommitted'), ['timed-out', 'committed']);
  });

  for (const code of [ErrorCode.INVALID_TXN_STATE, ErrorCode.TRANSACTION_COORDINATOR_FENCED]) {
    const name = Object.entries(ErrorCode).find(([, c]) => c === code)![0];
    it(`a Produce answered ${name} makes the transaction abortable: abort, then the next one commits`, async () => {
      const topic = `txn-produce-${code}`;
      await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
      let failNext = false;
      broker.interception.set((request) => {
        if (request.apiKey !== ApiKey.PRODUCE || !failNext) return undefined;
        failNext = false;
        return produceAnswer(request.body as ProduceRequest, code);
      });
      const p = producer(`txn-produce-${code}`);
      try {
        await p.initTransactions();
        const first = p.producerIdAndEpoch;
        p.beginTransaction();
        failNext = true;
        await assert.rejects(p.send({ topic, partition: 0, value: Buffer.from('refused') }), hasCode(code));
        assert.equal(p.transactionState, 'ABORTABLE_ERROR');
        await p.abortTransaction();
        assert.deepEqual(p.producerIdAndEpoch, { ...first, producerEpoch: first.producerEpoch + 1 });
        p.beginTransaction();
        await p.send({ topic, partition: 0, value: Buffer.from('committed') });
        await p.commitTransaction();
      } finally {
        broker.interception.clear();
        await p.close();
      }
      assert.deepEqual(await readAll(topic, 'read_committed'), ['committed']);
    });
  }

  it('a Produce answered PRODUCER_FENCED is fatal', async () => {
    const topic = 'txn-produce-fenced';
    await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
    broker.interception.set((request) =>
      request.apiKey === ApiKey.PRODUCE
        ? produceAnswer(request.body as ProduceRequest, ErrorCode.PRODUCER_FENCED)
        : undefined,
    );
    const p = producer('txn-produce-fenced');
    try {
      await p.initTransactions();
      p.beginTransaction();
      await assert.rejects(
        p.send({ topic, partition: 0, value: Buffer.from('x') }),
        hasCode(ErrorCode.PRODUCER_FENCED),
      );
      assert.equal(p.transactionState, 'FATAL_ERROR');
      await assert.rejects(p.abortTransaction(), hasCode(ErrorCode.PRODUCER_FENCED));
    } finally {
      broker.interception.clear();
      await p.close(0);
    }
  });

  it('EndTxn answered INVALID_PRODUCER_EPOCH is fatal and reported as PRODUCER_FENCED (EndTxnHandler)', async () => {
    const topic = 'txn-endtxn-epoch';
    await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
    broker.interception.set((request) =>
      request.apiKey === ApiKey.END_TXN
        ? { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_PRODUCER_EPOCH }
        : undefined,
    );
    const p = producer('txn-endtxn-epoch');
    try {
      await p.initTransactions();
      p.beginTransaction();
      await p.send({ topic, partition: 0, value: Buffer.from('x') });
      await assert.rejects(p.commitTransaction(), hasCode(ErrorCode.PRODUCER_FENCED));
      assert.equal(p.transactionState, 'FATAL_ERROR');
    } finally {
      broker.interception.clear();
      await p.close(0);
    }
  });

  it('EndTxn(commit) answered UNKNOWN_PRODUCER_ID is abortable; the abort bumps the epoch and the producer goes on', async () => {
    const topic = 'txn-endtxn-unknown-pid';
    await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
    const sent: string[] = [];
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.INIT_PRODUCER_ID) {
        const b = request.body as InitProducerIdRequest;
        sent.push(`InitProducerId ${b.producerId}/${b.producerEpoch}`);
      }
      if (request.apiKey !== ApiKey.END_TXN) return undefined;
      const b = request.body as EndTxnRequest;
      sent.push(`EndTxn(committed=${b.committed}) ${b.producerId}/${b.producerEpoch}`);
      return b.committed ? { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_PRODUCER_ID } : undefined;
    });
    const p = producer('txn-endtxn-unknown-pid');
    try {
      await p.initTransactions();
      const { producerId: id, producerEpoch: epoch } = p.producerIdAndEpoch;
      p.beginTransaction();
      await p.send({ topic, partition: 0, value: Buffer.from('aborted') });
      await assert.rejects(p.commitTransaction(), hasCode(ErrorCode.UNKNOWN_PRODUCER_ID));
      assert.equal(p.transactionState, 'ABORTABLE_ERROR');
      await p.abortTransaction();
      // InitProducerId may be answered CONCURRENT_TRANSACTIONS while the abort markers are written, and sent again.
      assert.deepEqual(
        [...new Set(sent.slice(1))],
        [
          `EndTxn(committed=true) ${id}/${epoch}`,
          `EndTxn(committed=false) ${id}/${epoch}`,
          `InitProducerId ${id}/${epoch}`,
        ],
      );
      broker.interception.clear();
      p.beginTransaction();
      await p.send({ topic, partition: 0, value: Buffer.from('committed') });
      await p.commitTransaction();
    } finally {
      broker.interception.clear();
      await p.close();
    }
    assert.deepEqual(await readAll(topic, 'read_committed'), ['committed']);
  });

  it('EndTxn(commit) answered INVALID_PRODUCER_ID_MAPPING: the abort skips EndTxn and goes to InitProducerId with the current id and epoch', async () => {
    const topic = 'txn-endtxn-pid-mapping';
    await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
    const sent: string[] = [];
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.INIT_PRODUCER_ID) {
        const b = request.body as InitProducerIdRequest;
        sent.push(`InitProducerId ${b.producerId}/${b.producerEpoch}`);
      }
      if (request.apiKey !== ApiKey.END_TXN) return undefined;
      const b = request.body as EndTxnRequest;
      sent.push(`EndTxn(committed=${b.committed}) ${b.producerId}/${b.producerEpoch}`);
      return b.committed
        ? { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_PRODUCER_ID_MAPPING }
        : undefined;
    });
    const p = producer('txn-endtxn-pid-mapping');
    try {
      await p.initTransactions();
      const { producerId: id, producerEpoch: epoch } = p.producerIdAndEpoch;
      p.beginTransaction();
      await p.send({ topic, partition: 0, value: Buffer.from('aborted') });
      await assert.rejects(p.commitTransaction(), hasCode(ErrorCode.INVALID_PRODUCER_ID_MAPPING));
      assert.equal(p.transactionState, 'ABORTABLE_ERROR');
      // The coordinator still has the transaction open here (the answer was made up), so it fences the epoch
      // to abort it, and the bump is refused PRODUCER_FENCED, as Kafka's would be; what matters is what was sent.
      await p.abortTransaction().catch(() => {});
      assert.deepEqual(
        [...new Set(sent.slice(1))],
        [`EndTxn(committed=true) ${id}/${epoch}`, `InitProducerId ${id}/${epoch}`],
      );
    } finally {
      broker.interception.clear();
      await p.close(0);
    }
  });

  it("EndTxn answered a retriable NOT_ENOUGH_REPLICAS is sent again (Kafka's RetriableException), and commits", async () => {
    const topic = 'txn-endtxn-retriable';
    await createTopic(wire, topic, { numPartitions: 1, replicationFactor: 1 });
    let refuse = true;
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.END_TXN || !refuse) return undefined;
      refuse = false;
      return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_ENOUGH_REPLICAS };
    });
    const p = producer('txn-endtxn-retriable');
    try {
      await p.initTransactions();
      p.beginTransaction();
      await p.send({ topic, partition: 0, value: Buffer.from('committed') });
      await p.commitTransaction();
      assert.equal(p.transactionState, 'READY');
    } finally {
      broker.interception.clear();
      await p.close();
    }
    assert.deepEqual(await readAll(topic, 'read_committed'), ['committed']);
  });

  it('InitProducerId answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED: initTransactions() may be called again (KAFKA-13668)', async () => {
    let refuse = true;
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.INIT_PRODUCER_ID || !refuse) return undefined;
      refuse = false;
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        producerId: -1n,
        producerEpoch: -1,
      };
    });
    const p = producer('txn-init-unauthorized');
    try {
      await assert.rejects(p.initTransactions(), hasCode(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
      assert.notEqual(p.transactionState, 'FATAL_ERROR');
      await p.initTransactions();
      assert.equal(p.transactionState, 'READY');
    } finally {
      broker.interception.clear();
      await p.close();
    }
  });
});
