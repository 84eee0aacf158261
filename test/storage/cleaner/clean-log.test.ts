// Compaction of one log: what a cleaning pass keeps and removes, and that offsets, codecs, producer fields and
// transactions come out as Kafka's cleaner leaves them.

import assert from 'node:assert/strict';
import { utimesSync } from 'node:fs';
import { test } from 'node:test';
import { toOffset, toProducerId } from '../../../src/common/ids.js';
import { CompressionType } from '../../../src/protocol/compression/compression-type.js';
import { buildBatch } from '../../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { LOG_SUFFIX, segmentFilePath } from '../../../src/storage/file-names.js';
import { CompactionHarness, type KV, latestPerKey, type ReadRecord } from './compaction-harness.js';

const DAY_MS = 86_400_000;

/** Appends `rounds` rounds of `keys` keys (values `k<i>-r<round>`), `perBatch` records a batch, rolling between rounds. */
function writeRounds(
  h: CompactionHarness,
  keys: number,
  rounds: number,
  perBatch = 5,
  compression = 0,
): ReadRecord[] {
  const written: ReadRecord[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let first = 0; first < keys; first += perBatch) {
      const batch: KV[] = [];
      for (let k = first; k < Math.min(keys, first + perBatch); k++)
        batch.push({ key: `k${k}`, value: `k${k}-r${round}` });
      const base = h.append(batch, { compression });
      for (const [i, r] of batch.entries()) written.push({ offset: base + i, key: r.key, value: r.value });
    }
    h.log.roll();
  }
  return written;
}

test('a cleaning keeps only the latest record of each key, at its original offset', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 20, 4);
  const before = h.log.sizeInBytes;
  const result = await h.clean();
  assert.ok(result !== null);
  assert.equal(result.endOffset, h.log.activeSegment.baseOffset, 'the whole inactive log was cleaned');
  assert.deepEqual(h.records(), latestPerKey(written));
  assert.ok(h.log.sizeInBytes < before / 2, `${h.log.sizeInBytes} bytes left of ${before}`);
  assert.equal(h.log.logEndOffset, written.length, 'the log end does not move');
  // The cleaned log survives a clean restart and a crash restart (recovery of a compacted log with gaps).
  h.reopen(true);
  assert.deepEqual(h.records(), latestPerKey(written));
  h.reopen(false);
  assert.deepEqual(h.records(), latestPerKey(written));
});

test('records in the active segment are never cleaned, and later writes shadow cleaned ones next pass', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 10, 2);
  const base = h.append([{ key: 'k1', value: 'active-1' }]);
  h.append([{ key: 'k1', value: 'active-2' }]);
  written.push(
    { offset: base, key: 'k1', value: 'active-1' },
    { offset: base + 1, key: 'k1', value: 'active-2' },
  );
  await h.clean();
  const got = h.records();
  assert.deepEqual(
    got.filter((r) => r.offset >= base),
    written.filter((r) => r.offset >= base),
    'active segment untouched',
  );
  h.log.roll();
  await h.clean(base);
  assert.deepEqual(h.records(), latestPerKey(written));
});

test('nothing at or above the high watermark or the last stable offset is cleaned', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 10, 3);
  // The high watermark sits inside the second segment: only the first is below it.
  const segments = h.log.segmentBaseOffsets();
  h.log.setHighWatermark(toOffset(segments[1]! + 1));
  const result = await h.clean();
  assert.equal(result?.endOffset, segments[1]);
  const got = h.records();
  assert.deepEqual(
    got.filter((r) => r.offset >= segments[1]!),
    written.filter((r) => r.offset >= segments[1]!),
  );
});

