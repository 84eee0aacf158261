// A read or a write of a log that fails in a system call (a failing disk: EIO; here a descriptor taken away
// under the log, which fails the same way) is a storage failure of the log (Kafka's IOException through the
// LogDirFailureChannel): the read is answered KAFKA_STORAGE_ERROR, the log reports storageFailed and tells its
// owner once, who takes the directory offline (src/broker/broker.ts).

import assert from 'node:assert/strict';
import { closeSync } from 'node:fs';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import type { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogDirs } from '../../src/storage/log-dirs.js';
import { tempDir } from './tmp-dir.js';

const TP = { topic: 'failing', partition: 0 };

function append(log: Log, value: string): void {
  const batch = buildBatch([{ value }]);
  batch.writeBigInt64BE(BigInt(log.logEndOffset), 0);
  log.append(batch);
}

/** Closes the active segment's descriptor under the log: its next read or write fails with EBADF. */
function breakDescriptor(log: Log): void {
  const segment = log.activeSegment as unknown as { fd: number };
  closeSync(segment.fd);
}

test('a read failing with an I/O error answers KAFKA_STORAGE_ERROR and reports the directory once', async (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const reported: string[] = [];
  const dirs = LogDirs.open({
    dirs: [a, b],
    clock: new ManualClock(),
    configFor: () => logConfig(),
    usableBytes: () => 0,
    onBackgroundError: (dir) => reported.push(dir),
  });
  const log = dirs.getOrCreateLog(TP, undefined, a);
  append(log, 'one');
  assert.equal(log.storageFailed, false);
  breakDescriptor(log);
  const first = log.read(toOffset(0), 1 << 20);
  assert.equal(first.errorCode, StorageErrorCode.KafkaStorageError);
  const second = await log.readAsync(toOffset(0), 1 << 20);
  assert.equal(second.errorCode, StorageErrorCode.KafkaStorageError);
  assert.equal(log.storageFailed, true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(reported, [a], 'told once, for the directory of the log');
  dirs.markOffline(a);
});

test('a synchronous (follower) append failing with an I/O error makes the log refuse appends and reports it', async (t) => {
  const [a, b] = [tempDir(t), tempDir(t)];
  const reported: string[] = [];
  const dirs = LogDirs.open({
    dirs: [a, b],
    clock: new ManualClock(),
    configFor: () => logConfig(),
    usableBytes: () => 0,
    onBackgroundError: (dir) => reported.push(dir),
  });
  const log = dirs.getOrCreateLog(TP, undefined, b);
  append(log, 'one');
  breakDescriptor(log);
  assert.throws(() => append(log, 'two'), { code: 'EBADF' });
  assert.equal(log.writeFailed, true);
  assert.equal(log.storageFailed, true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(reported, [b]);
  dirs.markOffline(b);
  dirs.shutdown();
});
