// The tail cache (storage/tail-cache.ts) through the Log: reads answered from recently written appends must be
// exactly what the file answers, only for bytes a reader may see, and never stale after the file changed
// under them (truncation, retention, DeleteRecords, a synchronous append); the broker-wide bound holds.

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { FramePool } from '../../src/common/frame-pool.js';
import { toOffset } from '../../src/common/ids.js';
import { buildBatch as buildKeyedBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { appendQueuedAwaitable, Log, type ReadResult } from '../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../src/storage/log-config.js';
import { TailCacheBudget } from '../../src/storage/tail-cache.js';
import { type BatchSpec, buildBatch, seededRandom } from './batch-builder.js';
import {
  CompactionHarness,
  latestPerKey,
  type ReadRecord,
  TOPIC_PARTITION,
} from './cleaner/compaction-harness.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

function openLog(t: TestContext, budget: TailCacheBudget | undefined, overrides: Partial<LogConfig> = {}) {
  const clock = new ManualClock();
  const log = Log.open({
    dir: tempDir(t, 'brook-tail-'),
    topicPartition: { topic: 't', partition: 0 },
    config: logConfig(overrides),
    clock,
    hadCleanShutdown: true,
    tailCache: budget,
  });
  deferCleanup(t, () => {
    if (!log.isClosed) log.close();
  });
  return { log, clock };
}

/** Queues one append of the given batches (offsets and epoch assigned as a leader does); waits for the write. */
async function append(log: Log, specs: readonly BatchSpec[]): Promise<Buffer> {
  const batches = specs.map((s) => buildBatch(s));
  // Its own memory, as a produce frame has (Buffer.concat would share Node's pool between appends).
  const buf = Buffer.alloc(batches.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of batches) at += b.copy(buf, at);
  let next: number = log.logEndOffset;
  for (let pos = 0; pos < buf.length; pos += batchHeader.sizeInBytes(buf, pos)) {
    batchHeader.setBaseOffset(buf, pos, next);
    next += batchHeader.lastOffsetDelta(buf, pos) + 1;
  }
  const info = appendQueuedAwaitable(log, buf);
  await info.acknowledged;
  log.setHighWatermark(log.writtenEndOffset);
  return buf;
}

/** The answer of the file alone: the segment holding startOffset, read synchronously from disk. */
function fileRead(log: Log, start: number, maxBytes: number, maxOffset: number, minOne: boolean): ReadResult {
  const segment = log.segmentList().find((s) => s.nextOffset > start);
  const r = start >= maxOffset ? null : (segment?.read(start, maxBytes, maxOffset, minOne) ?? null);
  return r === null
    ? { errorCode: StorageErrorCode.None, records: Buffer.alloc(0), firstOffset: start, nextOffset: start }
    : { errorCode: StorageErrorCode.None, ...r };
}

function records(r: ReadResult): Buffer {
  assert.equal(r.errorCode, StorageErrorCode.None);
  return r.errorCode === StorageErrorCode.None ? r.records : Buffer.alloc(0);
}

const values = (n: number, size: number) => Array.from({ length: n }, (_, i) => Buffer.alloc(size, i));

test('a read at the tail is answered from the appended buffer itself, with the bytes the file holds', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const { log } = openLog(t, budget);
  const a = await append(log, [{ values: values(3, 100) }]);
  const b = await append(log, [{ values: values(2, 100) }]);
  const r = await log.readAsync(toOffset(3), 1 << 20, log.highWatermark, true);
  assert.equal(records(r).buffer, b.buffer, 'no file read: the produce buffer is sent as it is');
  assert.deepEqual(records(r), b);
  assert.deepEqual(records(r), records(fileRead(log, 3, 1 << 20, log.highWatermark, true)));
  const both = log.read(toOffset(0), 1 << 20, log.highWatermark, true);
  assert.deepEqual(records(both), Buffer.concat([a, b]), 'two appends are joined');
  assert.equal(log.readableBytes(toOffset(0), 1 << 20, log.highWatermark, true), a.length + b.length);
});