test('a tombstone outlives its first cleaning by delete.retention.ms, then goes with the values it deleted', async (t) => {
  const h = new CompactionHarness(t, { deleteRetentionMs: DAY_MS });
  h.append([
    { key: 'a', value: 'a1' },
    { key: 'b', value: 'b1' },
  ]);
  h.append([{ key: 'a', value: null }]);
  h.log.roll();
  const first = await h.clean();
  assert.deepEqual(h.records(), [
    { offset: 1, key: 'b', value: 'b1' },
    { offset: 2, key: 'a', value: null },
  ]);
  const horizon = h.clock.nowMs() + DAY_MS;
  assert.equal(first?.earliestDeleteHorizonMs, horizon, 'the pass reports the horizon it stamped');
  const tombstoneBatch = h.batches().find((b) => batchHeader.baseOffset(b, 0) === 2)!;
  assert.equal(batchHeader.deleteHorizonMs(tombstoneBatch, 0), horizon, 'KIP-534 horizon in the batch');
  h.clock.advance(DAY_MS - 1);
  await h.clean(first!.endOffset);
  assert.equal(h.records().length, 2, 'kept until the horizon');
  h.clock.advance(1);
  await h.clean(first!.endOffset);
  assert.deepEqual(h.records(), [{ offset: 1, key: 'b', value: 'b1' }]);
});

test('a pass keeps the batch that ends its range, emptied, so batches reach the offsets handed out', async (t) => {
  // KAFKA-17076 (Cleaner.cleanInto retains empty the batch whose next offset is the round's upper bound): when the
  // last batches of the range go, the log's batches would otherwise end below its cleaned range. The cleaner picks
  // no log for a passed horizon alone, so the pass is run here directly, as Kafka's unit tests call clean.
  const h = new CompactionHarness(t, { deleteRetentionMs: 0 });
  h.append([{ key: 'k', value: 'v' }]);
  h.append([{ key: 'k', value: null }]);
  h.log.roll();
  h.append([{ key: 'other', value: 'w' }]);
  const first = await h.clean();
  assert.equal(first?.endOffset, 2);
  h.clock.advance(1);
  await h.clean(2);
  const batches = h.batches().map((b) => ({
    baseOffset: batchHeader.baseOffset(b, 0),
    lastOffset: batchHeader.lastOffset(b, 0),
    records: batchHeader.recordsCount(b, 0),
  }));
  assert.deepEqual(batches, [
    { baseOffset: 1, lastOffset: 1, records: 0 },
    { baseOffset: 2, lastOffset: 2, records: 1 },
  ]);
});

test('min.compaction.lag.ms keeps young segments out of the cleaning', async (t) => {
  const h = new CompactionHarness(t, { minCompactionLagMs: 60_000 });
  const written = writeRounds(h, 10, 3);
  assert.equal(await h.clean(), null, 'every segment is younger than the lag');
  assert.deepEqual(h.records(), written);
  h.clock.advance(60_001);
  const result = await h.clean();
  assert.ok(result !== null);
  assert.deepEqual(h.records(), latestPerKey(written));
});

test('an offset map too small for the dirty section cleans it in several passes, each correct', async (t) => {
  const h = new CompactionHarness(t);
  const written = writeRounds(h, 300, 3, 10);
  let firstDirty = 0;
  let passes = 0;
  const end = h.log.activeSegment.baseOffset;
  while (firstDirty < end) {
    // 40 slots: at most 36 keys a pass.
    const result = await h.clean(firstDirty, 40 * 24);
    assert.ok(result !== null);
    assert.ok(result.endOffset > firstDirty, 'every pass makes progress');
    firstDirty = result.endOffset;
    passes++;
    // Nothing at or past the pass end is touched, every latest record stays, and every record read is the one
    // written at its offset. (Below the end, a record may also go because of a key the map took from a batch it
    // could not finish, which is right: a later record of that key exists.)
    const got = h.records();
    const byOffset = new Map(written.map((r) => [r.offset, r]));
    for (const r of got)
      assert.deepEqual(r, byOffset.get(r.offset), `after pass ${passes}: offset ${r.offset}`);
    const offsets = new Set(got.map((r) => r.offset));
    for (const r of written.filter((w) => w.offset >= firstDirty))
      assert.ok(offsets.has(r.offset), `${r.offset} kept`);
    for (const r of latestPerKey(written)) assert.ok(offsets.has(r.offset), `latest ${r.offset} kept`);
  }
  assert.ok(passes >= 10, `${passes} passes`);
  assert.deepEqual(h.records(), latestPerKey(written));
});

