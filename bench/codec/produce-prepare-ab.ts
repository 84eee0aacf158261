// `npm run bench -- produce-prepare-ab --baseline <dist dir> [options]`: the leader's preparation of a producer's
// batch (prepareProducedBatches: framing, header, CRC, decompression of a compressed batch and the walk over its
// records, the record rules) of this build against another build's, in one process, in alternating rounds
// (harness/paired-rounds.ts), for each codec a producer may send. The batches carry word text
// (harness/word-payloads.ts), so that the codecs compress as they do on log lines.
//
// Reported per codec: microseconds per batch of each build, and current / baseline (paired round by round).
//
// To build a baseline: `git worktree add <dir> <commit>`, link node_modules, `npx tsc -p tsconfig.json` there, then
// pass `--baseline <dir>/dist`.

import { parseArgs } from 'node:util';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import * as current from '../../src/broker/replica/leader-append.js';
import { compressionName } from '../../src/protocol/compression/compression-type.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import {
  codecList,
  importBaseline,
  pairedRounds,
  positiveInteger,
  summarize,
  wordPayload,
} from '../harness/index.js';
import { ResultWriter } from '../harness/results.js';
import { formatSummaryRange, formatTable } from '../harness/table.js';

const usage = `usage: npm run bench -- produce-prepare-ab --baseline DIR [options]
  --baseline DIR       the other build's output directory (the one holding src/broker/replica/leader-append.js)
  --codecs LIST        codecs of the producer's batches (default none,gzip,snappy,lz4,zstd)
  --record-bytes N     value bytes per record (default 1024)
  --batch-kib N        uncompressed records per batch, in KiB (default 128)
  --rounds N           rounds per repetition, each timing both builds (default 30)
  --repetitions N      at least 3 (default 3)
  --results-dir DIR    where the result file goes (default bench/results)`;

type LeaderAppend = Pick<typeof current, 'prepareProducedBatches'>;

/** Batches prepared per timed turn: enough that a turn lasts milliseconds. */
const BATCHES_PER_TURN = 50;
const UNBOUNDED_MS = Number.MAX_SAFE_INTEGER;

/** What prepareProducedBatches reads of a topic's settings: a topic with every default that matters here. */
const settings = {
  compressionType: 'producer',
  maxMessageBytes: 64 * 1024 * 1024,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: UNBOUNDED_MS,
  messageTimestampAfterMaxMs: UNBOUNDED_MS,
  cleanupPolicy: ['delete'],
} as unknown as TopicLogSettings;

/** Microseconds per batch of one turn; throws if the build refuses the batch (the comparison would be void). */
function timeTurn(m: LeaderAppend, batch: Buffer, nowMs: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < BATCHES_PER_TURN; i++) {
    const result = m.prepareProducedBatches(batch, settings, nowMs, true, 'bench-0');
    if (!result.ok) throw new Error(`the batch was refused: ${JSON.stringify(result)}`);
  }
  return Number(process.hrtime.bigint() - started) / 1000 / BATCHES_PER_TURN;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      baseline: { type: 'string' },
      codecs: { type: 'string', default: 'none,gzip,snappy,lz4,zstd' },
      'record-bytes': { type: 'string', default: '1024' },
      'batch-kib': { type: 'string', default: '128' },
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
  const baseline = await importBaseline<LeaderAppend>(values.baseline, 'src/broker/replica/leader-append.js');
  const codecs = codecList('--codecs', values.codecs);
  const recordBytes = positiveInteger('--record-bytes', values['record-bytes']);
  const perBatch = Math.max(
    1,
    Math.floor((positiveInteger('--batch-kib', values['batch-kib']) * 1024) / recordBytes),
  );
  const rounds = positiveInteger('--rounds', values.rounds);
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  const writer = new ResultWriter({ bench: 'produce-prepare-ab', args, dir: values['results-dir'] });
  const nowMs = Date.now();

  const rows: string[][] = [];
  for (const codec of codecs) {
    const records = Array.from({ length: perBatch }, () => ({ value: wordPayload(recordBytes) }));
    const batch = buildBatch(records, { compression: codec, timestamp: nowMs });
    const perRepetition = await pairedRounds(
      { baseline: () => timeTurn(baseline, batch, nowMs), current: () => timeTurn(current, batch, nowMs) },
      rounds,
      repetitions,
    );
    const base = summarize(perRepetition.map((r) => r.baseline));
    const now = summarize(perRepetition.map((r) => r.current));
    const ratio = summarize(perRepetition.map((r) => r.ratio));
    const name = compressionName(codec);
    const details = { codec: name, recordBytes, recordsPerBatch: perBatch, batchBytes: batch.length, rounds };
    writer.figure(`${name}-baseline`, 'us/batch', base, details);
    writer.figure(`${name}-current`, 'us/batch', now, details);
    writer.figure(`${name}-current/baseline`, 'ratio', ratio, details);
    rows.push([
      name,
      String(batch.length),
      formatSummaryRange(base),
      formatSummaryRange(now),
      formatSummaryRange(ratio),
    ]);
  }
  console.log(
    `${perBatch} records of ${recordBytes} B per batch, ${rounds} alternating rounds; median (min-max) of ${repetitions}`,
  );
  console.log(
    formatTable(
      ['codec', 'batch bytes', 'baseline us/batch', 'current us/batch', 'current / baseline'],
      rows,
    ),
  );
  console.log(`results: ${writer.path}`);
}
