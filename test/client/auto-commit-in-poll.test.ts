// enable.auto.commit with the classic protocol, as Kafka's ConsumerCoordinator does it: the commit is made inside
// poll() (coordinator.poll's maybeAutoCommitOffsetsAsync, once auto.commit.interval.ms has passed) and on close()
// (maybeAutoCommitOffsetsSync), never behind the application's back while it still works on what the last poll
// returned; that is what makes auto commit at-least-once. It applies to partitions taken with assign() under a
// group.id as well as to subscribed ones; unsubscribe() commits nothing (LegacyKafkaConsumer.unsubscribe). Against an
// in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerOptions } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'auto-commit-in-poll';
const RECORDS = 5;
const INTERVAL_MS = 200;

describe('auto commit happens in poll() and close()', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.initial.rebalance.delay.ms': 0,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < RECORDS; i++) await producer.send({ topic: TOPIC, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  function consumer(groupId: string, extra: Partial<ConsumerOptions> = {}): Consumer {
    return new Consumer({
      bootstrapServers,
      groupId,
      autoOffsetReset: 'earliest',
      autoCommitIntervalMs: INTERVAL_MS,
      heartbeatIntervalMs: 100,
      ...extra,
    });
  }

  async function readAll(c: Consumer): Promise<void> {
    const deadline = Date.now() + 10_000;
    let read = 0;
    while (read < RECORDS && Date.now() < deadline) read += (await c.poll(100)).length;
    assert.equal(read, RECORDS);
  }

  async function committed(groupId: string): Promise<number | undefined> {
    const offsets = await admin.listConsumerGroupOffsets(groupId);
    return offsets.find((o) => o.topic === TOPIC && o.partition === 0)?.offset;
  }

  async function committedBecomes(groupId: string, offset: number): Promise<void> {
    const deadline = Date.now() + 5000;
    while ((await committed(groupId)) !== offset && Date.now() < deadline) await sleep(50);
    assert.equal(await committed(groupId), offset);
  }

  it('records a poll returned are not committed before the next poll', async () => {
    const groupId = 'auto-commit-next-poll';
    const c = consumer(groupId);
    try {
      c.subscribe([TOPIC]);
      await readAll(c);
      // The application works on the records for several intervals without polling: a crash now must not lose them.
      await sleep(5 * INTERVAL_MS);
      assert.notEqual(
        await committed(groupId),
        RECORDS,
        'the positions past records still being processed were not committed',
      );
      // The next poll says they are done: its auto commit stores the position.
      await c.poll(0);
      await committedBecomes(groupId, RECORDS);
    } finally {
      await c.close();
    }
  });

  it('unsubscribe() makes no auto-commit', async () => {
    const groupId = 'auto-commit-unsubscribe';
    const c = consumer(groupId, { autoCommitIntervalMs: 600_000 });
    try {
      c.subscribe([TOPIC]);
      await readAll(c);
      await c.unsubscribe();
      assert.equal(await committed(groupId), undefined, 'Kafka commits nothing on unsubscribe()');
    } finally {
      await c.close();
    }
  });

  it('assign() with a group id commits in poll()', async () => {
    const groupId = 'auto-commit-assign-poll';
    const c = consumer(groupId);
    try {
      c.assign([{ topic: TOPIC, partition: 0 }]);
      await readAll(c);
      const deadline = Date.now() + 5000;
      while ((await committed(groupId)) !== RECORDS && Date.now() < deadline) await c.poll(INTERVAL_MS);
      assert.equal(await committed(groupId), RECORDS);
    } finally {
      await c.close();
    }
  });

  it('assign() with a group id commits on close()', async () => {
    const groupId = 'auto-commit-assign-close';
    const c = consumer(groupId, { autoCommitIntervalMs: 600_000 });
    try {
      c.assign([{ topic: TOPIC, partition: 0 }]);
      await readAll(c);
      assert.equal(await committed(groupId), undefined, 'nothing committed before close');
    } finally {
      await c.close();
    }
    assert.equal(await committed(groupId), RECORDS);
  });
});
