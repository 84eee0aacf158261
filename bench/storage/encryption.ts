// Encryption at rest against plaintext, in the same run and on the same disk: append throughput through the
// broker's path (Log.appendQueued, 16 appends in flight, each awaited until written) and fetch throughput
// through the fetch path (Log.readAsync from the files, no tail cache), of one log encrypted and one not.
// Fetches of 1 MiB (a consumer catching up) and of 16 KiB (small random-access fetches, where reading and
// verifying whole 16 KiB chunks costs the most). Repetitions alternate plaintext and encrypted. Beside them, the
// rates of the primitives the encrypted path runs over every byte, measured in the same run (MB/s and MB per
// CPU-second): AES-256-GCM decryption with tag check of 16 KiB chunks (a read's one pass), AES-256-GCM encryption
// of 16 KiB chunks with their tags (an append's one pass), AES-256-CTR over 1 MiB and a plain copy of 1 MiB; and
// from them the ceiling an encrypted append and a 1 MiB fetch could reach (the plaintext path plus its one pass).
// Run: `node <outDir>/bench/storage/encryption.js [--mib 128] [--quick] [--dir .] [--no-results]`.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { KeyStore } from '../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../src/storage/encryption/local-key-providers.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { appendQueuedAwaitable, Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  formatSummaryRange,
  formatTable,
  megabytesPerSecond,
  ResultWriter,
  ratioOfSummaries,
  summarize,
  withTempDir,
} from '../harness/index.js';

const BATCH_BYTES = 16 * 1024;
const IN_FLIGHT = 16;

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

async function appendAll(log: Log, totalBytes: number): Promise<Rate> {
  const batches = Array.from({ length: 16 }, () => batchOf(BATCH_BYTES));
  const started = performance.now();
  const cpu = process.cpuUsage();
  let bytes = 0;
  let inFlight: Promise<void>[] = [];
  for (let i = 0; bytes < totalBytes; i++) {
    // A fresh copy per append: the log keeps appended buffers by reference (its tail cache, queued writes).
    const b = Buffer.from(batches[i & 15]!);
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    const written = appendQueuedAwaitable(log, b).acknowledged;
    if (written !== null) inFlight.push(written);
    bytes += b.length;
    if (inFlight.length >= IN_FLIGHT) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  return rateOf(bytes, started, cpu);
}

/** Throughput and process CPU cost (every thread: the pool's file reads too) of one measured phase. */
interface Rate {
  mbps: number;
  mbPerCpuS: number;
}

function rateOf(bytes: number, started: number, cpu: NodeJS.CpuUsage): Rate {
  const used = process.cpuUsage(cpu);
  return {
    mbps: megabytesPerSecond(bytes, (performance.now() - started) / 1000),
    mbPerCpuS: megabytesPerSecond(bytes, (used.user + used.system) / 1e6),
  };
}

async function fetchAll(log: Log, fetchBytes: number, limitBytes: number): Promise<Rate> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let bytes = 0;
  for (let offset = 0; offset < log.logEndOffset && bytes < limitBytes; ) {
    const r = await log.readAsync(toOffset(offset), fetchBytes);
    if (r.errorCode !== StorageErrorCode.None) throw new Error(`read ${offset}: error ${r.errorCode}`);
    bytes += r.records.length;
    offset = r.nextOffset;
  }
  return rateOf(bytes, started, cpu);
}

/** Rate of `op` over a 1 MiB buffer, repeated for about 300 ms: MB/s and MB per CPU-second of this process. */
function primitiveRate(op: (buf: Buffer) => void): Rate {
  const buf = randomBytes(1024 * 1024);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let bytes = 0;
  while (performance.now() - started < 300) {
    op(buf);
    bytes += buf.length;
  }
  return rateOf(bytes, started, cpu);
}

type Primitive = 'gcm' | 'seal' | 'ctr' | 'copy';

