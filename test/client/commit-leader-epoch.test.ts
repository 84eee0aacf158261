// The leader epoch a consumer commits with an offset, as Kafka's consumer does: a commit of the positions (commit()
// without offsets, auto-commit) carries, for each partition, the partition leader epoch of the batch the last
// consumed record came from (SubscriptionState's position offsetEpoch, sent as OffsetCommit's
// committedLeaderEpoch); explicit offsets carry the leaderEpoch given with them (OffsetAndMetadata), -1 without
// one. A position taken from the group's committed offset keeps the committed epoch; seek() and a reset by
// auto.offset.reset have none. Against an in-process broker, read back with the admin client's OffsetFetch.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { type EpochTopic, startEpochTopic } from '../helpers/epoch-topic.js';

const TOPIC = 'commit-leader-epoch';
const tp = { topic: TOPIC, partition: 0 };

describe('committed leader epochs', () => {
  let setup: EpochTopic;
  let bootstrapServers: string;
  let admin: Admin;
  /** The partition's leader epoch, which the broker stamps on every batch it appends. */
  let leaderEpoch: number;

  before(async () => {
    setup = await startEpochTopic(TOPIC, 5);
    ({ bootstrapServers, admin, leaderEpoch } = setup);
  });
  after(async () => {
    await setup?.stop();
  });

  async function stored(groupId: string): Promise<{ offset: number; leaderEpoch: number }> {
    const [o] = await admin.listConsumerGroupOffsets(groupId, [tp]);
    assert.ok(o !== undefined, `group ${groupId} has an offset`);
    return { offset: o.offset, leaderEpoch: o.leaderEpoch };
  }

  async function pollAll(consumer: Consumer, count: number): Promise<void> {
    let seen = 0;
    const deadline = Date.now() + 5000;
    while (seen < count && Date.now() < deadline) seen += (await consumer.poll(200)).length;
    assert.equal(seen, count, 'every record was polled');
  }

  it('commit() of the positions carries the epoch of the last consumed record', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'epoch-positions',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
    });
    try {
      consumer.assign([tp]);
      await pollAll(consumer, 5);
      await consumer.commit();
      assert.deepEqual(await stored('epoch-positions'), { offset: 5, leaderEpoch });
    } finally {
      await consumer.close();
    }
  });

  it('explicit offsets carry the leader epoch given with them, -1 without one', async () => {
    const consumer = new Consumer({ bootstrapServers, groupId: 'epoch-explicit', enableAutoCommit: false });
    try {
      await consumer.commit([{ ...tp, offset: 3, leaderEpoch: 7 }]);
      assert.deepEqual(await stored('epoch-explicit'), { offset: 3, leaderEpoch: 7 });
      await consumer.commit([{ ...tp, offset: 4 }]);
      assert.deepEqual(await stored('epoch-explicit'), { offset: 4, leaderEpoch: -1 });
      await consumer.commit([{ ...tp, offset: 4, leaderEpoch: -3 }]);
      assert.deepEqual(
        await stored('epoch-explicit'),
        { offset: 4, leaderEpoch: -1 },
        'a negative epoch is none',
      );
    } finally {
      await consumer.close();
    }
  });

  it('a position from the committed offset keeps its epoch; seek() and a reset have none', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'epoch-resume',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
    });
    try {
      // An epoch the leader knows: position() validates the position first, and one of an epoch the leader has
      // never had would be reset by auto.offset.reset.
      await consumer.commit([{ ...tp, offset: 2, leaderEpoch }]);
      consumer.assign([tp]);
      assert.equal(await consumer.position(tp), 2);
      await consumer.commit();
      assert.deepEqual(
        await stored('epoch-resume'),
        { offset: 2, leaderEpoch },
        'resumed at the committed epoch',
      );

      consumer.seek(tp, 1);
      await consumer.commit();
      assert.deepEqual(await stored('epoch-resume'), { offset: 1, leaderEpoch: -1 }, 'seek() has no epoch');

      consumer.seek(tp, 1, 4);
      await consumer.commit();
      assert.deepEqual(
        await stored('epoch-resume'),
        { offset: 1, leaderEpoch: 4 },
        'seek() with an epoch keeps it',
      );

      await consumer.seekToEnd([tp]);
      // The reset is lazy, as Kafka's: position() resolves it (a commit before would skip the partition).
      await consumer.position(tp);
      await consumer.commit();
      assert.deepEqual(await stored('epoch-resume'), { offset: 5, leaderEpoch: -1 }, 'a reset has no epoch');
    } finally {
      await consumer.close();
    }
  });

  it('the auto-commit on close carries the epoch of the last consumed record', async () => {
    const consumer = new Consumer({ bootstrapServers, groupId: 'epoch-auto', autoOffsetReset: 'earliest' });
    try {
      consumer.subscribe([TOPIC]);
      await pollAll(consumer, 5);
    } finally {
      await consumer.close();
    }
    assert.deepEqual(await stored('epoch-auto'), { offset: 5, leaderEpoch });
  });
});
