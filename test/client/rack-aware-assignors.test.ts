// Rack-aware assignment in the built-in assignors (KIP-881), without a broker: members carry client.rack, the
// leader knows the racks of each partition's replicas; the plans keep the plain assignors' counts and place
// partitions in their members' racks where those counts allow. Also: the subscription versions other clients
// send (0 to 3) decode, a missing rack reading as null.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ASSIGNORS, type MemberSubscription, type PartitionRacks } from '../../src/client/assignors.js';
import type { TopicPartition } from '../../src/client/requests.js';
import { decodeSubscription, encodeSubscription } from '../../src/protocol/consumer-protocol/index.js';

function member(
  id: string,
  rackId: string | null,
  topics: string[] = ['t'],
  owned: TopicPartition[] = [],
): MemberSubscription {
  return { memberId: id, groupInstanceId: null, topics, ownedPartitions: owned, generationId: 1, rackId };
}

const names = (tps: TopicPartition[] | undefined): string[] =>
  (tps ?? []).map((tp) => `${tp.topic}-${tp.partition}`);

/** Every partition of the counts exactly once across the plan. */
function assertComplete(plan: Map<string, TopicPartition[]>, counts: Map<string, number>): void {
  const seen = [...plan.values()].flat().map((tp) => `${tp.topic}-${tp.partition}`);
  assert.equal(new Set(seen).size, seen.length, `a partition was assigned twice: ${seen}`);
  const all = [...counts].flatMap(([t, n]) => Array.from({ length: n }, (_, p) => `${t}-${p}`));
  assert.deepEqual(new Set(seen), new Set(all));
}

function localCount(
  plan: Map<string, TopicPartition[]>,
  members: MemberSubscription[],
  racks: PartitionRacks,
) {
  let n = 0;
  for (const m of members)
    for (const tp of plan.get(m.memberId) ?? [])
      if (m.rackId && racks.get(tp.topic)![tp.partition]!.includes(m.rackId)) n++;
  return n;
}

test('range gives each member the partitions of its rack within the plain range counts', () => {
  const counts = new Map([['t', 4]]);
  // Partitions 0 and 1 have their only replica in rack b, 2 and 3 in rack a: plain range would put both
  // members in the wrong rack.
  const racks: PartitionRacks = new Map([['t', [['b'], ['b'], ['a'], ['a']]]]);
  const members = [member('m1', 'a'), member('m2', 'b')];
  assert.deepEqual(names(ASSIGNORS.range.assign(members, counts).get('m1')), ['t-0', 't-1']);
  const plan = ASSIGNORS.range.assign(members, counts, racks);
  assert.deepEqual(names(plan.get('m1')), ['t-2', 't-3']);
  assert.deepEqual(names(plan.get('m2')), ['t-0', 't-1']);
});

test('range with racks keeps the counts when a rack holds more than its share', () => {
  const counts = new Map([['t', 5]]);
  const racks: PartitionRacks = new Map([['t', [['a'], ['a'], ['a'], ['a'], ['b']]]]);
  const members = [member('m1', 'a'), member('m2', 'b'), member('m3', 'a')];
  const plan = ASSIGNORS.range.assign(members, counts, racks);
  assertComplete(plan, counts);
  assert.deepEqual(
    members.map((m) => plan.get(m.memberId)!.length),
    [2, 1, 2],
    'the first members take one extra, as without racks',
  );
  assert.deepEqual(names(plan.get('m2')), ['t-4'], 'the only rack-b member takes the rack-b partition');
  assert.equal(localCount(plan, members, racks), 5);
});

test('range places co-partitioned topics together: partition p of each goes to one member (Kafka)', () => {
  // t and u have the same members and partition count. Alone, each topic's partitions would follow their own
  // racks (m1 t-0,t-1 and u-0,u-2); together, partition p of both goes to a member whose rack holds p in both,
  // and the rest is filled by range, so a member reading t-p reads u-p too.
  const counts = new Map([
    ['t', 4],
    ['u', 4],
    ['v', 3],
  ]);
  const racks: PartitionRacks = new Map([
    ['t', [['a'], ['a'], ['b'], ['b']]],
    ['u', [['a'], ['b'], ['a'], ['b']]],
    ['v', [['b'], ['a'], ['a']]],
  ]);
  const members = [member('m1', 'a', ['t', 'u', 'v']), member('m2', 'b', ['t', 'u', 'v'])];
  const plan = ASSIGNORS.range.assign(members, counts, racks);
  assertComplete(plan, counts);
  assert.deepEqual(names(plan.get('m1')), ['t-0', 't-1', 'u-0', 'u-1', 'v-1', 'v-2']);
  assert.deepEqual(names(plan.get('m2')), ['t-2', 't-3', 'u-2', 'u-3', 'v-0']);
  // v has another partition count: placed alone, each member takes v's partitions of its rack.
  for (const m of members)
    for (const tp of plan.get(m.memberId)!.filter((x) => x.topic === 'v'))
      assert.ok(racks.get('v')![tp.partition]!.includes(m.rackId!), `v-${tp.partition} in its rack`);
});

