// The per-disk planner of `brook rebalance`: within each broker, replicas move from the fullest log directory to
// the emptiest while that narrows the gap, until the directories are within the tolerance of their mean; the
// byte limit bounds what it copies; brokers with one directory and partitions moving between brokers are left.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planDiskBalance } from '../../src/cli/rebalance-disks.js';

const r = (partition: number, sizeBytes: number) => ({ topic: 't', partition, sizeBytes });

test('a skewed broker reaches the tolerance; a broker with one directory is left alone', () => {
  const plan = planDiskBalance(
    [
      { broker: 1, logDir: '/a', replicas: [r(0, 500), r(1, 300), r(2, 200), r(3, 100)] },
      { broker: 1, logDir: '/b', replicas: [r(4, 50)] },
      { broker: 2, logDir: '/c', replicas: [r(5, 900)] },
    ],
    { maxMoveBytes: Number.POSITIVE_INFINITY, tolerance: 0.1 },
  );
  assert.ok(plan.complete);
  const after = new Map(plan.after.map((d) => [d.logDir, d.bytes]));
  const [a, b] = [after.get('/a')!, after.get('/b')!];
  assert.ok(Math.abs(a - b) <= 0.1 * ((a + b) / 2), `directories at ${a} and ${b}`);
  assert.equal(a + b, 1150, 'bytes only move');
  assert.equal(after.get('/c'), 900);
  assert.ok(plan.moves.every((m) => m.broker === 1 && m.fromDir === '/a' && m.toDir === '/b'));
  assert.equal(
    plan.movedBytes,
    plan.moves.reduce((n, m) => n + m.bytes, 0),
  );
});

test('the byte limit bounds the moves; skipped partitions stay', () => {
  const disks = [
    { broker: 1, logDir: '/a', replicas: [r(0, 400), r(1, 400), r(2, 400)] },
    { broker: 1, logDir: '/b', replicas: [] },
  ];
  const limited = planDiskBalance(disks, { maxMoveBytes: 399, tolerance: 0.1 });
  assert.deepEqual(limited.moves, []);
  assert.equal(limited.complete, false);
  const one = planDiskBalance(disks, { maxMoveBytes: 400, tolerance: 0.1 });
  assert.equal(one.movedBytes, 400);
  const skipped = planDiskBalance(disks, {
    maxMoveBytes: Number.POSITIVE_INFINITY,
    tolerance: 0.1,
    skip: new Set(['t-0']),
  });
  assert.ok(skipped.moves.every((m) => m.partition !== 0));
  assert.equal(skipped.moves.length, 1);
});

test('balanced directories get no moves, and a move never widens the gap', () => {
  const balanced = planDiskBalance(
    [
      { broker: 1, logDir: '/a', replicas: [r(0, 100), r(1, 100)] },
      { broker: 1, logDir: '/b', replicas: [r(2, 195)] },
    ],
    { maxMoveBytes: Number.POSITIVE_INFINITY, tolerance: 0.1 },
  );
  assert.deepEqual(balanced.moves, []);
  // One large replica: moving it would only swap which directory is full.
  const single = planDiskBalance(
    [
      { broker: 1, logDir: '/a', replicas: [r(0, 1000)] },
      { broker: 1, logDir: '/b', replicas: [] },
    ],
    { maxMoveBytes: Number.POSITIVE_INFINITY, tolerance: 0.1 },
  );
  assert.deepEqual(single.moves, []);
});
