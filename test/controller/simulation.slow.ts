import assert from 'node:assert/strict';
import { test } from 'node:test';
import { simulate } from './simulation.js';

const SEEDS = Number(process.env.BROOK_SIM_SEEDS ?? 150);

test(`seeded simulation over ${SEEDS} seeds of 80 steps: controller invariants hold`, async () => {
  let leaderChanges = 0;
  for (let seed = 1000; seed < 1000 + SEEDS; seed++)
    leaderChanges += (await simulate(seed, 80)).leaderChanges;
  assert.ok(leaderChanges > SEEDS * 5, `only ${leaderChanges} leader changes`);
});
