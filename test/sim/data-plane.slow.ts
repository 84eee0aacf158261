// The data-plane simulation over 1000 seeds beyond the fast suite's (see data-plane.test.ts and README.md).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSeeds } from './run-seeds.js';

const FIRST_SEED = 1001;
const SEEDS = 1000;
const STEPS = 200;

test('data-plane simulation: 1000 more seeds keep every invariant', async () => {
  const totals = await runSeeds(FIRST_SEED, SEEDS, STEPS);
  console.log(`data-plane simulation (slow): ${JSON.stringify(totals)}`);
  if (process.env.SIM_SEED === undefined) assert.equal(totals.seeds, SEEDS);
});
