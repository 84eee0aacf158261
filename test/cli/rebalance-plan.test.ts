import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type BrokerModel,
  type PartitionModel,
  planRebalance,
  type RebalancePlan,
} from '../../src/cli/rebalance-plan.js';
import { seededRandom } from '../../src/controller/random.js';

const MB = 1_000_000;

/** Six brokers on racks a, a, b, b, c, c. */
const SIX: BrokerModel[] = [1, 2, 3, 4, 5, 6].map((id) => ({ id, rack: 'abc'[Math.floor((id - 1) / 2)]! }));

/** `count` partitions of rf 3, all on brokers 1, 3 and 5 (one a rack), sizes 1..100 MB from a seed. */
function skewed(count: number, seed = 1): PartitionModel[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, p) => ({
    topic: p % 2 === 0 ? 'orders' : 'clicks',
    partition: p,
    replicas: [
      [1, 3, 5],
      [3, 5, 1],
      [5, 1, 3],
    ][p % 3]!,
    sizeBytes: (1 + random.nextInt(100)) * MB,
  }));
}

function spread(values: readonly number[]): number {
  return Math.max(...values) - Math.min(...values);
}

/** What the plan's assignment gives, computed again from its moves. */
function applied(partitions: readonly PartitionModel[], plan: RebalancePlan): PartitionModel[] {
  const to = new Map(plan.moves.map((m) => [`${m.topic}-${m.partition}`, m.to]));
  return partitions.map((p) => ({ ...p, replicas: to.get(`${p.topic}-${p.partition}`) ?? p.replicas }));
}

function checkRacks(
  brokers: readonly BrokerModel[],
  before: readonly PartitionModel[],
  after: readonly PartitionModel[],
) {
  const rack = new Map(brokers.map((b) => [b.id, b.rack]));
  for (const [i, p] of after.entries()) {
    assert.equal(
      new Set(p.replicas).size,
      p.replicas.length,
      `${p.topic}-${p.partition} has a duplicate replica`,
    );
    assert.equal(p.replicas.length, before[i]!.replicas.length, 'the replication factor stays');
    const racks = (r: readonly number[]) => new Set(r.map((b) => rack.get(b))).size;
    assert.ok(racks(p.replicas) >= racks(before[i]!.replicas), `${p.topic}-${p.partition} lost a rack`);
  }
}

test('a skewed cluster (three brokers empty) reaches balance within the tolerance, racks kept', () => {
  const partitions = skewed(30);
  const plan = planRebalance(SIX, partitions, { maxMoveBytes: Number.POSITIVE_INFINITY });
  assert.equal(plan.complete, true);
  assert.deepEqual(
    plan.before.filter((b) => b.replicas === 0).map((b) => b.id),
    [2, 4, 6],
  );
  const replicas = plan.after.map((b) => b.replicas);
  const leaders = plan.after.map((b) => b.leaders);
  const bytes = plan.after.map((b) => b.bytes);
  assert.ok(spread(replicas) <= 1, `replicas per broker ${replicas}`);
  assert.ok(spread(leaders) <= 1, `preferred leaders per broker ${leaders}`);
  const mean = bytes.reduce((a, b) => a + b, 0) / bytes.length;
  assert.ok(spread(bytes) <= 0.1 * mean, `bytes per broker ${bytes} (mean ${mean})`);
  const after = applied(partitions, plan);
  checkRacks(SIX, partitions, after);
  // The plan's totals are what its moves say.
  const copied = after.reduce(
    (n, p, i) => n + p.replicas.filter((r) => !partitions[i]!.replicas.includes(r)).length * p.sizeBytes,
    0,
  );
  assert.equal(plan.movedBytes, copied);
  assert.equal(
    plan.moves.reduce((n, m) => n + m.movedBytes, 0),
    copied,
  );
});

test('the byte limit bounds what a plan copies, and the next step goes on from there', () => {
  const partitions = skewed(30, 2);
  const limit = 400 * MB;
  const first = planRebalance(SIX, partitions, { maxMoveBytes: limit });
  assert.equal(first.complete, false);
  assert.ok(first.movedBytes > 0 && first.movedBytes <= limit, `moved ${first.movedBytes}`);
  const after = applied(partitions, first);
  checkRacks(SIX, partitions, after);
  const second = planRebalance(SIX, after, { maxMoveBytes: limit });
  assert.ok(second.movedBytes <= limit);
  assert.ok(
    spread(second.after.map((b) => b.replicas)) < spread(first.before.map((b) => b.replicas)),
    'each step narrows the spread',
  );
});

test('--remove-broker drains a broker; --add-broker is a broker with nothing yet', () => {
  const brokers: BrokerModel[] = [1, 2, 3, 4, 5, 6].map((id) => ({ id, rack: null }));
  const partitions = skewed(12, 3);
  const plan = planRebalance(brokers, partitions, {
    maxMoveBytes: Number.POSITIVE_INFINITY,
    removeBrokers: [1],
  });
  const after = applied(partitions, plan);
  assert.ok(
    after.every((p) => !p.replicas.includes(1)),
    'nothing left on broker 1',
  );
  checkRacks(brokers, partitions, after);
  const replicas = plan.after.filter((b) => b.id !== 1).map((b) => b.replicas);
  assert.ok(spread(replicas) <= 1, `replicas per remaining broker ${replicas}`);
  assert.equal(plan.after.find((b) => b.id === 1)!.replicas, 0);
  // With racks, a drained replica stays on its rack: broker 2 is rack a's only other broker.
  const racked = applied(
    partitions,
    planRebalance(SIX, partitions, { maxMoveBytes: Number.POSITIVE_INFINITY, removeBrokers: [1] }),
  );
  checkRacks(SIX, partitions, racked);
  assert.ok(racked.every((p) => p.replicas.includes(2) && !p.replicas.includes(1)));
});

test('a balanced cluster gets no moves', () => {
  const brokers: BrokerModel[] = [1, 2, 3].map((id) => ({ id, rack: null }));
  const partitions: PartitionModel[] = [
    { topic: 't', partition: 0, replicas: [1, 2], sizeBytes: MB },
    { topic: 't', partition: 1, replicas: [2, 3], sizeBytes: MB },
    { topic: 't', partition: 2, replicas: [3, 1], sizeBytes: MB },
  ];
  const plan = planRebalance(brokers, partitions, { maxMoveBytes: Number.POSITIVE_INFINITY });
  assert.deepEqual(plan.moves, []);
  assert.equal(plan.movedBytes, 0);
});
