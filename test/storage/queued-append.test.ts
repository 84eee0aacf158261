// Queued appends (Log.appendQueued): offsets at once, bytes written off the event loop, visible only once
// written; and every operation that meets queued bytes (roll, truncation, sync append, flush, close, crash).
// Then the inline form: with nothing queued or being written, appendQueued writes at once.

import assert from 'node:assert/strict';
import { closeSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { appendQueuedAwaitable, type Log } from '../../src/storage/log.js';
import { STORAGE_LIMITS } from '../../src/storage/log-config.js';
import { waitFor } from '../network/helpers.js';
import { type BatchSpec, buildBatch, splitBatches } from './batch-builder.js';
import { openHarness } from './log-harness.js';

type Harness = ReturnType<typeof openHarness>;

/** Builds a batch at the log end offset and queues it; returns the bytes and the append's promises. */
function queue(h: Harness, spec: BatchSpec = {}, epoch = 0) {
  const batch = buildBatch({ baseTimestamp: h.clock.nowMs(), ...spec });
  batchHeader.setBaseOffset(batch, 0, h.log.logEndOffset);
  batchHeader.setPartitionLeaderEpoch(batch, 0, epoch);
  // The queue itself is under test here: no append is written inline, even with nothing queued.
  h.log.writeInlineWhenIdle = false;
  const info = appendQueuedAwaitable(h.log, batch);
  return { batch, info };
}

function readAll(log: Log, from: number = log.logStartOffset): Buffer[] {
  const out: Buffer[] = [];
  let offset = from;
  while (offset < log.writtenEndOffset) {
    const r = log.read(toOffset(offset), 1 << 20);
    assert.equal(r.errorCode, StorageErrorCode.None);
    if (r.errorCode !== StorageErrorCode.None || r.records.length === 0) break;
    out.push(...splitBatches(r.records));
    offset = r.nextOffset;
  }
  return out;
}

const value = (n: number) => Buffer.alloc(n, 7);

test('queued appends get offsets at once and become readable, in order, only once written', async (t) => {
  const h = openHarness(t);
  const a = queue(h, { count: 3 });
  const b = queue(h, { count: 2 });
  assert.equal(h.log.logEndOffset, 5, 'offsets are assigned synchronously');
  assert.equal(h.log.writtenEndOffset, 0, 'nothing is visible before the write');
  assert.ok(h.log.hasQueuedAppends);
  const early = h.log.read(toOffset(0), 1 << 20);
  assert.ok(
    early.errorCode === StorageErrorCode.None && early.records.length === 0,
    'no unwritten byte served',
  );
  h.log.setHighWatermark(toOffset(5));
  assert.equal(h.log.highWatermark, 0, 'the high watermark cannot pass written bytes');
  await b.info.acknowledged;
  await a.info.acknowledged;
  assert.equal(h.log.writtenEndOffset, 5);
  assert.equal(h.log.hasQueuedAppends, false);
  assert.deepEqual(readAll(h.log), [a.batch, b.batch]);
  h.log.setHighWatermark(toOffset(5));
  assert.equal(h.log.highWatermark, 5);
});

test('onWritten is told after queued appends become visible, once per write', async (t) => {
  const h = openHarness(t);
  const seen: number[] = [];
  h.log.onWritten = () => seen.push(h.log.writtenEndOffset);
  const appends = Array.from({ length: 20 }, () => queue(h, { count: 1 }));
  await Promise.all(appends.map((x) => x.info.acknowledged));
  assert.ok(seen.length >= 1 && seen.length < 20, `queued appends share writes (${seen.length} writes)`);
  assert.equal(seen[seen.length - 1], 20);
  assert.deepEqual(
    readAll(h.log),
    appends.map((x) => x.batch),
  );
});

test('a roll with queued bytes finishes the old segment once they are written; a clean reopen agrees', async (t) => {
  const h = openHarness(t, { segmentBytes: 2000, indexIntervalBytes: 100 });
  const appends = Array.from({ length: 30 }, () => queue(h, { values: [value(200)] }));
  assert.ok(h.log.segmentCount > 3, 'segments rolled on reserved bytes');
  await Promise.all(appends.map((x) => x.info.acknowledged));
  assert.deepEqual(
    readAll(h.log),
    appends.map((x) => x.batch),
  );
  for (const x of appends) {
    const r = h.log.read(toOffset(batchHeader.baseOffset(x.batch)), 1);
    assert.ok(r.errorCode === StorageErrorCode.None);
    assert.deepEqual(r.records, x.batch, 'every offset is found through the indexes');
  }
  const log = h.reopen(true);
  assert.equal(log.logEndOffset, 30);
  assert.deepEqual(
    readAll(log),
    appends.map((x) => x.batch),
  );
});

test('truncation with writes queued and running completes them first and leaves no stale bytes', async (t) => {
  const h = openHarness(t);
  const first = Array.from({ length: 6 }, () => queue(h, { values: [value(300)] }));
  // The first write is running now; the rest wait behind it.
  h.log.truncateTo(toOffset(3));
  assert.equal(h.log.logEndOffset, 3);
  assert.equal(h.log.writtenEndOffset, 3);
  for (const x of first) await x.info.acknowledged;
  const after = [queue(h, { values: [value(50)] }, 1), queue(h, { values: [value(50)] }, 1)];
  await Promise.all(after.map((x) => x.info.acknowledged));
  // Let any write that ran under the truncation finish.
  await new Promise((r) => setTimeout(r, 20));
  const expected = [...first.slice(0, 3).map((x) => x.batch), ...after.map((x) => x.batch)];
  assert.deepEqual(readAll(h.log), expected);
  const fileBytes = statSync(join(h.dir, `${'0'.padStart(20, '0')}.log`)).size;
  assert.equal(fileBytes, h.log.sizeInBytes, 'the file ends where the log does');
  const log = h.reopen(false);
  assert.deepEqual(readAll(log), expected, 'recovery finds exactly what was kept');
});

test('a synchronous append behind queued ones keeps the order', async (t) => {
  const h = openHarness(t);
  const a = queue(h, { count: 2 });
  const b = h.append({ count: 1 });
  assert.equal(h.log.writtenEndOffset, 3, 'the queue was completed before the synchronous append');
  await a.info.acknowledged;
  assert.deepEqual(readAll(h.log), [a.batch, b]);
});

test('a flush moves the recovery point only over written bytes', async (t) => {
  const h = openHarness(t);
  const a = queue(h, { count: 4 });
  const flushed = h.log.flush();
  assert.equal(h.log.recoveryPoint, 0);
  await flushed;
  assert.equal(h.log.recoveryPoint, 4);
  await a.info.acknowledged;
});

test('group commit: durable resolves after the queued bytes are written and synced', async (t) => {
  const h = openHarness(t, { ackAfterFsync: true });
  const appends = Array.from({ length: 8 }, () => queue(h, { count: 1 }));
  const durable = appends.map((x) => x.info.acknowledged);
  assert.ok(durable.every((d) => d !== null));
  await Promise.all(durable);
  assert.equal(h.log.writtenEndOffset, 8);
  assert.ok(h.log.groupSyncCount >= 1 && h.log.groupSyncCount < 8, 'appends share fdatasyncs');
});

test('close completes queued appends; a crash before they are written recovers a prefix', async (t) => {
  const h = openHarness(t);
  const appends = Array.from({ length: 5 }, () => queue(h, { values: [value(100)] }));
  let log = h.reopen(true);
  for (const x of appends) await x.info.acknowledged;
  assert.deepEqual(
    readAll(log),
    appends.map((x) => x.batch),
  );
  const more = Array.from({ length: 5 }, () => queue(h, { values: [value(100)] }));
  const outcomes = await Promise.allSettled(
    (() => {
      const promises = more.map((x) => x.info.acknowledged!);
      log = h.reopen(false);
      return promises;
    })(),
  );
  assert.ok(
    outcomes.every((o) => o.status === 'rejected'),
    'appends abandoned before their write are failed',
  );
  await new Promise((r) => setTimeout(r, 20));
  log = h.reopen(false);
  const got = readAll(log);
  const all = [...appends, ...more].map((x) => x.batch);
  assert.deepEqual(got, all.slice(0, got.length), 'what survives is a prefix of what was appended');
  assert.ok(got.length >= 5);
});

test('the queue of unwritten bytes is bounded: past the bound an append completes the queue first', async (t) => {
  const h = openHarness(t, { segmentBytes: 256 * 1024 * 1024 });
  h.log.writeInlineWhenIdle = false;
  // One batch built once and copied: the test builder is slow for large values.
  const template = buildBatch({ baseTimestamp: h.clock.nowMs(), values: [value(64 * 1024)] });
  const count = Math.ceil((2 * STORAGE_LIMITS.queuedAppendBytesMax) / template.length);
  const written: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const batch = Buffer.from(template);
    batchHeader.setBaseOffset(batch, 0, h.log.logEndOffset);
    written.push(appendQueuedAwaitable(h.log, batch).acknowledged!);
    assert.ok(
      (h.log.logEndOffset - h.log.writtenEndOffset) * template.length <= STORAGE_LIMITS.queuedAppendBytesMax,
      'unwritten bytes stay within the bound',
    );
  }
  await Promise.all(written);
  assert.equal(h.log.writtenEndOffset, count);
  assert.equal(h.log.sizeInBytes, count * template.length);
});

