// Compaction of an encrypted log: the cleaner reads encrypted segments through their ciphers and writes its
// output encrypted (new data keys), so a compacted topic keeps no plaintext on disk, and the result reads back
// the same after clean and crash restarts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';
import { CompactionHarness, type KV, latestPerKey, type ReadRecord } from '../cleaner/compaction-harness.js';
import { tempDir } from '../tmp-dir.js';

const SECRET = 'QUOKKA-SECRET';

test('compacting an encrypted log writes encrypted segments and keeps the latest record per key', async (t) => {
  const keyDir = tempDir(t);
  const keyFile = join(keyDir, 'master.key');
  writeFileSync(keyFile, `c1:${randomBytes(32).toString('hex')}\n`);
  const keys = await KeyStore.load(keyDir, new FileKeyProvider(keyFile));
  await keys.ensureCurrent(0);
  const h = new CompactionHarness(t, { encrypt: true }, keys);
  const written: ReadRecord[] = [];
  for (let round = 0; round < 4; round++) {
    for (let first = 0; first < 30; first += 5) {
      const batch: KV[] = [];
      for (let k = first; k < first + 5; k++)
        batch.push({ key: `k${k}`, value: `${SECRET}-k${k}-r${round}-${'z'.repeat(400)}` });
      const base = h.append(batch);
      for (const [i, r] of batch.entries()) written.push({ offset: base + i, key: r.key, value: r.value });
    }
    h.log.roll();
  }
  const before = readdirSync(h.dir)
    .filter((n) => n.endsWith('.enc'))
    .map((n) => readFileSync(join(h.dir, n)).subarray(0, 512));
  const result = await h.clean();
  assert.ok(result !== null);
  assert.deepEqual(h.records(), latestPerKey(written));
  const encs = readdirSync(h.dir).filter((n) => n.endsWith('.enc'));
  const logs = readdirSync(h.dir).filter((n) => n.endsWith('.log'));
  assert.equal(encs.length, logs.length, 'every segment, cleaned ones included, is encrypted');
  // The cleaned segment has a data key of its own (a new header), not one of the segments it replaced.
  const first = readFileSync(join(h.dir, '00000000000000000000.enc')).subarray(0, 512);
  assert.ok(!before.some((b) => b.equals(first)), 'the cleaned segment has a new data key');
  // Record timestamps (the clock's time) reach the cleaned segments' .timeindex and the producer snapshots: they
  // too are encrypted. The top five bytes of the int64 cover hours around it; random bytes match with odds 2^-40.
  const ts = Buffer.alloc(8);
  ts.writeBigInt64BE(BigInt(h.clock.nowMs()));
  assert.ok(readdirSync(h.dir).some((n) => n.endsWith('.timeindex')));
  for (const name of readdirSync(h.dir)) {
    const bytes = readFileSync(join(h.dir, name));
    assert.equal(bytes.includes(SECRET), false, `plaintext in ${name}`);
    assert.equal(bytes.includes(ts.subarray(0, 5)), false, `a timestamp in ${name}`);
  }
  h.reopen(true);
  assert.deepEqual(h.records(), latestPerKey(written));
  h.reopen(false);
  assert.deepEqual(h.records(), latestPerKey(written));
});
