// A task with several input partitions takes its records in timestamp order across them (Kafka's
// PartitionGroup), not in the order its consumer fetched them. A stream-table left join of two co-partitioned
// topics: each user's region changes ten times (at t, t + 100, ...) and a click comes 50 ms after each change.
// All the table updates are produced before all the clicks, and only then is the application started, so the
// consumer fetches each partition's records in blocks: processed in fetch order, the clicks would all see the
// first or the last region (or none); in timestamp order each click sees the region of its time (the test fails
// before the change). PartitionGroup alone: the choice of the head and the waiting rules of max.task.idle.ms.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import { PartitionGroup } from '../../src/streams/runtime/partition-group.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const PARTITIONS = 2;
const USERS = 20;
const VERSIONS = 10;

const broker = useStreamsBroker({ 'to-users': PARTITIONS, 'to-clicks': PARTITIONS, 'to-out': PARTITIONS }, 1);

describe("timestamp order across a task's partitions", () => {
  it('a stream-table join sees, for each click, the table value of its time', async () => {
    const baseMs = Date.now() - 600_000;
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    const users = [];
    const clicks = [];
    const expected = new Map<string, string[]>();
    // Each topic partition in time order (version by version); the two topics' records interleave by time only.
    for (let v = 0; v < VERSIONS; v++)
      for (let u = 0; u < USERS; u++) {
        const partition = u % PARTITIONS;
        const key = Buffer.from(`u${u}`);
        users.push({
          topic: 'to-users',
          partition,
          key,
          value: Buffer.from(`r${v}`),
          timestamp: baseMs + v * 100,
        });
        clicks.push({
          topic: 'to-clicks',
          partition,
          key,
          value: Buffer.from(`c${v}`),
          timestamp: baseMs + v * 100 + 50,
        });
        let list = expected.get(`u${u}`);
        if (list === undefined) expected.set(`u${u}`, (list = []));
        list.push(`c${v}@r${v}`);
      }
    await producer.sendBatch(users);
    await producer.sendBatch(clicks);
    await producer.close();

    const builder = new StreamsBuilder();
    const table = builder.table('to-users', Consumed.with(S, S));
    builder
      .stream('to-clicks', Consumed.with(S, S))
      .leftJoin(table, (click: string, region: string | null) => `${click}@${region ?? 'none'}`)
      .to('to-out', Produced.with(S, S));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'ts-order',
      'bootstrap.servers': broker.bootstrap,
      'state.dir': broker.dirs[0]!,
      'commit.interval.ms': 100,
    });
    const follower = new TopicFollower(broker.bootstrap, 'to-out', PARTITIONS);
    try {
      await streams.start();
      follower.start();
      await waitUntil(
        () => follower.records.length >= USERS * VERSIONS,
        90_000,
        () => `${follower.records.length} joined clicks of ${USERS * VERSIONS}`,
      );
      const got = new Map<string, string[]>();
      for (const r of follower.records) {
        let list = got.get(r.key);
        if (list === undefined) got.set(r.key, (list = []));
        list.push(r.value!.toString());
      }
      assert.deepEqual(got, expected);
    } finally {
      await follower.stop();
      await streams.close();
    }
  });
});

describe('PartitionGroup', () => {
  const rec = (topic: string, partition: number, offset: number, timestamp: number) => ({
    topic,
    partition,
    offset,
    timestamp,
    key: null,
    value: null,
    headers: [],
  });

  it('hands out the head with the smallest timestamp and waits for a partition with lag', () => {
    const g = new PartitionGroup(0);
    g.addPartition('a', 0);
    g.addPartition('b', 0);
    g.add(rec('a', 0, 0, 30) as never);
    g.add(rec('a', 0, 1, 10) as never);
    let lagB: number | null = null;
    const lag = (topic: string) => (topic === 'b' ? lagB : 0);
    assert.equal(g.readyToProcess(0, lag), false, 'b unknown: wait');
    lagB = 3;
    assert.equal(g.readyToProcess(0, lag), false, 'b has records on the broker: wait');
    g.add(rec('b', 0, 0, 20) as never);
    assert.equal(g.readyToProcess(0, lag), true);
    // Heads: a@30, b@20 -> b first; then a@30, then a@10 (a partition's own order stays).
    assert.deepEqual(
      [g.next()!, g.next()!, g.next()!].map((r) => `${r.topic}${r.offset}`),
      ['b0', 'a0', 'a1'],
    );
    assert.equal(g.next(), null);
  });

  it('with lag 0 an empty partition is skipped after max.task.idle.ms; -1 never waits', () => {
    const g = new PartitionGroup(500);
    g.addPartition('a', 0);
    g.addPartition('b', 0);
    g.add(rec('a', 0, 0, 1) as never);
    const lag = () => 0;
    assert.equal(g.readyToProcess(1000, lag), false);
    assert.equal(g.readyToProcess(1499, lag), false);
    assert.equal(g.readyToProcess(1500, lag), true);
    const never = new PartitionGroup(-1);
    never.addPartition('a', 0);
    never.addPartition('b', 0);
    never.add(rec('a', 0, 0, 1) as never);
    assert.equal(
      never.readyToProcess(0, () => null),
      true,
    );
    assert.equal(
      new PartitionGroup(0).readyToProcess(0, () => 0),
      false,
      'nothing queued',
    );
  });
});