/** Builds a batch at the log end offset and appends it with inline writes allowed (the log's default). */
function appendIdle(h: Harness, spec: BatchSpec = {}) {
  const batch = buildBatch({ baseTimestamp: h.clock.nowMs(), ...spec });
  batchHeader.setBaseOffset(batch, 0, h.log.logEndOffset);
  h.log.writeInlineWhenIdle = true;
  return { batch, info: appendQueuedAwaitable(h.log, batch) };
}

test('with nothing queued an append is written at once: readable on return, onWritten told after', async (t) => {
  const h = openHarness(t);
  const seen: number[] = [];
  h.log.onWritten = () => seen.push(h.log.writtenEndOffset);
  const a = appendIdle(h, { count: 3 });
  assert.equal(a.info.acknowledged, null, 'nothing to wait for');
  assert.equal(a.info.pending, false);
  assert.equal(h.log.writtenEndOffset, 3);
  assert.equal(h.log.hasQueuedAppends, false);
  assert.deepEqual(readAll(h.log), [a.batch]);
  assert.deepEqual(seen, [], 'the owner hears of it after the caller is done');
  await Promise.resolve();
  assert.deepEqual(seen, [3]);
  assert.equal(statSync(join(h.dir, '00000000000000000000.log')).size, a.batch.length);
});