test('range with racks: a member without a rack takes its range first, as in Kafka', () => {
  const counts = new Map([['t', 3]]);
  const racks: PartitionRacks = new Map([['t', [['b'], ['a'], ['c']]]]);
  const members = [member('m0', null), member('m1', 'a'), member('m2', 'b')];
  const plan = ASSIGNORS.range.assign(members, counts, racks);
  // Kafka's racksMatch holds for a member without a rack: m0 takes t-0 in the rack pass, before m2 (rack b).
  assert.deepEqual(
    members.map((m) => names(plan.get(m.memberId))),
    [['t-0'], ['t-1'], ['t-2']],
  );
});

test('range keeps the plain plan when every partition has the same racks, even if a member rack has none', () => {
  // Kafka's rule: all partitions in racks a and b, so no choice is more local than another; m1 (rack c) is
  // first in member order and keeps the plain plan's first range.
  const counts = new Map([['t', 4]]);
  const racks: PartitionRacks = new Map([['t', Array.from({ length: 4 }, () => ['a', 'b'])]]);
  const members = [member('m1', 'c'), member('m2', 'a')];
  assert.deepEqual(ASSIGNORS.range.assign(members, counts, racks), ASSIGNORS.range.assign(members, counts));
});

test('racks change nothing when every partition has a replica in every member rack, or no member has a rack', () => {
  const counts = new Map([
    ['t', 5],
    ['u', 3],
  ]);
  const everywhere: PartitionRacks = new Map([
    ['t', Array.from({ length: 5 }, () => ['a', 'b'])],
    ['u', Array.from({ length: 3 }, () => ['a', 'b'])],
  ]);
  const racked = [member('m1', 'a', ['t', 'u']), member('m2', 'b', ['t', 'u'])];
  const plain = [member('m1', null, ['t', 'u']), member('m2', null, ['t', 'u'])];
  const oneRack: PartitionRacks = new Map([
    ['t', [['b'], ['b'], ['b'], ['a'], ['a']]],
    ['u', [['b'], ['a'], ['a']]],
  ]);
  for (const name of ['range', 'sticky', 'cooperative-sticky'] as const) {
    const assignor = ASSIGNORS[name];
    const base = assignor.assign(plain, counts);
    assert.deepEqual(assignor.assign(racked, counts, everywhere), base, `${name}: replicas in every rack`);
    assert.deepEqual(assignor.assign(plain, counts, oneRack), base, `${name}: no member rack`);
  }
});

test('sticky places partitions in their racks and stays balanced', () => {
  const counts = new Map([['t', 6]]);
  // Partition p has its replicas in racks p % 3 and (p + 1) % 3.
  const rackNames = ['a', 'b', 'c'];
  const racks: PartitionRacks = new Map([
    ['t', Array.from({ length: 6 }, (_, p) => [rackNames[p % 3]!, rackNames[(p + 1) % 3]!].sort())],
  ]);
  const members = [member('m1', 'c'), member('m2', 'a'), member('m3', 'b')];
  for (const name of ['sticky', 'cooperative-sticky'] as const) {
    const plan = ASSIGNORS[name].assign(members, counts, racks);
    assertComplete(plan, counts);
    assert.deepEqual(
      members.map((m) => plan.get(m.memberId)!.length),
      [2, 2, 2],
    );
    assert.equal(localCount(plan, members, racks), 6, `${name}: every partition in its member's rack`);
  }
});

