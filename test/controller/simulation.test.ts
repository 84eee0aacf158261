import assert from 'node:assert/strict';
import { test } from 'node:test';
import { simulate } from './simulation.js';

test('seeded simulation: controller invariants hold through broker deaths, restarts, ISR changes, reassignments, topic deletions and elections', async () => {
  let leaderChanges = 0;
  let failovers = 0;
  let reassignmentSteps = 0;
  let deletions = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const result = await simulate(seed, 40);
    leaderChanges += result.leaderChanges;
    failovers += result.failovers;
    reassignmentSteps += result.reassignmentSteps;
    deletions += result.deletions;
  }
  // The runs must have exercised what they claim to check.
  assert.ok(leaderChanges > 50, `only ${leaderChanges} leader changes`);
  assert.ok(failovers > 5, `only ${failovers} controller failovers`);
  assert.ok(reassignmentSteps > 10, `only ${reassignmentSteps} replica set changes`);
  assert.ok(deletions > 3, `only ${deletions} topic deletions completed`);
});
