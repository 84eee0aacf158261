// Encryption at rest against plaintext, in the same run and on the same disk: append throughput through the
// broker's path (Log.appendQueued, 16 appends in flight, each awaited until written) and fetch throughput
// through the fetch path (Log.readAsync from the files, no tail cache), of one log encrypted and one not.
// Fetches of 1 MiB (a consumer catching up) and of 16 KiB (small random-access fetches, where reading and
// verifying whole 16 KiB chunks costs the most). Repetitions alternate plaintext and encrypted. Beside them, the
// rates of the two primitives the encrypted path runs over every byte (node:crypto's AES-256-CTR and HMAC-SHA256
// over 1 MiB buffers) and the ceiling they set together (one pass of each), measured in the same run.
// Run: `node <outDir>/bench/storage/encryption.js [--mib 128] [--quick] [--dir .] [--no-results]`.

import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { ManualClock } from '../../src/common/clock.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { KeyStore } from '../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../src/storage/encryption/local-key-providers.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  formatRange,
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

async function appendAll(log: Log, totalBytes: number): Promise<number> {
  const batches = Array.from({ length: 16 }, () => batchOf(BATCH_BYTES));
  const started = performance.now();
  let bytes = 0;
  let inFlight: Promise<void>[] = [];
  for (let i = 0; bytes < totalBytes; i++) {
    // A fresh copy per append: the log keeps appended buffers by reference (its tail cache, queued writes).
    const b = Buffer.from(batches[i & 15]!);
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    const written = log.appendQueued(b).written;
    if (written !== null) inFlight.push(written);
    bytes += b.length;
    if (inFlight.length >= IN_FLIGHT) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  return megabytesPerSecond(bytes, (performance.now() - started) / 1000);
}

async function fetchAll(log: Log, fetchBytes: number, limitBytes: number): Promise<number> {
  const started = performance.now();
  let bytes = 0;
  for (let offset = 0; offset < log.logEndOffset && bytes < limitBytes; ) {
    const r = await log.readAsync(offset, fetchBytes);
    if (r.errorCode !== StorageErrorCode.None) throw new Error(`read ${offset}: error ${r.errorCode}`);
    bytes += r.records.length;
    offset = r.nextOffset;
  }
  return megabytesPerSecond(bytes, (performance.now() - started) / 1000);
}

/** MB/s of `op` over a 1 MiB buffer, repeated for about 300 ms. */
function primitiveRate(op: (buf: Buffer) => void): number {
  const buf = randomBytes(1024 * 1024);
  const started = performance.now();
  let bytes = 0;
  while (performance.now() - started < 300) {
    op(buf);
    bytes += buf.length;
  }
  return megabytesPerSecond(bytes, (performance.now() - started) / 1000);
}

function cryptoRates(): { ctr: number; hmac: number; both: number } {
  const key = randomBytes(32);
  const ctr = primitiveRate((b) => createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(b));
  const hmac = primitiveRate((b) => createHmac('sha256', key).update(b).digest());
  return { ctr, hmac, both: 1 / (1 / ctr + 1 / hmac) };
}

export async function run(args: string[]): Promise<void> {
  const arg = (name: string, fallback: number): number => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const quick = args.includes('--quick');
  const mib = arg('--mib', quick ? 48 : 128);
  const rounds = quick ? 2 : 3;
  const dirIndex = args.indexOf('--dir');
  const parent = dirIndex >= 0 ? args[dirIndex + 1]! : '.';
  const writer = args.includes('--no-results')
    ? null
    : new ResultWriter({ bench: 'storage-encryption', args });
  await withTempDir(parent, '.brook-bench-enc-', async (root) => {
    const keyFile = join(root, 'master.key');
    writeFileSync(keyFile, `bench:${randomBytes(32).toString('hex')}\n`);
    const results: Record<string, Record<'plain' | 'encrypted', number[]>> = {
      append: { plain: [], encrypted: [] },
      'fetch 1 MiB': { plain: [], encrypted: [] },
      'fetch 16 KiB': { plain: [], encrypted: [] },
    };
    const primitives: Record<'ctr' | 'hmac' | 'both', number[]> = { ctr: [], hmac: [], both: [] };
    for (let round = 0; round < rounds; round++) {
      const rates = cryptoRates();
      for (const name of ['ctr', 'hmac', 'both'] as const) primitives[name].push(rates[name]);
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
    }
    const rows: string[][] = [];
    for (const [name, r] of Object.entries(results)) {
      const plain = summarize(r.plain);
      const encrypted = summarize(r.encrypted);
      const ratio = ratioOfSummaries(encrypted, plain);
      rows.push([
        name,
        formatRange(plain.median, plain.min, plain.max),
        formatRange(encrypted.median, encrypted.min, encrypted.max),
        `${(ratio.median * 100).toFixed(0)} %`,
      ]);
      writer?.figure(`${name}-plain`, 'MB/s', plain, { mib });
      writer?.figure(`${name}-encrypted`, 'MB/s', encrypted, { mib });
    }
    console.log(formatTable(['operation', 'plaintext MB/s', 'encrypted MB/s', 'encrypted/plain'], rows));
    const primitiveRows: string[][] = [];
    for (const [name, label] of [
      ['ctr', 'AES-256-CTR'],
      ['hmac', 'HMAC-SHA256'],
      ['both', 'one pass of each (ceiling)'],
    ] as const) {
      const s = summarize(primitives[name]);
      primitiveRows.push([label, formatRange(s.median, s.min, s.max)]);
      writer?.figure(`crypto-${name}`, 'MB/s', s, {});
    }
    console.log(formatTable(['node:crypto over 1 MiB', 'MB/s'], primitiveRows));
  });
}

if (process.argv[1]?.endsWith('encryption.js')) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
