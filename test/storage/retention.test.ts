// Delete-policy retention against Kafka's UnifiedLog.deleteOldSegments: which segments retention.ms and
// retention.bytes remove, including the active segment (rolled first, as Kafka does).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toOffset } from '../../src/common/ids.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { openHarness } from './log-harness.js';

test('retention.ms deletes the active segment too once all of it is older and replicated, rolling first', (t) => {
  const h = openHarness(t, { retentionMs: 10_000, fileDeleteDelayMs: 0 });
  for (let i = 0; i < 3; i++) h.append({ values: [Buffer.alloc(60, i)] });
  assert.equal(h.log.segmentCount, 1, 'everything is in the active segment');
  h.clock.advance(20_000);
  h.log.setHighWatermark(toOffset(2));
  assert.equal(h.log.deleteOldSegments().count, 0, 'not while part of it is above the high watermark');
  h.log.setHighWatermark(toOffset(3));
  const result = h.log.deleteOldSegments();
  assert.equal(result.reason, 'retention-ms');
  assert.equal(result.count, 1);
  assert.equal(h.log.segmentCount, 1, 'a new empty active segment replaces it');
  assert.equal(h.log.activeSegment.baseOffset, 3);
  assert.equal(h.log.logStartOffset, 3);
  assert.equal(h.log.logEndOffset, 3, 'the log end offset does not move');
  assert.equal(h.log.read(toOffset(0), 1 << 20).errorCode, StorageErrorCode.OffsetOutOfRange);
  // The empty active segment that replaced it is never deleted, and appends go on at the log end.
  h.clock.advance(20_000);
  assert.equal(h.log.deleteOldSegments().count, 0);
  h.append();
  assert.equal(h.log.logEndOffset, 4);
  h.reopen(true);
  assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset], [3, 4], 'as reopened');
});

test('retention.bytes counts the active segment and deletes it when the log must shrink below it', (t) => {
  const h = openHarness(t, { retentionMs: -1, retentionBytes: 0, fileDeleteDelayMs: 0 });
  h.append({ values: [Buffer.alloc(60, 1)] });
  h.log.setHighWatermark(toOffset(1));
  const result = h.log.deleteOldSegments();
  assert.equal(result.reason, 'retention-bytes');
  assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset, h.log.segmentCount], [1, 1, 1]);
});
