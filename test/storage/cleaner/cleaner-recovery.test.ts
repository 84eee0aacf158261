// Crash safety of compaction: a crash while a cleaned segment is written leaves `.cleaned` files, which loading
// deletes; a crash while it is swapped in leaves `.swap` files, which loading completes. And reads that run
// while a cleaning swaps segments see consistent data.

import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { iterateRecords } from '../../../src/protocol/records/batch-records.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { CompactionHarness, type KV, latestPerKey, type ReadRecord } from './compaction-harness.js';

function writeRounds(h: CompactionHarness, keys: number, rounds: number, valueBytes = 10): ReadRecord[] {
  const written: ReadRecord[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let first = 0; first < keys; first += 4) {
      const batch: KV[] = [];
      for (let k = first; k < Math.min(keys, first + 4); k++) {
        batch.push({ key: `k${k}`, value: `r${round}-`.padEnd(valueBytes, String(k % 10)) });
      }
      const base = h.append(batch);
      for (const [i, r] of batch.entries()) written.push({ offset: base + i, key: r.key, value: r.value });
    }
    h.log.roll();
  }
  return written;
}

/** A copy of `h`'s log directory, cleaned: its segment files are what a swap would install. */
async function cleanedCopy(
  t: import('node:test').TestContext,
  h: CompactionHarness,
): Promise<CompactionHarness> {
  const copy = new CompactionHarness(t, h.config);
  copy.log.close();
  cpSync(h.dir, copy.dir, { recursive: true });
  copy.log = copy.open(true);
  copy.log.setHighWatermark(copy.log.logEndOffset);
  assert.ok((await copy.clean()) !== null);
  copy.log.close();
  return copy;
}

const SUFFIXES = ['.log', '.index', '.timeindex'];
const STEM = '00000000000000000000';

test('loading deletes the .cleaned files of an interrupted cleaning and keeps the log as it was', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 16, 3);
  h.log.close();
  const copy = await cleanedCopy(t, h);
  for (const s of SUFFIXES) copyFileSync(join(copy.dir, STEM + s), join(h.dir, `${STEM}${s}.cleaned`));
  h.log = h.open(false);
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.deepEqual(
    readdirSync(h.dir).filter((n) => n.endsWith('.cleaned')),
    [],
  );
  assert.deepEqual(h.records(), written, 'nothing of the interrupted cleaning shows');
  await h.clean();
  assert.deepEqual(h.records(), latestPerKey(written), 'and the next cleaning works');
});

test('loading completes an interrupted swap: .swap files replace the segments they cover', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 16, 3);
  const oldBases = h.log.segmentBaseOffsets();
  assert.equal(oldBases.length, 4);
  h.log.close();
  const copy = await cleanedCopy(t, h);
  // The crash came after step 2 had renamed one old segment `.deleted`, before step 3.
  for (const s of SUFFIXES) copyFileSync(join(copy.dir, STEM + s), join(h.dir, `${STEM}${s}.swap`));
  const second = String(oldBases[1]).padStart(20, '0');
  renameSync(join(h.dir, `${second}.log`), join(h.dir, `${second}.log.deleted`));
  h.log = h.open(false);
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.deepEqual(
    readdirSync(h.dir).filter((n) => n.endsWith('.swap') || n.endsWith('.deleted')),
    [],
  );
  assert.deepEqual(h.records(), latestPerKey(written));
  assert.deepEqual(h.log.segmentBaseOffsets(), [0, oldBases[3]], 'the three cleaned segments became one');
  assert.equal(h.log.logEndOffset, written.length);
});

test('a swap interrupted before any old segment was touched is also completed', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 16, 3);
  h.log.close();
  const copy = await cleanedCopy(t, h);
  // Only the .log reached `.swap`; its index is still `.cleaned` (the .log is renamed last, so this cannot
  // happen in that order, but loading must not depend on the indexes being there).
  copyFileSync(join(copy.dir, `${STEM}.log`), join(h.dir, `${STEM}.log.swap`));
  copyFileSync(join(copy.dir, `${STEM}.index`), join(h.dir, `${STEM}.index.cleaned`));
  h.log = h.open(false);
  h.log.setHighWatermark(h.log.logEndOffset);
  assert.deepEqual(h.records(), latestPerKey(written));
  assert.ok(!existsSync(join(h.dir, `${STEM}.index.cleaned`)));
});

test('reads and appends while a cleaning runs see every offset with the record written there', async (t) => {
  const h = new CompactionHarness(t, { segmentBytes: 64 * 1024 });
  const written = writeRounds(h, 400, 4, 200);
  const byOffset = new Map(written.map((r) => [r.offset, r]));
  const check = (records: Buffer, where: string): number => {
    let count = 0;
    for (let pos = 0; pos < records.length; pos += batchHeader.sizeInBytes(records, pos)) {
      for (const r of iterateRecords(records, pos)) {
        const expected = byOffset.get(r.offset);
        assert.deepEqual(
          { offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null },
          expected,
          `${where}: offset ${r.offset}`,
        );
        count++;
      }
    }
    return count;
  };
  let done = false;
  const cleaning = h.clean().finally(() => {
    done = true;
  });
  let reads = 0;
  let offset = 0;
  while (!done) {
    const sync = h.log.read(toOffset(offset), 4096);
    assert.equal(sync.errorCode, StorageErrorCode.None);
    if (sync.errorCode === StorageErrorCode.None) check(sync.records, 'read');
    const async = await h.log.readAsync(toOffset(offset), 4096);
    if (async.errorCode === StorageErrorCode.None) check(async.records, 'readAsync');
    offset = (offset + 97) % h.log.logEndOffset;
    const base = h.append([{ key: 'late', value: `v${reads}` }]);
    byOffset.set(base, { offset: base, key: 'late', value: `v${reads}` });
    reads++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const result = await cleaning;
  assert.ok(result !== null);
  assert.ok(reads >= 5, `only ${reads} reads ran during the cleaning: it held the event loop`);
  const got = h.records();
  assert.ok(got.length < byOffset.size / 2, 'the cleaning removed the older rounds');
  for (const r of got) assert.deepEqual(r, byOffset.get(r.offset));
  const latest = latestPerKey(written);
  const offsets = new Set(got.map((r) => r.offset));
  for (const r of latest) assert.ok(offsets.has(r.offset), `latest record at ${r.offset} kept`);
});

test('retention deleting segments while a pass runs makes the pass give up, not fail', async (t) => {
  const h = new CompactionHarness(t, { cleanupPolicy: 'compact,delete', retentionMs: 60_000 });
  writeRounds(h, 16, 3);
  h.clock.advance(120_000);
  const pass = h.clean();
  // In the same turn the pass started: every inactive segment is past retention.ms.
  assert.equal(h.log.deleteOldSegments().count, 3);
  assert.equal(await pass, null);
  assert.deepEqual(h.records(), []);
  assert.deepEqual(
    readdirSync(h.dir).filter((n) => n.endsWith('.cleaned') || n.endsWith('.swap')),
    [],
  );
});
