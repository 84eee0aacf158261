// Two builds of the same step timed in one process, in alternating rounds: the A/B method of record-walk-ab and
// produce-prepare-ab. A change moves a step by tens of percent at most, less than two runs of one build differ on a
// busy shared machine; timing both back to back in every round puts them under the same load, so the ratio taken
// round by round holds where the absolute figures do not.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repeat, summarize } from './repeat.js';

/** The baseline build's module at `modulePath` (relative to its output directory, `--baseline DIR`). */
export async function importBaseline<T>(baselineDir: string, modulePath: string): Promise<T> {
  const path = resolve(baselineDir, modulePath);
  if (!existsSync(path)) throw new Error(`--baseline: no ${path}; build the other checkout first`);
  return (await import(pathToFileURL(path).href)) as T;
}

export interface PairedTurns {
  /** One timed turn of the baseline build: its figure (e.g. nanoseconds per record). */
  baseline: () => number;
  /** The same turn of the current build. */
  current: () => number;
}

export interface PairedRepetition {
  /** Median of the baseline's settled rounds. */
  baseline: number;
  /** Median of the current build's settled rounds. */
  current: number;
  /** Median of current / baseline, taken round by round. */
  ratio: number;
}

/**
 * `repetitions` repetitions of `rounds` rounds, each round timing both builds in an order that alternates. The
 * first quarter of the rounds runs while the optimising compiler is still at work and is left out.
 */
export async function pairedRounds(
  turns: PairedTurns,
  rounds: number,
  repetitions: number,
): Promise<PairedRepetition[]> {
  return repeat(repetitions, async () => {
    const times = { baseline: [] as number[], current: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
      for (const build of order) times[build].push(turns[build]());
    }
    const settled = Math.floor(rounds / 4);
    const ratios = times.current.slice(settled).map((t, i) => t / times.baseline[settled + i]!);
    return {
      baseline: summarize(times.baseline.slice(settled)).median,
      current: summarize(times.current.slice(settled)).median,
      ratio: summarize(ratios).median,
    };
  });
}
