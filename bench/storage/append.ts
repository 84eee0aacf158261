// Append throughput of the storage engine against the disk limits of the benchmark protocol, paired in the
// same run (BENCHMARKS.md):
//
//   D0: Log.append (synchronous, page cache)                       vs  L_disk_async's loop
//   D0 queued: Log.appendQueued (the broker's path: offsets at once, one writev per log off the event loop),
//       `--queued-inflight` appenders each waiting for `written`     vs  L_disk_async's loop
//   D1: Log.appendQueued with ackAfterFsync, `--inflight` appenders each waiting for `durable` (group commit)
//                                                                    vs  L_disk_sync's loop
//
// The baselines are the limits' own measurement code (bench/limits), not a look-alike: 256 KiB writes through
// the thread pool, one at a time (L_disk_async), and the same with fdatasync every 2 ms (L_disk_sync). At D0
// both sides write the same volume, `--megabytes` (default: the kernel's dirty limit, so that the throttled,
// disk-bound phase weighs in as it does in L_disk_async), and are timed; at D1 both run `--seconds`. The log
// appends `--batch-bytes` batches, by default of the limits' own write size (256 KiB) so that both sides make
// the same writes; smaller batches (Kafka's batch.size default is 16 KiB) show the engine's cost per append. Before every side the kernel's writeback is
// left to settle, and the sides alternate which goes first, so that neither inherits the other's dirty pages.
// Each repetition gives a ratio (log over its paired baseline); the figure is the median of `--repetitions`
// of them with the range. CPU seconds of each side are recorded too (MB per CPU-second), since once the disk
// is the bottleneck the engine's own cost shows there rather than in MB/s.

import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { crc32c } from '@node-rs/crc32';
import { systemClock } from '../../src/common/clock.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { appendQueuedAwaitable, Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  formatSummaryRange,
  formatTable,
  megabytesPerSecond,
  ResultWriter,
  repeat,
  type Summary,
  summarize,
  waitForWriteback,
  withTempDir,
} from '../harness/index.js';
import { freeDiskBytes, readDirtyLimit } from '../limits/dirty-limit.js';
import { diskAsyncLimit, planAsyncBytes } from '../limits/disk-async-limit.js';
import { diskSyncLimit } from '../limits/disk-sync-limit.js';
import { writeBytes } from '../limits/write-buffers.js';

const usage = `usage: npm run bench -- storage-append [options]
  --megabytes N         bytes one D0 side writes, MB (default: the kernel's dirty limit, capped by half the free disk)
  --seconds N           time bound of one D1 side (default 3)
  --batch-bytes N       size of one appended batch (default 262144, the limits' write size)
  --inflight N          D1 appenders waiting for durable (default 8)
  --queued-inflight N   D0 queued appenders waiting for written (default 32)
  --repetitions N       at least 3 (default 5)
  --only LIST           d0,d0-queued,d1 (default all)
  --dir DIR             where the files go, on the disk under test (default .)
  --results-dir DIR     where the result file goes (default bench/results)
  --no-results          write no result file`;

type Mode = 'd0' | 'd0-queued' | 'd1';

interface Options {
  volumeBytes: number;
  volumeBound: string;
  seconds: number;
  batchBytes: number;
  inflight: number;
  queuedInflight: number;
  repetitions: number;
  modes: Mode[];
  dir: string;
  resultsDir: string | undefined;
  results: boolean;
}

