// Inline file reads (storage/inline-reads.ts): which reads the gate lets run on the event loop, how a slow one turns
// them off for a while, and, through the Log, that an inline read is done by the time startRead returns and answers
// exactly what a read in the thread pool answers; an encrypted segment's reads never run inline. A fetch's share
// (FetchInlineRead) lets one read of the fetch run inline, only once the fetch starts it, after its other reads.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import type { KeyStore } from '../../src/storage/encryption/key-store.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import {
  FetchInlineRead,
  INLINE_READ_PAUSE_MS,
  INLINE_READ_SLOW_MS,
  InlineReads,
} from '../../src/storage/inline-reads.js';
import { Log, type ReadResult } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { buildBatch } from './batch-builder.js';
import { keyStoreIn } from './encryption/key-store-in.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

/** A clock the test moves (a read moves it to take that long: the gate reads the clock before and after). */
function steppedClock(): { now: () => number; advance: (ms: number) => void } {
  let ms = 0;
  return { now: () => ms, advance: (by) => (ms += by) };
}

test('the gate allows reads of 1 .. maxBytes bytes, and none with a bound of 0', () => {
  const gate = new InlineReads(1024);
  assert.equal(gate.allows(0), false);
  assert.equal(gate.allows(1), true);
  assert.equal(gate.allows(1024), true);
  assert.equal(gate.allows(1025), false);
  const off = new InlineReads(0);
  assert.equal(off.allows(1), false);
  assert.throws(() => new InlineReads(-1));
  assert.throws(() => new InlineReads(1.5));
});

test('a slow inline read turns inline reads off for the pause, then they come back', () => {
  const clock = steppedClock();
  const gate = new InlineReads(1 << 20, clock.now);
  assert.equal(
    gate.run(() => {
      clock.advance(INLINE_READ_SLOW_MS / 2);
      return 100;
    }),
    100,
  );
  assert.deepEqual(gate.stats, { reads: 1, bytes: 100, slow: 0 });
  assert.equal(gate.allows(100), true, 'a fast read leaves the gate open');

  gate.run(() => {
    clock.advance(INLINE_READ_SLOW_MS * 5);
    return 200;
  });
  assert.deepEqual(gate.stats, { reads: 2, bytes: 300, slow: 1 });
  assert.equal(gate.allows(100), false, 'closed at once after a slow read');
  clock.advance(INLINE_READ_PAUSE_MS - 1);
  assert.equal(gate.allows(100), false, 'still closed just before the pause ends');
  clock.advance(1);
  assert.equal(gate.allows(100), true, 'open again after the pause');
});

test('a read that throws is counted and timed, and the error reaches the caller', () => {
  const clock = steppedClock();
  const gate = new InlineReads(1 << 20, clock.now);
  assert.throws(
    () =>
      gate.run(() => {
        clock.advance(INLINE_READ_SLOW_MS * 2);
        throw new Error('EIO');
      }),
    /EIO/,
  );
  assert.deepEqual(gate.stats, { reads: 1, bytes: 0, slow: 1 });
  assert.equal(gate.allows(1), false);
});

test("a fetch's share runs one read, only when started, and leaves the others to the thread pool", async () => {
  const clock = steppedClock();
  const gate = new InlineReads(1 << 20, clock.now);
  const share = new FetchInlineRead(gate);
  share.start(); // nothing waits: nothing happens
  assert.equal(share.allows(100), true);
  let ran = false;
  const answer = share.readInline(
    () => {
      ran = true;
      return 100;
    },
    (bytes) => `read ${bytes}`,
  );
  assert.equal(ran, false, 'not before the fetch starts it');
  assert.equal(share.allows(100), false, 'one read per fetch');
  assert.equal(gate.allows(100), true, "the broker's gate stays open for other fetches");
  share.start();
  assert.equal(ran, true, 'run by start, synchronously');
  assert.equal(await answer, 'read 100');
  assert.deepEqual(gate.stats, { reads: 1, bytes: 100, slow: 0 });
  share.start(); // once only
  assert.equal(gate.stats.reads, 1);

  // A failing read rejects its answer, and is counted and timed like any other.
  const failing = new FetchInlineRead(gate);
  const rejected = failing.readInline(
    () => {
      clock.advance(INLINE_READ_SLOW_MS * 2);
      throw new Error('EIO');
    },
    (bytes) => bytes,
  );
  failing.start();
  await assert.rejects(rejected, /EIO/);
  assert.deepEqual(gate.stats, { reads: 2, bytes: 100, slow: 1 });
  // The broker's pause holds for every fetch's share.
  assert.equal(new FetchInlineRead(gate).allows(1), false);
});

function openLog(
  t: TestContext,
  options: { keys?: KeyStore; dir?: string; onBackgroundError?: (err: Error) => void } = {},
): Log {
  const log = Log.open({
    dir: options.dir ?? tempDir(t, 'brook-inline-'),
    topicPartition: { topic: 't', partition: 0 },
    config: logConfig({ encrypt: options.keys !== undefined }),
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys: options.keys ?? null,
    onBackgroundError: options.onBackgroundError,
  });
  deferCleanup(t, () => {
    if (!log.isClosed) log.close();
  });
  return log;
}

/** Appends `n` batches of 10 records of 1000 bytes (no tail cache: every read goes to the segment file). */
function fill(log: Log, n: number): void {
  for (let i = 0; i < n; i++) {
    const values = Array.from({ length: 10 }, (_, j) => Buffer.alloc(1000, i * 10 + j));
    const batch = buildBatch({ values });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    log.append(batch);
  }
  log.setHighWatermark(log.logEndOffset);
}

