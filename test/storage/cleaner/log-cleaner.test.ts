// The log cleaner of a log directory: which log it picks (min.cleanable.dirty.ratio, max.compaction.lag.ms, the
// highest dirty share first, never for a passed delete horizon alone), cleaner-offset-checkpoint across restarts,
// and the scheduler.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { CapturingLogger, type Logger } from '../../../src/common/logger.js';
import { buildBatch } from '../../../src/protocol/records/batch-builder.js';
import { writeBatchCrc } from '../../../src/protocol/records/batch-crc.js';
import { BATCH_HEADER_BYTES, batchHeader } from '../../../src/protocol/records/batch-header.js';
import { readOffsetCheckpoint, writeOffsetCheckpoint } from '../../../src/storage/checkpoint-file.js';
import type { Log } from '../../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../../src/storage/log-config.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';
import { decodeBatches } from './compaction-harness.js';

const TP = { topic: 'table', partition: 0 };

function openManager(
  dir: string,
  clock: ManualClock,
  topic: Partial<LogConfig> = {},
  backoffMs = 15_000,
  dedupeBufferBytes = 1 << 20,
  logger?: Logger,
): LogManager {
  return LogManager.open({
    dir,
    clock,
    logger,
    configFor: (name) =>
      name === 'table'
        ? logConfig({ cleanupPolicy: 'compact', retentionMs: -1, ...topic })
        : logConfig({ cleanupPolicy: 'delete' }),
    managerConfig: { cleanerBackoffMs: backoffMs, cleanerDedupeBufferBytes: dedupeBufferBytes },
  });
}

/** `keys` keyed records (one batch each) then a roll; the high watermark follows. */
function writeKeys(log: Log, clock: ManualClock, keys: number, tag: string, valueBytes = 50): void {
  for (let k = 0; k < keys; k++) {
    const value = `${tag}-${k}`.padEnd(valueBytes, '.');
    const batch = buildBatch([{ key: `k${k}`, value }], { timestamp: clock.nowMs() });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    log.append(batch);
  }
  log.roll();
  log.setHighWatermark(log.logEndOffset);
}

function values(log: Log): (string | null)[] {
  const r = log.read(log.logStartOffset, 1 << 20, toOffset(log.activeSegment.baseOffset));
  if (r.errorCode !== 0) throw new Error('read failed');
  const out: Buffer[] = [];
  for (let pos = 0; pos < r.records.length; pos += batchHeader.sizeInBytes(r.records, pos)) {
    out.push(r.records.subarray(pos, pos + batchHeader.sizeInBytes(r.records, pos)));
  }
  return decodeBatches(out).map((x) => x.value?.split('.')[0] ?? null);
}

test('the cleaner cleans a log once its dirty share reaches min.cleanable.dirty.ratio, and checkpoints', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, { minCleanableDirtyRatio: 0.5 });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  const other = manager.getOrCreateLog({ topic: 'plain', partition: 0 });
  writeKeys(other, clock, 10, 'x');
  writeKeys(log, clock, 10, 'a');
  const first = await manager.cleaner.runOnce();
  assert.equal(first?.reason, 'dirty-ratio');
  assert.deepEqual(first?.topicPartition, TP, 'only compacted logs are cleaned');
  const end = log.activeSegment.baseOffset;
  assert.deepEqual(readOffsetCheckpoint(join(dir, 'cleaner-offset-checkpoint')), [{ ...TP, offset: end }]);
  // A dirty section of 3 records against 10 clean ones: below the ratio.
  writeKeys(log, clock, 3, 'b');
  assert.equal(manager.cleaner.pickLog(), null);
  assert.equal(await manager.cleaner.runOnce(), null);
  // 10 more: now 13 dirty against 10 clean.
  writeKeys(log, clock, 10, 'c');
  const candidate = manager.cleaner.pickLog();
  assert.equal(candidate?.firstDirtyOffset, end);
  assert.ok(candidate !== null && candidate.dirtyRatio >= 0.5, `ratio ${candidate?.dirtyRatio}`);
  assert.ok((await manager.cleaner.runOnce()) !== null);
  assert.deepEqual(values(log), ['c-0', 'c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6', 'c-7', 'c-8', 'c-9']);
});