test('cooperative-sticky moves a partition owned outside its rack in two rounds, and then keeps it', () => {
  const counts = new Map([['t', 4]]);
  const racks: PartitionRacks = new Map([['t', [['a'], ['a'], ['b'], ['b']]]]);
  const tp = (partition: number): TopicPartition => ({ topic: 't', partition });
  // m1 (rack a) owns the rack-b partitions and m2 (rack b) the rack-a ones, as a rackless plan left them.
  const first = [member('m1', 'a', ['t'], [tp(2), tp(3)]), member('m2', 'b', ['t'], [tp(0), tp(1)])];
  const coop = ASSIGNORS['cooperative-sticky'];
  const round1 = coop.assign(first, counts, racks);
  assert.deepEqual(names(round1.get('m1')), [], 'partitions still owned by the other member wait');
  assert.deepEqual(names(round1.get('m2')), []);
  const round2 = coop.assign([member('m1', 'a'), member('m2', 'b')], counts, racks);
  assert.deepEqual(names(round2.get('m1')), ['t-0', 't-1']);
  assert.deepEqual(names(round2.get('m2')), ['t-2', 't-3']);
  const round3 = coop.assign(
    [member('m1', 'a', ['t'], round2.get('m1')), member('m2', 'b', ['t'], round2.get('m2'))],
    counts,
    racks,
  );
  assert.deepEqual(round3, round2, 'a rack-local balanced plan is kept');
});

test('sticky keeps an owned partition outside its member rack when no member is in its racks', () => {
  const counts = new Map([['t', 4]]);
  const racks: PartitionRacks = new Map([['t', [['a'], ['a'], ['z'], ['z']]]]);
  const tp = (partition: number): TopicPartition => ({ topic: 't', partition });
  const members = [member('m1', 'a', ['t'], [tp(2)]), member('m2', 'b', ['t'], [tp(3)])];
  const plan = ASSIGNORS.sticky.assign(members, counts, racks);
  assertComplete(plan, counts);
  assert.ok(names(plan.get('m2')).includes('t-3'), 'no member is in rack z: the owner keeps t-3');
  assert.ok(names(plan.get('m1')).includes('t-0') || names(plan.get('m1')).includes('t-1'));
});

test('random groups with racks: every partition once, counts balanced, at least as local as without racks', () => {
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const rackNames = ['a', 'b', 'c', 'd'];
  for (let round = 0; round < 200; round++) {
    const topics = ['t', 'u'].slice(0, 1 + random(2));
    const counts = new Map(topics.map((t) => [t, 1 + random(12)]));
    const racks: PartitionRacks = new Map(
      topics.map((t) => [
        t,
        Array.from({ length: counts.get(t)! }, () =>
          [...new Set([rackNames[random(4)]!, rackNames[random(4)]!])].sort(),
        ),
      ]),
    );
    const members = Array.from({ length: 1 + random(5) }, (_, i) =>
      member(`m${i}`, random(5) === 0 ? null : rackNames[random(4)]!, topics),
    );
    for (const name of ['range', 'sticky', 'cooperative-sticky'] as const) {
      const plan = ASSIGNORS[name].assign(members, counts, racks);
      assertComplete(plan, counts);
      const sizes = members.map((m) => plan.get(m.memberId)!.length);
      assert.ok(
        Math.max(...sizes) - Math.min(...sizes) <= (name === 'range' ? topics.length : 1),
        `${name} ${sizes}`,
      );
      if (name === 'range') {
        for (const t of topics) {
          const perTopic = members.map((m) => plan.get(m.memberId)!.filter((tp) => tp.topic === t).length);
          assert.ok(Math.max(...perTopic) - Math.min(...perTopic) <= 1, `range ${t} ${perTopic}`);
        }
      }
      const plain = ASSIGNORS[name].assign(members, counts);
      assert.ok(
        localCount(plan, members, racks) >= localCount(plain, members, racks),
        `${name} round ${round}: racks made the plan less local`,
      );
    }
  }
});

test('subscriptions of versions 0 to 3 decode; only version 3 carries the rack', () => {
  const value = {
    topics: ['t'],
    userData: null,
    ownedPartitions: [{ topic: 't', partitions: [0] }],
    generationId: 4,
    rackId: 'a',
  };
  for (let version = 0; version <= 3; version++) {
    const decoded = decodeSubscription(encodeSubscription(version, value));
    assert.equal(decoded.version, version);
    assert.deepEqual(decoded.value.topics, ['t']);
    assert.equal(decoded.value.rackId, version >= 3 ? 'a' : null);
    assert.equal(decoded.value.generationId, version >= 2 ? 4 : -1);
  }
});
