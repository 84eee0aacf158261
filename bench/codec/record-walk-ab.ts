// `npm run bench -- record-walk-ab --baseline <dist dir> [options]`: the record codec of this build against the
// same modules of another build (a checkout of the commit before a change, compiled), in one process, in
// alternating rounds. A change to the record walk moves it by tens of percent at most, less than two runs of
// `codec-records` differ on a busy shared machine; taking turns inside one process puts both builds under the
// same load, so their ratio holds where their absolute figures do not.
//
// Measured per build, in nanoseconds per record over one uncompressed batch of --records records of
// --record-bytes value bytes (null keys, no headers, as producers send them):
//   walk     skipRecord over every record: the framing walk the leader runs on a client's batch
//   decode   decodeRecord over every record: what consumers, compaction and conversions pay
// Each round runs both builds, in an order that alternates; a repetition reports the median of its rounds, and
// of the rounds' current/baseline ratios (paired, so the machine's load cancels), and each figure is the median
// of the repetitions with their range, as the benchmark protocol asks.
//
// To build a baseline: `git worktree add <dir> <commit> && cd <dir> && npm ci && npx tsc -p tsconfig.json`, then
// pass `--baseline <dir>/dist`.

import { parseArgs } from 'node:util';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { BATCH_HEADER_BYTES } from '../../src/protocol/records/batch-header.js';
import * as current from '../../src/protocol/records/record.js';
import { importBaseline, pairedRounds, positiveInteger, summarize } from '../harness/index.js';
import { ResultWriter } from '../harness/results.js';
import { formatSummaryRange, formatTable } from '../harness/table.js';

const usage = `usage: npm run bench -- record-walk-ab --baseline DIR [options]
  --baseline DIR       the other build's output directory (the one holding src/protocol/records/record.js)
  --record-bytes LIST  value bytes per record, comma-separated (default 100,1024)
  --records N          records per batch (default 1000)
  --rounds N           rounds per repetition, each timing both builds (default 30)
  --repetitions N      at least 3 (default 3)
  --results-dir DIR    where the result file goes (default bench/results)`;

/** What the benchmark calls in each build: the record module's walk and decoder. */
type RecordModule = Pick<typeof current, 'skipRecord' | 'decodeRecord' | 'recordEnd'>;

/** Batches walked per timed turn: enough that a turn lasts milliseconds, not microseconds. */
const BATCHES_PER_TURN = 200;

function recordsSection(records: number, valueBytes: number): Buffer {
  const batch = buildBatch(
    Array.from({ length: records }, (_, i) => ({ value: Buffer.alloc(valueBytes, i & 0xff) })),
    { baseOffset: 0, timestamp: 1_700_000_000_000 },
  );
  return batch.subarray(BATCH_HEADER_BYTES);
}

/** Nanoseconds per record of one turn: `BATCHES_PER_TURN` passes of `step` over the section. */
function timeTurn(section: Buffer, records: number, step: (section: Buffer) => number): number {
  const started = process.hrtime.bigint();
  let seen = 0;
  for (let i = 0; i < BATCHES_PER_TURN; i++) seen += step(section);
  const elapsed = Number(process.hrtime.bigint() - started);
  if (seen !== records * BATCHES_PER_TURN) throw new Error(`walked ${seen} records, expected more`);
  return elapsed / seen;
}

/** A pass over a records section calling `read` (skipRecord or decodeRecord) on each record; answers the count. */
function passOver(
  m: RecordModule,
  read: (section: Buffer, at: number) => unknown,
): (section: Buffer) => number {
  return (section) => {
    let at = 0;
    let n = 0;
    while (at < section.length) {
      read(section, at);
      at = m.recordEnd;
      n++;
    }
    return n;
  };
}

function walker(m: RecordModule): (section: Buffer) => number {
  return passOver(m, (section, at) => m.skipRecord(section, at, section.length));
}

function decoder(m: RecordModule): (section: Buffer) => number {
  return passOver(m, (section, at) => m.decodeRecord(section, at, section.length));
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      baseline: { type: 'string' },
      'record-bytes': { type: 'string', default: '100,1024' },
      records: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '30' },
      repetitions: { type: 'string', default: '3' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || values.baseline === undefined) {
    console.log(usage);
    return;
  }
  const baseline = await importBaseline<RecordModule>(values.baseline, 'src/protocol/records/record.js');
  const sizes = values['record-bytes'].split(',').map((s) => positiveInteger('--record-bytes', s));
  const records = positiveInteger('--records', values.records);
  const rounds = positiveInteger('--rounds', values.rounds);
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  const writer = new ResultWriter({ bench: 'record-walk-ab', args, dir: values['results-dir'] });

  const rows: string[][] = [];
  for (const valueBytes of sizes) {
    const section = recordsSection(records, valueBytes);
    for (const [what, make] of [
      ['walk', walker],
      ['decode', decoder],
    ] as const) {
      const builds = { baseline: make(baseline), current: make(current) };
      const perRepetition = await pairedRounds(
        {
          baseline: () => timeTurn(section, records, builds.baseline),
          current: () => timeTurn(section, records, builds.current),
        },
        rounds,
        repetitions,
      );
      const base = summarize(perRepetition.map((r) => r.baseline));
      const now = summarize(perRepetition.map((r) => r.current));
      const ratio = summarize(perRepetition.map((r) => r.ratio));
      const details = { valueBytes, records, rounds };
      writer.figure(`${what}-baseline`, 'ns/record', base, details);
      writer.figure(`${what}-current`, 'ns/record', now, details);
      writer.figure(`${what}-current/baseline`, 'ratio', ratio, details);
      rows.push([
        `${what}, ${valueBytes} B`,
        formatSummaryRange(base),
        formatSummaryRange(now),
        formatSummaryRange(ratio),
      ]);
    }
  }
  console.log(
    `${records} records per batch, ${rounds} alternating rounds; median (min-max) of ${repetitions}`,
  );
  console.log(formatTable(['step', 'baseline ns/record', 'current ns/record', 'current / baseline'], rows));
  console.log(`results: ${writer.path}`);
}