function cryptoRates(): Record<Primitive, Rate> {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  // One sealed 16 KiB chunk, opened again and again as a read opens each chunk it touches.
  const sealer = createCipheriv('aes-256-gcm', key, iv);
  const chunk = sealer.update(randomBytes(16 * 1024));
  sealer.final();
  const tag = sealer.getAuthTag();
  const gcm = primitiveRate((b) => {
    for (let at = 0; at < b.length; at += chunk.length) {
      const d = createDecipheriv('aes-256-gcm', key, iv);
      d.setAuthTag(tag);
      d.update(chunk);
      d.final();
    }
  });
  // 16 KiB chunks sealed, each in one GCM pass giving its ciphertext and tag: an append's work per byte.
  const seal = primitiveRate((b) => {
    for (let at = 0; at < b.length; at += chunk.length) {
      const c = createCipheriv('aes-256-gcm', key, iv);
      c.update(b.subarray(at, at + chunk.length));
      c.final();
      c.getAuthTag();
    }
  });
  const ctr = primitiveRate((b) => createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(b));
  const copy = primitiveRate((b) => Buffer.from(b));
  return { gcm, seal, ctr, copy };
}

/** The rate of a path that adds `passes` (rates) to `base` over every byte: 1 / (1/base + sum 1/pass). */
function withPasses(base: number, passes: number[]): number {
  return 1 / (1 / base + passes.reduce((sum, p) => sum + 1 / p, 0));
}

