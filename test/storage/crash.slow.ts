// Crash test: a writer process appends with ackAfterFsync and is killed with SIGKILL at random moments, many
// times over the same directory. After every kill the log is recovered and checked: every acknowledged offset
// is there, every batch is exactly what the writer wrote at its offset, offsets follow on, producer state
// accepts the next sequence, and the next writer continues from the recovered end.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { seededRandom, splitBatches } from './batch-builder.js';
import { runWriterAndKill } from './crash-run.js';
import { CRASH_TP, crashBatch, crashConfig } from './crash-writer.js';
import { tempDir } from './tmp-dir.js';

test('a writer killed with SIGKILL at random points loses no acknowledged batch and recovers cleanly', async (t) => {
  const dir = tempDir(t);
  const random = seededRandom(Number(process.env.BROOK_CRASH_SEED ?? 7));
  let ackedEver = 0;
  for (let round = 0; round < 25; round++) {
    const { acked, started } = await runWriterAndKill([dir], Math.floor(random() * 150));
    assert.ok(started >= ackedEver, `round ${round}: writer started at ${started}, below acked ${ackedEver}`);
    ackedEver = Math.max(ackedEver, acked);
    if (random() < 0.5) continue; // let the next writer recover it on its own
    const manager = LogManager.open({ dir, clock: new ManualClock(), configFor: crashConfig });
    try {
      const log = manager.getLog(CRASH_TP)!;
      assert.ok(
        log.logEndOffset >= ackedEver,
        `round ${round}: end ${log.logEndOffset} < acked ${ackedEver}`,
      );
      let offset = 0;
      let lastBase = -1;
      while (offset < log.logEndOffset) {
        const r = log.read(toOffset(offset), 64 * 1024);
        assert.ok(
          r.errorCode === StorageErrorCode.None && r.records.length > 0,
          `round ${round}: read ${offset}`,
        );
        for (const batch of splitBatches(r.records)) {
          assert.equal(batchHeader.baseOffset(batch), offset, `round ${round}: offsets follow on`);
          assert.deepEqual(batch, crashBatch(offset), `round ${round}: batch at ${offset}`);
          lastBase = offset;
          offset = batchHeader.lastOffset(batch) + 1;
        }
      }
      const next = crashBatch(log.logEndOffset);
      assert.deepEqual(log.checkProducerBatch(next), { kind: 'ok' }, `round ${round}: producer state`);
      if (lastBase >= 0) {
        const retry = log.checkProducerBatch(crashBatch(lastBase));
        assert.equal(retry.kind, 'duplicate', `round ${round}: a retry of the last batch is a duplicate`);
      }
    } finally {
      manager.shutdown();
    }
  }
});
