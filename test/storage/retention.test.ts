// Delete-policy retention against Kafka's UnifiedLog.deleteOldSegments: which segments retention.ms and
// retention.bytes remove, including the active segment (rolled first, as Kafka does), and how a segment
// whose batches carry no timestamp ages (by its file's last modification, Kafka's LogSegment.largestTimestamp).

import assert from 'node:assert/strict';
import { utimesSync } from 'node:fs';
import { test } from 'node:test';
import { toOffset } from '../../src/common/ids.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { LOG_SUFFIX, segmentFilePath } from '../../src/storage/file-names.js';
import { logConfig } from '../../src/storage/log-config.js';
import { retentionDecision } from '../../src/storage/retention.js';
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
  assert.deepEqual(result.reasons, ['retention-ms']);
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
  assert.deepEqual(result.reasons, ['retention-bytes']);
  assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset, h.log.segmentCount], [1, 1, 1]);
});

test('a segment whose batches carry no timestamp ages by its file modification time, as in Kafka', (t) => {
  const h = openHarness(t, { segmentBytes: 200, retentionMs: 10_000, fileDeleteDelayMs: 0 });
  // No timestamps (-1, as records converted from the v0 format), then timestamped records.
  h.append({ values: [Buffer.alloc(100, 1)], baseTimestamp: -1 });
  h.append({ values: [Buffer.alloc(100, 2)], baseTimestamp: -1 });
  h.append({ values: [Buffer.alloc(100, 3)] });
  h.append({ values: [Buffer.alloc(100, 4)] });
  assert.deepEqual(h.log.segmentBaseOffsets(), [0, 1, 2, 3]);
  h.log.setHighWatermark(toOffset(4));
  h.clock.advance(20_000);
  // The untimestamped segments were written just now (by the file system's clock).
  const modifiedSec = (h.clock.nowMs() - 5_000) / 1000;
  for (const base of [0, 1]) utimesSync(segmentFilePath(h.dir, base, LOG_SUFFIX), modifiedSec, modifiedSec);
  assert.equal(h.log.deleteOldSegments().count, 0, 'modified 5 s ago: kept, and the later ones behind it');
  const oldSec = (h.clock.nowMs() - 60_000) / 1000;
  for (const base of [0, 1]) utimesSync(segmentFilePath(h.dir, base, LOG_SUFFIX), oldSec, oldSec);
  const result = h.log.deleteOldSegments();
  assert.deepEqual(result.reasons, ['retention-ms']);
  assert.equal(result.count, 4, 'both untimestamped segments, then the timestamped ones behind them');
  assert.equal(h.log.logStartOffset, 4);
});

test('one check applies the log start offset, retention.bytes and retention.ms reasons in turn, as Kafka 3.x', () => {
  const nowMs = 1_000_000;
  // Segment 0 is behind the log start offset, 1 is fresh but retention.bytes wants it gone, 2 is expired though
  // the fresh 1 was before it, 3 and 4 are fresh (4 active). Each reason starts where the one before stopped.
  const segments = [
    { baseOffset: 0, size: 100, largestTimestampMs: nowMs },
    { baseOffset: 10, size: 100, largestTimestampMs: nowMs },
    { baseOffset: 20, size: 100, largestTimestampMs: nowMs - 60_000 },
    { baseOffset: 30, size: 100, largestTimestampMs: nowMs },
    { baseOffset: 40, size: 100, largestTimestampMs: nowMs },
  ];
  const view = { segments, logStartOffset: 12, logEndOffset: 50, highWatermark: 50 };
  const config = logConfig({ retentionMs: 10_000, retentionBytes: 250 });
  assert.deepEqual(retentionDecision(view, config, nowMs), {
    count: 3,
    reasons: ['log-start-offset', 'retention-bytes', 'retention-ms'],
  });
  // Without the delete policy only the log start offset counts.
  assert.deepEqual(retentionDecision(view, logConfig({ ...config, cleanupPolicy: 'compact' }), nowMs), {
    count: 1,
    reasons: ['log-start-offset'],
  });
});