for (const [name, codec] of [
  ['gzip', CompressionType.Gzip],
  ['lz4', CompressionType.Lz4],
  ['zstd', CompressionType.Zstd],
] as const) {
  test(`${name} batches are rebuilt with ${name}, keeping their base and last offsets`, async (t) => {
    const h = new CompactionHarness(t);
    const written = writeRounds(h, 12, 3, 4, codec);
    // One key rewritten in the last round, so that a batch of the last round loses only some records.
    const lastBase = h.append(
      [
        { key: 'k0', value: 'x' },
        { key: 'k1', value: 'y' },
      ],
      { compression: codec },
    );
    written.push(
      { offset: lastBase, key: 'k0', value: 'x' },
      { offset: lastBase + 1, key: 'k1', value: 'y' },
    );
    h.log.roll();
    const before = new Map(
      h.batches().map((b) => [batchHeader.baseOffset(b, 0), batchHeader.lastOffset(b, 0)]),
    );
    await h.clean();
    assert.deepEqual(h.records(), latestPerKey(written));
    for (const b of h.batches()) {
      assert.equal(batchHeader.compression(b, 0), codec, 'same codec');
      assert.equal(
        batchHeader.lastOffset(b, 0),
        before.get(batchHeader.baseOffset(b, 0)),
        'last offset kept',
      );
    }
  });
}

test('an idempotent producer keeps its last batch, as an empty batch, with its sequence range', async (t) => {
  const h = new CompactionHarness(t);
  const pid = { producerId: 42, producerEpoch: 3 };
  h.append(
    [
      { key: 'a', value: '1' },
      { key: 'b', value: '1' },
    ],
    { ...pid, baseSequence: 0 },
  );
  h.append(
    [
      { key: 'a', value: '2' },
      { key: 'b', value: '2' },
    ],
    { ...pid, baseSequence: 2 },
  );
  h.append([
    { key: 'a', value: '3' },
    { key: 'b', value: '3' },
  ]);
  h.log.roll();
  await h.clean();
  assert.deepEqual(h.records(), [
    { offset: 4, key: 'a', value: '3' },
    { offset: 5, key: 'b', value: '3' },
  ]);
  const batches = h.batches();
  assert.equal(batches.length, 2, 'the first batch of the producer went, its last stayed empty');
  const empty = batches[0]!;
  assert.equal(batchHeader.recordsCount(empty, 0), 0);
  assert.equal(batchHeader.baseOffset(empty, 0), 2);
  assert.equal(batchHeader.lastOffset(empty, 0), 3);
  assert.equal(batchHeader.producerId(empty, 0), 42);
  assert.equal(batchHeader.producerEpoch(empty, 0), 3);
  assert.equal(batchHeader.baseSequence(empty, 0), 2);
  // After a crash, producer state rebuilt from the cleaned log still knows the producer's last sequence.
  h.reopen(false);
  const entry = h.log.producerState.producer(toProducerId(42));
  assert.equal(entry?.batches.at(-1)?.lastSeq, 3);
});

test('transactions: committed data stays, aborted data goes, markers go once their data is gone and after the horizon', async (t) => {
  const h = new CompactionHarness(t, { deleteRetentionMs: 1000 });
  const txn = (pid: number) => ({ producerId: pid, producerEpoch: 0, transactional: true });
  h.append([{ key: 'a', value: 'committed' }], { ...txn(1), baseSequence: 0 });
  const commit = h.marker(true, 1);
  h.append(
    [
      { key: 'a', value: 'aborted' },
      { key: 'c', value: 'aborted' },
    ],
    { ...txn(2), baseSequence: 0 },
  );
  const abort = h.marker(false, 2);
  // Later producers, so that neither marker is the last batch of its producer's state... except by design below.
  h.append([{ key: 'b', value: 'plain' }]);
  h.append([{ key: 'z', value: 'p1' }], { ...txn(1), baseSequence: 1 });
  h.marker(true, 1);
  h.append([{ key: 'y', value: 'p2' }], { ...txn(2), baseSequence: 2 });
  h.marker(true, 2);
  h.log.roll();
  const controls = () =>
    h
      .batches()
      .filter((b) => batchHeader.isControl(b, 0))
      .map((b) => batchHeader.baseOffset(b, 0));
  const first = await h.clean();
  assert.deepEqual(
    h.records().map((r) => [r.key, r.value]),
    [
      ['a', 'committed'],
      ['b', 'plain'],
      ['z', 'p1'],
      ['y', 'p2'],
    ],
    'aborted data removed, committed data kept',
  );
  assert.ok(controls().includes(commit), 'a commit marker stays while its data does');
  assert.ok(controls().includes(abort), 'an abort marker stays in the pass that removed its data');
  assert.deepEqual(
    h.log.collectAbortedTxns(0, h.log.logEndOffset).map((x) => x.producerId),
    [2],
    'the cleaned .txnindex still lists the aborted transaction',
  );
  await h.clean(first!.endOffset);
  assert.ok(controls().includes(abort), 'the abort marker waits for its delete horizon');
  h.clock.advance(1000);
  await h.clean(first!.endOffset);
  assert.ok(!controls().includes(abort), 'the abort marker is gone after the horizon');
  assert.ok(controls().includes(commit), 'the commit marker of data still present stays');
});

