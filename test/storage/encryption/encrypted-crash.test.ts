// The storage crash test (../crash.slow.ts) on an encrypted log: a writer appending with ackAfterFsync, half of
// the appends queued, is killed with SIGKILL at random moments over the same directory. After every kill the log
// recovers with every acknowledged batch there, byte for byte, offsets following on, and no plaintext on disk.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { seededRandom, splitBatches } from '../batch-builder.js';
import { runWriterAndKill } from '../crash-run.js';
import { CRASH_TP, crashBatch, crashKeyStore, encryptedCrashConfig } from '../crash-writer.js';
import { tempDir } from '../tmp-dir.js';

test('an encrypted log killed with SIGKILL at random points loses no acknowledged batch', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'logs');
  const keyFile = join(root, 'master.key');
  writeFileSync(keyFile, `crash:${randomBytes(32).toString('hex')}\n`);
  const random = seededRandom(Number(process.env.BROOK_CRASH_SEED ?? 11));
  let ackedEver = 0;
  for (let round = 0; round < 12; round++) {
    const { acked, started } = await runWriterAndKill([dir, keyFile], Math.floor(random() * 300));
    assert.ok(started >= ackedEver, `round ${round}: writer started at ${started}, below acked ${ackedEver}`);
    ackedEver = Math.max(ackedEver, acked);
    if (random() < 0.4) continue; // the next writer recovers it on its own
    const keys = await crashKeyStore(dir, keyFile);
    const manager = LogManager.open({ dir, clock: new ManualClock(), configFor: encryptedCrashConfig, keys });
    try {
      const log = manager.getLog(CRASH_TP)!;
      assert.ok(
        log.logEndOffset >= ackedEver,
        `round ${round}: end ${log.logEndOffset} < acked ${ackedEver}`,
      );
      log.setHighWatermark(log.logEndOffset);
      let offset = 0;
      while (offset < log.logEndOffset) {
        const r = log.read(toOffset(offset), 64 * 1024);
        assert.ok(
          r.errorCode === StorageErrorCode.None && r.records.length > 0,
          `round ${round}: read ${offset}`,
        );
        for (const batch of splitBatches(r.records)) {
          assert.equal(batchHeader.baseOffset(batch), offset, `round ${round}: offsets follow on`);
          assert.deepEqual(batch, crashBatch(offset), `round ${round}: batch at ${offset}`);
          offset = batchHeader.lastOffset(batch) + 1;
        }
      }
      assert.deepEqual(log.checkProducerBatch(crashBatch(log.logEndOffset)), { kind: 'ok' });
    } finally {
      manager.shutdown();
    }
  }
  assert.ok(ackedEver > 100, `the writers made progress (${ackedEver})`);
  // Every batch carries a run of one repeated byte; a stored plaintext batch would show the writer's producer
  // id field pattern, so look for a whole batch instead: none of the first ones is on disk as written.
  const partition = join(dir, 'crash-0');
  const segments = readdirSync(partition).filter((n) => n.endsWith('.log'));
  assert.ok(readdirSync(partition).some((n) => n.endsWith('.enc')));
  for (const name of segments) {
    const bytes = readFileSync(join(partition, name));
    for (const probe of [10, 50, 90]) assert.equal(bytes.includes(crashBatch(probe).subarray(21)), false);
  }
});
