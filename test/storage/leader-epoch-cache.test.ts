// Leader epoch cache: assignment rules, OffsetForLeaderEpoch answers, truncation, persistence.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { toLeaderEpoch, toOffset } from '../../src/common/ids.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { LeaderEpochCache, UNDEFINED_EPOCH } from '../../src/storage/leader-epoch-cache.js';
import { openHarness } from './log-harness.js';
import { tempDir } from './tmp-dir.js';

test('endOffsetFor answers OffsetForLeaderEpoch as Kafka does', () => {
  const cache = new LeaderEpochCache(null);
  cache.assign(toLeaderEpoch(2), toOffset(10));
  cache.assign(toLeaderEpoch(4), toOffset(25));
  cache.assign(toLeaderEpoch(5), toOffset(40));
  const leo = toOffset(55);
  assert.deepEqual(
    cache.endOffsetFor(toLeaderEpoch(5), leo),
    { epoch: 5, endOffset: 55 },
    'latest epoch ends at the log end',
  );
  assert.deepEqual(cache.endOffsetFor(toLeaderEpoch(4), leo), { epoch: 4, endOffset: 40 });
  assert.deepEqual(
    cache.endOffsetFor(toLeaderEpoch(3), leo),
    { epoch: 2, endOffset: 25 },
    'unknown epoch: the one below it',
  );
  assert.deepEqual(
    cache.endOffsetFor(toLeaderEpoch(1), leo),
    { epoch: 1, endOffset: 10 },
    'older than all: first start',
  );
  assert.deepEqual(
    cache.endOffsetFor(toLeaderEpoch(6), leo),
    { epoch: -1, endOffset: -1 },
    'newer than all: undefined',
  );
  assert.deepEqual(cache.endOffsetFor(UNDEFINED_EPOCH, leo), { epoch: -1, endOffset: -1 });
  assert.equal(cache.epochForOffset(30), 4);
  assert.equal(cache.epochForOffset(5), UNDEFINED_EPOCH);
});

test('assign ignores repeats and drops entries the new one contradicts', () => {
  const cache = new LeaderEpochCache(null);
  cache.assign(toLeaderEpoch(1), toOffset(0));
  cache.assign(toLeaderEpoch(1), toOffset(5));
  assert.deepEqual(cache.epochEntries, [{ epoch: 1, startOffset: 0 }]);
  cache.assign(toLeaderEpoch(3), toOffset(20));
  cache.assign(toLeaderEpoch(2), toOffset(10)); // lower epoch than the latest: the later entries it contradicts go
  assert.deepEqual(cache.epochEntries, [
    { epoch: 1, startOffset: 0 },
    { epoch: 2, startOffset: 10 },
  ]);
});

test('truncateFromEnd and truncateFromStart follow the log', () => {
  const cache = new LeaderEpochCache(null);
  cache.assign(toLeaderEpoch(0), toOffset(0));
  cache.assign(toLeaderEpoch(1), toOffset(10));
  cache.assign(toLeaderEpoch(2), toOffset(20));
  cache.truncateFromEnd(20);
  assert.deepEqual(
    cache.epochEntries.map((e) => e.epoch),
    [0, 1],
  );
  cache.truncateFromStart(15);
  assert.deepEqual(cache.epochEntries, [{ epoch: 1, startOffset: 15 }]);
});

test('changes are persisted to leader-epoch-checkpoint in the background and read back', async (t) => {
  const path = join(tempDir(t), 'leader-epoch-checkpoint');
  const cache = new LeaderEpochCache(path);
  cache.assign(toLeaderEpoch(0), toOffset(0));
  cache.assign(toLeaderEpoch(7), toOffset(42));
  await cache.whenPersisted();
  assert.equal(readFileSync(path, 'utf8'), '0\n2\n0 0\n7 42\n');
  assert.deepEqual(LeaderEpochCache.load(path).epochEntries, cache.epochEntries);
  // Changes coalesce while a write runs; the file ends with the last of them.
  for (let epoch = 8; epoch < 20; epoch++) cache.assign(toLeaderEpoch(epoch), toOffset(epoch * 10));
  await cache.whenPersisted();
  assert.deepEqual(LeaderEpochCache.load(path).epochEntries, cache.epochEntries);
  // A synchronous write supersedes one still running, which then never renames over it.
  cache.assign(toLeaderEpoch(20), toOffset(500));
  cache.persistNow();
  assert.deepEqual(LeaderEpochCache.load(path).epochEntries, cache.epochEntries);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(LeaderEpochCache.load(path).epochEntries, cache.epochEntries);
  assert.deepEqual(
    readdirSync(dirname(path)).filter((n) => n.endsWith('.tmp')),
    [],
    'no temporary file is left behind',
  );
});

test('the log assigns epochs from appended batches and truncation trims the cache', (t) => {
  const h = openHarness(t);
  h.append({ count: 2 }, 0);
  h.append({ count: 2 }, 3);
  h.append({ count: 2 }, 3);
  h.append({ count: 2 }, 5);
  assert.deepEqual(h.log.epochCache.epochEntries, [
    { epoch: 0, startOffset: 0 },
    { epoch: 3, startOffset: 2 },
    { epoch: 5, startOffset: 6 },
  ]);
  assert.deepEqual(h.log.endOffsetForEpoch(toLeaderEpoch(3)), { epoch: 3, endOffset: 6 });
  assert.deepEqual(h.log.endOffsetForEpoch(toLeaderEpoch(5)), { epoch: 5, endOffset: 8 });
  h.log.truncateTo(toOffset(6));
  assert.equal(h.log.epochCache.latestEpoch, 3);
  h.log.setHighWatermark(toOffset(6));
  assert.equal(h.log.deleteRecordsBefore(3).errorCode, StorageErrorCode.None);
  assert.deepEqual(h.log.epochCache.epochEntries, [{ epoch: 3, startOffset: 3 }]);
  h.reopen(false);
  assert.deepEqual(h.log.epochCache.epochEntries, [{ epoch: 3, startOffset: 3 }]);
});

test('an epoch and an offset cannot change places at the cache or the log (branded ids)', (t) => {
  const cache = new LeaderEpochCache(null);
  const epoch = toLeaderEpoch(7);
  const offset = toOffset(7);
  cache.assign(epoch, offset);
  // Equal numbers, yet swapping them does not compile: the build of this file fails if the brands go.
  // @ts-expect-error an offset where the epoch goes
  cache.assign(offset, epoch);
  // @ts-expect-error a plain number where an epoch goes
  assert.deepEqual(cache.endOffsetFor(7, offset), { epoch: 7, endOffset: 7 });
  // What the cache and the log hand out carries its brand: an entry's epoch goes back in as an epoch.
  const latest = cache.epochEntries.at(-1)!;
  cache.assign(latest.epoch, latest.startOffset);
  const h = openHarness(t);
  h.append({}, 2);
  // @ts-expect-error the log end offset is an offset, not an epoch
  h.log.endOffsetForEpoch(h.log.logEndOffset);
  assert.equal(cache.latestEpoch, 7);
});
