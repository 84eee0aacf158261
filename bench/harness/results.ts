// Result files: one JSON object per line under bench/results/<yyyy-mm-dd>-<bench>.jsonl (UTC date), appended
// so that several runs of a day share a file. Each run starts with a "run" line describing the host; every
// line carries the run's id, which is how a figure is matched with the limits measured in the same run.
// Lines are written synchronously and are small: write between measurements, never inside one.
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import type { LatencySummary } from './histogram.js';
import { describeHost } from './host-info.js';
import type { Summary } from './repeat.js';

/** bench/results of the checkout, found from this module's place (dist*\/bench/harness/results.js). */
export const defaultResultsDir = fileURLToPath(new URL('../../../bench/results/', import.meta.url));

/** The fields every line starts with, in this order. */
export interface ResultLineHead {
  /** When the line was written, ISO 8601 UTC. */
  time: string;
  runId: string;
  /** The benchmark's name as in bench/main.ts (`limits`). */
  bench: string;
  /** What the line reports: `run` for the header, else a figure's name (`L_disk_sync`, `produce-latency`). */
  name: string;
}

export type ResultLine = ResultLineHead & Record<string, unknown>;

/** The file name for `bench` on the UTC day of `date`. */
export function resultFileName(bench: string, date: Date): string {
  assert(/^[a-z0-9][a-z0-9-]*$/.test(bench), `benchmark names are kebab-case: ${bench}`);
  return `${date.toISOString().slice(0, 10)}-${bench}.jsonl`;
}

/**
 * The command-line arguments as a run's head line records them: an absolute path (a results or data directory
 * of this machine) says nothing about the run and is written as `<path>`.
 */
export function recordedArgs(args: readonly string[]): string[] {
  return args.map((arg) => (isAbsolute(arg) ? '<path>' : arg.replace(/=\/.*$/, '=<path>')));
}

/** Serialises one line: head fields first, then the rest; rejects values JSON would silently turn into null. */
export function formatResultLine(line: ResultLine): string {
  const { time, runId, bench, name, ...rest } = line;
  assertSerialisable(rest, name);
  return `${JSON.stringify({ time, runId, bench, name, ...rest })}\n`;
}

function assertSerialisable(value: unknown, path: string): void {
  if (typeof value === 'number') {
    assert(Number.isFinite(value), `${path} is not a finite number: ${value}`);
  } else if (typeof value === 'bigint') {
    assert(false, `${path} is a bigint; convert it to a number or string`);
  } else if (value !== null && typeof value === 'object') {
    // Arrays too: their entries are their indexes.
    for (const [k, v] of Object.entries(value)) assertSerialisable(v, `${path}.${k}`);
  }
}

export interface ResultWriterOptions {
  bench: string;
  /** Directory of the result files; bench/results by default (tests pass a temporary one). */
  dir?: string;
  /** The run's command-line arguments, kept in the header so a run can be repeated. */
  args?: readonly string[];
  now?: () => Date;
}

export class ResultWriter {
  readonly path: string;
  readonly runId: string;
  readonly bench: string;
  private readonly now: () => Date;

  constructor(options: ResultWriterOptions) {
    this.now = options.now ?? (() => new Date());
    this.bench = options.bench;
    const started = this.now();
    const dir = options.dir ?? defaultResultsDir;
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, resultFileName(options.bench, started));
    this.runId = `${started.toISOString().replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
    this.write('run', { args: recordedArgs(options.args ?? []), host: describeHost() });
  }

  /** Appends a line named `name` with `fields` after the head fields. */
  write(name: string, fields: Record<string, unknown> = {}): ResultLine {
    const line: ResultLine = {
      time: this.now().toISOString(),
      runId: this.runId,
      bench: this.bench,
      name,
      ...fields,
    };
    appendFileSync(this.path, formatResultLine(line));
    return line;
  }

  /** A repeated figure: its unit, median, range and every repetition's value. */
  figure(name: string, unit: string, summary: Summary, details: Record<string, unknown> = {}): ResultLine {
    const { median, min, max, values } = summary;
    return this.write(name, { unit, median, min, max, n: values.length, values, ...details });
  }

  /** A latency distribution (one histogram, possibly merged over repetitions). */
  latency(name: string, summary: LatencySummary, details: Record<string, unknown> = {}): ResultLine {
    return this.write(name, { ...summary, ...details });
  }
}
