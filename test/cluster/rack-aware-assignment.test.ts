// Rack-aware consumer group assignment (KIP-881) through a real three-broker cluster, one broker a rack (a, b,
// c): Brook's consumers send client.rack in subscription v3, the group leader reads the racks of each
// partition's replicas from its metadata, and range and cooperative-sticky give every member the partitions
// with a replica in its rack (plain range, by member order, would give none of them their rack's partitions).
// Range places co-partitioned topics together, as Kafka's does: each member gets the same partitions of both.
// A mixed group with kcat (librdkafka 2.0.2, which sends subscriptions without a rack and reads only the fields
// it knows of Brook's v3 one) still splits the partitions and consumes every record.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { TopicPartition } from '../../src/client/requests.js';
import { GroupMember } from '../coordinator/group-members.js';
import { agreedLeader } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { waitUntil } from '../helpers/wait.js';

const RACKS = ['a', 'b', 'c'];
const PARTITIONS = 6;

/** Polls each consumer in its own loop until done() holds (a join waits for every member to rejoin). */
async function pollUntil(consumers: Consumer[], done: () => boolean, timeoutMs: number, what: () => string) {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    consumers.map(async (c) => {
      while (!done() && Date.now() < deadline) await c.poll(100);
    }),
  );
  if (!done()) throw new Error(`timed out: ${what()}`);
}

