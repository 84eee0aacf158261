// Runs the data-plane simulation over a range of seeds, each in a temporary directory of its own (removed after,
// kept when the seed fails so that its logs can be looked at), and sums what the runs exercised.
// SIM_SEED=<n> runs that one seed instead, and SIM_TRACE=1 prints its whole trace (replaying a failure).

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { testRoot } from '../storage/tmp-dir.js';
import { DataPlaneSimulation, SimulationFailure, type SimulationOptions } from './data-plane-simulation.js';

export interface SeedTotals {
  seeds: number;
  acked: number;
  produced: number;
  crashes: number;
  powerLosses: number;
  leaderChanges: number;
  truncations: number;
  healStepsMax: number;
}

export async function runSeeds(
  first: number,
  count: number,
  steps: number,
  options: Partial<SimulationOptions> = {},
): Promise<SeedTotals> {
  const only = process.env.SIM_SEED;
  const seeds = only !== undefined ? [Number(only)] : Array.from({ length: count }, (_, i) => first + i);
  const stepsRun = process.env.SIM_STEPS !== undefined ? Number(process.env.SIM_STEPS) : steps;
  const totals: SeedTotals = {
    seeds: 0,
    acked: 0,
    produced: 0,
    crashes: 0,
    powerLosses: 0,
    leaderChanges: 0,
    truncations: 0,
    healStepsMax: 0,
  };
  for (const seed of seeds) {
    const dir = mkdtempSync(join(testRoot(), `brook-sim-${seed}-`));
    try {
      const result = await new DataPlaneSimulation({ ...options, seed, steps: stepsRun, dir }).run();
      if (process.env.SIM_TRACE === '1') console.log(result.trace.join('\n'));
      totals.seeds++;
      totals.acked += result.acked;
      totals.produced += result.produced;
      totals.crashes += result.crashes;
      totals.powerLosses += result.powerLosses;
      totals.leaderChanges += result.leaderChanges;
      totals.truncations += result.truncations;
      totals.healStepsMax = Math.max(totals.healStepsMax, result.healSteps);
      await removeSeedDir(dir);
    } catch (err) {
      if (err instanceof SimulationFailure && process.env.SIM_TRACE === '1')
        console.log(err.trace.join('\n'));
      if (err instanceof SimulationFailure) err.message += `\nbroker directories kept in ${dir}`;
      throw err;
    }
  }
  return totals;
}

/**
 * Removes a passed seed's directory. The run ends with every broker crashed (kill -9 in memory), so file writes
 * the last incarnations started (a snapshot, a new segment's index) can still be landing: a plain recursive
 * remove then fails with ENOTEMPTY when a file appears in a directory it has just emptied. Let those writes
 * finish, and let rmSync retry the directories that were refilled.
 */
async function removeSeedDir(dir: string): Promise<void> {
  await sleep(10);
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
}
