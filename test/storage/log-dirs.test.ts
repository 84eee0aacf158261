// Log directories (JBOD): placement of new partitions (fewest partition logs, then most usable bytes), lookups
// across directories, a directory taken offline, and duplicate partition directories refused at start.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { CLEAN_SHUTDOWN_FILE } from '../../src/storage/file-names.js';
import { logConfig } from '../../src/storage/log-config.js';
import {
  LogDirOfflineError,
  LogDirs,
  type LogDirsOptions,
  topicsOnDisk,
} from '../../src/storage/log-dirs.js';
import { tempDir } from './tmp-dir.js';

function open(
  dirs: string[],
  free: Record<string, number> = {},
  extra: Partial<LogDirsOptions> = {},
): LogDirs {
  return LogDirs.open({
    dirs,
    clock: new ManualClock(),
    configFor: () => logConfig(),
    usableBytes: (dir) => free[dir] ?? 0,
    ...extra,
  });
}

const tp = (topic: string, partition: number) => ({ topic, partition });

test('a new partition goes to the directory with the fewest partitions, ties broken by usable bytes', (t) => {
  const [a, b, c] = [tempDir(t), tempDir(t), tempDir(t)];
  const dirs = open([a, b, c], { [a]: 10, [b]: 30, [c]: 20 });
  // All empty: the most usable bytes (b), then c, then a.
  assert.equal(dirs.dirOfLog(dirs.getOrCreateLog(tp('t', 0))), b);
  assert.equal(dirs.dirOfLog(dirs.getOrCreateLog(tp('t', 1))), c);
  assert.equal(dirs.dirOfLog(dirs.getOrCreateLog(tp('t', 2))), a);
  // One each: back to b.
  assert.equal(dirs.dirOfLog(dirs.getOrCreateLog(tp('t', 3))), b);
  // An existing log is found where it is, wherever placement would put a new one.
  assert.equal(dirs.dirOf(tp('t', 2)), a);
  assert.equal(dirs.getOrCreateLog(tp('t', 2)), dirs.getLog(tp('t', 2)));
  assert.equal([...dirs.allLogs()].length, 4);
  dirs.shutdown();
});

test('an offline directory is skipped by placement, its logs are no longer served and not recreated', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const dirs = open([a, b], { [a]: 10, [b]: 5 });
  const onA = dirs.getOrCreateLog(tp('t', 0));
  assert.equal(dirs.dirOfLog(onA), a);
  assert.equal(dirs.markOffline(a), true);
  assert.equal(dirs.markOffline(a), false, 'already offline');
  assert.deepEqual(dirs.offlineDirs, [a]);
  assert.equal(dirs.getLog(tp('t', 0)), undefined);
  assert.throws(() => dirs.getOrCreateLog(tp('t', 0)), LogDirOfflineError);
  // New partitions go to the directory left, even though a has more room.
  assert.equal(dirs.dirOfLog(dirs.getOrCreateLog(tp('t', 1))), b);
  dirs.shutdown();
  // The offline directory gets no clean-shutdown marker: the next start recovers it.
  assert.equal(existsSync(join(a, CLEAN_SHUTDOWN_FILE)), false);
  assert.equal(existsSync(join(b, CLEAN_SHUTDOWN_FILE)), true);
  // Every directory offline: nothing can be placed.
  const again = open([a]);
  again.markOffline(a);
  assert.throws(() => again.getOrCreateLog(tp('u', 0)), LogDirOfflineError);
});

test('a partition found in two directories stops the start', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  mkdirSync(join(a, 't-0'));
  mkdirSync(join(b, 't-0'));
  assert.throws(() => open([a, b]), /duplicate log directories for t-0/);
});

test('the topics on disk, read from the directory names before the logs are loaded', (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  mkdirSync(join(a, 'orders-0'));
  mkdirSync(join(a, 'my-topic-12'));
  mkdirSync(join(a, 'gone-0.0123456789abcdef0123456789abcdef-delete'));
  mkdirSync(join(b, 'moving-3.0123456789abcdef0123456789abcdef-future'));
  mkdirSync(join(b, 'orders-1'));
  const topics = topicsOnDisk([a, b, join(a, 'not-created-yet')]);
  assert.deepEqual([...topics].sort(), ['moving', 'my-topic', 'orders']);
});