test('a segment holding the checkpoint counts as clean and dirty both, as in Kafka LogToClean', async (t) => {
  // Kafka's cleanBytes are the segments with a base below the first dirty offset, its cleanableBytes those from
  // the one holding that offset to the first uncleanable one: a segment the checkpoint falls inside (a pass
  // stopped by a full dedupe buffer leaves one) is in both, and min.cleanable.dirty.ratio is compared to that.
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, { minCleanableDirtyRatio: 0.6 });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  for (const tag of ['a', 'b', 'c']) writeKeys(log, clock, 10, tag);
  const [a, b, c] = log.segmentList();
  manager.cleaner.adoptCheckpoint(TP, b!.baseOffset + 5);
  const kafkaRatio = (b!.size + c!.size) / (a!.size + b!.size + (b!.size + c!.size));
  assert.ok(kafkaRatio < 0.6, `ratio ${kafkaRatio}`);
  assert.equal(manager.cleaner.pickLog(), null, 'below min.cleanable.dirty.ratio=0.6');
  assert.equal(await manager.cleaner.runOnce(), null);
  // Ten records more: (b + c + d) / (a + b + b + c + d) = 3/5 is not above 0.6 either; ten more after them are.
  writeKeys(log, clock, 10, 'd');
  assert.equal(manager.cleaner.pickLog(), null);
  writeKeys(log, clock, 10, 'e');
  const candidate = manager.cleaner.pickLog();
  assert.equal(candidate?.reason, 'dirty-ratio');
  assert.equal(candidate?.firstDirtyOffset, b!.baseOffset + 5);
  const sizes = log.segmentList().map((s) => s.size);
  const expected =
    (sizes[1]! + sizes[2]! + sizes[3]! + sizes[4]!) /
    (sizes[0]! + sizes[1]! + (sizes[1]! + sizes[2]! + sizes[3]! + sizes[4]!));
  assert.equal(candidate?.dirtyRatio, expected);
});

test('cleaner-offset-checkpoint carries the first dirty offset across a restart', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = openManager(dir, clock);
  const log = first.getOrCreateLog(TP);
  writeKeys(log, clock, 10, 'a');
  await first.cleaner.runOnce();
  const end = log.activeSegment.baseOffset;
  first.shutdown();
  const second = openManager(dir, clock);
  deferCleanup(t, () => second.shutdown());
  const reopened = second.getLog(TP)!;
  assert.equal(second.cleaner.firstDirtyOffset(reopened), end);
  assert.equal(second.cleaner.pickLog(), null, 'nothing dirty after the restart');
});

test('a truncation below the checkpoint brings it down to the new log end, on disk at once', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  // After the truncation one segment holds the checkpoint (offset 15) and all the new data: clean and dirty both,
  // a ratio of 1/2 (Kafka's LogToClean), which the default min.cleanable.dirty.ratio 0.5 does not exceed.
  const manager = openManager(dir, clock, { minCleanableDirtyRatio: 0.4 });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  writeKeys(log, clock, 10, 'a');
  writeKeys(log, clock, 10, 'b');
  await manager.cleaner.runOnce();
  assert.equal(manager.cleaner.firstDirtyOffset(log), 20);
  // Offsets 12-19 survived the cleaning (the latest of their keys); truncation removes them.
  log.truncateTo(toOffset(15));
  assert.equal(log.logEndOffset, 15);
  assert.equal(manager.cleaner.firstDirtyOffset(log), 15);
  assert.deepEqual(readOffsetCheckpoint(join(dir, 'cleaner-offset-checkpoint')), [{ ...TP, offset: 15 }]);
  // New data from the new leader is dirty, and the next pass cleans it against what was cleaned before.
  writeKeys(log, clock, 10, 'c');
  await manager.cleaner.runOnce();
  assert.deepEqual(
    values(log),
    Array.from({ length: 10 }, (_, k) => `c-${k}`),
  );
});

