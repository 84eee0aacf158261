// Storage footprint: memory and descriptors per open partition (10,000 partitions by default), the time to
// open them after a clean shutdown, and the time to recover a log of `--recovery-mib` after a crash (every
// batch re-read and its CRC32C checked). Run: `node <outDir>/bench/storage/footprint.js [--partitions 10000]
// [--recovery-mib 1024] [--dir .] [--no-results]`.

import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import { ManualClock } from '../../src/common/clock.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { megabytesPerSecond, ResultWriter, repeat, summarize, withTempDir } from '../harness/index.js';

function oneRecordBatch(bytes: number): Buffer {
  const buf = Buffer.alloc(bytes);
  buf.writeInt32BE(bytes - 12, 8);
  buf.writeInt8(2, 16);
  buf.writeBigInt64BE(BigInt(Date.now()), 27);
  buf.writeBigInt64BE(BigInt(Date.now()), 35);
  buf.writeBigInt64BE(-1n, 43);
  buf.writeInt16BE(-1, 51);
  buf.writeInt32BE(-1, 53);
  buf.writeInt32BE(1, 57);
  randomBytes(bytes - 61 - 8).copy(buf, 69);
  buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
  return buf;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function partitionsFootprint(dir: string, partitions: number) {
  const clock = new ManualClock();
  const config = logConfig();
  const batch = oneRecordBatch(200);
  const first = LogManager.open({ dir, clock, configFor: () => config });
  for (let p = 0; p < partitions; p++) {
    const log = first.getOrCreateLog({ topic: 'footprint', partition: p });
    batchHeader.setBaseOffset(batch, 0, 0);
    log.append(batch);
  }
  first.shutdown();
  await new Promise((r) => setImmediate(r));
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage().rss;
  const fdsBefore = readdirSync('/proc/self/fd').length;
  const started = performance.now();
  const manager = LogManager.open({ dir, clock, configFor: () => config });
  const openMs = performance.now() - started;
  await new Promise((r) => setImmediate(r));
  gc();
  const usage = process.memoryUsage();
  const result = {
    openMs,
    heapBytesPerPartition: (usage.heapUsed - heapBefore) / partitions,
    rssBytesPerPartition: (usage.rss - rssBefore) / partitions,
    descriptorsPerPartition: (readdirSync('/proc/self/fd').length - fdsBefore) / partitions,
  };
  manager.shutdown();
  return result;
}

async function recoveryTime(dir: string, mib: number): Promise<number> {
  const clock = new ManualClock();
  const config = logConfig();
  const tp = { topic: 'recovery', partition: 0 };
  const log = Log.open({ dir, topicPartition: tp, config, clock, hadCleanShutdown: true });
  const batches = Array.from({ length: 16 }, () => oneRecordBatch(64 * 1024));
  let bytes = 0;
  for (let i = 0; bytes < mib * 1024 * 1024; i++) {
    const b = batches[i & 15]!;
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    log.append(b);
    bytes += b.length;
  }
  log.abandon();
  const started = performance.now();
  const recovered = Log.open({
    dir,
    topicPartition: tp,
    config,
    clock,
    hadCleanShutdown: false,
    recoveryPoint: 0,
  });
  const seconds = (performance.now() - started) / 1000;
  recovered.close();
  return megabytesPerSecond(bytes, seconds);
}

export async function run(args: string[]): Promise<void> {
  const arg = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const partitions = arg('--partitions', 10_000);
  const recoveryMib = arg('--recovery-mib', 1024);
  const dirIndex = args.indexOf('--dir');
  const parent = dirIndex >= 0 ? args[dirIndex + 1]! : '.';
  const writer = args.includes('--no-results')
    ? null
    : new ResultWriter({ bench: 'storage-footprint', args });
  const footprint = await withTempDir(parent, '.brook-bench-footprint-', (dir) =>
    partitionsFootprint(dir, partitions),
  );
  console.log(
    `${partitions} partitions: open ${footprint.openMs.toFixed(0)} ms after a clean shutdown, ` +
      `${(footprint.heapBytesPerPartition / 1024).toFixed(1)} KiB heap and ` +
      `${(footprint.rssBytesPerPartition / 1024).toFixed(1)} KiB RSS per partition, ` +
      `${footprint.descriptorsPerPartition.toFixed(2)} descriptors per partition` +
      ((globalThis as { gc?: unknown }).gc === undefined
        ? ' (run node with --expose-gc for steadier memory figures)'
        : ''),
  );
  writer?.write('partitions-footprint', { partitions, ...footprint });
  const recovery = summarize(
    await repeat(3, () =>
      withTempDir(parent, '.brook-bench-recovery-', (dir) => recoveryTime(dir, recoveryMib)),
    ),
  );
  console.log(
    `recovery of ${recoveryMib} MiB: ${recovery.median.toFixed(0)} MB/s (${recovery.min.toFixed(0)}-${recovery.max.toFixed(0)})`,
  );
  writer?.figure('recovery', 'MB/s', recovery, { mib: recoveryMib });
}

if (process.argv[1]?.endsWith('footprint.js')) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