test('behind a running write, appends queue and keep their order; once idle they are inline again', async (t) => {
  const h = openHarness(t);
  const first = queue(h, { count: 2 });
  const behind = appendIdle(h, { count: 2 });
  assert.notEqual(behind.info.acknowledged, null, 'a write is running: the append waits its turn');
  assert.equal(h.log.writtenEndOffset, 0);
  await behind.info.acknowledged;
  await first.info.acknowledged;
  const after = appendIdle(h, { count: 1 });
  assert.equal(after.info.acknowledged, null);
  assert.equal(h.log.writtenEndOffset, 5);
  assert.deepEqual(readAll(h.log), [first.batch, behind.batch, after.batch]);
});

test('inline appends survive a crash; with group commit durable resolves after the sync', async (t) => {
  const h = openHarness(t, { ackAfterFsync: true });
  const appends = Array.from({ length: 4 }, () => appendIdle(h, { values: [value(100)] }));
  // Written inline: readable on return, acknowledged only after the sync.
  assert.equal(h.log.writtenEndOffset, h.log.logEndOffset);
  assert.equal(h.log.groupSyncCount, 0);
  await Promise.all(appends.map((x) => x.info.acknowledged));
  assert.ok(h.log.groupSyncCount >= 1, 'durable waited for a group fdatasync');
  const log = h.reopen(false);
  assert.deepEqual(
    readAll(log),
    appends.map((x) => x.batch),
  );
});

/**
 * The active segment's descriptor replaced by a read-only one: its next write fails with EBADF, as a failing disk's
 * does with EIO, and closing the log still works.
 */
function failWrites(log: Log): void {
  const segment = log.activeSegment as unknown as { fd: number };
  closeSync(segment.fd);
  segment.fd = openSync('/dev/null', 'r');
}