test('a checkpoint outside the log is reset to the log start in cleaner-offset-checkpoint at once', async (t) => {
  // Kafka's LogCleanerManager.cleanableOffsets answers forceUpdateCheckpoint for a checkpoint below the log start
  // (records deleted past it) or above the log end (a damaged tail), and grabFilthiestCompactedLog writes the log
  // start to the file then, whether or not the log is picked. min.cleanable.dirty.ratio=1 keeps it from being
  // picked here, so only the reset can write the file.
  const dir = tempDir(t);
  const clock = new ManualClock();
  const path = join(dir, 'cleaner-offset-checkpoint');
  const first = openManager(dir, clock, { minCleanableDirtyRatio: 1 });
  const log = first.getOrCreateLog(TP);
  for (const tag of ['a', 'b', 'c']) writeKeys(log, clock, 10, tag);
  assert.equal(first.cleaner.pickLog(), null);
  assert.deepEqual(readOffsetCheckpoint(path), [], 'a log never cleaned gets no entry');
  first.cleaner.adoptCheckpoint(TP, 5);
  assert.equal(log.deleteRecordsBefore(20).lowWatermark, 20);
  assert.equal(first.cleaner.pickLog(), null);
  assert.deepEqual(readOffsetCheckpoint(path), [{ ...TP, offset: 20 }], 'below the log start');
  first.shutdown();

  writeOffsetCheckpoint(path, [{ ...TP, offset: 1000 }]);
  const second = openManager(dir, clock, { minCleanableDirtyRatio: 1 });
  deferCleanup(t, () => second.shutdown());
  assert.equal(second.getLog(TP)!.logStartOffset, 20);
  assert.equal(second.cleaner.pickLog(), null);
  assert.deepEqual(readOffsetCheckpoint(path), [{ ...TP, offset: 20 }], 'above the log end');
  assert.equal(second.cleaner.checkpointOf(TP), 20);
});

test('a checkpoint reset is logged as a warning, as Kafka does, except below the start of a compact,delete log', async (t) => {
  // Kafka's LogCleanerManager.cleanableOffsets warns when it resets the first dirty offset to the log start: always
  // for a checkpoint past the log end (a damaged tail), and for one below the log start unless the log is
  // compact,delete, where retention moves the start past the checkpoint in the normal course.
  const dir = tempDir(t);
  const clock = new ManualClock();
  const path = join(dir, 'cleaner-offset-checkpoint');
  const logger = new CapturingLogger();
  const first = openManager(dir, clock, { minCleanableDirtyRatio: 1 }, 15_000, 1 << 20, logger);
  const log = first.getOrCreateLog(TP);
  for (const tag of ['a', 'b', 'c']) writeKeys(log, clock, 10, tag);
  first.cleaner.adoptCheckpoint(TP, 5);
  assert.equal(first.cleaner.pickLog(), null);
  assert.deepEqual(
    logger.matching('Resetting first dirty offset'),
    [],
    'a checkpoint inside the log is kept',
  );
  assert.equal(log.deleteRecordsBefore(20).lowWatermark, 20);
  assert.equal(first.cleaner.pickLog(), null);
  const below = logger.matching('Resetting first dirty offset');
  assert.equal(below.length, 1);
  assert.equal(below[0]!.level, 'warn');
  assert.deepEqual(below[0]!.fields, {
    partition: 'table-0',
    checkpointOffset: 5,
    logStartOffset: 20,
    logEndOffset: 30,
  });
  assert.equal(first.cleaner.pickLog(), null);
  assert.equal(logger.matching('Resetting first dirty offset').length, 1, 'once: the reset was written');
  first.shutdown();

  writeOffsetCheckpoint(path, [{ ...TP, offset: 1000 }]);
  const second = openManager(dir, clock, { minCleanableDirtyRatio: 1 }, 15_000, 1 << 20, logger);
  assert.equal(second.cleaner.pickLog(), null);
  const above = logger.matching('Resetting first dirty offset');
  assert.equal(above.length, 2);
  assert.match(above[1]!.message, /1000 is past the log end offset 30/);
  second.shutdown();

  // compact,delete: below the start is the normal course, and nothing is logged; past the end still is.
  writeOffsetCheckpoint(path, [{ ...TP, offset: 5 }]);
  const both = openManager(
    dir,
    clock,
    { minCleanableDirtyRatio: 1, cleanupPolicy: 'compact,delete' },
    15_000,
    1 << 20,
    logger,
  );
  deferCleanup(t, () => both.shutdown());
  assert.equal(both.cleaner.pickLog(), null);
  assert.equal(both.cleaner.checkpointOf(TP), 20, 'reset all the same');
  assert.equal(logger.matching('Resetting first dirty offset').length, 2);
  both.cleaner.adoptCheckpoint(TP, 1000);
  assert.equal(both.cleaner.pickLog(), null);
  assert.equal(logger.matching('Resetting first dirty offset').length, 3);
});

