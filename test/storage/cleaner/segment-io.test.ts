// The cleaner's chunked segment reader: whole batches whatever the chunk size, including batches cut by a
// chunk boundary inside their header and batches longer than several chunks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { segmentBatches } from '../../../src/storage/cleaner/segment-io.js';
import { CompactionHarness, latestPerKey } from './compaction-harness.js';

test('segment batches come out whole for any chunk size, and equal what the log serves', async (t) => {
  const h = new CompactionHarness(t);
  for (let i = 0; i < 30; i++) {
    // Sizes from under a header's length of value to several hundred KiB.
    const bytes = i % 7 === 0 ? 70_000 + i * 1000 : 1 + ((i * 37) % 400);
    h.append([{ key: `k${i % 5}`, value: 'x'.repeat(bytes) }]);
  }
  h.log.roll();
  const expected = h.batches().map((b) => Buffer.from(b));
  const segment = h.log.segmentList()[0]!;
  for (const chunkBytes of [61, 100, 4096, 65_536, 1 << 20]) {
    const got: Buffer[] = [];
    for await (const { buf, pos } of segmentBatches(segment, segment.size, chunkBytes, 64 << 20)) {
      got.push(Buffer.from(buf.subarray(pos, pos + batchHeader.sizeInBytes(buf, pos))));
    }
    assert.deepEqual(got, expected, `chunks of ${chunkBytes} bytes`);
  }
});

test('a cleaning with batches larger than its I/O chunk keeps the latest of each key', async (t) => {
  const h = new CompactionHarness(t);
  const written = [];
  for (let i = 0; i < 9; i++) {
    const value = String(i).repeat(200_000);
    const base = h.append([{ key: `k${i % 3}`, value }]);
    written.push({ offset: base, key: `k${i % 3}`, value });
  }
  h.log.roll();
  assert.ok((await h.clean()) !== null);
  assert.deepEqual(h.records(), latestPerKey(written));
});