for (const inline of [true, false]) {
  test(`reads at every offset, size bound and visibility bound agree with the file (${inline ? 'appends written inline' : 'queued appends'})`, async (t) => {
    const budget = new TailCacheBudget(1 << 20);
    const { log } = openLog(t, budget);
    log.writeInlineWhenIdle = inline;
    const random = seededRandom(7);
    for (let i = 0; i < 25; i++) {
      const specs = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
        values: values(1 + Math.floor(random() * 4), 20 + Math.floor(random() * 200)),
      }));
      await append(log, specs);
    }
    assert.equal(budget.bufferCount, 25, 'every append is cached');
    const end = log.writtenEndOffset;
    let compared = 0;
    for (let start = 0; start < end; start++) {
      for (const maxBytes of [0, 50, 300, 700, 2000, 1 << 20]) {
        for (const maxOffset of [start, start + 1, start + 5, end]) {
          for (const minOne of [true, false]) {
            const got = await log.readAsync(toOffset(start), maxBytes, toOffset(maxOffset), minOne);
            const want = fileRead(log, start, maxBytes, maxOffset, minOne);
            assert.deepEqual(
              { ...got, records: records(got).toString('hex') },
              { ...want, records: records(want).toString('hex') },
              `read(${start}, ${maxBytes}, ${maxOffset}, ${minOne})`,
            );
            assert.equal(
              log.readableBytes(toOffset(start), maxBytes, toOffset(maxOffset), minOne),
              records(want).length,
              'planned bytes of a cached read are exact',
            );
            compared++;
          }
        }
      }
    }
    assert.ok(compared > 1000);
  });
}

test('read_committed: the batches of an open transaction are not served, from the cache or the file', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const { log } = openLog(t, budget);
  const first = await append(log, [{ values: values(2, 50) }]);
  await append(log, [
    { values: values(2, 50), producerId: 9, producerEpoch: 0, baseSequence: 0, transactional: true },
  ]);
  await append(log, [{ values: values(1, 50) }]);
  assert.equal(log.lastStableOffset, 2, 'the open transaction starts at offset 2');
  assert.equal(budget.bufferCount, 3, 'all three appends are cached');
  const committed = log.read(toOffset(0), 1 << 20, log.lastStableOffset, true);
  assert.equal(records(committed).buffer, first.buffer);
  assert.equal(committed.errorCode === StorageErrorCode.None && committed.nextOffset, 2);
  const atOpen = log.read(toOffset(2), 1 << 20, log.lastStableOffset, true);
  assert.equal(records(atOpen).length, 0, 'nothing at or past the last stable offset');
  const uncommitted = log.read(toOffset(0), 1 << 20, log.highWatermark, true);
  assert.equal(uncommitted.errorCode === StorageErrorCode.None && uncommitted.nextOffset, 5);
});

test('truncation empties the cache: later appends at the same offsets are read, not the old bytes', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const { log } = openLog(t, budget);
  await append(log, [{ values: values(2, 40) }]);
  const old = await append(log, [{ values: values(3, 40) }]);
  log.truncateTo(toOffset(2));
  assert.equal(budget.usedBytes, 0);
  const fresh = await append(log, [{ values: values(3, 90) }]);
  assert.notDeepEqual(fresh, old);
  const r = log.read(toOffset(2), 1 << 20, log.highWatermark, true);
  assert.deepEqual(records(r), fresh);
  assert.deepEqual(
    records(log.read(toOffset(0), 1 << 20, log.highWatermark, true)).subarray(-fresh.length),
    fresh,
  );
});

test('a synchronous append (a follower) empties the cache, so the cached run never has a gap', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const { log } = openLog(t, budget);
  const a = await append(log, [{ values: values(2, 40) }]);
  const b = buildBatch({ values: values(2, 40) });
  batchHeader.setBaseOffset(b, 0, log.logEndOffset);
  log.append(b);
  log.setHighWatermark(log.writtenEndOffset);
  assert.equal(budget.usedBytes, 0);
  const c = await append(log, [{ values: values(2, 40) }]);
  assert.deepEqual(
    records(log.read(toOffset(0), 1 << 20, log.highWatermark, true)),
    Buffer.concat([a, b, c]),
  );
});