export async function run(args: string[]): Promise<void> {
  const arg = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const quick = args.includes('--quick');
  const mib = arg('--mib', quick ? 48 : 128);
  const rounds = arg('--rounds', quick ? 2 : 3);
  const dirIndex = args.indexOf('--dir');
  const parent = dirIndex >= 0 ? args[dirIndex + 1]! : '.';
  const loads: number[] = [];
  const writer = args.includes('--no-results')
    ? null
    : new ResultWriter({ bench: 'storage-encryption', args });
  await withTempDir(parent, '.brook-bench-enc-', async (root) => {
    const keyFile = join(root, 'master.key');
    writeFileSync(keyFile, `bench:${randomBytes(32).toString('hex')}\n`);
    const results: Record<string, Record<'plain' | 'encrypted', Rate[]>> = {
      append: { plain: [], encrypted: [] },
      'fetch 1 MiB': { plain: [], encrypted: [] },
      'fetch 16 KiB': { plain: [], encrypted: [] },
    };
    const primitives: Record<Primitive, Rate[]> = { gcm: [], seal: [], ctr: [], copy: [] };
    for (let round = 0; round < rounds; round++) {
      const rates = cryptoRates();
      for (const name of ['gcm', 'seal', 'ctr', 'copy'] as const) primitives[name].push(rates[name]);
      for (const kind of ['plain', 'encrypted'] as const) {
        const dir = join(root, `${kind}-${round}`);
        mkdirSync(dir);
        const keys = await KeyStore.load(dir, new FileKeyProvider(keyFile));
        await keys.ensureCurrent(0);
        const config = logConfig({ segmentBytes: 64 * 1024 * 1024, encrypt: kind === 'encrypted' });
        const open = (): Log =>
          Log.open({
            dir,
            topicPartition: { topic: 'enc', partition: 0 },
            config,
            clock: new ManualClock(),
            hadCleanShutdown: true,
            keys,
            writeInlineWhenIdle: false,
          });
        let log = open();
        results.append![kind].push(await appendAll(log, mib * 1024 * 1024));
        log.close();
        // Reopened, so reads go to the files (the page cache), not to buffers of this process.
        log = open();
        results['fetch 1 MiB']![kind].push(await fetchAll(log, 1024 * 1024, Number.MAX_SAFE_INTEGER));
        results['fetch 16 KiB']![kind].push(await fetchAll(log, 16 * 1024, (mib * 1024 * 1024) / 4));
        log.close();
      }
      loads.push(loadavg()[0]!);
    }
    const rows: string[][] = [];
    for (const [name, r] of Object.entries(results)) {
      const cells: string[] = [name];
      for (const [field, unit] of [
        ['mbps', 'MB/s'],
        ['mbPerCpuS', 'MB/CPU-s'],
      ] as const) {
        const plain = summarize(r.plain.map((x) => x[field]));
        const encrypted = summarize(r.encrypted.map((x) => x[field]));
        const ratio = ratioOfSummaries(encrypted, plain);
        cells.push(
          formatSummaryRange(plain),
          formatSummaryRange(encrypted),
          `${(ratio.median * 100).toFixed(0)} %`,
        );
        const suffix = field === 'mbps' ? '' : '-cpu';
        writer?.figure(`${name}-plain${suffix}`, unit, plain, { mib });
        writer?.figure(`${name}-encrypted${suffix}`, unit, encrypted, { mib });
      }
      rows.push(cells);
    }
    console.log(
      formatTable(
        [
          'operation',
          'plain MB/s',
          'encrypted MB/s',
          'enc/plain',
          'plain MB/CPU-s',
          'encrypted MB/CPU-s',
          'enc/plain CPU',
        ],
        rows,
      ),
    );
    const primitiveRows: string[][] = [];
    for (const [name, label] of [
      ['gcm', 'AES-256-GCM open, 16 KiB chunks'],
      ['seal', 'AES-256-GCM seal, 16 KiB chunks'],
      ['ctr', 'AES-256-CTR, 1 MiB'],
      ['copy', 'Buffer copy, 1 MiB'],
    ] as const) {
      const s = summarize(primitives[name].map((r) => r.mbps));
      const c = summarize(primitives[name].map((r) => r.mbPerCpuS));
      primitiveRows.push([label, formatSummaryRange(s), formatSummaryRange(c)]);
      writer?.figure(`crypto-${name}`, 'MB/s', s, {});
      writer?.figure(`crypto-${name}-cpu`, 'MB/CPU-s', c, {});
    }
    console.log(formatTable(['primitive', 'MB/s', 'MB/CPU-s'], primitiveRows));
    // The ceiling node:crypto allows, from this run's own figures: the plaintext path plus the cipher passes the
    // encrypted path must make over every byte (an append: one GCM seal; a fetch: one GCM open). Per round, then
    // the median, in MB/s and in MB per CPU-second (the steadier one on a shared machine).
    const passes: Record<string, Primitive[]> = { append: ['seal'], 'fetch 1 MiB': ['gcm'] };
    const ceilingRows: string[][] = [];
    for (const [name, over] of Object.entries(passes)) {
      const cells = [name];
      for (const field of ['mbps', 'mbPerCpuS'] as const) {
        const r = results[name]!;
        const ceilings = r.plain.map((p, i) =>
          withPasses(
            p[field],
            over.map((k) => primitives[k][i]![field]),
          ),
        );
        const ceiling = summarize(ceilings);
        const plain = summarize(r.plain.map((x) => x[field]));
        const brook = summarize(r.encrypted.map((x) => x[field]));
        cells.push(
          formatSummaryRange(ceiling),
          `${((ceiling.median / plain.median) * 100).toFixed(0)} %`,
          `${((brook.median / ceiling.median) * 100).toFixed(0)} %`,
        );
        writer?.figure(
          `${name}-ceiling${field === 'mbps' ? '' : '-cpu'}`,
          field === 'mbps' ? 'MB/s' : 'MB/CPU-s',
          ceiling,
          {
            mib,
          },
        );
      }
      ceilingRows.push(cells);
    }
    console.log(
      formatTable(
        ['ceiling', 'MB/s', 'of plain', 'Brook of it', 'MB/CPU-s', 'of plain CPU', 'Brook of it CPU'],
        ceilingRows,
      ),
    );
    // On two shared cores, a load above 2 means other work competed: the MB/CPU-s ratios are the steadier figure.
    console.log(`1-minute load average after each round: ${loads.map((l) => l.toFixed(1)).join(', ')}`);
    writer?.write('load', { loadAverage1m: loads });
  });
}

if (process.argv[1]?.endsWith('encryption.js')) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
