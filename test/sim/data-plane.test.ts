// The data-plane simulation (data-plane-simulation.ts) over a few hundred seeds: three brokers' partitions and
// real logs under delayed, dropped and reordered fetches, crashes (some losing unflushed bytes) and restarts,
// leader and ISR changes, with
// acks=all writes (min.insync.replicas=2, replication factor 3); every invariant checked at every step. A failing
// seed prints itself, how to replay it and its trace. The slow suite runs thousands (data-plane.slow.ts).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { testRoot } from '../storage/tmp-dir.js';
import { DataPlaneSimulation } from './data-plane-simulation.js';
import { runSeeds } from './run-seeds.js';

const SEEDS = 200;
const STEPS = 150;

test('data-plane simulation: no acknowledged write lost, high watermarks never back, ISR logs agree, over 200 seeds', async () => {
  const totals = await runSeeds(1, SEEDS, STEPS);
  console.log(`data-plane simulation: ${JSON.stringify(totals)}`);
  if (process.env.SIM_SEED !== undefined) return;
  // The runs must have exercised what they claim to check.
  assert.equal(totals.seeds, SEEDS);
  assert.ok(totals.acked > SEEDS * 2, `only ${totals.acked} acknowledged writes`);
  assert.ok(totals.crashes > SEEDS / 2, `only ${totals.crashes} crashes`);
  assert.ok(totals.powerLosses > SEEDS / 10, `only ${totals.powerLosses} power losses`);
  assert.ok(totals.leaderChanges > SEEDS / 2, `only ${totals.leaderChanges} leader moves`);
  assert.ok(totals.truncations > 10, `only ${totals.truncations} truncations`);
});

test('data-plane simulation: a seed replays step for step', async () => {
  const traces: string[][] = [];
  for (let run = 0; run < 2; run++) {
    const dir = mkdtempSync(join(testRoot(), 'brook-sim-replay-'));
    try {
      traces.push([...(await new DataPlaneSimulation({ seed: 4242, steps: STEPS, dir }).run()).trace]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  assert.ok(traces[0]!.length > STEPS);
  assert.deepEqual(traces[1], traces[0]);
});