test('retention and DeleteRecords drop what fell below the log start offset', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const { log } = openLog(t, budget, { segmentBytes: 1200, retentionBytes: 1500, fileDeleteDelayMs: 0 });
  const appended: Buffer[] = [];
  for (let i = 0; i < 12; i++) appended.push(await append(log, [{ values: values(2, 200) }]));
  assert.ok(log.segmentCount > 3);
  const usedBefore = budget.usedBytes;
  const deleted = log.deleteOldSegments();
  assert.ok(deleted.count > 0);
  assert.ok(budget.usedBytes < usedBefore, 'deleted segments are no longer cached');
  const below = log.read(toOffset(0), 1 << 20, log.highWatermark, true);
  assert.equal(below.errorCode, StorageErrorCode.OffsetOutOfRange);
  const start = log.logStartOffset;
  const r = log.read(start, 1 << 20, log.highWatermark, true);
  assert.equal(r.errorCode === StorageErrorCode.None && r.firstOffset, start);
  const moved = log.deleteRecordsBefore(log.highWatermark - 2);
  assert.equal(moved.errorCode, StorageErrorCode.None);
  assert.equal(budget.usedBytes, appended.at(-1)!.buffer.byteLength, 'only the last append is left');
  assert.equal(
    log.read(start, 1 << 20, log.highWatermark, true).errorCode,
    StorageErrorCode.OffsetOutOfRange,
  );
});

test('the budget bounds the memory of all logs together, evicting the oldest appends; reads fall back to the file', async (t) => {
  const one = buildBatch({ values: values(4, 250) }).length;
  const budget = new TailCacheBudget(one * 5);
  const x = openLog(t, budget);
  const y = openLog(t, budget);
  const xs: Buffer[] = [];
  for (let i = 0; i < 20; i++) {
    xs.push(await append(x.log, [{ values: values(4, 250) }]));
    await append(y.log, [{ values: values(4, 250) }]);
    assert.ok(budget.usedBytes <= one * 5, `within the bound after ${i + 1} appends`);
  }
  assert.equal(budget.bufferCount, 5);
  const old = x.log.read(toOffset(0), 1 << 20, x.log.highWatermark, true);
  assert.notEqual(records(old).buffer, xs[0]!.buffer, 'an evicted append is read from the file');
  assert.deepEqual(splitFirst(records(old)), xs[0]);
  const last = x.log.read(toOffset(76), 1 << 20, x.log.highWatermark, true);
  assert.equal(records(last).buffer, xs[19]!.buffer, 'the newest append is still cached');
  x.log.close();
  assert.equal(budget.usedBytes, one * 5 - one * 2, 'closing a log releases its share');
  y.log.deleteAllFiles();
  assert.equal(budget.usedBytes, 0, 'deleting a log (topic deletion) releases its share');
});

test('views of one ArrayBuffer are counted once, as the memory they keep alive', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const { log } = openLog(t, budget);
  // One request frame holding two partitions' batches would be cut like this.
  const frame = Buffer.alloc(8192);
  const a = buildBatch({ values: values(2, 100) });
  const b = buildBatch({ values: values(2, 100) });
  a.copy(frame, 100);
  b.copy(frame, 2000);
  for (const [pos, len] of [
    [100, a.length],
    [2000, b.length],
  ] as const) {
    const view = frame.subarray(pos, pos + len);
    batchHeader.setBaseOffset(view, 0, log.logEndOffset);
    await appendQueuedAwaitable(log, view).acknowledged;
  }
  assert.equal(budget.usedBytes, 8192);
  assert.equal(budget.bufferCount, 1);
});

test('a budget of 0 caches nothing and every read is the file', async (t) => {
  const budget = new TailCacheBudget(0);
  const { log } = openLog(t, budget);
  const a = await append(log, [{ values: values(2, 100) }]);
  const r = log.read(toOffset(0), 1 << 20, log.highWatermark, true);
  assert.notEqual(records(r).buffer, a.buffer);
  assert.deepEqual(records(r), a);
  assert.equal(budget.usedBytes, 0);
});