test('an append is told its outcome once, never before appendQueued returns: written, or the write failed', async (t) => {
  const h = openHarness(t);
  h.log.writeInlineWhenIdle = false;
  const outcomes: { err: Error | null; writtenEnd: number }[] = [];
  const done = (err: Error | null): void => {
    outcomes.push({ err, writtenEnd: h.log.writtenEndOffset });
  };
  const first = buildBatch({ baseTimestamp: h.clock.nowMs(), count: 2 });
  batchHeader.setBaseOffset(first, 0, 0);
  assert.equal(h.log.appendQueued(first, done).pending, true);
  assert.deepEqual(outcomes, [], 'not told during the call');
  await waitFor(() => outcomes.length > 0, 5_000, 'the first outcome');
  assert.deepEqual(outcomes, [{ err: null, writtenEnd: 2 }], 'told once, with its bytes readable');

  failWrites(h.log);
  const second = buildBatch({ baseTimestamp: h.clock.nowMs(), count: 1 });
  batchHeader.setBaseOffset(second, 0, 2);
  h.log.appendQueued(second, done);
  assert.equal(outcomes.length, 1, 'not told during the call');
  await waitFor(() => outcomes.length > 1, 5_000, 'the failed outcome');
  const [, failed] = outcomes as { err: Error | null; writtenEnd: number }[];
  assert.equal(outcomes.length, 2);
  assert.match(String(failed!.err), /EBADF/);
  assert.equal(failed!.writtenEnd, 2, 'the failed append never became readable');
  assert.equal(h.log.writeFailed, true);
  // As the broker does with a failed directory's logs: no flush of a file that cannot be written.
  h.log.abandon();
});

test('an inline write that fails tells its append after the call returns', async (t) => {
  const h = openHarness(t);
  h.log.writeInlineWhenIdle = true;
  failWrites(h.log);
  const errors: (Error | null)[] = [];
  const batch = buildBatch({ baseTimestamp: h.clock.nowMs(), count: 1 });
  batchHeader.setBaseOffset(batch, 0, 0);
  const info = h.log.appendQueued(batch, (err) => errors.push(err));
  assert.equal(info.pending, true, 'the caller must wait for the outcome');
  assert.deepEqual(errors, []);
  await Promise.resolve();
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /EBADF/);
  h.log.abandon();
});

/** An error as a failing disk's system calls give it (fault injection at the segment, below). */
function ioError(): Error {
  return Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO', syscall: 'write' });
}

test('a written append that cannot be made visible (an index write fails) fails the log, not the process', async (t) => {
  const h = openHarness(t);
  const reported: Error[] = [];
  h.reopen(true, { onBackgroundError: (err) => reported.push(err) });
  const eio = ioError();
  // The bytes reach the file; indexing them (an index entry's writeSync) is what fails.
  h.log.activeSegment.commitAppend = () => {
    throw eio;
  };
  const first = queue(h, { count: 2 });
  const behind = queue(h, { count: 1 });
  await assert.rejects(first.info.acknowledged!, (err) => err === eio);
  await assert.rejects(behind.info.acknowledged!, (err) => err === eio);
  assert.equal(h.log.writeFailed, true, 'the log refuses appends');
  assert.deepEqual(reported, [eio], 'the owner is told once (the broker takes the directory offline)');
  assert.equal(h.log.writtenEndOffset, 0, 'nothing unindexed became readable');
  assert.throws(
    () => queue(h, { count: 1 }),
    (err) => err === eio,
  );
  h.log.abandon();
});

test("a rolled segment's index work failing after its queued bytes are written fails the log, not the process", async (t) => {
  const h = openHarness(t);
  const reported: Error[] = [];
  h.reopen(true, { onBackgroundError: (err) => reported.push(err) });
  const a = queue(h, { count: 2 });
  const old = h.log.activeSegment;
  const eio = ioError();
  // Trimming the old segment's index files waits for its queued bytes (Log.roll), then fails.
  old.onRoll = () => {
    throw eio;
  };
  h.log.roll();
  await a.info.acknowledged;
  await waitFor(() => reported.length > 0, 5_000, 'the failure reported');
  assert.deepEqual(reported, [eio]);
  assert.equal(h.log.writeFailed, true);
  assert.equal(h.log.writtenEndOffset, 2, 'the written append stays readable');
  h.log.abandon();
});
