// Compaction throughput: how fast one cleaning pass goes through a compacted log, against L_disk_async
// measured in the same run (the rate at which this process can append into the page cache, which bounds a
// pass that reads and rewrites the log). A log of `--mib` of keyed records (`--value-bytes` values, `--keys`
// distinct keys written round after round, so most records are shadowed) is written once; each repetition
// cleans a fresh copy of it. The figure is log bytes cleaned per second (the size of the log before the pass
// over the time of the pass). The event-loop delay during the pass is reported too: cleaning must not hold the
// loop that serves appends and fetches.
// Run: `node <outDir>/bench/storage/compaction.js [--mib 256] [--value-bytes 1024] [--keys 20000]
//       [--codec 0] [--dir .] [--quick] [--no-results]`.

import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../src/common/clock.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { cleanLog } from '../../src/storage/cleaner/clean-log.js';
import { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  formatRange,
  formatSummaryRange,
  formatTable,
  megabytesPerSecond,
  monitorEventLoop,
  ResultWriter,
  ratioOfSummaries,
  repeat,
  summarize,
  withTempDir,
} from '../harness/index.js';
import { limitDurationMs, measureLimits } from '../limits/index.js';

export async function run(args: string[]): Promise<void> {
  const arg = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const quick = args.includes('--quick');
  const mib = arg('--mib', quick ? 32 : 256);
  const valueBytes = arg('--value-bytes', 1024);
  const keys = arg('--keys', 20_000);
  const codec = arg('--codec', 0);
  const dirIndex = args.indexOf('--dir');
  const parent = dirIndex >= 0 ? args[dirIndex + 1]! : '.';
  const writer = args.includes('--no-results')
    ? null
    : new ResultWriter({ bench: 'storage-compaction', args });
  const limits = await measureLimits({
    names: ['L_disk_async'],
    durationMs: quick ? limitDurationMs.quick : limitDurationMs.full,
    parentDir: parent,
    writer: writer ?? undefined,
  });
  await withTempDir(parent, '.brook-bench-compaction-', async (root) => {
    const config = logConfig({ cleanupPolicy: 'compact', segmentBytes: 64 * 1024 * 1024, retentionMs: -1 });
    const tp = { topic: 'table', partition: 0 };
    const clock = new ManualClock();
    const source = join(root, 'table-0');
    mkdirSync(source);
    const log = Log.open({ dir: source, topicPartition: tp, config, clock, hadCleanShutdown: true });
    const value = Buffer.alloc(valueBytes, 'v');
    for (let i = 0; log.sizeInBytes < mib * 1024 * 1024; ) {
      const records = Array.from({ length: 10 }, () => ({ key: `key-${i++ % keys}`, value }));
      const batch = buildBatch(records, { compression: codec, timestamp: clock.nowMs() });
      batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
      log.append(batch);
    }
    log.roll();
    log.close();
    const delays: number[] = [];
    const maxDelays: number[] = [];
    const ratios: number[] = [];
    let pass = 0;
    const rates = await repeat(3, async () => {
      const dir = join(root, `copy-${pass++}`, 'table-0');
      cpSync(source, dir, { recursive: true });
      const copy = Log.open({ dir, topicPartition: tp, config, clock, hadCleanShutdown: true });
      copy.setHighWatermark(copy.logEndOffset);
      const before = copy.sizeInBytes;
      const monitor = monitorEventLoop(1);
      const started = performance.now();
      const result = await cleanLog(copy, {
        firstDirtyOffset: 0,
        dedupeBufferBytes: 128 * 1024 * 1024,
        loadFactor: 0.9,
        ioBufferBytes: 256 * 1024,
        nowMs: clock.nowMs(),
      });
      const seconds = (performance.now() - started) / 1000;
      const loop = monitor.stop();
      if (result === null) throw new Error('the pass cleaned nothing');
      delays.push(loop.p99);
      maxDelays.push(loop.max);
      ratios.push(copy.sizeInBytes / before);
      copy.close();
      rmSync(join(dir, '..'), { recursive: true, force: true });
      return megabytesPerSecond(before, seconds);
    });
    const rate = summarize(rates);
    const limit = limits.get('L_disk_async')!.summary;
    const ratio = ratioOfSummaries(rate, limit);
    const params = { mib, valueBytes, keys, codec };
    writer?.figure('compaction-clean', 'MB/s', rate, params);
    writer?.figure('compaction-loop-delay-p99', 'ms', summarize(delays), params);
    writer?.figure('compaction-loop-delay-max', 'ms', summarize(maxDelays), params);
    writer?.write('R_compaction_vs_L_disk_async', { ...ratio, ...params });
    console.log(
      formatTable(
        ['figure', 'median (min-max)'],
        [
          ['clean MB/s', formatSummaryRange(rate)],
          ['L_disk_async MB/s', formatSummaryRange(limit)],
          ['clean / L_disk_async', `${(ratio.median * 100).toFixed(0)} %`],
          ['log size after / before', `${(summarize(ratios).median * 100).toFixed(1)} %`],
          ['event-loop delay p99 ms', formatRange(...minMax(delays))],
          ['event-loop delay max ms', formatRange(...minMax(maxDelays))],
        ],
      ),
    );
  });
}

function minMax(values: number[]): [number, number, number] {
  const s = summarize(values);
  return [s.median, s.min, s.max];
}

if (process.argv[1]?.endsWith('compaction.js')) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
