// scanHeaders reads a small first chunk and doubles it: every header must be visited, whatever the batch sizes
// around the chunk edges, and a scan may start at any batch.

import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { scanHeaders } from '../../src/storage/batch-scan.js';
import { seededRandom } from './batch-builder.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

test('a scan visits every header across chunk edges, from small batches to ones larger than a chunk', (t) => {
  const path = join(tempDir(t, 'brook-scan-'), 'segment.log');
  const fd = openSync(path, 'w+');
  deferCleanup(t, () => closeSync(fd));
  const random = seededRandom(11);
  const expected: { position: number; baseOffset: number; sizeInBytes: number }[] = [];
  let position = 0;
  let offset = 0;
  for (let i = 0; i < 300; i++) {
    // Mostly small batches, some of 5-150 KiB: headers land everywhere relative to 4-64 KiB chunks.
    const big = random() < 0.1;
    const size = big ? 5000 + Math.floor(random() * 150_000) : 20 + Math.floor(random() * 900);
    const batch = buildBatch([{ value: Buffer.alloc(size, i) }]);
    batchHeader.setBaseOffset(batch, 0, offset);
    writeSync(fd, batch, 0, batch.length, position);
    expected.push({ position, baseOffset: offset, sizeInBytes: batch.length });
    position += batch.length;
    offset++;
  }
  for (const from of [0, 1, 17, 150, 299]) {
    const seen: { position: number; baseOffset: number; sizeInBytes: number }[] = [];
    const stopped = scanHeaders(fd, expected[from]!.position, position, (info) => {
      seen.push({ position: info.position, baseOffset: info.baseOffset, sizeInBytes: info.sizeInBytes });
      return true;
    });
    assert.deepEqual(seen, expected.slice(from), `scan from batch ${from}`);
    assert.equal(stopped, position);
  }
});