describe('rack-aware consumer group assignment across three racks (KIP-881)', () => {
  let cluster: TestCluster | undefined;
  /** Partition -> racks of its replicas, as the topics below place them (broker id i is in rack RACKS[i]). */
  const replicaRacks = new Map<string, string[][]>();

  before(async () => {
    cluster = await startCluster({
      overrides: { 'group.initial.rebalance.delay.ms': 0 },
      brokerOverrides: Object.fromEntries(RACKS.map((rack, id) => [id, { 'broker.rack': rack }])),
    });
    // racks-one: partitions 0-1 on broker 0 (rack a), 2-3 on broker 1 (b), 4-5 on broker 2 (c).
    // racks-two: partition p on brokers p % 3 and (p + 1) % 3.
    // racks-co: partitions 0-1 on brokers 0 and 1 (racks a, b), 2-3 on 1 and 2, 4-5 on 2 and 0. Alone, range
    // would give the rack-c member (first in order) partitions 2-3; with racks-one (same members, same count)
    // partition p of both goes to the member whose rack holds p in both.
    const layouts: Record<string, Record<number, number[]>> = {
      'racks-one': Object.fromEntries(Array.from({ length: PARTITIONS }, (_, p) => [p, [Math.floor(p / 2)]])),
      'racks-two': Object.fromEntries(
        Array.from({ length: PARTITIONS }, (_, p) => [p, [p % 3, (p + 1) % 3]]),
      ),
      'racks-co': Object.fromEntries(
        Array.from({ length: PARTITIONS }, (_, p) => [p, [Math.floor(p / 2), (Math.floor(p / 2) + 1) % 3]]),
      ),
    };
    for (const [topic, assignments] of Object.entries(layouts)) {
      await createTopicOn(cluster.brokers[0]!, topic, { assignments });
      replicaRacks.set(
        topic,
        Array.from({ length: PARTITIONS }, (_, p) => assignments[p]!.map((id) => RACKS[id]!)),
      );
      // Partition 0 led everywhere; clients retry the others until their leaders are known.
      await agreedLeader(cluster.brokers, topic, undefined, 60_000);
    }
  });
  after(() => cluster?.stop());

  const local = (rack: string, tps: TopicPartition[]): boolean =>
    tps.every((tp) => replicaRacks.get(tp.topic)![tp.partition]!.includes(rack));

  for (const [strategy, topics] of [
    ['range', ['racks-one']],
    ['cooperative-sticky', ['racks-two']],
    ['range', ['racks-one', 'racks-co']],
  ] as const) {
    const coPartitioned = topics.length > 1;
    const title = coPartitioned
      ? `${strategy}: co-partitioned topics give each member the same partitions of both, in its client.rack`
      : `${strategy}: each member gets partitions with a replica in its client.rack`;
    it(title, async () => {
      // Instance ids order the members c, a, b: plain range would hand rack a's partitions to the rack-c member.
      const members = [
        ['i1', 'c'],
        ['i2', 'a'],
        ['i3', 'b'],
      ].map(
        ([instance, rack]) =>
          [
            rack!,
            new Consumer({
              bootstrapServers: cluster!.bootstrap,
              groupId: `racks-${strategy}-${topics.join('-')}`,
              groupInstanceId: instance!,
              clientRack: rack!,
              partitionAssignmentStrategy: [strategy],
              heartbeatIntervalMs: 300,
              sessionTimeoutMs: 10_000,
            }),
          ] as const,
      );
      try {
        for (const [, c] of members) c.subscribe([...topics]);
        const consumers = members.map(([, c]) => c);
        const what = () =>
          members
            .map(([rack, c]) => `${rack}: ${c.assignment().map((tp) => `${tp.topic}-${tp.partition}`)}`)
            .join('; ');
        await pollUntil(
          consumers,
          () =>
            members.every(
              ([rack, c]) => c.assignment().length === 2 * topics.length && local(rack, c.assignment()),
            ),
          90_000,
          what,
        );
        for (const topic of topics) {
          const all = consumers.flatMap((c) =>
            c
              .assignment()
              .filter((tp) => tp.topic === topic)
              .map((tp) => tp.partition),
          );
          assert.equal(new Set(all).size, PARTITIONS, `every partition of ${topic} once: ${what()}`);
        }
        if (coPartitioned)
          for (const c of consumers) {
            const of = (topic: string) =>
              c
                .assignment()
                .filter((tp) => tp.topic === topic)
                .map((tp) => tp.partition)
                .sort();
            assert.deepEqual(of(topics[0]!), of(topics[1]!), `the same partitions of both topics: ${what()}`);
          }
      } finally {
        await Promise.all(members.map(([, c]) => c.close().catch(() => {})));
      }
    });
  }

  it('a group of a Brook consumer with client.rack and kcat (no rack) splits the partitions and reads every record', async () => {
    const producer = new Producer({ bootstrapServers: cluster!.bootstrap });
    const sent: string[] = [];
    try {
      for (let p = 0; p < PARTITIONS; p++)
        for (let i = 0; i < 5; i++) {
          const value = `v-${p}-${i}`;
          sent.push(value);
          await producer.send({ topic: 'racks-one', partition: p, value: Buffer.from(value) });
        }
    } finally {
      await producer.close();
    }
    const kcat = GroupMember.kcat(cluster!.bootstrap, 'racks-mixed', 'racks-one', 'earliest', 10_000);
    const brook = new Consumer({
      bootstrapServers: cluster!.bootstrap,
      groupId: 'racks-mixed',
      clientRack: 'b',
      autoOffsetReset: 'earliest',
      partitionAssignmentStrategy: ['range'],
      heartbeatIntervalMs: 300,
      sessionTimeoutMs: 10_000,
    });
    const read: string[] = [];
    try {
      brook.subscribe(['racks-one']);
      const split = () => {
        const mine = brook.assignment().map((tp) => tp.partition);
        const theirs = kcat.latestAssignment;
        return mine.length === 3 && theirs.length === 3 && new Set([...mine, ...theirs]).size === PARTITIONS;
      };
      const what = () => `brook: ${brook.assignment().map((tp) => tp.partition)}\n${kcat.log()}`;
      const deadline = Date.now() + 90_000;
      // Keep polling while kcat reads its share: the group settles, then both read what they own.
      while (Date.now() < deadline) {
        for (const r of await brook.poll(200)) read.push(r.value!.toString());
        if (split() && new Set([...read, ...kcat.records.map((r) => r.value)]).size === sent.length) break;
      }
      await waitUntil(split, 1000, what);
      assert.deepEqual(new Set([...read, ...kcat.records.map((r) => r.value)]), new Set(sent), what());
    } finally {
      await brook.close().catch(() => {});
      await kcat.kill();
    }
  });
});