function splitFirst(buf: Buffer): Buffer {
  return buf.subarray(0, batchHeader.sizeInBytes(buf, 0));
}

test('a compaction swap empties the cache: reads serve the cleaned segments, not the appends cached before', async (t) => {
  const budget = new TailCacheBudget(1 << 20);
  const h = new CompactionHarness(t);
  h.log.close();
  h.log = Log.open({
    dir: h.dir,
    topicPartition: TOPIC_PARTITION,
    config: h.config,
    clock: h.clock,
    hadCleanShutdown: true,
    tailCache: budget,
  });
  const written: ReadRecord[] = [];
  for (let round = 0; round < 4; round++) {
    for (let first = 0; first < 10; first += 5) {
      const records = Array.from({ length: 5 }, (_, i) => ({
        key: `k${first + i}`,
        value: `k${first + i}-r${round}`,
      }));
      const batch = buildKeyedBatch(records, { timestamp: h.clock.nowMs() });
      const base = h.log.logEndOffset;
      batchHeader.setBaseOffset(batch, 0, base);
      await appendQueuedAwaitable(h.log, batch).acknowledged;
      h.log.setHighWatermark(h.log.writtenEndOffset);
      for (const [i, r] of records.entries()) written.push({ offset: base + i, ...r });
    }
    h.log.roll();
  }
  assert.deepEqual(h.records(), written, 'every record, read from the cache');
  assert.ok(budget.usedBytes > 0);
  const result = await h.clean();
  assert.ok(result !== null, 'the cleaner replaced segments');
  assert.equal(budget.usedBytes, 0, 'the swap emptied the cache');
  assert.deepEqual(h.records(), latestPerKey(written), 'the cleaned bytes are served');
});

/**
 * Appends one 30 KiB batch built in a frame of `pool`, as the broker does for an inline produce, moves the high
 * watermark past it and lets go of the frame (the cache keeps its own reference); answers a copy of its bytes.
 */
function appendPooledBatch(log: Log, pool: FramePool, fill: number): Buffer {
  const batch = buildBatch({ values: values(1, 30 * 1024).map((v) => v.fill(fill)) });
  const frame = pool.acquire(batch.length);
  batch.copy(frame);
  batchHeader.setBaseOffset(frame, 0, log.logEndOffset);
  const info = appendQueuedAwaitable(log, frame);
  assert.equal(info.acknowledged, null, 'written inline (the queue was idle)');
  log.setHighWatermark(log.writtenEndOffset);
  const copy = Buffer.from(frame);
  pool.release(frame);
  return copy;
}

test('pooled frames: cached appends hold a pool reference, pinned reads share it, other reads get copies', async (t) => {
  const pool = new FramePool(4 << 20, true);
  const budget = new TailCacheBudget(3 * 40 * 1024, pool);
  const { log } = openLog(t, budget);
  const appendPooled = (fill: number): Buffer => appendPooledBatch(log, pool, fill);
  const first = appendPooled(1);
  const pins: Buffer[] = [];
  const pinned = await log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, pins).result;
  assert.equal(pins.length, 1);
  assert.ok(pool.isPooled(records(pinned)), 'a pinned read is a view of the frame');
  assert.deepEqual(records(pinned), first);
  const unpinned = await log.readAsync(toOffset(0), 1 << 20, log.highWatermark, true);
  assert.equal(pool.isPooled(records(unpinned)), false, 'a read without pins is a copy');
  assert.deepEqual(records(unpinned), first);
  // Three more appends evict the first from the cache; the pin still keeps its frame from reuse.
  const later = [appendPooled(2), appendPooled(3), appendPooled(4)];
  assert.equal(pool.stats.recycled, 0);
  assert.deepEqual(records(pinned), first, 'the pinned view is intact after eviction');
  for (const v of pins) pool.release(v);
  assert.equal(pool.stats.recycled, 1, 'the last reference gone, the frame is idle');
  const fifth = appendPooled(5);
  assert.equal(pool.stats.reused, 1, 'and reused by the next append');
  // Every offset still reads back right, from the cache or the file.
  const all = records(await log.readAsync(toOffset(0), 1 << 20, log.highWatermark, true));
  assert.deepEqual(all, Buffer.concat([first, ...later, fifth]));
  // Pinned reads of several cached appends, and of the file, are read into pooled buffers held by the pins.
  const readPins: Buffer[] = [];
  const spanning = records(
    await log.startRead(toOffset(3), 1 << 20, log.highWatermark, true, readPins).result,
  );
  assert.deepEqual(spanning, Buffer.concat([later[2]!, fifth]));
  const fromFile = records(
    await log.startRead(toOffset(0), 1 << 20, log.highWatermark, true, readPins).result,
  );
  assert.deepEqual(fromFile, all);
  assert.equal(readPins.length, 2);
  assert.ok(pool.isPooled(spanning) && pool.isPooled(fromFile));
  const idleBefore = pool.idleByteCount;
  for (const v of readPins) pool.release(v);
  assert.ok(pool.idleByteCount > idleBefore, 'both buffers idle once their pins are given back');
});