function options(args: string[]): Options | null {
  const { values } = parseArgs({
    args,
    options: {
      megabytes: { type: 'string' },
      seconds: { type: 'string', default: '3' },
      'batch-bytes': { type: 'string', default: String(writeBytes) },
      inflight: { type: 'string', default: '8' },
      'queued-inflight': { type: 'string', default: '32' },
      repetitions: { type: 'string', default: '5' },
      only: { type: 'string', default: 'd0,d0-queued,d1' },
      dir: { type: 'string', default: '.' },
      'results-dir': { type: 'string' },
      'no-results': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return null;
  }
  const positive = (flag: string, text: string): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${flag} needs a positive number, got '${text}'`);
    return n;
  };
  const modes = values.only.split(',') as Mode[];
  for (const m of modes) if (!['d0', 'd0-queued', 'd1'].includes(m)) throw new Error(`unknown mode ${m}`);
  // The same budget rule as L_disk_async, with the dirty limit (not twice it) as the target to keep runs short.
  const requested =
    values.megabytes === undefined ? undefined : positive('megabytes', values.megabytes) * 1e6;
  const plan = planAsyncBytes(readDirtyLimit().bytes, freeDiskBytes(values.dir), requested);
  return {
    volumeBytes: plan.bytes,
    volumeBound: requested !== undefined && plan.bound === 'bytes-max' ? 'megabytes' : plan.bound,
    seconds: positive('seconds', values.seconds),
    batchBytes: Math.max(128, Math.floor(positive('batch-bytes', values['batch-bytes']))),
    inflight: Math.floor(positive('inflight', values.inflight)),
    queuedInflight: Math.floor(positive('queued-inflight', values['queued-inflight'])),
    repetitions: Math.max(3, Math.floor(positive('repetitions', values.repetitions))),
    modes,
    dir: values.dir,
    resultsDir: values['results-dir'],
    results: !values['no-results'],
  };
}

/** Sixteen v2 batches of one record each with random payload, so the disk cannot dedup or compress them. */
function makeBatches(batchBytes: number): Buffer[] {
  return Array.from({ length: 16 }, () => {
    const buf = Buffer.alloc(batchBytes);
    const payload = batchBytes - 61 - 8;
    buf.writeInt32BE(batchBytes - 12, 8);
    buf.writeInt8(2, 16);
    buf.writeBigInt64BE(BigInt(Date.now()), 27);
    buf.writeBigInt64BE(BigInt(Date.now()), 35);
    buf.writeBigInt64BE(-1n, 43);
    buf.writeInt16BE(-1, 51);
    buf.writeInt32BE(-1, 53);
    buf.writeInt32BE(1, 57);
    // One record: length, attributes, timestampDelta, offsetDelta, key -1, value length, value, headers 0.
    const record = Buffer.alloc(batchBytes - 61);
    randomBytes(payload).copy(record, 8);
    buf.set(record, 61);
    buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
    return buf;
  });
}

/** What one side of a pair measured. */
interface Side {
  megabytesPerSecond: number;
  bytes: number;
  cpuSeconds: number;
}

/** Runs `body` (which returns bytes written and seconds taken) and adds this process's CPU time meanwhile. */
async function measured(body: () => Promise<{ bytes: number; seconds: number }>): Promise<Side> {
  const cpu = process.cpuUsage();
  const { bytes, seconds } = await body();
  const used = process.cpuUsage(cpu);
  return {
    megabytesPerSecond: megabytesPerSecond(bytes, seconds),
    bytes,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

function openLog(dir: string, ackAfterFsync: boolean): Log {
  return Log.open({
    dir,
    topicPartition: { topic: 'bench', partition: 0 },
    config: logConfig({ ackAfterFsync }),
    clock: systemClock,
    hadCleanShutdown: true,
  });
}

const noLog = (): void => {};

/**
 * After the timed part: descriptors released, nothing flushed. A clean close would fsync the gigabytes just
 * written, which the baseline never does (its file is removed with its dirty pages), and the disk would still
 * be busy with them when the next side starts.
 */
function releaseLog(log: Log): void {
  log.abandon();
}

/** L_disk_async's own repetition, capped at `volumeBytes` (and a generous time bound for safety only). */
async function diskAsync(dir: string, volumeBytes: number): Promise<Side> {
  return measured(async () => {
    const sample = await diskAsyncLimit.measureOnce(
      { durationMs: 300_000, workDir: dir, diskBytesMax: volumeBytes, log: noLog },
      0,
    );
    return { bytes: sample.details.bytes as number, seconds: sample.details.seconds as number };
  });
}

/** L_disk_sync's own repetition for `seconds`. */
async function diskSync(dir: string, seconds: number): Promise<Side> {
  return measured(async () => {
    const sample = await diskSyncLimit.measureOnce(
      { durationMs: seconds * 1000, workDir: dir, log: noLog },
      0,
    );
    return { bytes: sample.details.bytes as number, seconds: sample.details.seconds as number };
  });
}

/** Log.append of `volumeBytes`, yielding to the event loop every 256 appends as a broker would. */
async function logAppend(dir: string, batches: Buffer[], volumeBytes: number): Promise<Side> {
  return measured(async () => {
    const log = openLog(dir, false);
    const start = performance.now();
    let bytes = 0;
    for (let i = 0; bytes < volumeBytes; i++) {
      const b = batches[i & 15]!;
      batchHeader.setBaseOffset(b, 0, log.logEndOffset);
      log.append(b);
      bytes += b.length;
      if ((i & 255) === 0) await new Promise((r) => setImmediate(r));
    }
    const seconds = (performance.now() - start) / 1000;
    releaseLog(log);
    return { bytes, seconds };
  });
}

/**
 * Log.appendQueued of `volumeBytes` by `inflight` appenders, each waiting for its append to be written before
 * the next, as acks=1 producers do. Each owns one copy of a batch, reused once its previous append is written
 * (the log holds the bytes until then), so that no copy per append weighs on this side.
 */
async function logQueued(
  dir: string,
  batches: Buffer[],
  volumeBytes: number,
  inflight: number,
): Promise<Side> {
  return measured(async () => {
    const log = openLog(dir, false);
    const start = performance.now();
    let bytes = 0;
    const appender = async (k: number): Promise<void> => {
      const own = Buffer.from(batches[k & 15]!);
      while (bytes < volumeBytes) {
        batchHeader.setBaseOffset(own, 0, log.logEndOffset);
        const info = appendQueuedAwaitable(log, own);
        bytes += own.length;
        await info.acknowledged;
      }
    };
    await Promise.all(Array.from({ length: inflight }, (_, k) => appender(k)));
    const seconds = (performance.now() - start) / 1000;
    releaseLog(log);
    return { bytes, seconds };
  });
}

/**
 * Log.appendQueued with ackAfterFsync for `seconds`, by `inflight` appenders each waiting for its append to
 * be durable before the next, as producers with one request in flight each: group commit lets them share
 * fdatasyncs. Only durable bytes are counted.
 */
async function logDurable(dir: string, batches: Buffer[], seconds: number, inflight: number): Promise<Side> {
  return measured(async () => {
    const log = openLog(dir, true);
    const start = performance.now();
    const end = start + seconds * 1000;
    let bytes = 0;
    const appender = async (k: number): Promise<void> => {
      const own = Buffer.from(batches[k & 15]!);
      while (performance.now() < end) {
        batchHeader.setBaseOffset(own, 0, log.logEndOffset);
        const info = appendQueuedAwaitable(log, own);
        await info.acknowledged;
        bytes += own.length;
      }
    };
    await Promise.all(Array.from({ length: inflight }, (_, k) => appender(k)));
    const elapsed = (performance.now() - start) / 1000;
    releaseLog(log);
    return { bytes, seconds: elapsed };
  });
}

interface PairResult {
  baseline: Side[];
  log: Side[];
  /** Per repetition: log MB/s over its paired baseline's. */
  ratios: number[];
  /** Load average (1 minute) after each repetition. */
  loads: number[];
}

export async function run(args: string[]): Promise<void> {
  const o = options(args);
  if (o === null) return;
  const batches = makeBatches(o.batchBytes);
  const writer = o.results ? new ResultWriter({ bench: 'storage-append', args, dir: o.resultsDir }) : null;
  const inTemp = (use: (dir: string) => Promise<Side>): Promise<Side> =>
    withTempDir(o.dir, '.brook-bench-storage-', async (dir) => {
      await waitForWriteback();
      return use(dir);
    });
  const paired = async (
    baseline: (dir: string) => Promise<Side>,
    log: (dir: string) => Promise<Side>,
  ): Promise<PairResult> => {
    const result: PairResult = { baseline: [], log: [], ratios: [], loads: [] };
    await repeat(o.repetitions, async (rep) => {
      let b: Side;
      let l: Side;
      if (rep % 2 === 0) {
        b = await inTemp(baseline);
        l = await inTemp(log);
      } else {
        l = await inTemp(log);
        b = await inTemp(baseline);
      }
      result.baseline.push(b);
      result.log.push(l);
      result.ratios.push(l.megabytesPerSecond / b.megabytesPerSecond);
      result.loads.push(loadavg()[0]!);
    });
    return result;
  };
  const details = {
    volumeBytes: o.volumeBytes,
    volumeBound: o.volumeBound,
    batchBytes: o.batchBytes,
    inflight: o.inflight,
    queuedInflight: o.queuedInflight,
    d1Seconds: o.seconds,
  };
  const rows: string[][] = [];
  const modes: [Mode, string, string, () => Promise<PairResult>][] = [
    [
      'd0',
      'L_disk_async loop',
      'Log.append',
      () =>
        paired(
          (dir) => diskAsync(dir, o.volumeBytes),
          (dir) => logAppend(dir, batches, o.volumeBytes),
        ),
    ],
    [
      'd0-queued',
      'L_disk_async loop',
      'Log.appendQueued',
      () =>
        paired(
          (dir) => diskAsync(dir, o.volumeBytes),
          (dir) => logQueued(dir, batches, o.volumeBytes, o.queuedInflight),
        ),
    ],
    [
      'd1',
      'L_disk_sync loop',
      'Log.appendQueued group commit',
      () =>
        paired(
          (dir) => diskSync(dir, o.seconds),
          (dir) => logDurable(dir, batches, o.seconds, o.inflight),
        ),
    ],
  ];
  for (const [mode, baselineName, logName, measure] of modes) {
    if (!o.modes.includes(mode)) continue;
    const r = await measure();
    const mbps = (sides: Side[]): Summary => summarize(sides.map((s) => s.megabytesPerSecond));
    const perCpu = (sides: Side[]): Summary => summarize(sides.map((s) => s.bytes / 1e6 / s.cpuSeconds));
    const ratio = summarize(r.ratios);
    const loads = summarize(r.loads);
    writer?.figure(`baseline-${mode}`, 'MB/s', mbps(r.baseline), { ...details, what: baselineName });
    writer?.figure(`log-${mode}`, 'MB/s', mbps(r.log), { ...details, what: logName });
    writer?.figure(`baseline-${mode}-per-cpu`, 'MB/CPU-s', perCpu(r.baseline), details);
    writer?.figure(`log-${mode}-per-cpu`, 'MB/CPU-s', perCpu(r.log), details);
    writer?.figure(`R_append_${mode.replace('-', '_')}`, 'ratio', ratio, {
      ...details,
      loadAverage1m: loads,
    });
    rows.push([
      mode,
      baselineName,
      formatSummaryRange(mbps(r.baseline)),
      formatSummaryRange(perCpu(r.baseline)),
      '',
      '',
    ]);
    rows.push([
      mode,
      logName,
      formatSummaryRange(mbps(r.log)),
      formatSummaryRange(perCpu(r.log)),
      formatSummaryRange(ratio),
      `${loads.min.toFixed(1)}-${loads.max.toFixed(1)}`,
    ]);
  }
  console.log(
    `D0 volume ${(o.volumeBytes / 1e9).toFixed(2)} GB per side (${o.volumeBound}), D1 ${o.seconds} s per side, ` +
      `batches of ${o.batchBytes} B, ${o.repetitions} repetitions`,
  );
  console.log(
    formatTable(['mode', 'side', 'MB/s median (min-max)', 'MB per CPU-s', 'ratio (paired)', 'load 1m'], rows),
  );
  if (writer !== null) console.log(`\nrun ${writer.runId} written to ${writer.path}`);
}
