// A crash while an encrypted cleaned segment is swapped in (cleaner/swap-files.ts). Its last step renames the
// `.swap` files to their final names, the .log last, so a crash there can leave the cleaned segment's `.enc`
// already final next to its `.log.swap`. Loading completes the swap: it must read the `.log.swap` through that
// `.enc` and keep it, not take the `.enc` for one of the replaced segments' files (deleting it would leave the
// swapped-in ciphertext without its key, loaded as plaintext) nor scan the ciphertext as plaintext batches.

import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CompactionHarness, type KV, latestPerKey, type ReadRecord } from '../cleaner/compaction-harness.js';
import { tempDir } from '../tmp-dir.js';
import { keyStoreIn } from './key-store-in.js';

const STEM = '00000000000000000000';

test('a crash after the cleaned .enc took its final name, before the .log did: the swap completes', async (t) => {
  const keys = await keyStoreIn(tempDir(t), tempDir(t));
  const h = new CompactionHarness(t, { encrypt: true }, keys);
  const written: ReadRecord[] = [];
  for (let round = 0; round < 3; round++) {
    for (let first = 0; first < 16; first += 4) {
      const batch: KV[] = [];
      for (let k = first; k < first + 4; k++)
        batch.push({ key: `k${k}`, value: `r${round}-${'v'.repeat(300)}` });
      const base = h.append(batch);
      for (const [i, r] of batch.entries()) written.push({ offset: base + i, key: r.key, value: r.value });
    }
    h.log.roll();
  }
  const oldBases = h.log.segmentBaseOffsets();
  assert.equal(oldBases.length, 4);
  h.log.close();

  // The cleaned segment, made by cleaning a copy of the directory with the same keys.
  const copy = new CompactionHarness(t, h.config, keys);
  copy.log.close();
  cpSync(h.dir, copy.dir, { recursive: true });
  copy.log = copy.open(true);
  copy.log.setHighWatermark(copy.log.logEndOffset);
  assert.ok((await copy.clean()) !== null);
  assert.deepEqual(copy.log.segmentBaseOffsets(), [0, oldBases[3]]);
  copy.log.close();

  // Step 2 done: the three replaced segments renamed `.deleted`.
  for (const base of oldBases.slice(0, 3)) {
    const stem = String(base).padStart(20, '0');
    for (const s of ['.log', '.enc', '.index', '.timeindex']) {
      if (existsSync(join(h.dir, stem + s)))
        renameSync(join(h.dir, stem + s), join(h.dir, `${stem}${s}.deleted`));
    }
  }
  // Step 3 cut short: the `.enc` already final, the indexes and the .log still `.swap`.
  copyFileSync(join(copy.dir, `${STEM}.enc`), join(h.dir, `${STEM}.enc`));
  for (const s of ['.index', '.timeindex', '.log']) {
    copyFileSync(join(copy.dir, STEM + s), join(h.dir, `${STEM}${s}.swap`));
  }

  h.log = h.open(false);
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.deepEqual(
    readdirSync(h.dir).filter((n) => n.endsWith('.swap') || n.endsWith('.deleted')),
    [],
  );
  assert.ok(existsSync(join(h.dir, `${STEM}.enc`)), 'the swapped-in segment keeps its key file');
  assert.deepEqual(h.log.segmentBaseOffsets(), [0, oldBases[3]]);
  assert.deepEqual(h.records(), latestPerKey(written));
  h.reopen(false);
  assert.deepEqual(h.records(), latestPerKey(written));
});
