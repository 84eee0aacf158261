// subscribe() called again on a subscribed consumer, as Kafka's consumer takes it: the listener given replaces the
// previous one (a call without one leaves none, Kafka's no-op listener), and the same topics again change nothing,
// so no rebalance is asked for (ConsumerCoordinator rejoins only when the subscription differs from the joined one).
// New topics given while a JoinGroup is out make the member join again once that one completes, since it joined
// with the old ones. Against an in-process broker whose interceptor counts (and can hold) JoinGroup requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import type { TopicPartition } from '../../src/client/requests.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC_A = 'resubscribe-a';
const TOPIC_B = 'resubscribe-b';

describe('subscribe() again', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  let joins = 0;
  /** While set, JoinGroup requests wait for it before they are handled. */
  let holdJoins: Promise<void> | null = null;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([
      { topic: TOPIC_A, numPartitions: 1, replicationFactor: 1 },
      { topic: TOPIC_B, numPartitions: 1, replicationFactor: 1 },
    ]);
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.JOIN_GROUP) return undefined;
      joins++;
      const held = holdJoins;
      return held === null ? undefined : held.then(() => request.handle());
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  const names = (tps: TopicPartition[]) => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

  async function pollUntil(consumer: Consumer, done: () => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!done() && Date.now() < deadline) await consumer.poll(50);
    assert.ok(done(), 'the condition was reached');
  }

  it('the listener of the last subscribe() call gets the callbacks', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'resubscribe-listener',
      enableAutoCommit: false,
    });
    const first: string[] = [];
    const second: string[] = [];
    try {
      consumer.subscribe([TOPIC_A], {
        onPartitionsAssigned: (tps) => {
          first.push(...names(tps).map((n) => `+${n}`));
        },
        onPartitionsRevoked: (tps) => {
          first.push(...names(tps).map((n) => `-${n}`));
        },
      });
      await pollUntil(consumer, () => consumer.assignment().length === 1);
      assert.deepEqual(first, [`+${TOPIC_A}-0`]);
      consumer.subscribe([TOPIC_A, TOPIC_B], {
        onPartitionsAssigned: (tps) => {
          second.push(...names(tps).map((n) => `+${n}`));
        },
        onPartitionsRevoked: (tps) => {
          second.push(...names(tps).map((n) => `-${n}`));
        },
      });
      await pollUntil(consumer, () => consumer.assignment().length === 2);
      assert.deepEqual(first, [`+${TOPIC_A}-0`], 'the replaced listener is not called');
      assert.ok(second.includes(`+${TOPIC_B}-0`), `the new listener got the assignment: ${second.join(',')}`);
    } finally {
      await consumer.close();
    }
  });

  it('the same topics again ask for no rebalance', async () => {
    const consumer = new Consumer({ bootstrapServers, groupId: 'resubscribe-same', enableAutoCommit: false });
    try {
      consumer.subscribe([TOPIC_A, TOPIC_B]);
      await pollUntil(consumer, () => consumer.assignment().length === 2);
      const generation = consumer.groupMetadata().generationId;
      joins = 0;
      consumer.subscribe([TOPIC_B, TOPIC_A]);
      const deadline = Date.now() + 500;
      while (Date.now() < deadline) await consumer.poll(50);
      assert.equal(joins, 0, 'no JoinGroup was sent');
      assert.equal(consumer.groupMetadata().generationId, generation);
      assert.deepEqual(names(consumer.assignment()), [`${TOPIC_A}-0`, `${TOPIC_B}-0`]);
    } finally {
      await consumer.close();
    }
  });

  it('topics changed while a JoinGroup is out: the member joins again with them', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'resubscribe-during-join',
      enableAutoCommit: false,
    });
    let release: () => void = () => {};
    holdJoins = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      joins = 0;
      consumer.subscribe([TOPIC_A]);
      const deadline = Date.now() + 5000;
      while (joins < 1 && Date.now() < deadline) await consumer.poll(50);
      assert.ok(joins >= 1, 'a JoinGroup is out');
      consumer.subscribe([TOPIC_A, TOPIC_B]);
      holdJoins = null;
      release();
      await pollUntil(consumer, () => consumer.assignment().length === 2);
      assert.deepEqual(names(consumer.assignment()), [`${TOPIC_A}-0`, `${TOPIC_B}-0`]);
    } finally {
      holdJoins = null;
      release();
      await consumer.close();
    }
  });
});
