// Damaged checkpoint files at start: the offset checkpoints of a log directory and a log's leader-epoch-checkpoint.
// As Kafka's CheckpointFileWithFailureHandler (a malformed file is a storage error that takes the log directory
// offline), the directory is out of service from the start, the file is left as found, and no record below a log
// start offset that could not be read is ever served.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { CLEAN_SHUTDOWN_FILE } from '../../src/storage/file-names.js';
import type { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogDirOfflineError, LogDirs } from '../../src/storage/log-dirs.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { buildBatch } from './batch-builder.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

const TP = { topic: 'orders', partition: 0 };
const GARBAGE = '0\n2\norders 0\n';

function open(dirs: string[]): LogDirs {
  return LogDirs.open({
    dirs,
    clock: new ManualClock(),
    configFor: () => logConfig({ segmentBytes: 1000 }),
    usableBytes: () => 0,
  });
}

function appendBatches(log: Log, count: number, epoch: number): void {
  for (let i = 0; i < count; i++) {
    const b = buildBatch({ values: [Buffer.alloc(100, i)] });
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(b, 0, epoch);
    log.append(b);
  }
}

/** A log of 10 offsets in `dir` (epochs 1 and 2) whose records below 6 were removed by DeleteRecords. */
function writeLogWithDeletedRecords(dirs: string[], dir: string): void {
  const logs = open(dirs);
  const log = logs.getOrCreateLog(TP, undefined, dir);
  appendBatches(log, 5, 1);
  appendBatches(log, 5, 2);
  log.setHighWatermark(log.logEndOffset);
  assert.equal(log.deleteRecordsBefore(6).errorCode, StorageErrorCode.None);
  assert.ok(log.segmentBaseOffsets()[0]! < 6, 'a segment still holds the removed records');
  logs.shutdown();
}

for (const file of [
  'log-start-offset-checkpoint',
  'recovery-point-offset-checkpoint',
  'replication-offset-checkpoint',
  'orders-0/leader-epoch-checkpoint',
]) {
  test(`a damaged ${file} takes its log directory offline at start and is left as found`, (t) => {
    const [a, b] = [tempDir(t), tempDir(t)];
    writeLogWithDeletedRecords([a, b], a);
    writeFileSync(join(a, file), GARBAGE);
    const logs = open([a, b]);
    deferCleanup(t, () => logs.shutdown());
    assert.deepEqual(logs.offlineDirs, [a]);
    const failures = logs.loadFailures;
    assert.equal(failures.length, 1);
    assert.match(failures[0]!.error.message, new RegExp(file.replace('/', '.')), 'the error names the file');
    // Nothing of the partition is served, nor is it created again in the other directory.
    assert.equal(logs.getLog(TP), undefined);
    assert.throws(() => logs.getOrCreateLog(TP), LogDirOfflineError);
    assert.equal(logs.dirOfLog(logs.getOrCreateLog({ topic: 'orders', partition: 1 })), b);
    logs.shutdown();
    assert.equal(readFileSync(join(a, file), 'utf8'), GARBAGE, 'the damaged file is not rewritten');
    assert.equal(existsSync(join(a, CLEAN_SHUTDOWN_FILE)), false, 'no clean-shutdown marker');
  });
}

test('a log manager that finds a damaged checkpoint reports it, stops, and writes nothing more to its dir', (t) => {
  const dir = tempDir(t);
  writeLogWithDeletedRecords([dir], dir);
  writeFileSync(join(dir, 'log-start-offset-checkpoint'), 'not a checkpoint');
  const manager = LogManager.open({ dir, clock: new ManualClock(), configFor: () => logConfig() });
  deferCleanup(t, () => manager.shutdown());
  assert.match(String(manager.loadFailure?.message), /log-start-offset-checkpoint/);
  // The manager is stopped: it creates no log and writes nothing more to the directory.
  assert.throws(() => manager.getOrCreateLog({ topic: 'other', partition: 0 }), /shut down/);
  manager.shutdown();
  assert.equal(readFileSync(join(dir, 'log-start-offset-checkpoint'), 'utf8'), 'not a checkpoint');
  assert.equal(existsSync(join(dir, CLEAN_SHUTDOWN_FILE)), false);
});
