// Repetition and its summary. Every figure a benchmark reports is the median of at least three repetitions,
// with the range beside it, because one run on a shared two-core machine says little on its own.
import { assert } from '../../src/common/assert.js';

/** Fewest repetitions a reported figure may rest on (the benchmark protocol's rule). */
export const repetitionsMin = 3;

/** Median and range of the values of one figure over its repetitions, in the figure's unit. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  /** The repetitions in the order they ran, so drift (warm-up, a noisy neighbour) stays visible. */
  values: number[];
}

export function summarize(values: readonly number[]): Summary {
  assert(values.length > 0, 'cannot summarize no values');
  for (const v of values) assert(Number.isFinite(v), `cannot summarize a non-finite value: ${v}`);
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, values: [...values] };
}

/** Spread of a summary relative to its median (0.05 = the range spans 5 % of the median); 0 if the median is 0. */
export function relativeRange(s: Summary): number {
  return s.median === 0 ? 0 : (s.max - s.min) / Math.abs(s.median);
}

/**
 * Runs `measure` `times` times, one after the other (never concurrently, so repetitions do not compete for the
 * two cores), and returns what each returned. `measure` receives the repetition's index from 0.
 */
export async function repeat<T>(times: number, measure: (repetition: number) => Promise<T>): Promise<T[]> {
  assert(
    Number.isInteger(times) && times >= repetitionsMin,
    `repeat at least ${repetitionsMin} times, got ${times}`,
  );
  const out: T[] = [];
  for (let i = 0; i < times; i++) out.push(await measure(i));
  return out;
}
