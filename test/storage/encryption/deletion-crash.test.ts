// A crash while retention or DeleteRecords renames an encrypted segment's files to `.deleted`. The .log goes
// first, as Kafka's LogSegment.changeFileSuffixes renames the log file first: a crash between the renames then
// leaves a `.log.deleted` and an `.enc` that has no .log, which loading removes. Brook before this renamed the
// `.enc` first, so a crash could leave the segment's ciphertext `.log` without its key file; loading took it for
// a plaintext segment and served its ciphertext as records. A directory left so by such a version is repaired
// at load: a .log whose `.enc` was renamed `.deleted` was being deleted, and its deletion is finished.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, renameSync, watch } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { type LogConfig, logConfig } from '../../../src/storage/log-config.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { splitBatches } from '../batch-builder.js';
import { CRASH_TP, crashBatch } from '../crash-writer.js';
import { tempDir } from '../tmp-dir.js';
import { keyStoreIn } from './key-store-in.js';

const config = (): LogConfig => logConfig({ segmentBytes: 4096, indexIntervalBytes: 256, encrypt: true });

test('a crash between the renames of an encrypted segment being deleted serves no ciphertext as records', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'logs');
  const keys = await keyStoreIn(root, dir);
  const first = LogManager.open({ dir, clock: new ManualClock(), configFor: config, keys });
  const log = first.getOrCreateLog(CRASH_TP);
  while (log.segmentCount < 4) log.append(crashBatch(log.logEndOffset));
  log.setHighWatermark(log.logEndOffset);
  const end = log.logEndOffset;
  first.shutdown();

  const partition = join(dir, 'crash-0');
  const bases = readdirSync(partition)
    .filter((n) => n.endsWith('.log'))
    .sort();
  const oldest = bases[0]!.slice(0, -'.log'.length);
  const secondBase = Number(bases[1]!.slice(0, -'.log'.length));

  // DeleteRecords past the oldest segment: watch the order in which its files are renamed.
  const second = LogManager.open({ dir, clock: new ManualClock(), configFor: config, keys });
  const renamed: string[] = [];
  const watcher = watch(partition, (_event, name) => {
    if (name?.startsWith(oldest) && !renamed.includes(name)) renamed.push(name);
  });
  const reopened = second.getOrCreateLog(CRASH_TP);
  reopened.setHighWatermark(reopened.logEndOffset);
  assert.equal(reopened.deleteRecordsBefore(secondBase).errorCode, StorageErrorCode.None);
  await new Promise((r) => setTimeout(r, 200));
  watcher.close();
  assert.equal(renamed[0], `${oldest}.log`, `renamed first: ${renamed.join(', ')}`);
  // The process dies here, the log-start-offset checkpoint not yet written.
  second.abandon();

  // What a crash between the two renames left when the .enc went first: the ciphertext .log, its key file gone.
  renameSync(join(partition, `${oldest}.log.deleted`), join(partition, `${oldest}.log`));
  assert.ok(existsSync(join(partition, `${oldest}.enc.deleted`)));

  const third = LogManager.open({ dir, clock: new ManualClock(), configFor: config, keys });
  try {
    const recovered = third.getOrCreateLog(CRASH_TP);
    assert.equal(recovered.logEndOffset, end);
    assert.equal(recovered.logStartOffset, secondBase, 'the segment being deleted is gone');
    assert.equal(existsSync(join(partition, `${oldest}.log`)), false);
    recovered.setHighWatermark(recovered.logEndOffset);
    // Every record served is one that was appended, byte for byte.
    let offset: number = recovered.logStartOffset;
    while (offset < end) {
      const r = recovered.read(toOffset(offset), 64 * 1024);
      assert.equal(r.errorCode, StorageErrorCode.None, `read ${offset}`);
      for (const batch of splitBatches(r.records)) {
        assert.deepEqual(batch, crashBatch(batchHeader.baseOffset(batch)), `batch at ${offset}`);
        offset = batchHeader.lastOffset(batch) + 1;
      }
    }
  } finally {
    third.shutdown();
  }
});
