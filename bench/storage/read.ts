// Read throughput of the storage engine against a plain Node read loop over the same bytes, in the same run:
// a log of `--mib` is written once, then read from offset 0 to the end in fetches of `--fetch-bytes`, with
// Log.read and Log.readAsync, and the segment files are read with readSync in chunks of the same size.
// Mostly page-cache reads (one unmeasured pass warms it): the figure is the engine's overhead per fetch.
// Run: `node <outDir>/bench/storage/read.js [--mib 512] [--fetch-bytes 1048576] [--dir .] [--no-results]`.

import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  formatSummaryRange,
  formatTable,
  megabytesPerSecond,
  ResultWriter,
  ratioOfSummaries,
  repeat,
  type Summary,
  summarize,
  withTempDir,
} from '../harness/index.js';

function batchOf(bytes: number): Buffer {
  const buf = Buffer.alloc(bytes);
  buf.writeInt32BE(bytes - 12, 8);
  buf.writeInt8(2, 16);
  buf.writeBigInt64BE(-1n, 43);
  buf.writeInt32BE(1, 57);
  randomBytes(bytes - 69).copy(buf, 69);
  buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
  return buf;
}

export async function run(args: string[]): Promise<void> {
  const arg = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const mib = arg('--mib', 512);
  const fetchBytes = arg('--fetch-bytes', 1024 * 1024);
  const dirIndex = args.indexOf('--dir');
  const parent = dirIndex >= 0 ? args[dirIndex + 1]! : '.';
  const writer = args.includes('--no-results') ? null : new ResultWriter({ bench: 'storage-read', args });
  await withTempDir(parent, '.brook-bench-read-', async (dir) => {
    const config = logConfig({ segmentBytes: 256 * 1024 * 1024 });
    const tp = { topic: 'read', partition: 0 };
    const clock = new ManualClock();
    let log = Log.open({ dir, topicPartition: tp, config, clock, hadCleanShutdown: true });
    const batches = Array.from({ length: 16 }, () => batchOf(16 * 1024));
    for (let i = 0, bytes = 0; bytes < mib * 1024 * 1024; i++) {
      const b = batches[i & 15]!;
      batchHeader.setBaseOffset(b, 0, log.logEndOffset);
      log.append(b);
      bytes += b.length;
    }
    log.close();
    log = Log.open({ dir, topicPartition: tp, config, clock, hadCleanShutdown: true });
    const end = log.logEndOffset;
    const viaLog = async (async: boolean): Promise<number> => {
      const started = performance.now();
      let bytes = 0;
      for (let offset = 0; offset < end; ) {
        const from = toOffset(offset);
        const r = async ? await log.readAsync(from, fetchBytes) : log.read(from, fetchBytes);
        if (r.errorCode !== StorageErrorCode.None) throw new Error(`read ${offset}: error ${r.errorCode}`);
        bytes += r.records.length;
        offset = r.nextOffset;
      }
      return megabytesPerSecond(bytes, (performance.now() - started) / 1000);
    };
    const plain = async (): Promise<number> => {
      const started = performance.now();
      let bytes = 0;
      for (const name of readdirSync(dir)
        .filter((n) => n.endsWith('.log'))
        .sort()) {
        const fd = openSync(join(dir, name), 'r');
        // A fresh buffer per chunk, as each fetch response needs one of its own until the socket has sent it.
        for (let position = 0; ; ) {
          const n = readSync(fd, Buffer.allocUnsafe(fetchBytes), 0, fetchBytes, position);
          if (n === 0) break;
          position += n;
          bytes += n;
        }
        closeSync(fd);
      }
      return megabytesPerSecond(bytes, (performance.now() - started) / 1000);
    };
    const results: Record<string, number[]> = { plain: [], read: [], readAsync: [] };
    // One pass first so that every measured pass finds the same page cache.
    await plain();
    await repeat(3, async () => {
      results.plain!.push(await plain());
      results.read!.push(await viaLog(false));
      results.readAsync!.push(await viaLog(true));
    });
    log.close();
    const plainSummary = summarize(results.plain!);
    const rows: string[][] = [];
    for (const [name, values] of Object.entries(results)) {
      const s: Summary = summarize(values);
      const r = ratioOfSummaries(s, plainSummary);
      rows.push([name, formatSummaryRange(s), `${(r.median * 100).toFixed(0)} %`]);
      writer?.figure(`read-${name}`, 'MB/s', s, { mib, fetchBytes });
    }
    console.log(formatTable(['reader', 'MB/s median (min-max)', 'vs plain'], rows));
  });
}

if (process.argv[1]?.endsWith('read.js')) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
