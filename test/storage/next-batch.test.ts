// A segment keeps the header of the batch its last read cut off (log-segment.ts, nextBatch) and answers the next
// offset lookup there from it. Through the Log on real files (no tail cache): a chain of reads that each start
// where the one before was cut answers exactly what reads of a freshly opened log answer, without an offset index
// lookup after the first; after a truncation and new appends at the same offsets, a read there answers the new
// batches, not the header kept from before.

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import type { Offset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { Log, type ReadResult } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { OffsetIndex } from '../../src/storage/offset-index.js';
import { buildBatch } from './batch-builder.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

function openLog(t: TestContext, dir: string): Log {
  const log = Log.open({
    dir,
    topicPartition: { topic: 't', partition: 0 },
    config: logConfig({ indexIntervalBytes: 1 }),
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys: null,
  });
  deferCleanup(t, () => {
    if (!log.isClosed) log.close();
  });
  return log;
}

/** Appends `n` batches of `records` records of 700 bytes filled with `fill` (+ the offset); answers them. */
function append(log: Log, n: number, fill: number, records = 3): Buffer[] {
  const batches: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const first = log.logEndOffset;
    const values = Array.from({ length: records }, (_, j) => Buffer.alloc(700, fill + first + j));
    const batch = buildBatch({ values });
    batchHeader.setBaseOffset(batch, 0, first);
    log.append(batch);
    batches.push(Buffer.from(batch));
  }
  log.setHighWatermark(log.logEndOffset);
  return batches;
}

function answered(r: ReadResult): { records: Buffer; nextOffset: number } {
  assert.equal(r.errorCode, StorageErrorCode.None);
  return r.errorCode === StorageErrorCode.None
    ? { records: r.records, nextOffset: r.nextOffset }
    : { records: Buffer.alloc(0), nextOffset: -1 };
}

/** Counts OffsetIndex lookups while `run` runs. */
async function countLookups(t: TestContext, run: () => Promise<void>): Promise<number> {
  let lookups = 0;
  const lookup = OffsetIndex.prototype.lookup;
  t.mock.method(OffsetIndex.prototype, 'lookup', function (this: OffsetIndex, target: number) {
    lookups++;
    return lookup.call(this, target);
  });
  await run();
  t.mock.restoreAll();
  return lookups;
}

/** Reads from `from` in steps of `maxBytes`, each from where the last one ended; answers each read's records. */
async function readChain(log: Log, from: number, maxBytes: number, steps: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = from;
  for (let i = 0; i < steps && offset < log.logEndOffset; i++) {
    const read = answered(await log.startRead(offset as Offset, maxBytes).result);
    out.push(Buffer.from(read.records));
    offset = read.nextOffset;
  }
  return out;
}

test('reads that start where the last one was cut answer what a fresh log answers, without index lookups', async (t) => {
  const dir = tempDir(t, 'brook-next-batch-');
  const log = openLog(t, dir);
  const batches = append(log, 40, 0);
  // 2.5 batches a read: every read cuts one; the chain starts inside a batch (offset 4 of the batch at 3).
  const maxBytes = Math.floor(2.5 * batches[0]!.length);
  let chained: Buffer[] = [];
  const lookups = await countLookups(t, async () => {
    chained = await readChain(log, 4, maxBytes, 1);
  });
  assert.equal(lookups, 1, 'the first read looks its offset up');
  const later = await countLookups(t, async () => {
    chained.push(...(await readChain(log, answeredNext(chained, 4), maxBytes, 100)));
  });
  assert.equal(later, 0, 'no lookup for a read starting where the last one was cut');
  log.close();
  const fresh = openLog(t, dir);
  assert.deepEqual(await readChain(fresh, 4, maxBytes, 100), chained);
});

test('after a truncation and new batches of other sizes at the same offsets, a read answers the new batches', async (t) => {
  const log = openLog(t, tempDir(t, 'brook-next-batch-'));
  const batchBytes = append(log, 10, 0)[0]!.length;
  // Cut after batch 1 (offsets 3-5): the segment keeps the header of batch 2 (offsets 6-8, at 2 x batchBytes).
  const first = answered(await log.startRead(0 as Offset, Math.floor(2.5 * batchBytes)).result);
  assert.equal(first.nextOffset, 6);
  log.truncateTo(3 as Offset);
  // Batches of two records now: offset 6 is in the batch of 5-6, which starts before the kept header's position.
  const rewritten = append(log, 5, 100, 2);
  const again = answered(await log.startRead(6 as Offset, rewritten[1]!.length).result);
  assert.deepEqual(Buffer.from(again.records), rewritten[1], 'the new batch holding offset 6');
  assert.equal(again.nextOffset, 7);
});

function answeredNext(reads: readonly Buffer[], from: number): number {
  const last = reads[reads.length - 1];
  if (last === undefined || last.length === 0) return from;
  let pos = 0;
  let next = from;
  while (pos < last.length) {
    next = batchHeader.lastOffset(last, pos) + 1;
    pos += batchHeader.sizeInBytes(last, pos);
  }
  return next;
}
