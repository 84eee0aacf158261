// How a broker sees an admin request's changes done (Kafka's DelayedCreatePartitions and DelayedDeleteTopics): in its
// own metadata, a created topic with the written id and a leader for every partition, grown partitions with leaders,
// a deleted topic gone (or replaced by another with its name); at most the request's timeout, answering the topics
// seen done; the controller's broker also asks its controller to act at once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PropagationWaiter } from '../../src/broker/cluster/propagation-waiter.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import { systemClock } from '../../src/common/clock.js';
import type { Controller } from '../../src/controller/controller.js';

type FakeTopic = { topicId: string; partitions: { leader: number }[] };

function waiter(topics: Map<string, FakeTopic>, active = false) {
  const synced: (readonly string[])[] = [];
  const controller = {
    isActive: active,
    sync: async (names: readonly string[]) => {
      synced.push(names);
    },
  } as unknown as Controller;
  const metadata = { topic: (name: string) => topics.get(name) } as unknown as MetadataCache;
  return { waiter: new PropagationWaiter(controller, metadata, systemClock), synced };
}

test('each kind of change counts as done only when the metadata shows it', async () => {
  const topics = new Map<string, FakeTopic>([
    ['made', { topicId: 'id-made', partitions: [{ leader: 1 }, { leader: 2 }] }],
    ['leaderless', { topicId: 'id-l', partitions: [{ leader: 1 }, { leader: -1 }] }],
    ['other-id', { topicId: 'id-new', partitions: [{ leader: 1 }] }],
    ['grown', { topicId: 'id-g', partitions: [{ leader: 1 }, { leader: 1 }, { leader: 0 }] }],
    ['still-here', { topicId: 'id-s', partitions: [{ leader: 1 }] }],
  ]);
  const { waiter: w } = waiter(topics);
  const done = await w.awaitChanges(
    [
      { kind: 'created', topic: 'made', topicId: 'id-made' },
      { kind: 'created', topic: 'leaderless', topicId: 'id-l' },
      { kind: 'created', topic: 'other-id', topicId: 'id-old' },
      { kind: 'partitions', topic: 'grown', count: 3 },
      { kind: 'partitions', topic: 'made', count: 3 },
      { kind: 'deleted', topic: 'gone', topicId: 'id-gone' },
      { kind: 'deleted', topic: 'other-id', topicId: 'id-old' },
      { kind: 'deleted', topic: 'still-here', topicId: 'id-s' },
    ],
    60,
  );
  assert.deepEqual([...done].sort(), ['gone', 'grown', 'made', 'other-id']);
});

test('waits for a change that shows later, and stops at the timeout', async () => {
  const topics = new Map<string, FakeTopic>([['late', { topicId: 'id-late', partitions: [{ leader: -1 }] }]]);
  const { waiter: w, synced } = waiter(topics, true);
  setTimeout(() => topics.set('late', { topicId: 'id-late', partitions: [{ leader: 0 }] }), 50);
  const done = await w.awaitChanges([{ kind: 'created', topic: 'late', topicId: 'id-late' }], 5_000);
  assert.deepEqual([...done], ['late']);
  assert.deepEqual(synced, [['late']], "the controller's broker asks it to act");
  const started = performance.now();
  const none = await w.awaitChanges([{ kind: 'deleted', topic: 'late', topicId: 'id-late' }], 100);
  assert.equal(none.size, 0);
  assert.ok(performance.now() - started >= 95, 'waited for the timeout');
});