test('small cleaned segments merge up to segment.bytes', async (t) => {
  const h = new CompactionHarness(t, { segmentBytes: 4000 });
  for (let i = 0; i < 40; i++) {
    h.append([{ key: `k${i % 8}`, value: `v${i}` }]);
    h.log.roll();
  }
  assert.equal(h.log.segmentCount, 41);
  await h.clean();
  assert.ok(h.log.segmentCount <= 3, `${h.log.segmentCount} segments`);
  assert.equal(h.records().length, 8);
  for (const b of h.log.segmentList()) assert.ok(b.size <= 4000);
});

test('a cleaned segment keeps the modification time of the last segment it replaces, as Kafka', async (t) => {
  // Retention ages segments without timestamps by that time: cleaning must not make them look new.
  const h = new CompactionHarness(t, { cleanupPolicy: 'compact,delete', retentionMs: 60_000 });
  for (let i = 0; i < 4; i++) {
    h.append([{ key: `k${i % 2}`, value: `v${i}` }], { timestamp: -1 });
    h.log.roll();
  }
  const replaced = h.log.segmentList().slice(0, -1);
  const modifiedMs = [1_600_000_000_000, 1_600_000_100_000, 1_600_000_200_000, 1_600_000_300_000];
  for (const [i, segment] of replaced.entries()) {
    const seconds = modifiedMs[i]! / 1000;
    utimesSync(segmentFilePath(h.dir, segment.baseOffset, LOG_SUFFIX), seconds, seconds);
  }
  assert.ok((await h.clean()) !== null);
  assert.equal(h.log.segmentCount, 2, 'one cleaned segment and the active one');
  const cleaned = h.log.segmentList()[0]!;
  assert.equal(cleaned.lastModifiedMs, modifiedMs[3]);
  assert.equal(cleaned.largestTimestampMs, modifiedMs[3], 'its records carry no timestamp');
  assert.deepEqual(
    h.log.deleteOldSegments(h.clock.nowMs()).reasons,
    ['retention-ms'],
    'and retention.ms still applies',
  );
});

test('a group is capped by segment.bytes: a log of full segments keeps several', async (t) => {
  const h = new CompactionHarness(t, { segmentBytes: 2000 });
  for (let i = 0; i < 60; i++) h.append([{ key: `unique-${i}`, value: 'x'.repeat(100) }]);
  h.log.roll();
  const before = h.log.segmentCount;
  await h.clean();
  assert.equal(h.log.segmentCount, before, 'nothing removed: nothing merges past segment.bytes');
  assert.equal(h.records().length, 60);
});

