// The client's transactional Producer against a real broker process: what a committed transaction wrote is
// visible to read_committed consumers (Brook's and kcat's, librdkafka), an aborted one never; a second producer
// with the same transactional.id fences the first, whose later calls all fail; consumer offsets sent to a
// transaction count only when it commits; calls out of order are refused with Kafka's state errors.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerRecord, type IsolationLevel } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
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

function producer(transactionalId: string): Producer {
  return new Producer({
    bootstrapServers: suite.broker.bootstrap,
    transactionalId,
    transactionTimeoutMs: 20_000,
    maxBlockMs: 20_000,
  });
}

/** Every value of a partition up to its end (its last stable offset for read_committed). */
async function readAll(topic: string, partitions: number, isolationLevel: IsolationLevel): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: suite.broker.bootstrap, isolationLevel });
  try {
    const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    consumer.assign(tps);
    for (const tp of tps) consumer.seek(tp, 0);
    const ends = await consumer.endOffsets(tps);
    const out: ConsumerRecord[] = [];
    const deadline = Date.now() + 20_000;
    const done = async () => {
      for (const e of ends) if ((await consumer.position(e)) < e.offset) return false;
      return true;
    };
    while (!(await done())) {
      assert.ok(Date.now() < deadline, 'the partitions were not read to their end in time');
      out.push(...(await consumer.poll(200)));
    }
    return out.map((r) => `${r.partition}:${r.value?.toString()}`).sort();
  } finally {
    await consumer.close();
  }
}

