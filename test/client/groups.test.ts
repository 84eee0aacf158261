// Group membership against a real broker: two members split the partitions and hand them over when one leaves,
// committed offsets survive a restart of the consumer, rebalance listeners see what moves, heartbeats keep a
// member with a slow handler in the group, cooperative-sticky moves only what it must, a subscribed topic created
// later (or grown) is assigned, and admin sees the group.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerOptions } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { TopicPartition } from '../../src/client/requests.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

let broker: BrokerProcess;
let admin: Admin;

before(async () => {
  // A short minimum session lets the slow-handler test show heartbeats outliving a 1.5 s session.
  broker = await startBroker({
    overrides: {
      'group.min.session.timeout.ms': 1000,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    },
  });
  admin = new Admin({ bootstrapServers: broker.bootstrap });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

async function topicWith(topic: string, partitions: number, records: number): Promise<void> {
  const [r] = await admin.createTopics([{ topic, numPartitions: partitions, replicationFactor: 1 }]);
  assert.equal(r!.error, null);
  const producer = new Producer({ bootstrapServers: broker.bootstrap, partitioner: 'round-robin' });
  await Promise.all(
    Array.from({ length: records }, (_, i) => producer.send({ topic, value: Buffer.from(String(i)) })),
  );
  await producer.close();
}

function member(groupId: string, extra: Partial<ConsumerOptions> = {}): Consumer {
  return new Consumer({
    bootstrapServers: broker.bootstrap,
    groupId,
    autoOffsetReset: 'earliest',
    heartbeatIntervalMs: 200,
    sessionTimeoutMs: 6000,
    maxPollIntervalMs: 10_000,
    ...extra,
  });
}

const names = (tps: TopicPartition[]) => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

/** Polls each consumer in its own loop until done() holds (a join blocks until every member rejoins). */
async function pollUntil(consumers: Consumer[], done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    consumers.map(async (c) => {
      while (!done() && Date.now() < deadline) await c.poll(100);
    }),
  );
  if (!done()) throw new Error('timed out');
}

test('two members split the partitions and the survivor takes over after one leaves', async () => {
  await topicWith('g-split', 4, 40);
  const events: string[] = [];
  const a = member('split');
  const b = member('split');
  const seen = new Set<number>();
  a.subscribe(['g-split'], {
    onPartitionsAssigned: (tps) => {
      events.push(`a+${names(tps).join(',')}`);
    },
    onPartitionsRevoked: (tps) => {
      events.push(`a-${names(tps).join(',')}`);
    },
  });
  b.subscribe(['g-split']);
  // Each member polls in its own loop, as separate processes would: a join waits for every member to rejoin.
  const split = () => a.assignment().length === 2 && b.assignment().length === 2;
  const loop = async (c: Consumer) => {
    const deadline = Date.now() + 20_000;
    while ((!split() || seen.size < 40) && Date.now() < deadline) {
      for (const r of await c.poll(100)) seen.add(Number(r.value!.toString()));
    }
  };
  await Promise.all([loop(a), loop(b)]);
  assert.equal(a.assignment().length, 2);
  assert.equal(b.assignment().length, 2);
  assert.deepEqual([...names(a.assignment()), ...names(b.assignment())].sort(), [
    'g-split-0',
    'g-split-1',
    'g-split-2',
    'g-split-3',
  ]);
  assert.equal(seen.size, 40);
  await b.close();
  await pollUntil([a], () => a.assignment().length === 4);
  assert.ok(
    events.some((e) => e.startsWith('a-')),
    'the eager protocol revoked before the rebalance',
  );
  const desc = await admin.describeGroups(['split']);
  assert.equal(desc[0]!.state, 'Stable');
  assert.equal(desc[0]!.members.length, 1);
  assert.equal(desc[0]!.members[0]!.assignment.length, 4);
  await a.close();
});

test('committed offsets carry over to the next member, with manual and auto commit', async () => {
  await topicWith('g-commit', 1, 10);
  const first = member('commit', { enableAutoCommit: false });
  first.subscribe(['g-commit']);
  const got: number[] = [];
  while (got.length < 10) for (const r of await first.poll(200)) got.push(r.offset);
  await first.commit([{ topic: 'g-commit', partition: 0, offset: 6 }]);
  await first.close();
  const offsets = await admin.listConsumerGroupOffsets('commit');
  assert.deepEqual(
    offsets.map((o) => [o.topic, o.partition, o.offset]),
    [['g-commit', 0, 6]],
  );

  const second = member('commit', { autoCommitIntervalMs: 200 });
  second.subscribe(['g-commit']);
  const rest: number[] = [];
  const deadline = Date.now() + 20_000;
  while (rest.length < 4 && Date.now() < deadline)
    for (const r of await second.poll(200)) rest.push(r.offset);
  assert.deepEqual(rest, [6, 7, 8, 9]);
  await second.close();
  const after = await admin.listConsumerGroupOffsets('commit');
  assert.equal(after[0]!.offset, 10, 'auto commit on close stores the position');

  assert.equal(
    (await admin.alterConsumerGroupOffsets('commit', [{ topic: 'g-commit', partition: 0, offset: 2 }]))[0]!
      .error,
    null,
  );
  assert.equal((await admin.listConsumerGroupOffsets('commit'))[0]!.offset, 2);
  assert.ok((await admin.listGroups()).some((g) => g.groupId === 'commit'));
  assert.equal((await admin.deleteGroups(['commit']))[0]!.error, null);
});

test("alterConsumerGroupOffsets stores each partition's metadata and leader epoch ('' and -1 by default)", async () => {
  await topicWith('g-alter-meta', 2, 0);
  const results = await admin.alterConsumerGroupOffsets('alter-meta', [
    { topic: 'g-alter-meta', partition: 0, offset: 3, metadata: 'from-source', leaderEpoch: 4 },
    { topic: 'g-alter-meta', partition: 1, offset: 5 },
  ]);
  assert.deepEqual(
    results.map((r) => r.error),
    [null, null],
  );
  assert.deepEqual(
    (await admin.listConsumerGroupOffsets('alter-meta')).map((o) => [
      o.partition,
      o.offset,
      o.metadata,
      o.leaderEpoch,
    ]),
    [
      [0, 3, 'from-source', 4],
      [1, 5, '', -1],
    ],
  );
});

test('a slow handler keeps its membership: heartbeats run while it works', async () => {
  await topicWith('g-slow', 2, 4);
  const slow = member('slow', { sessionTimeoutMs: 1500, heartbeatIntervalMs: 300 });
  slow.subscribe(['g-slow']);
  let handled = 0;
  const run = slow.run({
    eachRecord: async () => {
      handled++;
      await new Promise((r) => setTimeout(r, 800));
      if (handled === 4) slow.stop();
    },
  });
  await run;
  assert.equal(handled, 4);
  const [d] = await admin.describeGroups(['slow']);
  assert.equal(d!.state, 'Stable', 'still a member after 3.2 s of handling with a 1.5 s session');
  assert.equal(d!.members.length, 1);
  await slow.close();
});

test('cooperative-sticky moves only the partitions that change owner', async () => {
  await topicWith('g-coop', 4, 0);
  const opts = { partitionAssignmentStrategy: ['cooperative-sticky' as const] };
  const revokedA: string[] = [];
  const a = member('coop', opts);
  a.subscribe(['g-coop'], {
    onPartitionsRevoked: (tps) => {
      revokedA.push(...names(tps));
    },
  });
  await pollUntil([a], () => a.assignment().length === 4);
  const b = member('coop', opts);
  b.subscribe(['g-coop']);
  await pollUntil([a, b], () => a.assignment().length === 2 && b.assignment().length === 2, 30_000);
  assert.equal(revokedA.length, 2, 'only the two partitions that moved were revoked');
  assert.deepEqual(names([...a.assignment(), ...b.assignment()]).length, 4);
  await b.close();
  await a.close();
});

test('a pattern subscription picks up matching topics', async () => {
  await topicWith('pat-one', 1, 1);
  await topicWith('pat-two', 1, 1);
  const c = member('pattern', { metadataMaxAgeMs: 500 });
  c.subscribe(/^pat-/);
  const got: string[] = [];
  let deadline = Date.now() + 20_000;
  while (got.length < 2 && Date.now() < deadline) for (const r of await c.poll(200)) got.push(r.topic);
  assert.deepEqual(got.sort(), ['pat-one', 'pat-two']);
  assert.deepEqual(c.subscription(), ['pat-one', 'pat-two']);
  // A matching topic created later joins the subscription at the next metadata check.
  await topicWith('pat-three', 1, 1);
  deadline = Date.now() + 20_000;
  while (!got.includes('pat-three') && Date.now() < deadline)
    for (const r of await c.poll(200)) got.push(r.topic);
  assert.ok(got.includes('pat-three'));
  assert.deepEqual(c.subscription(), ['pat-one', 'pat-three', 'pat-two']);
  await c.close();
});

test('a subscribed topic created after the subscription is picked up without waiting for metadata.max.age.ms', async () => {
  // Kafka's leader notices on its metadata refresh that a subscribed topic now exists and rejoins; before the
  // fix a plain (non-pattern) subscription never looked again, so the records below never arrived. The topic is
  // created here with two partitions: the consumer must not ask the broker to create it first.
  const c = member('later', { metadataMaxAgeMs: 300_000, allowAutoCreateTopics: false });
  c.subscribe(['later-topic']);
  for (let i = 0; i < 5; i++) await c.poll(100);
  assert.deepEqual(c.assignment(), []);
  await topicWith('later-topic', 2, 4);
  const got: string[] = [];
  const deadline = Date.now() + 20_000;
  while (got.length < 4 && Date.now() < deadline)
    for (const r of await c.poll(200)) got.push(r.value!.toString());
  assert.deepEqual(got.sort(), ['0', '1', '2', '3']);
  assert.deepEqual(names(c.assignment()), ['later-topic-0', 'later-topic-1']);
  await c.close();
  // Partitions added later are assigned at the next metadata refresh.
  const d = member('later-grown', { metadataMaxAgeMs: 1000 });
  d.subscribe(['later-topic']);
  let until = Date.now() + 20_000;
  while (d.assignment().length < 2 && Date.now() < until) await d.poll(200);
  await admin.createPartitions([{ topic: 'later-topic', count: 3 }]);
  until = Date.now() + 20_000;
  while (d.assignment().length < 3 && Date.now() < until) await d.poll(200);
  assert.deepEqual(names(d.assignment()), ['later-topic-0', 'later-topic-1', 'later-topic-2']);
  await d.close();
});

test('a subscribed or assigned topic that does not exist is created by the broker, unless allowAutoCreateTopics is false', async () => {
  // Kafka's consumer sends allow.auto.create.topics (default true) in its metadata requests, so a consumer that
  // starts before its topic gets it created on a broker with auto.create.topics.enable (Kafka's default). Brook's
  // consumer never asked, and waited for someone else to create it.
  const exists = async (topic: string) => (await admin.listTopics()).includes(topic);
  const c = member('auto-created');
  c.subscribe(['auto-created-topic']);
  await pollUntil([c], () => names(c.assignment()).includes('auto-created-topic-0'));
  assert.ok(await exists('auto-created-topic'));
  const producer = new Producer({ bootstrapServers: broker.bootstrap, allowAutoCreateTopics: false });
  await producer.send({ topic: 'auto-created-topic', value: Buffer.from('first') });
  await producer.close();
  const got: string[] = [];
  const deadline = Date.now() + 20_000;
  while (got.length < 1 && Date.now() < deadline)
    for (const r of await c.poll(200)) got.push(r.value!.toString());
  assert.deepEqual(got, ['first']);
  await c.close();

  const assigned = new Consumer({ bootstrapServers: broker.bootstrap });
  assigned.assign([{ topic: 'auto-created-assigned', partition: 0 }]);
  const until = Date.now() + 20_000;
  while (!(await exists('auto-created-assigned')) && Date.now() < until) await assigned.poll(200);
  assert.ok(await exists('auto-created-assigned'));
  await assigned.close();

  const off = member('auto-create-off', { allowAutoCreateTopics: false });
  off.subscribe(['not-auto-created']);
  for (let i = 0; i < 15; i++) await off.poll(200);
  assert.deepEqual(off.assignment(), []);
  assert.equal(await exists('not-auto-created'), false);
  await off.close();
});

test('the consumer protocol (KIP-848): members share partitions, commit, and hand over on leave', async () => {
  await topicWith('g-848', 4, 40);
  const opts = { groupProtocol: 'consumer' as const };
  const a = member('kip848', opts);
  const b = member('kip848', opts);
  const assignedToA: string[] = [];
  a.subscribe(['g-848'], {
    onPartitionsAssigned: (tps) => {
      assignedToA.push(...names(tps));
    },
  });
  b.subscribe(['g-848']);
  const seen = new Set<number>();
  const split = () => a.assignment().length === 2 && b.assignment().length === 2;
  const loop = async (c: Consumer) => {
    const deadline = Date.now() + 25_000;
    while ((!split() || seen.size < 40) && Date.now() < deadline) {
      for (const r of await c.poll(100)) seen.add(Number(r.value!.toString()));
    }
  };
  await Promise.all([loop(a), loop(b)]);
  assert.equal(seen.size, 40, 'every record was read once the group settled');
  assert.deepEqual(names([...a.assignment(), ...b.assignment()]), [
    'g-848-0',
    'g-848-1',
    'g-848-2',
    'g-848-3',
  ]);
  assert.ok(assignedToA.length > 0);
  await b.close();
  await pollUntil([a], () => a.assignment().length === 4, 25_000);
  const assigned = a.assignment().sort((x, y) => x.partition - y.partition);
  const positions = await Promise.all(assigned.map((tp) => a.position(tp)));
  await a.commit();
  const committed = await admin.listConsumerGroupOffsets('kip848');
  assert.deepEqual(
    committed.map((o) => o.offset),
    positions,
    'the member epoch was accepted for commits of all four partitions',
  );
  await a.close();
});

test('poll returns at its timeout while the group waits for a member to rejoin; a later poll completes the rebalance', async () => {
  await topicWith('g-bounded', 3, 0);
  const settings = { maxPollIntervalMs: 30_000 };
  const [a, b, c] = [
    member('g-bounded', settings),
    member('g-bounded', settings),
    member('g-bounded', settings),
  ];
  let aPolling = false;
  const listenedOutsidePoll: string[] = [];
  const pollA = async (timeoutMs: number): Promise<unknown[]> => {
    aPolling = true;
    try {
      return await a.poll(timeoutMs);
    } finally {
      aPolling = false;
    }
  };
  const outsideA = (what: string) => () => {
    if (!aPolling) listenedOutsidePoll.push(what);
  };
  a.subscribe(['g-bounded'], {
    onPartitionsRevoked: outsideA('revoked'),
    onPartitionsAssigned: outsideA('assigned'),
  });
  b.subscribe(['g-bounded']);
  c.subscribe(['g-bounded']);
  try {
    const stable = (members: Consumer[]) => () => members.every((m) => m.assignment().length > 0);
    const loop = async (poll: (ms: number) => Promise<unknown>, done: () => boolean) => {
      for (const deadline = Date.now() + 20_000; !done() && Date.now() < deadline; ) await poll(100);
    };
    await Promise.all([loop(pollA, stable([a, b])), loop((ms) => b.poll(ms), stable([a, b]))]);
    assert.ok(stable([a, b])(), 'a and b share the partitions');

    // c joins: the coordinator waits for a and b to rejoin. a rejoins (its heartbeat heard of the rebalance),
    // b does not poll, so a's JoinGroup is held until b rejoins or b's max.poll.interval.ms (30 s) passes.
    const cJoined = loop((ms) => c.poll(ms), stable([a, b, c]));
    await new Promise((r) => setTimeout(r, 800));
    const started = Date.now();
    const polled = await Promise.race([
      pollA(300),
      new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 5000).unref()),
    ]);
    const tookMs = Date.now() - started;
    assert.notEqual(polled, 'stuck', 'poll(300) still waiting after 5 s: it waits for the whole rebalance');
    assert.deepEqual(polled, []);
    assert.ok(tookMs < 2000, `poll(300) took ${tookMs} ms`);
    assert.equal(a.assignment().length, 0, 'the eager protocol revoked everything before joining');

    // b rejoins: the rebalance completes, and a's later polls take its assignment, running the listener there.
    await Promise.all([loop(pollA, stable([a, b, c])), loop((ms) => b.poll(ms), stable([a, b, c])), cJoined]);
    assert.ok(stable([a, b, c])(), 'all three share the partitions');
    assert.deepEqual(names([...a.assignment(), ...b.assignment(), ...c.assignment()]), [
      'g-bounded-0',
      'g-bounded-1',
      'g-bounded-2',
    ]);
    assert.deepEqual(listenedOutsidePoll, [], "a's rebalance listener ran only inside its polls");
  } finally {
    await Promise.all([a.close(), b.close(), c.close()]);
  }
});

// Kafka's AsyncKafkaConsumer (group.protocol=consumer) sets groupMetadata() from the member epoch and id the
// coordinator gives, and unsubscribe() resets it to generation -1 and no member id, keeping the group instance id
// (resetGroupMetadata); unlike the classic consumer, which keeps its last generation (group-metadata.test.ts).
test('KIP-848 consumer: groupMetadata() names the member epoch, and no member after unsubscribe()', async () => {
  await topicWith('g-848-metadata', 1, 0);
  const c = member('kip848-metadata', { groupProtocol: 'consumer', groupInstanceId: 'static-848' });
  c.subscribe(['g-848-metadata']);
  await pollUntil([c], () => c.assignment().length === 1);
  const inGroup = c.groupMetadata();
  assert.ok(inGroup.generationId > 0, `member epoch ${inGroup.generationId}`);
  assert.notEqual(inGroup.memberId, '');
  assert.equal(inGroup.groupInstanceId, 'static-848');
  await c.unsubscribe();
  assert.deepEqual(c.groupMetadata(), {
    groupId: 'kip848-metadata',
    generationId: -1,
    memberId: '',
    groupInstanceId: 'static-848',
  });
  await c.close();
});
