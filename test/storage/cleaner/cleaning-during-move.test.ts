// Compaction and moves between log directories (AlterReplicaLogDirs): while a partition's future log is filled,
// the cleaner of its current directory leaves it alone (Kafka's abortAndPauseCleaning); at the swap the
// checkpoint goes to the new directory's cleaner (alterCheckpointDir); a cancelled move, a failed destination
// directory or a restart in the middle leave cleaning as it should be.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { buildBatch } from '../../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { readOffsetCheckpoint } from '../../../src/storage/checkpoint-file.js';
import type { Log } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { LogDirs } from '../../../src/storage/log-dirs.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';

const TP = { topic: 'table', partition: 0 };

function open(dirs: string[], clock: ManualClock): LogDirs {
  return LogDirs.open({
    dirs,
    clock,
    configFor: () => logConfig({ cleanupPolicy: 'compact', retentionMs: -1, minCleanableDirtyRatio: 0.1 }),
    usableBytes: () => 0,
  });
}

/** `keys` keyed records (one batch each) then a roll; the high watermark follows. */
function writeKeys(log: Log, clock: ManualClock, keys: number, tag: string): void {
  for (let k = 0; k < keys; k++) {
    const batch = buildBatch([{ key: `k${k}`, value: `${tag}-${k}` }], { timestamp: clock.nowMs() });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    log.append(batch);
  }
  log.roll();
  log.setHighWatermark(log.logEndOffset);
}

/** Copies everything `from` holds past `to`'s end (what the broker's mover does, in one go). */
function copyAll(from: Log, to: Log): void {
  for (;;) {
    const read = from.read(to.logEndOffset, 1 << 20, from.logEndOffset, true);
    assert.ok('records' in read);
    if (read.records.length === 0) return;
    to.append(read.records);
    if (to.logEndOffset >= from.logEndOffset) return;
  }
}

function cleanerOf(dirs: LogDirs, dir: string) {
  return dirs.managers.find((m) => m.dir === dir)!.cleaner;
}

test('a partition being moved is not compacted in its old directory, and its checkpoint moves with it', async (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const clock = new ManualClock();
  const dirs = open([a, b], clock);
  deferCleanup(t, () => dirs.shutdown());
  const log = dirs.getOrCreateLog(TP, undefined, a);
  writeKeys(log, clock, 10, 'a');
  writeKeys(log, clock, 10, 'b');
  const first = await cleanerOf(dirs, a).runOnce();
  assert.deepEqual(first?.topicPartition, TP, 'cleaned before the move');
  const cleanedTo = cleanerOf(dirs, a).checkpointOf(TP);
  assert.ok(cleanedTo !== undefined && cleanedTo > 0);

  writeKeys(log, clock, 10, 'c');
  const future = dirs.createFutureLog(TP, b);
  assert.ok(cleanerOf(dirs, a).isPaused(TP));
  assert.equal(await cleanerOf(dirs, a).runOnce(), null, 'dirty, but moving: not cleaned');
  assert.equal(cleanerOf(dirs, a).checkpointOf(TP), cleanedTo);

  copyAll(dirs.getLog(TP)!, future);
  const moved = dirs.replaceCurrentWithFuture(TP);
  moved.roll(); // the copy went into one segment, which is the active one
  moved.setHighWatermark(moved.logEndOffset);
  assert.equal(dirs.dirOf(TP), b);
  assert.equal(cleanerOf(dirs, b).checkpointOf(TP), cleanedTo, 'the checkpoint moved to the new directory');
  assert.deepEqual(
    readOffsetCheckpoint(join(b, 'cleaner-offset-checkpoint')),
    [{ topic: 'table', partition: 0, offset: cleanedTo }],
    'and is written there',
  );
  assert.equal(cleanerOf(dirs, a).checkpointOf(TP), undefined, 'and is gone from the old one');
  assert.ok(!cleanerOf(dirs, b).isPaused(TP));
  assert.equal(
    cleanerOf(dirs, b).pickLog()?.firstDirtyOffset,
    cleanedTo,
    'the new directory cleans from where the old one had got to',
  );
  const after = await cleanerOf(dirs, b).runOnce();
  assert.deepEqual(after?.topicPartition, TP, 'compacted again in its new directory');
  assert.ok(moved.logEndOffset >= 30);
});

test('a cancelled move, a failed destination and a restart in the middle of a move', async (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const clock = new ManualClock();
  let dirs = open([a, b], clock);
  const log = dirs.getOrCreateLog(TP, undefined, a);
  writeKeys(log, clock, 10, 'a');
  writeKeys(log, clock, 10, 'b');

  dirs.createFutureLog(TP, b);
  assert.equal(await cleanerOf(dirs, a).runOnce(), null);
  dirs.deleteFutureLog(TP);
  assert.ok(!cleanerOf(dirs, a).isPaused(TP), 'cancelled: resumed');
  assert.deepEqual((await cleanerOf(dirs, a).runOnce())?.topicPartition, TP);

  // A restart while a move is in progress: the move resumes, and so does the pause.
  writeKeys(log, clock, 10, 'c');
  const future = dirs.createFutureLog(TP, b);
  copyAll(log, future);
  dirs.shutdown();
  dirs = open([a, b], clock);
  deferCleanup(t, () => dirs.shutdown());
  assert.ok(dirs.getFutureLog(TP) !== undefined);
  assert.ok(cleanerOf(dirs, a).isPaused(TP), 'paused again after the restart');
  assert.equal(await cleanerOf(dirs, a).runOnce(), null);

  // The destination fails: the move is over, the partition is compacted where it is.
  dirs.markOffline(b);
  assert.ok(!cleanerOf(dirs, a).isPaused(TP));
  assert.deepEqual((await cleanerOf(dirs, a).runOnce())?.topicPartition, TP);
});