function kcat(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('kcat', args, { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`kcat failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

describe('transactional producer', () => {
  it('a committed transaction is read by read_committed consumers (Brook and kcat), an aborted one is not', async () => {
    const topic = 'txn-visibility';
    await createTopic(suite.client, topic, { numPartitions: 3, replicationFactor: 1 });
    const p = producer('txn-visibility-1');
    try {
      await p.initTransactions();
      p.beginTransaction();
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < 30; i++)
        sends.push(p.send({ topic, partition: i % 3, value: Buffer.from(`c${i}`) }));
      await p.commitTransaction();
      await Promise.all(sends);

      p.beginTransaction();
      const aborted = [];
      for (let i = 0; i < 30; i++) {
        aborted.push(p.send({ topic, partition: i % 3, value: Buffer.from(`a${i}`) }).catch((e: Error) => e));
      }
      // Some are written before the abort: they stay in the log, invisible to read_committed.
      await p.flush();
      await p.abortTransaction();
      await Promise.all(aborted);

      p.beginTransaction();
      await p.send({ topic, partition: 0, value: Buffer.from('last') });
      await p.commitTransaction();
    } finally {
      await p.close();
    }
    const committed = [...Array.from({ length: 30 }, (_, i) => `${i % 3}:c${i}`), '0:last'].sort();
    assert.deepEqual(await readAll(topic, 3, 'read_committed'), committed);
    const uncommitted = await readAll(topic, 3, 'read_uncommitted');
    assert.equal(uncommitted.length, 61, 'the aborted records are in the log');

    // librdkafka's read_committed consumer sees exactly the committed records.
    const out = await kcat([
      '-b',
      suite.broker.bootstrap,
      '-C',
      '-t',
      topic,
      '-o',
      'beginning',
      '-e',
      '-q',
      '-X',
      'isolation.level=read_committed',
      '-f',
      '%p:%s\\n',
    ]);
    assert.deepEqual(out.trim().split('\n').sort(), committed);
  });

  it('a new producer with the same transactional.id fences the old one, whose transaction never shows', async () => {
    const topic = 'txn-fencing';
    await createTopic(suite.client, topic, { numPartitions: 1, replicationFactor: 1 });
    const zombie = producer('txn-fencing-1');
    const successor = producer('txn-fencing-1');
    try {
      await zombie.initTransactions();
      zombie.beginTransaction();
      await zombie.send({ topic, partition: 0, value: Buffer.from('zombie-1') });

      await successor.initTransactions();
      assert.ok(successor.producerIdAndEpoch.producerEpoch > zombie.producerIdAndEpoch.producerEpoch);

      // The zombie's next write is refused INVALID_PRODUCER_EPOCH, which only dooms its transaction (Kafka's
      // maybeTransitionToErrorState, KIP-588); its abort is then answered PRODUCER_FENCED by the coordinator, and
      // the zombie is in its fatal state for good.
      const late = zombie.send({ topic, partition: 0, value: Buffer.from('zombie-2') });
      await assert.rejects(late, (e: Error) => e instanceof KafkaProtocolError && isFenced(e.code));
      assert.equal(zombie.transactionState, 'ABORTABLE_ERROR');
      await assert.rejects(zombie.commitTransaction(), /INVALID_PRODUCER_EPOCH/);
      await assert.rejects(
        zombie.abortTransaction(),
        (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.PRODUCER_FENCED,
      );
      assert.equal(zombie.transactionState, 'FATAL_ERROR');
      assert.throws(() => zombie.beginTransaction(), /fatal error state/);
      await assert.rejects(
        zombie.send({ topic, partition: 0, value: Buffer.from('x') }),
        /fatal error state/,
      );
      await assert.rejects(zombie.abortTransaction(), /fatal error state/);

      successor.beginTransaction();
      await successor.send({ topic, partition: 0, value: Buffer.from('successor') });
      await successor.commitTransaction();
    } finally {
      await zombie.close();
      await successor.close();
    }
    assert.deepEqual(await readAll(topic, 1, 'read_committed'), ['0:successor']);
  });

  it('consumer offsets sent to a transaction are committed only when it commits', async () => {
    const input = 'txn-offsets-in';
    const output = 'txn-offsets-out';
    const groupId = 'txn-offsets-group';
    await createTopic(suite.client, input, { numPartitions: 1, replicationFactor: 1 });
    await createTopic(suite.client, output, { numPartitions: 1, replicationFactor: 1 });
    const plain = new Producer({ bootstrapServers: suite.broker.bootstrap });
    for (let i = 0; i < 10; i++)
      await plain.send({ topic: input, partition: 0, value: Buffer.from(`in${i}`) });
    await plain.close();

    const admin = new Admin({ bootstrapServers: suite.broker.bootstrap });
    const consumer = new Consumer({
      bootstrapServers: suite.broker.bootstrap,
      groupId,
      isolationLevel: 'read_committed',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
    });
    const p = producer('txn-offsets-1');
    const committedOffset = async () =>
      (await admin.listConsumerGroupOffsets(groupId)).find((o) => o.topic === input)?.offset ?? -1;
    try {
      await p.initTransactions();
      consumer.subscribe([input]);
      const records: ConsumerRecord[] = [];
      const deadline = Date.now() + 30_000;
      while (records.length < 10) {
        assert.ok(Date.now() < deadline, 'the input was not consumed in time');
        records.push(...(await consumer.poll(200)));
      }
      const group = consumer.groupMetadata();
      assert.equal(group.groupId, groupId);
      assert.ok(group.generationId >= 0 && group.memberId !== '', 'the member is in a generation');
      const transform = async () => {
        p.beginTransaction();
        for (const r of records)
          await p.send({ topic: output, partition: 0, value: Buffer.from(`out-${r.value}`) });
        await p.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: 10 }], group);
      };

      await transform();
      await p.abortTransaction();
      assert.equal(await committedOffset(), -1, 'an aborted transaction commits no offset');

      await transform();
      await p.commitTransaction();
      // EndTxn is answered once the commit is decided; the group coordinator applies the offsets when the COMMIT
      // marker reaches __consumer_offsets, a moment later (as in Kafka): wait for it rather than read at once.
      const committedBy = Date.now() + 30_000;
      while ((await committedOffset()) !== 10) {
        assert.ok(Date.now() < committedBy, "the committed transaction's offset never showed");
        await sleep(50);
      }

      // A generation the group has left is refused (KIP-447): the transaction can only be aborted.
      p.beginTransaction();
      await p.send({ topic: output, partition: 0, value: Buffer.from('stale') });
      await assert.rejects(
        p.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: 10 }], {
          ...group,
          generationId: group.generationId + 5,
        }),
        (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.ILLEGAL_GENERATION,
      );
      assert.equal(p.transactionState, 'ABORTABLE_ERROR');
      await assert.rejects(p.commitTransaction(), /must be aborted/);
      await p.abortTransaction();
      assert.equal(p.transactionState, 'READY');
    } finally {
      await consumer.close();
      await p.close();
      await admin.close();
    }
    const out = await readAll(output, 1, 'read_committed');
    assert.deepEqual(out, Array.from({ length: 10 }, (_, i) => `0:out-in${i}`).sort());
  });

  it('refuses calls out of order, as Kafka does', async () => {
    const topic = 'txn-states';
    await createTopic(suite.client, topic, { numPartitions: 1, replicationFactor: 1 });
    const p = producer('txn-states-1');
    try {
      assert.throws(() => p.beginTransaction(), /Cannot beginTransaction in state UNINITIALIZED/);
      await assert.rejects(p.send({ topic, value: Buffer.from('x') }), /Cannot send in state UNINITIALIZED/);
      await p.initTransactions();
      await assert.rejects(p.initTransactions(), /Cannot initTransactions in state READY/);
      await assert.rejects(p.send({ topic, value: Buffer.from('x') }), /Cannot send in state READY/);
      await assert.rejects(p.commitTransaction(), /Cannot commitTransaction in state READY/);
      p.beginTransaction();
      assert.throws(() => p.beginTransaction(), /Cannot beginTransaction in state IN_TRANSACTION/);
      // An empty transaction commits without a request to the coordinator.
      await p.commitTransaction();
      assert.equal(p.transactionState, 'READY');
    } finally {
      await p.close();
    }
    const plain = new Producer({ bootstrapServers: suite.broker.bootstrap });
    try {
      assert.throws(() => plain.beginTransaction(), /no transactional.id/);
    } finally {
      await plain.close();
    }
    assert.throws(
      () =>
        new Producer({ bootstrapServers: suite.broker.bootstrap, transactionalId: 't', idempotent: false }),
      /needs enable.idempotence/,
    );
  });
});

function isFenced(code: number): boolean {
  return code === ErrorCode.PRODUCER_FENCED || code === ErrorCode.INVALID_PRODUCER_EPOCH;
}
