// `npm run bench -- limits [options]`: measures the limits of this machine (disk with and without fdatasync,
// loopback TCP), prints them as a table and appends them to bench/results/<date>-limits.jsonl.
import { parseArgs } from 'node:util';
import { positiveNumber } from '../harness/options.js';
import { ResultWriter } from '../harness/results.js';
import { formatSummaryRange, formatTable } from '../harness/table.js';
import { limitDurationMs as durationMs, type LimitSet, measureLimits } from './measure-limits.js';
import { limitDefinitions } from './registry.js';

const usage = `usage: npm run bench -- limits [options]
  --quick                 about 3 s per limit instead of about 20 s
  --seconds N             time bound of one repetition (default ${durationMs.full / 1000}, quick ${durationMs.quick / 1000})
  --repetitions N         repetitions per limit, at least 3 (default 3)
  --only NAME[,NAME]      limits to measure (${limitDefinitions.map((d) => d.name).join(', ')})
  --dir DIR               where temporary files go, on the disk under test (default: current directory)
  --disk-bytes-max MiB    cap on the bytes one disk repetition writes
  --results-dir DIR       where the result file goes (default bench/results)`;

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      repetitions: { type: 'string', default: '3' },
      only: { type: 'string' },
      dir: { type: 'string', default: '.' },
      'disk-bytes-max': { type: 'string' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const seconds = values.seconds === undefined ? undefined : positiveNumber('--seconds', values.seconds);
  const diskMiB = values['disk-bytes-max'];
  const writer = new ResultWriter({ bench: 'limits', args, dir: values['results-dir'] });
  const limits = await measureLimits({
    names: values.only?.split(','),
    repetitions: positiveNumber('--repetitions', values.repetitions),
    durationMs: seconds !== undefined ? seconds * 1000 : values.quick ? durationMs.quick : durationMs.full,
    parentDir: values.dir,
    diskBytesMax:
      diskMiB === undefined ? undefined : positiveNumber('--disk-bytes-max', diskMiB) * 1024 * 1024,
    writer,
    log: (message) => console.log(message),
  });
  console.log(`\n${formatLimits(limits)}\n\nrun ${writer.runId} written to ${writer.path}`);
}

/** The human summary: one row per limit, median with range, and the limit's own note. */
export function formatLimits(limits: LimitSet): string {
  const rows = [...limits.values()].map((l) => [
    l.name,
    formatSummaryRange(l.summary),
    l.unit,
    String(l.summary.values.length),
    loadRange(l.details),
    l.description,
    l.note,
  ]);
  return formatTable(['limit', 'median (range)', 'unit', 'n', 'load', 'what', 'notes'], rows);
}

/** The 1-minute load averages seen after the repetitions; above the core count, the figures are suspect. */
function loadRange(details: readonly Record<string, unknown>[]): string {
  const loads = details.map((d) => d.loadAverage1m).filter((x): x is number => typeof x === 'number');
  if (loads.length === 0) return '';
  return `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`;
}
