// Future logs (AlterReplicaLogDirs) in the log directories: created next to the current log's directory, kept
// across restarts, swapped in with two renames, and every state a crash can leave between them loads into one
// consistent log of the partition.

import assert from 'node:assert/strict';
import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { deleteDirName, parseFutureDirName } from '../../src/storage/file-names.js';
import type { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogDirs } from '../../src/storage/log-dirs.js';
import { tempDir } from './tmp-dir.js';

const TP = { topic: 'moving', partition: 0 };

function open(dirs: string[]): LogDirs {
  return LogDirs.open({ dirs, clock: new ManualClock(), configFor: () => logConfig(), usableBytes: () => 0 });
}

/** Appends `count` one-record batches at the log end, offsets assigned here. */
function fill(log: Log, count: number): void {
  for (let i = 0; i < count; i++) {
    const batch = buildBatch([{ value: `v${log.logEndOffset}` }]);
    batch.writeBigInt64BE(BigInt(log.logEndOffset), 0);
    log.append(batch);
  }
}

/** Copies what `from` holds past `to`'s end into `to` (what the broker's mover does). */
function copy(from: Log, to: Log): void {
  const read = from.read(to.logEndOffset, 1 << 20);
  assert.ok('records' in read);
  if (read.records.length > 0) to.append(read.records);
}

function names(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith('moving-0'));
}

test('a future log is created in another directory, kept across a restart and swapped in', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  let dirs = open([a, b]);
  const current = dirs.getOrCreateLog(TP, undefined, a);
  fill(current, 5);
  const future = dirs.createFutureLog(TP, b);
  assert.equal(dirs.futureDirOf(TP), b);
  assert.equal(dirs.getLog(TP), current, 'the future log is not the partition log');
  assert.deepEqual([...dirs.allLogs()], [current]);
  copy(current, future);
  fill(current, 2);
  dirs.shutdown();

  dirs = open([a, b]);
  const reopened = dirs.getFutureLog(TP)!;
  assert.equal(reopened.logEndOffset, 5, 'the future log kept what was copied');
  assert.equal(dirs.getLog(TP)!.logEndOffset, 7);
  copy(dirs.getLog(TP)!, reopened);
  const swapped = dirs.replaceCurrentWithFuture(TP);
  assert.equal(swapped.logEndOffset, 7);
  assert.equal(dirs.dirOf(TP), b);
  assert.equal(dirs.getFutureLog(TP), undefined);
  assert.deepEqual(names(b), ['moving-0']);
  assert.ok(names(a).every((n) => n.endsWith('-delete')));
  fill(swapped, 1);
  dirs.shutdown();

  dirs = open([a, b]);
  assert.equal(dirs.dirOf(TP), b);
  assert.equal(dirs.getLog(TP)!.logEndOffset, 8);
  dirs.shutdown();
});

test('a crash after the current log was renamed away leaves the future log, which the next start promotes', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  let dirs = open([a, b]);
  const current = dirs.getOrCreateLog(TP, undefined, a);
  fill(current, 4);
  copy(current, dirs.createFutureLog(TP, b));
  dirs.shutdown();
  // The first rename of the swap, and no second one.
  renameSync(join(a, 'moving-0'), join(a, deleteDirName(TP)));

  dirs = open([a, b]);
  assert.equal(dirs.dirOf(TP), b);
  assert.equal(dirs.getLog(TP)!.logEndOffset, 4);
  assert.equal(dirs.getFutureLog(TP), undefined);
  assert.deepEqual(names(b), ['moving-0']);
  assert.deepEqual(names(a), [], 'the renamed current log is removed at load');
  dirs.shutdown();
});

test('a future log is dropped with its partition, or when the move is cancelled', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const dirs = open([a, b]);
  dirs.getOrCreateLog(TP, undefined, a);
  dirs.createFutureLog(TP, b);
  assert.ok(names(b).some((n) => parseFutureDirName(n) !== null));
  assert.equal(dirs.deleteFutureLog(TP), true);
  assert.equal(dirs.getFutureLog(TP), undefined);
  dirs.createFutureLog(TP, b);
  assert.equal(dirs.deleteLog(TP), true);
  assert.equal(dirs.getFutureLog(TP), undefined);
  assert.ok(names(b).every((n) => n.endsWith('-delete')));
  dirs.shutdown();
});

test('a partition not hosted yet is created in its preferred directory', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const dirs = open([a, b]);
  dirs.getOrCreateLog({ topic: 'other', partition: 0 }, undefined, a);
  // Placement alone would pick b (fewest logs): the preferred directory wins.
  dirs.setPreferredDir(TP, a);
  assert.equal(dirs.dirOfLog(dirs.getOrCreateLog(TP)), a);
  assert.equal(dirs.configuredDir(`${b}/`), b);
  assert.equal(dirs.configuredDir(join(b, 'x')), undefined);
  dirs.shutdown();
});