test('deleting a log drops its checkpoint entry from the file', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock);
  deferCleanup(t, () => manager.shutdown());
  writeKeys(manager.getOrCreateLog(TP), clock, 10, 'a');
  await manager.cleaner.runOnce();
  assert.equal(readOffsetCheckpoint(join(dir, 'cleaner-offset-checkpoint')).length, 1);
  manager.deleteLog(TP);
  assert.deepEqual(readOffsetCheckpoint(join(dir, 'cleaner-offset-checkpoint')), []);
});

test('max.compaction.lag.ms forces a cleaning below the dirty ratio', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, { minCleanableDirtyRatio: 0.9, maxCompactionLagMs: 60_000 });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  writeKeys(log, clock, 10, 'a');
  await manager.cleaner.runOnce();
  writeKeys(log, clock, 2, 'b');
  assert.equal(manager.cleaner.pickLog(), null);
  clock.advance(60_001);
  const pass = await manager.cleaner.runOnce();
  assert.equal(pass?.reason, 'max-compaction-lag');
  assert.deepEqual(values(log).slice(-2), ['b-0', 'b-1']);
});

test('of the candidates the highest dirty share is cleaned first, max.compaction.lag.ms ones included', async (t) => {
  // Kafka's grabFilthiestCompactedLog makes a log a candidate by its lag (with cleanable bytes) or by its ratio, and
  // takes `cleanableLogs.max`, ordered by cleanableRatio alone: a log past its lag does not go first for that.
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, { minCleanableDirtyRatio: 0.9, maxCompactionLagMs: 60_000 });
  deferCleanup(t, () => manager.shutdown());
  const lagging = manager.getOrCreateLog(TP);
  writeKeys(lagging, clock, 10, 'a');
  await manager.cleaner.runOnce();
  writeKeys(lagging, clock, 2, 'b');
  clock.advance(60_001);
  // Never cleaned and written just now: every cleanable byte is dirty, a ratio of 1, and no segment past the lag.
  const dirtiest = manager.getOrCreateLog({ topic: 'table', partition: 1 });
  writeKeys(dirtiest, clock, 10, 'c');
  const first = await manager.cleaner.runOnce();
  assert.deepEqual(first?.topicPartition, { topic: 'table', partition: 1 }, 'the filthiest log goes first');
  assert.equal(first?.reason, 'dirty-ratio');
  const second = await manager.cleaner.runOnce();
  assert.deepEqual(second?.topicPartition, TP);
  assert.equal(second?.reason, 'max-compaction-lag');
});

test('a passed delete horizon alone does not pick a log: its tombstones go with its next dirty pass', async (t) => {
  // Kafka 3.9's grabFilthiestCompactedLog answers None when no log passes its ratio or lag (KIP-534's draft
  // path for logs with expired delete horizons was left out of the merged change): tombstones stay until the
  // log is picked again, and that pass, which rewrites the log from its start, removes them.
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, { deleteRetentionMs: 1000 });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  writeKeys(log, clock, 4, 'a');
  const tombstone = buildBatch([{ key: 'k0', value: null }], { timestamp: clock.nowMs() });
  batchHeader.setBaseOffset(tombstone, 0, log.logEndOffset);
  log.append(tombstone);
  log.roll();
  log.setHighWatermark(log.logEndOffset);
  await manager.cleaner.runOnce();
  assert.deepEqual(values(log), ['a-1', 'a-2', 'a-3', null]);
  clock.advance(1000);
  assert.equal(
    manager.cleaner.pickLog(),
    null,
    'nothing dirty: the horizon has passed, but that is no reason',
  );
  assert.equal(await manager.cleaner.runOnce(), null);
  assert.deepEqual(values(log), ['a-1', 'a-2', 'a-3', null]);
  writeKeys(log, clock, 4, 'b');
  const pass = await manager.cleaner.runOnce();
  assert.equal(pass?.reason, 'dirty-ratio');
  assert.deepEqual(
    values(log),
    ['b-0', 'b-1', 'b-2', 'b-3'],
    'the expired tombstone went with the dirty pass',
  );
});

