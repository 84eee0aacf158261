import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { seededRandom } from '../../src/controller/random.js';
import {
  assignReplicas,
  type BrokerRack,
  rackAlternatedBrokers,
} from '../../src/controller/replica-assignment.js';
import { ErrorCode } from '../../src/protocol/errors.js';

function brokers(ids: number[], rack: (id: number) => string | null = () => null): BrokerRack[] {
  return ids.map((id) => ({ id: id as BrokerId, rack: rack(id) }));
}

function assigned(
  list: BrokerRack[],
  partitionCount: number,
  replicationFactor: number,
  seed = 1,
  fixedStartIndex = -1,
) {
  const r = assignReplicas(list, { partitionCount, replicationFactor, fixedStartIndex }, seededRandom(seed));
  assert.ok(r.ok, r.ok ? '' : r.errorMessage);
  return r.assignment;
}

test('without racks, a fixed start gives the assignment Kafka gives (5 brokers, 10 partitions, rf 3)', () => {
  const a = assigned(brokers([0, 1, 2, 3, 4]), 10, 3, 1, 0);
  assert.deepEqual(Object.fromEntries(a), {
    0: [0, 1, 2],
    1: [1, 2, 3],
    2: [2, 3, 4],
    3: [3, 4, 0],
    4: [4, 0, 1],
    5: [0, 2, 3],
    6: [1, 3, 4],
    7: [2, 4, 0],
    8: [3, 0, 1],
    9: [4, 1, 2],
  });
});

test('over many seeds, no partition has a replica twice and leaders and replicas are balanced', () => {
  for (let seed = 1; seed <= 50; seed++) {
    const ids = [1, 2, 3, 4, 5, 6];
    const a = assigned(brokers(ids), 12, 3, seed);
    assert.equal(a.size, 12);
    const leaders = new Map<number, number>();
    const replicas = new Map<number, number>();
    for (const list of a.values()) {
      assert.equal(new Set(list).size, 3, `seed ${seed}: ${list}`);
      leaders.set(list[0]!, (leaders.get(list[0]!) ?? 0) + 1);
      for (const r of list) replicas.set(r, (replicas.get(r) ?? 0) + 1);
    }
    for (const id of ids) {
      assert.equal(leaders.get(id), 2, `seed ${seed}: broker ${id} leads ${leaders.get(id)}`);
      assert.equal(replicas.get(id), 6, `seed ${seed}: broker ${id} holds ${replicas.get(id)}`);
    }
  }
});

test('with racks, every partition spans min(racks, rf) racks and leaders stay balanced', () => {
  const rackOf = (id: number) => ['a', 'b', 'c'][id % 3]!;
  for (let seed = 1; seed <= 30; seed++) {
    const list = brokers([0, 1, 2, 3, 4, 5, 6, 7, 8], rackOf);
    for (const rf of [2, 3, 4]) {
      const a = assigned(list, 18, rf, seed);
      const leaders = new Map<number, number>();
      for (const replicas of a.values()) {
        assert.equal(new Set(replicas).size, rf);
        assert.equal(
          new Set(replicas.map(rackOf)).size,
          Math.min(3, rf),
          `seed ${seed} rf ${rf}: ${replicas}`,
        );
        leaders.set(replicas[0]!, (leaders.get(replicas[0]!) ?? 0) + 1);
      }
      for (const n of leaders.values()) assert.equal(n, 2);
    }
  }
});

test('the rack-alternated list takes one broker of each rack in turn', () => {
  const list = brokers([0, 1, 2, 3, 4, 5], (id) => (id < 3 ? 'r1' : id < 5 ? 'r2' : 'r3'));
  assert.deepEqual(rackAlternatedBrokers(list), [0, 3, 5, 1, 4, 2]);
});

test('refusals: too few brokers, no partitions, zero replicas, racks on only some brokers', () => {
  const r = (list: BrokerRack[], partitionCount: number, replicationFactor: number) =>
    assignReplicas(list, { partitionCount, replicationFactor }, seededRandom(1));
  const tooMany = r(brokers([1, 2]), 1, 3);
  assert.ok(!tooMany.ok);
  assert.equal(tooMany.errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
  assert.equal(tooMany.errorMessage, 'Replication factor: 3 larger than available brokers: 2.');
  const none = r(brokers([1]), 0, 1);
  assert.ok(!none.ok && none.errorCode === ErrorCode.INVALID_PARTITIONS);
  const zero = r(brokers([1]), 1, 0);
  assert.ok(!zero.ok && zero.errorCode === ErrorCode.INVALID_REPLICATION_FACTOR);
  const partial = r(
    brokers([1, 2], (id) => (id === 1 ? 'a' : null)),
    1,
    1,
  );
  assert.ok(!partial.ok && partial.errorCode === ErrorCode.INVALID_REPLICA_ASSIGNMENT);
});

test('adding partitions with a fixed start continues the round-robin from the start partition id', () => {
  const r = assignReplicas(
    brokers([0, 1, 2]),
    { partitionCount: 2, replicationFactor: 2, startPartitionId: 3, fixedStartIndex: 0 },
    seededRandom(1),
  );
  assert.ok(r.ok);
  assert.deepEqual([...r.assignment.keys()], [3, 4]);
  assert.equal(r.assignment.get(3 as never)![0], 0);
  assert.equal(r.assignment.get(4 as never)![0], 1);
});
