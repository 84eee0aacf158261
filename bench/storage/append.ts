// Append throughput of the storage engine against a plain Node write loop on the same disk, in the same run.
//
//   D0: Log.append (page cache, Kafka's default flush policy)   vs  writeSync of the same bytes in a loop
//   D0 queued: Log.appendQueued (the broker's path: bytes written off the event loop, coalesced into writev)
//       with `--queued-inflight` appenders each waiting for its append to be written  vs  the same plain loop
//   D1: Log.append with ackAfterFsync and `--inflight` appenders  vs  the same writes, one fdatasync per round
//       waiting for their durable promises (group commit)
//
// Each figure is the median of `--repetitions` (>= 3) runs of `--seconds`, reported with its range and as a
// ratio to the plain loop. Run: `node <outDir>/bench/storage/append.js [--seconds 3] [--batch-bytes 16384]
// [--inflight 8] [--queued-inflight 32] [--dir .] [--no-results]`, or through bench/main.ts once it lists `storage`.

import { randomBytes } from 'node:crypto';
import { closeSync, fdatasync, openSync, writeSync } from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import { systemClock } from '../../src/common/clock.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  formatRange,
  formatTable,
  megabytesPerSecond,
  ResultWriter,
  ratioOfSummaries,
  repeat,
  type Summary,
  summarize,
  withTempDir,
} from '../harness/index.js';

interface Options {
  seconds: number;
  batchBytes: number;
  inflight: number;
  queuedInflight: number;
  repetitions: number;
  dir: string;
  results: boolean;
}

function parseArgs(args: string[]): Options {
  const options: Options = {
    seconds: 3,
    batchBytes: 16 * 1024,
    inflight: 8,
    queuedInflight: 32,
    repetitions: 3,
    dir: '.',
    results: true,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = (): number => {
      const n = Number(args[++i]);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`${arg} needs a positive number`);
      return n;
    };
    if (arg === '--seconds') options.seconds = value();
    else if (arg === '--batch-bytes') options.batchBytes = Math.max(128, Math.floor(value()));
    else if (arg === '--inflight') options.inflight = Math.floor(value());
    else if (arg === '--queued-inflight') options.queuedInflight = Math.floor(value());
    else if (arg === '--repetitions') options.repetitions = Math.max(3, Math.floor(value()));
    else if (arg === '--dir') options.dir = args[++i] ?? '.';
    else if (arg === '--no-results') options.results = false;
    else if (arg === '--help') {
      console.log(
        'append [--seconds 3] [--batch-bytes 16384] [--inflight 8] [--queued-inflight 32] [--repetitions 3] [--dir .] [--no-results]',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return options;
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

async function plainAsync(dir: string, batches: Buffer[], seconds: number): Promise<number> {
  const fd = openSync(`${dir}/plain.bin`, 'w');
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let bytes = 0;
  for (let i = 0; performance.now() < end; i++) {
    const b = batches[i & 15]!;
    bytes += writeSync(fd, b, 0, b.length, bytes);
    if ((i & 255) === 0) await new Promise((r) => setImmediate(r));
  }
  closeSync(fd);
  return megabytesPerSecond(bytes, (performance.now() - start) / 1000);
}

async function logAsync(dir: string, batches: Buffer[], seconds: number): Promise<number> {
  const log = Log.open({
    dir,
    topicPartition: { topic: 'bench', partition: 0 },
    config: logConfig(),
    clock: systemClock,
    hadCleanShutdown: true,
  });
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let bytes = 0;
  for (let i = 0; performance.now() < end; i++) {
    const b = batches[i & 15]!;
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    log.append(b);
    bytes += b.length;
    if ((i & 255) === 0) await new Promise((r) => setImmediate(r));
  }
  const mbps = megabytesPerSecond(bytes, (performance.now() - start) / 1000);
  log.close();
  return mbps;
}

async function logQueued(dir: string, batches: Buffer[], seconds: number, inflight: number): Promise<number> {
  const log = Log.open({
    dir,
    topicPartition: { topic: 'bench', partition: 2 },
    config: logConfig(),
    clock: systemClock,
    hadCleanShutdown: true,
  });
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let bytes = 0;
  // `inflight` appenders, each waiting for its append to be written before the next, as acks=1 producers do.
  // Each owns one copy of a batch, reused once its previous append is written (the log holds the bytes until
  // then), so that no copy per append weighs on this side and not on the plain loop.
  const appender = async (k: number): Promise<void> => {
    const own = Buffer.from(batches[k & 15]!);
    while (performance.now() < end) {
      batchHeader.setBaseOffset(own, 0, log.logEndOffset);
      const info = log.appendQueued(own);
      bytes += own.length;
      await info.written;
    }
  };
  await Promise.all(Array.from({ length: inflight }, (_, k) => appender(k)));
  const mbps = megabytesPerSecond(bytes, (performance.now() - start) / 1000);
  log.close();
  return mbps;
}

function fdatasyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (err) => (err === null ? resolve() : reject(err))));
}

