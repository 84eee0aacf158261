// close() of a transactional producer with a transaction still open, against a real broker process. Kafka's Sender,
// on a graceful close, sends what is buffered and then aborts the open transaction ("Aborting incomplete
// transaction due to shutdown", Sender.run), so read_committed consumers go on at once; a transaction left open
// would hold the partition's last stable offset until the coordinator times it out (transaction.timeout.ms).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic } from '../helpers/wire-client.js';

const suite = useBrokerWithClient({
  overrides: {
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
  },
});

/** Far longer than the test waits: only an abort from the producer can end the transaction in time. */
const TRANSACTION_TIMEOUT_MS = 60_000;

/** The partition's last stable offset once it reaches `expected`, or the last one seen after `waitMs`. */
async function lastStableOffset(topic: string, expected: number, waitMs: number): Promise<number> {
  const admin = new Admin({ bootstrapServers: suite.broker.bootstrap });
  try {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const [answer] = await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }], {
        isolationLevel: 'read_committed',
      });
      if (answer!.offset >= expected || Date.now() >= deadline) return answer!.offset;
      await sleep(100);
    }
  } finally {
    await admin.close();
  }
}

function transactional(transactionalId: string): Producer {
  return new Producer({
    bootstrapServers: suite.broker.bootstrap,
    transactionalId,
    transactionTimeoutMs: TRANSACTION_TIMEOUT_MS,
  });
}

describe('close() with a transaction open', () => {
  it('sends the buffered records, then aborts the transaction', async () => {
    const topic = 'txn-close-open';
    await createTopic(suite.client, topic, { numPartitions: 1 });
    const producer = transactional('close-open');
    let closed = false;
    try {
      await producer.initTransactions();
      producer.beginTransaction();
      const acked = producer.send({ topic, value: Buffer.from('acked') });
      await acked;
      // Buffered when close() is called: it is sent (and aborted with the rest), not failed.
      const buffered = producer.send({ topic, value: Buffer.from('buffered') });
      await producer.close();
      closed = true;
      assert.equal((await buffered).offset, 1);
      // Two records and the abort marker: the transaction ended, read_committed readers go past it.
      assert.equal(await lastStableOffset(topic, 3, 5_000), 3);
    } finally {
      if (!closed) await producer.close(0);
    }
  });

  it('aborts a transaction left in an abortable error', async () => {
    const topic = 'txn-close-abortable';
    await createTopic(suite.client, topic, { numPartitions: 1, configs: { 'max.message.bytes': '1000' } });
    const producer = transactional('close-abortable');
    let closed = false;
    try {
      await producer.initTransactions();
      producer.beginTransaction();
      await producer.send({ topic, value: Buffer.from('acked') });
      // A record the topic refuses makes the transaction abortable, with a record already written in it.
      await assert.rejects(producer.send({ topic, value: Buffer.alloc(2_000) }), /MESSAGE_TOO_LARGE/);
      assert.equal(producer.transactionState, 'ABORTABLE_ERROR');
      await producer.close();
      closed = true;
      assert.equal(await lastStableOffset(topic, 2, 5_000), 2);
    } finally {
      if (!closed) await producer.close(0);
    }
  });

  it('close(0) aborts nothing, as Kafka forced close', async () => {
    const topic = 'txn-close-forced';
    await createTopic(suite.client, topic, { numPartitions: 1 });
    const producer = transactional('close-forced');
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.send({ topic, value: Buffer.from('acked') });
    await producer.close(0);
    // The transaction stays open until its timeout: nothing is stable past the first record.
    assert.equal(await lastStableOffset(topic, 1, 1_000), 0);
  });
});