test('after a pass that empties whole segments, readAsync finds the first kept batch as read does', async (t) => {
  const h = new CompactionHarness(t, { segmentBytes: 8192, minCleanableDirtyRatio: 0.01 });
  for (let round = 0; round < 12; round++)
    for (let k = 0; k < 20; k++) h.append([{ key: `key-${k}`, value: `round-${round}-`.padEnd(400, 'x') }]);
  for (let i = 0; i < 20; i++) h.append([{ key: `filler-${i}`, value: 'f'.padEnd(400, 'y') }]);
  await h.clean();
  const empty = h.log.segmentList().filter((s) => s.size === 0 && s !== h.log.activeSegment);
  assert.ok(empty.length >= 2, 'the pass left emptied segments behind');
  for (const offset of [0, empty[1]!.baseOffset - 1, empty[1]!.baseOffset]) {
    const sync = h.log.read(toOffset(offset), 1 << 20, h.log.highWatermark);
    const async = await h.log.readAsync(toOffset(offset), 1 << 20, h.log.highWatermark);
    if (sync.errorCode !== StorageErrorCode.None) assert.fail(`offset ${offset}: ${sync.errorCode}`);
    assert.ok(sync.records.length > 0, `offset ${offset}: something to read`);
    assert.deepEqual(async, sync, `offset ${offset}`);
    assert.equal(h.log.readableBytes(toOffset(offset), 1 << 20, h.log.highWatermark), sync.records.length);
  }
});

/** A log dedupe buffer of `slots` slots (24 bytes each): it fills at floor(0.9 * slots) keys, as Kafka's map. */
const dedupeBytes = (slots: number): number => slots * 24;

test('a map that fills inside a batch ends the pass after its last mapped record, as Kafka offsetMap.latestOffset', async (t) => {
  const h = new CompactionHarness(t);
  const keys = (prefix: string, from: number, to: number): KV[] =>
    Array.from({ length: to - from }, (_, i) => ({
      key: `${prefix}${from + i}`,
      value: `${prefix}${from + i}-v`,
    }));
  h.append(keys('k', 0, 10)); // offsets 0-9
  h.log.roll();
  h.append(keys('k', 0, 5)); // offsets 10-14: k0..k4 again
  h.append([{ key: 'k0', value: 'k0-last' }, ...keys('m', 1, 10)]); // offsets 15-24
  h.log.roll();
  const secondBase = h.log.segmentList()[1]!.baseOffset;
  assert.equal(secondBase, 10);
  // 14 slots: 12 keys. k0..k9 fill 10, k0 at 15 is a known key, m1 (16) and m2 (17) the last two; m3 finds it full.
  const result = await h.clean(0, dedupeBytes(14));
  assert.ok(result !== null);
  assert.equal(result.endOffset, 18, 'the pass ends after offset 17, the last record in the map');
  const offsets = h.records().map((r) => r.offset);
  // The second segment was cleaned too: k0 at 10 is shadowed by k0 at 15, which the map holds.
  assert.ok(!offsets.includes(10), `offset 10 removed (kept: ${offsets.join(',')})`);
  assert.deepEqual(offsets, [5, 6, 7, 8, 9, 11, 12, 13, 14, ...Array.from({ length: 10 }, (_, i) => 15 + i)]);
});

test('a map that fills at a segment after an offset gap ends the pass at that segment base, as Kafka', async (t) => {
  const h = new CompactionHarness(t, { segmentBytes: 300 });
  const keys = (prefix: string): KV[] =>
    Array.from({ length: 10 }, (_, i) => ({ key: `${prefix}${i}`, value: `${prefix}${i}-v` }));
  // A follower copying a compacted leader: offsets 10-19 were removed there, so the next batch starts at 20.
  const appendAt = (base: number, records: KV[]): void => {
    const batch = buildBatch(records, { timestamp: h.clock.nowMs() });
    batchHeader.setBaseOffset(batch, 0, base);
    h.log.append(batch);
    h.log.setHighWatermark(h.log.logEndOffset);
  };
  appendAt(0, keys('a')); // offsets 0-9
  appendAt(20, keys('b')); // rolls: a segment from 20
  appendAt(30, keys('c')); // rolls again: the active segment from 30
  assert.deepEqual(
    h.log.segmentList().map((s) => s.baseOffset),
    [0, 20, 30],
  );
  // 12 slots: 10 keys, all taken by the first segment; the second one's first key finds the map full.
  const result = await h.clean(0, dedupeBytes(12));
  assert.ok(result !== null);
  assert.equal(result.endOffset, 20, 'the checkpoint skips the gap after the first segment');
});