async function plainSync(dir: string, batches: Buffer[], seconds: number, inflight: number): Promise<number> {
  const fd = openSync(`${dir}/plain-sync.bin`, 'w');
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let bytes = 0;
  for (let i = 0; performance.now() < end; ) {
    for (let k = 0; k < inflight; k++, i++) {
      const b = batches[i & 15]!;
      bytes += writeSync(fd, b, 0, b.length, bytes);
    }
    await fdatasyncAsync(fd);
  }
  closeSync(fd);
  return megabytesPerSecond(bytes, (performance.now() - start) / 1000);
}

async function logSync(dir: string, batches: Buffer[], seconds: number, inflight: number): Promise<number> {
  const config = logConfig({ ackAfterFsync: true });
  const log = Log.open({
    dir,
    topicPartition: { topic: 'bench', partition: 1 },
    config,
    clock: systemClock,
    hadCleanShutdown: true,
  });
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let bytes = 0;
  let i = 0;
  // `inflight` appenders, each waiting for its append to be durable before the next, as producers with one
  // request in flight each: group commit lets them share fdatasyncs.
  const appender = async (): Promise<void> => {
    while (performance.now() < end) {
      const b = batches[i++ & 15]!;
      const copy = Buffer.from(b);
      batchHeader.setBaseOffset(copy, 0, log.logEndOffset);
      const info = log.append(copy);
      bytes += copy.length;
      await info.durable;
    }
  };
  await Promise.all(Array.from({ length: inflight }, appender));
  const mbps = megabytesPerSecond(bytes, (performance.now() - start) / 1000);
  log.close();
  return mbps;
}

export async function run(args: string[]): Promise<void> {
  const options = parseArgs(args);
  const batches = makeBatches(options.batchBytes);
  const writer = options.results ? new ResultWriter({ bench: 'storage-append', args }) : null;
  // The two sides alternate, swapping which goes first, so that the page cache's writeback of one side's bytes
  // (and the disk's mood) weighs on both alike rather than on whichever runs second.
  const paired = async (
    a: (dir: string) => Promise<number>,
    b: (dir: string) => Promise<number>,
  ): Promise<[Summary, Summary]> => {
    const as: number[] = [];
    const bs: number[] = [];
    await repeat(options.repetitions, async (rep) => {
      const runA = async () => as.push(await withTempDir(options.dir, '.brook-bench-storage-', a));
      const runB = async () => bs.push(await withTempDir(options.dir, '.brook-bench-storage-', b));
      if (rep % 2 === 0) {
        await runA();
        await runB();
      } else {
        await runB();
        await runA();
      }
    });
    return [summarize(as), summarize(bs)];
  };
  const [d0Plain, d0Log] = await paired(
    (dir) => plainAsync(dir, batches, options.seconds),
    (dir) => logAsync(dir, batches, options.seconds),
  );
  const [d0qPlain, d0qLog] = await paired(
    (dir) => plainAsync(dir, batches, options.seconds),
    (dir) => logQueued(dir, batches, options.seconds, options.queuedInflight),
  );
  const [d1Plain, d1Log] = await paired(
    (dir) => plainSync(dir, batches, options.seconds, options.inflight),
    (dir) => logSync(dir, batches, options.seconds, options.inflight),
  );
  const d0 = ratioOfSummaries(d0Log, d0Plain);
  const d1 = ratioOfSummaries(d1Log, d1Plain);
  const d0q = ratioOfSummaries(d0qLog, d0qPlain);
  const details = {
    batchBytes: options.batchBytes,
    inflight: options.inflight,
    queuedInflight: options.queuedInflight,
    seconds: options.seconds,
  };
  writer?.figure('plain-write-d0', 'MB/s', d0Plain, details);
  writer?.figure('log-append-d0', 'MB/s', d0Log, details);
  writer?.figure('plain-write-d0-queued-pair', 'MB/s', d0qPlain, details);
  writer?.figure('log-append-queued-d0', 'MB/s', d0qLog, details);
  writer?.figure('plain-write-d1', 'MB/s', d1Plain, details);
  writer?.figure('log-append-d1', 'MB/s', d1Log, details);
  writer?.write('R_append_d0', { ...d0 });
  writer?.write('R_append_queued_d0', { ...d0q });
  writer?.write('R_append_d1', { ...d1 });
  const row = (name: string, s: Summary): string[] => [name, formatRange(s.median, s.min, s.max)];
  console.log(
    formatTable(
      ['figure', 'MB/s median (min-max)'],
      [
        row('plain write loop, D0', d0Plain),
        row('Log.append, D0', d0Log),
        row('plain write loop, D0 (queued pair)', d0qPlain),
        row('Log.appendQueued, D0', d0qLog),
        row('plain write + fdatasync, D1', d1Plain),
        row('Log.append group commit, D1', d1Log),
      ],
    ),
  );
  console.log(
    `ratio D0 ${(d0.median * 100).toFixed(1)} % (${(d0.min * 100).toFixed(1)}-${(d0.max * 100).toFixed(1)})`,
  );
  console.log(
    `ratio D0 queued ${(d0q.median * 100).toFixed(1)} % (${(d0q.min * 100).toFixed(1)}-${(d0q.max * 100).toFixed(1)})`,
  );
  console.log(
    `ratio D1 ${(d1.median * 100).toFixed(1)} % (${(d1.min * 100).toFixed(1)}-${(d1.max * 100).toFixed(1)})`,
  );
}

if (process.argv[1]?.endsWith('append.js')) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