test('pooled frames: the frames of a cache that empties at once stay idle to fill it again', async (t) => {
  // The idle bound alone (64 KiB) would keep one frame of the six; the cache's unused budget keeps them all.
  const pool = new FramePool(64 * 1024, true);
  const budget = new TailCacheBudget(6 * 40 * 1024, pool);
  const fill = (log: Log): void => {
    for (let i = 0; i < 6; i++) appendPooledBatch(log, pool, i + 1);
  };
  const first = openLog(t, budget).log;
  fill(first);
  assert.equal(pool.stats.allocated, 6);
  assert.equal(pool.idleByteCount, 0, 'every frame is cached');
  const cached = budget.usedBytes;
  first.close();
  assert.equal(budget.usedBytes, 0);
  assert.equal(pool.idleByteCount, cached, 'closing the log made its cached frames idle, none dropped');
  assert.equal(pool.stats.dropped, 0);
  const second = openLog(t, budget).log;
  fill(second);
  assert.equal(pool.stats.allocated, 6, 'the next log filled the cache with the same frames');
  assert.equal(pool.stats.reused, 6);
  assert.equal(budget.usedBytes, cached);
  assert.equal(pool.idleByteCount, 0);
});

test('pooled frames: a queued append holds its frame until the thread pool has written it', async (t) => {
  const pool = new FramePool(4 << 20, true);
  const budget = new TailCacheBudget(1 << 20, pool);
  const { log } = openLog(t, budget);
  log.writeInlineWhenIdle = false;
  const expected: Buffer[] = [];
  const written: Promise<void>[] = [];
  for (let i = 0; i < 12; i++) {
    const batch = buildBatch({ values: values(1, 20 * 1024).map((v) => v.fill(i + 1)) });
    const frame = pool.acquire(batch.length);
    batch.copy(frame);
    batchHeader.setBaseOffset(frame, 0, log.logEndOffset);
    expected.push(Buffer.from(frame));
    const info = appendQueuedAwaitable(log, frame);
    assert.notEqual(info.acknowledged, null, 'queued, not written inline');
    written.push(info.acknowledged!);
    // The request lets go at once (as after a drain answered it): with poison, a write that still needed the
    // frame would now put 0xa5 bytes into the file.
    pool.release(frame);
    // Halfway, a synchronous append drains the queue while a write may still run.
    if (i === 6) {
      const sync = buildBatch({ values: values(1, 100) });
      batchHeader.setBaseOffset(sync, 0, log.logEndOffset);
      expected.push(Buffer.from(sync));
      log.append(sync);
    }
  }
  await Promise.all(written);
  while (log.hasQueuedAppends) await new Promise((r) => setTimeout(r, 5));
  log.setHighWatermark(log.writtenEndOffset);
  assert.deepEqual(records(fileRead(log, 0, 8 << 20, log.highWatermark, true)), Buffer.concat(expected));
  assert.ok(pool.stats.recycled > 0, 'frames became idle once written and evicted');
});