function recordsOf(r: ReadResult): Buffer {
  return answered(r).records;
}

/** The records and next offset of a read that found no error. */
function answered(r: ReadResult): { records: Buffer; nextOffset: number } {
  assert.equal(r.errorCode, StorageErrorCode.None);
  return r.errorCode === StorageErrorCode.None
    ? { records: r.records, nextOffset: r.nextOffset }
    : { records: Buffer.alloc(0), nextOffset: -1 };
}

test('through the Log: an allowed read is done when startRead returns, with the thread-pool read answer', async (t) => {
  const log = openLog(t);
  fill(log, 20);
  // A clock that stands still: no read counts as slow, however long a busy machine takes over it.
  const gate = new InlineReads(64 * 1024, () => 0);
  for (const [offset, maxBytes] of [
    [0, 64 * 1024],
    [35, 25_000],
    [190, 64 * 1024],
  ] as const) {
    const before = gate.stats.reads;
    const inline = log.startRead(toOffset(offset), maxBytes, log.highWatermark, true, null, gate);
    // Counted synchronously: the bytes were read before startRead returned.
    assert.equal(gate.stats.reads, before + 1, `read at ${offset} ran inline`);
    const pooled = log.startRead(toOffset(offset), maxBytes, log.highWatermark, true, null, null);
    assert.equal(gate.stats.reads, before + 1, 'a read without the gate is not inline');
    const [a, b] = await Promise.all([inline.result, pooled.result]);
    assert.ok(recordsOf(a).length > 0);
    assert.deepEqual(answered(a), answered(b), `same bytes and next offset at offset ${offset}`);
  }
  assert.equal(gate.stats.slow, 0);

  // A read larger than the bound goes to the thread pool; answers the same.
  const big = log.startRead(toOffset(0), 128 * 1024, log.highWatermark, true, null, gate);
  assert.equal(gate.stats.reads, 3);
  assert.deepEqual(recordsOf(await big.result), recordsOf(log.read(toOffset(0), 128 * 1024)));
});

test("through the Log: a fetch's share reads one range inline once started; a second read goes to the pool", async (t) => {
  const log = openLog(t);
  fill(log, 20);
  const gate = new InlineReads(1 << 20, () => 0);
  const share = new FetchInlineRead(gate);
  const first = log.startRead(toOffset(0), 64 * 1024, log.highWatermark, true, null, share);
  const second = log.startRead(toOffset(100), 64 * 1024, log.highWatermark, true, null, share);
  assert.equal(gate.stats.reads, 0, 'nothing read inline before the fetch starts it');
  share.start();
  assert.equal(gate.stats.reads, 1, 'the first read ran inline when started');
  const [a, b] = await Promise.all([first.result, second.result]);
  assert.deepEqual(answered(a), answered(log.read(toOffset(0), 64 * 1024)));
  assert.deepEqual(answered(b), answered(log.read(toOffset(100), 64 * 1024)));
  assert.equal(gate.stats.reads, 1, 'the second read went to the thread pool');
});

test('through the Log: after a slow inline read, reads go to the thread pool until the pause ends', async (t) => {
  const log = openLog(t);
  fill(log, 5);
  let ms = 0;
  let calls = 0;
  // An inline read reads the clock three times (allows, then before and after the read): the first read's last
  // reading jumps past the slow bound.
  const gate = new InlineReads(1 << 20, () => {
    calls++;
    if (calls === 3) ms += INLINE_READ_SLOW_MS * 3;
    return ms;
  });
  await log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, null, gate).result;
  assert.deepEqual([gate.stats.reads, gate.stats.slow], [1, 1]);
  const paused = log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, null, gate);
  assert.equal(gate.stats.reads, 1, 'paused: not inline');
  assert.equal(recordsOf(await paused.result).length, recordsOf(log.read(toOffset(0), 1 << 20)).length);
  ms += INLINE_READ_PAUSE_MS;
  await log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, null, gate).result;
  assert.equal(gate.stats.reads, 2, 'inline again after the pause');
});

test('an encrypted segment is never read inline, and answers the same bytes', async (t) => {
  const root = tempDir(t, 'brook-inline-enc-');
  const dir = join(root, 'log');
  mkdirSync(dir);
  const keys = await keyStoreIn(root, dir, 'r1', 'e'.repeat(64));
  const log = openLog(t, { keys, dir });
  fill(log, 5);
  const gate = new InlineReads(1 << 20);
  const read = log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, null, gate);
  assert.equal(gate.stats.reads, 0);
  const got = recordsOf(await read.result);
  assert.ok(got.length > 0);
  assert.deepEqual(got, recordsOf(log.read(toOffset(0), 1 << 20)));
});

test('an inline read failing in its system call answers KAFKA_STORAGE_ERROR and reports the log once', async (t) => {
  const errors: Error[] = [];
  const log = openLog(t, { onBackgroundError: (err) => errors.push(err) });
  fill(log, 3);
  // The planning before it reads the file too, so a broken descriptor fails there first: the read itself fails
  // here, as a disk failing between the two would.
  const failing = new (class extends InlineReads {
    override run(): number {
      throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO', syscall: 'read' });
    }
  })(1 << 20);
  const read = await log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, null, failing).result;
  assert.equal(read.errorCode, StorageErrorCode.KafkaStorageError);
  assert.equal(log.storageFailed, true);
  await new Promise((r) => setImmediate(r));
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.message, /EIO/);
});
