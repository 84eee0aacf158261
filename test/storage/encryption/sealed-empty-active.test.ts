// A crash after a roll, while the new active segment held written bytes that no tag covered yet: recovery cuts
// them and seals that segment, which is then empty and sits at the log end offset. The next append must go to a
// new segment (with a new data key) at the same base offset, not to the sealed one.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { CRASH_TP, crashBatch, crashKeyStore, encryptedCrashConfig } from '../crash-writer.js';
import { tempDir } from '../tmp-dir.js';

test('an empty active segment sealed by recovery is replaced at the same base offset, and appends go on', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'logs');
  const keyFile = join(root, 'master.key');
  writeFileSync(keyFile, `crash:${randomBytes(32).toString('hex')}\n`);
  const keys = await crashKeyStore(dir, keyFile);
  const first = LogManager.open({ dir, clock: new ManualClock(), configFor: encryptedCrashConfig, keys });
  const log = first.getOrCreateLog(CRASH_TP);
  for (let i = 0; i < 5; i++) log.append(crashBatch(log.logEndOffset));
  const end = log.logEndOffset;
  log.roll();
  first.shutdown();
  // What a write in flight leaves when the process dies before its tags: bytes in the new segment's .log.
  const partition = join(dir, 'crash-0');
  const active = readdirSync(partition)
    .filter((n) => n.endsWith('.log'))
    .sort()
    .at(-1)!;
  assert.equal(active, `${String(end).padStart(20, '0')}.log`);
  appendFileSync(join(partition, active), randomBytes(300));

  const second = LogManager.open({ dir, clock: new ManualClock(), configFor: encryptedCrashConfig, keys });
  try {
    const reopened = second.getOrCreateLog(CRASH_TP);
    assert.equal(reopened.logEndOffset, end);
    reopened.append(crashBatch(end));
    reopened.append(crashBatch(reopened.logEndOffset));
    assert.ok(reopened.logEndOffset > end);
    const r = reopened.read(end, 64 * 1024);
    assert.ok(
      r.errorCode === StorageErrorCode.None && r.records.length > 0,
      'the appends after recovery read back',
    );
  } finally {
    second.shutdown();
  }
});
