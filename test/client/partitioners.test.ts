// The default partitioner puts a key where the Java client does: murmur2 vectors from the algorithm's definition
// (the values Kafka's own UtilsTest checks), and agreement with kafkajs's DefaultPartitioner (the same murmur2)
// over many keys and partition counts. Null keys stick to one partition until its batch closes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Partitioners } from 'kafkajs';
import { ASSIGNORS, type MemberSubscription } from '../../src/client/assignors.js';
import { createPartitioner, keyPartition, murmur2 } from '../../src/client/partitioners.js';

test('murmur2 matches the Java client on its reference vectors', () => {
  const vectors: [string, number][] = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];
  for (const [key, hash] of vectors) assert.equal(murmur2(Buffer.from(key)), hash, key);
});

test('key partitions: known vectors and agreement with kafkajs DefaultPartitioner', () => {
  // (murmur2 & 0x7fffffff) % n, computed from the vectors above.
  assert.equal(keyPartition(Buffer.from('foobar'), 3), (-790332482 & 0x7fffffff) % 3);
  assert.equal(keyPartition(Buffer.from('21'), 10), (-973932308 & 0x7fffffff) % 10);
  const kafkajs = Partitioners.DefaultPartitioner();
  for (const n of [1, 2, 3, 7, 12, 100]) {
    const partitionMetadata = Array.from({ length: n }, (_, i) => ({
      partitionId: i,
      leader: 0,
      partitionErrorCode: 0,
      replicas: [0],
      isr: [0],
    }));
    for (let i = 0; i < 500; i++) {
      const key = `key-${i}-${'x'.repeat(i % 7)}`;
      const theirs = kafkajs({ topic: 't', partitionMetadata, message: { key, value: 'v' } });
      assert.equal(keyPartition(Buffer.from(key), n), theirs, `${key} over ${n}`);
    }
  }
});

test('the sticky partitioner keeps null keys on one partition until the batch closes', () => {
  const p = createPartitioner('default');
  const first = p.partition('t', null, 6);
  for (let i = 0; i < 50; i++) assert.equal(p.partition('t', null, 6), first);
  p.onBatchClosed('t', first);
  const second = p.partition('t', null, 6);
  assert.notEqual(second, first);
  const rr = createPartitioner('round-robin');
  assert.deepEqual(
    [0, 1, 2, 3].map(() => rr.partition('t', null, 3)),
    [0, 1, 2, 0],
  );
  assert.throws(() => createPartitioner(() => 9).partition('t', null, 3), /custom partitioner returned 9/);
});

function member(
  id: string,
  topics: string[],
  owned: [string, number][] = [],
  generationId = 1,
): MemberSubscription {
  return {
    memberId: id,
    groupInstanceId: null,
    topics,
    ownedPartitions: owned.map(([topic, partition]) => ({ topic, partition })),
    generationId,
  };
}

const names = (tps: { topic: string; partition: number }[] | undefined) =>
  (tps ?? []).map((tp) => `${tp.topic}-${tp.partition}`);

test('range and roundrobin assignors follow Kafka', () => {
  const counts = new Map([
    ['a', 3],
    ['b', 3],
  ]);
  const members = [member('m2', ['a', 'b']), member('m1', ['a', 'b'])];
  const range = ASSIGNORS.range.assign(members, counts);
  assert.deepEqual(names(range.get('m1')), ['a-0', 'a-1', 'b-0', 'b-1']);
  assert.deepEqual(names(range.get('m2')), ['a-2', 'b-2']);
  const rr = ASSIGNORS.roundrobin.assign(members, counts);
  assert.deepEqual(names(rr.get('m1')), ['a-0', 'a-2', 'b-1']);
  assert.deepEqual(names(rr.get('m2')), ['a-1', 'b-0', 'b-2']);
});

test('sticky keeps owned partitions; cooperative-sticky holds back partitions that change owner', () => {
  const counts = new Map([['t', 4]]);
  const before = [
    member(
      'm1',
      ['t'],
      [
        ['t', 0],
        ['t', 1],
        ['t', 2],
        ['t', 3],
      ],
    ),
    member('m2', ['t']),
  ];
  const sticky = ASSIGNORS.sticky.assign(before, counts);
  assert.equal(sticky.get('m1')!.length, 2);
  assert.equal(sticky.get('m2')!.length, 2);
  assert.deepEqual(names(sticky.get('m1')), ['t-0', 't-1']);
  const coop = ASSIGNORS['cooperative-sticky'].assign(before, counts);
  assert.deepEqual(names(coop.get('m1')), ['t-0', 't-1']);
  assert.deepEqual(names(coop.get('m2')), [], 'partitions still owned by m1 wait for the next round');
  const next = ASSIGNORS['cooperative-sticky'].assign(
    [
      member(
        'm1',
        ['t'],
        [
          ['t', 0],
          ['t', 1],
        ],
      ),
      member('m2', ['t']),
    ],
    counts,
  );
  assert.deepEqual(names(next.get('m2')), ['t-2', 't-3']);
});
