// Runs the limits of the registry: each repeated (three times by default) in a fresh temporary directory per
// repetition, summarised as median and range, written to the run's result file when one is given. This is the
// entry point for any benchmark that reports ratios: measure the limits it divides by in its own run.
import os from 'node:os';
import { assert } from '../../src/common/assert.js';
import { repeat, repetitionsMin, type Summary, summarize } from '../harness/repeat.js';
import type { ResultWriter } from '../harness/results.js';
import { withTempDir } from '../harness/temp-dir.js';
import { type LimitDefinition, limitDefinitions } from './registry.js';

/**
 * Time bounds of one repetition of one limit: three repetitions stay under about 20 s per limit, or about 3 s
 * with --quick. Benchmarks that measure limits in their own run should use these too.
 */
export const limitDurationMs = { full: 6000, quick: 1000 } as const;

export interface MeasureLimitsOptions {
  /** Names of the limits to measure (L_net, ...); all of the registry by default. */
  names?: readonly string[];
  repetitions?: number;
  /** Time bound of one repetition of one limit. */
  durationMs: number;
  /** Where temporary files go; it should be on the disk the broker under test writes to. */
  parentDir: string;
  diskBytesMax?: number;
  writer?: ResultWriter;
  log?: (message: string) => void;
  /** The limits to choose from; the registry by default (tests pass their own). */
  definitions?: readonly LimitDefinition[];
}

export interface LimitResult {
  name: string;
  unit: string;
  description: string;
  summary: Summary;
  /** Each repetition's details, in order. */
  details: Record<string, unknown>[];
  note: string;
}

/** Results by limit name, in the order they ran. */
export type LimitSet = Map<string, LimitResult>;

export async function measureLimits(options: MeasureLimitsOptions): Promise<LimitSet> {
  const definitions = options.definitions ?? limitDefinitions;
  const wanted = options.names ?? definitions.map((d) => d.name);
  const chosen = wanted.map((name) => {
    const definition = definitions.find((d) => d.name === name);
    assert(definition, `no limit named ${name}; known: ${definitions.map((d) => d.name).join(', ')}`);
    return definition;
  });
  const log = options.log ?? (() => {});
  const results: LimitSet = new Map();
  for (const definition of chosen) {
    const result = await measureLimit(definition, options, log);
    results.set(definition.name, result);
    options.writer?.figure(result.name, result.unit, result.summary, {
      description: result.description,
      durationMs: options.durationMs,
      repetitions: result.details,
    });
  }
  return results;
}

async function measureLimit(
  definition: LimitDefinition,
  options: MeasureLimitsOptions,
  log: (message: string) => void,
): Promise<LimitResult> {
  const samples = await repeat(options.repetitions ?? repetitionsMin, (repetition) =>
    withTempDir(options.parentDir, '.brook-bench-', async (workDir) => {
      const sample = await definition.measureOnce(
        { durationMs: options.durationMs, workDir, diskBytesMax: options.diskBytesMax, log },
        repetition,
      );
      assert(Number.isFinite(sample.value), `${definition.name} measured a non-finite value`);
      // The machine is shared: the load right after a repetition tells whether others competed for it.
      const loadAverage1m = os.loadavg()[0]!;
      log(
        `${definition.name} #${repetition + 1}: ${sample.value.toFixed(1)} ${definition.unit} (load ${loadAverage1m.toFixed(1)})`,
      );
      return { value: sample.value, details: { ...sample.details, loadAverage1m } };
    }),
  );
  const details = samples.map((s) => s.details);
  return {
    name: definition.name,
    unit: definition.unit,
    description: definition.description,
    summary: summarize(samples.map((s) => s.value)),
    details,
    note: definition.note?.(details) ?? '',
  };
}