test('a high watermark that comes down below the checkpoint leaves nothing to clean, and the checkpoint stays', async (t) => {
  // Kafka's LogCleanerManager only lowers a checkpoint on truncation (maybeTruncateCheckpoint): with the first
  // dirty offset at or past the first uncleanable one there are no cleanable bytes, so the log is not picked,
  // even with expired tombstones in it.
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, { deleteRetentionMs: 1000, segmentBytes: 1024 });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  writeKeys(log, clock, 4, 'a', 200);
  const tombstone = buildBatch([{ key: 'gone', value: null }], { timestamp: clock.nowMs() });
  batchHeader.setBaseOffset(tombstone, 0, log.logEndOffset);
  log.append(tombstone);
  writeKeys(log, clock, 4, 'b', 200);
  assert.ok((await manager.cleaner.runOnce()) !== null);
  const cleanedTo = log.activeSegment.baseOffset;
  assert.equal(manager.cleaner.checkpointOf(TP), cleanedTo);
  const bases = log.segmentList().map((s) => s.baseOffset);
  assert.ok(bases.length >= 3, `segments at ${bases.join(', ')}`);
  // A follower told a lower high watermark by a new leader: the cut comes down to a segment below the checkpoint.
  log.setHighWatermark(toOffset(bases[bases.length - 2]!));
  clock.advance(1000);
  assert.equal(manager.cleaner.pickLog(), null);
  assert.equal(await manager.cleaner.runOnce(), null);
  assert.equal(manager.cleaner.checkpointOf(TP), cleanedTo);
  assert.deepEqual(readOffsetCheckpoint(join(dir, 'cleaner-offset-checkpoint')), [
    { ...TP, offset: cleanedTo },
  ]);
});

test('the scheduler cleans on its own after log.cleaner.backoff.ms, and stops with the manager', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, {}, 20);
  const log = manager.getOrCreateLog(TP);
  writeKeys(log, clock, 10, 'a');
  writeKeys(log, clock, 10, 'b');
  manager.startScheduler();
  const deadline = Date.now() + 5000;
  while (manager.cleaner.completedPasses === 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  assert.ok(manager.cleaner.completedPasses > 0, 'a pass ran');
  assert.equal(values(log).length, 10);
  manager.shutdown();
  await manager.cleaner.stop();
});

test('a log whose cleaning fails is marked uncleanable and skipped; the others are still cleaned', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = openManager(dir, clock, {}, 15_000, 4 * 24);
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog(TP);
  const batch = buildBatch(
    Array.from({ length: 10 }, (_, k) => ({ key: `k${k}`, value: 'v' })),
    { timestamp: clock.nowMs() },
  );
  batchHeader.setBaseOffset(batch, 0, 0);
  // A damaged batch (its records unreadable, under a valid CRC): the pass cannot read its keys.
  batch.fill(0xff, BATCH_HEADER_BYTES);
  writeBatchCrc(batch, 0);
  log.append(batch);
  log.roll();
  log.setHighWatermark(log.logEndOffset);
  // Another partition whose batches hold one key each: the small map is enough for it.
  const other = manager.getOrCreateLog({ topic: 'table', partition: 1 });
  writeKeys(other, clock, 2, 'a');
  writeKeys(other, clock, 2, 'b');
  await assert.rejects(manager.cleaner.runOnce());
  assert.deepEqual(manager.cleaner.uncleanablePartitions(), ['table-0']);
  const pass = await manager.cleaner.runOnce();
  assert.deepEqual(pass?.topicPartition, { topic: 'table', partition: 1 });
  assert.deepEqual(values(other), ['b-0', 'b-1']);
  assert.equal(manager.cleaner.pickLog(), null, 'the failed log is not picked again');
  const untouched = log.read(toOffset(0), 1 << 20);
  assert.ok(untouched.errorCode === 0);
  assert.deepEqual(untouched.records, batch, 'the failed log is untouched');
});
