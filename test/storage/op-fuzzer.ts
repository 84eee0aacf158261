// An operation fuzzer for the partition log: random appends, reads, rolls, truncations, DeleteRecords,
// retention, high watermark moves, timestamp lookups, clean restarts and crashes, checked against a simple
// in-memory model after every step. Seeded, so a failure names the seed and step that reproduce it.
//
// In 'compact' mode the topic is compacted (cleanup.policy compact or compact,delete, picked by the seed):
// records have keys from a small set and some are tombstones, and one more operation runs a cleaning pass. The
// model then holds records, not bytes: a pass removes every record below its end that a later record below the
// end shadows, and tombstones whose delete horizon (stamped by the first pass that kept them) has passed;
// offsets never change. Reads are compared record by record, and timestamp lookups are left out (cleaning
// rebuilds batches, so their timestamps are no longer the model's).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { iterateRecords } from '../../src/protocol/records/batch-records.js';
import { cleanLog } from '../../src/storage/cleaner/clean-log.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { buildBatch, seededRandom, splitBatches } from './batch-builder.js';
import { testRoot } from './tmp-dir.js';

interface ModelBatch {
  readonly bytes: Buffer;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  /** Set for batches of the idempotent producer: its first sequence. */
  readonly sequence: number | null;
  /** Its records as a consumer sees them; compaction removes some. */
  records: ModelRecord[];
}

interface ModelRecord {
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  /** A kept tombstone's delete horizon, once a cleaning pass stamped its batch. */
  horizonMs?: number;
}

export type FuzzMode = 'delete' | 'compact';

/** The records of whole batches, decoded. */
function decodeRecords(buf: Buffer): ModelRecord[] {
  const out: ModelRecord[] = [];
  for (let pos = 0; pos < buf.length; pos += batchHeader.sizeInBytes(buf, pos)) {
    for (const r of iterateRecords(buf, pos)) {
      out.push({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null });
    }
  }
  return out;
}

/** The records a consumer should see, without the model's own bookkeeping. */
function modelRecords(model: readonly ModelBatch[]): ModelRecord[] {
  return model.flatMap((b) => b.records.map(({ offset, key, value }) => ({ offset, key, value })));
}

/** A cleaning pass ending at `endOffset` at time `nowMs`, applied to the model (see the file header). */
function compactModel(
  model: ModelBatch[],
  endOffset: number,
  nowMs: number,
  deleteRetentionMs: number,
): void {
  const latest = new Map<string | null, number>();
  for (const b of model) for (const r of b.records) if (r.offset < endOffset) latest.set(r.key, r.offset);
  for (const b of model) {
    b.records = b.records.filter((r) => {
      if (r.offset >= endOffset) return true;
      if (r.key === null || latest.get(r.key) !== r.offset) return false;
      if (r.value !== null) return true;
      if (r.horizonMs === undefined) {
        r.horizonMs = nowMs + deleteRetentionMs;
        return true;
      }
      return nowMs < r.horizonMs;
    });
  }
}

const PRODUCER_ID = 77;

const TP = { topic: 'fuzz', partition: 0 };

export async function runOpFuzzer(seed: number, steps: number, mode: FuzzMode = 'delete'): Promise<void> {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const dir = mkdtempSync(join(testRoot(), 'brook-fuzz-'));
  const clock = new ManualClock();
  const compact = mode === 'compact';
  const config = logConfig({
    cleanupPolicy: compact ? (random() < 0.5 ? 'compact' : 'compact,delete') : 'delete',
    deleteRetentionMs: int(4) * 1000,
    segmentBytes: 600 + int(2000),
    indexIntervalBytes: int(300),
    segmentIndexBytes: 8 * (4 + int(60)),
    fileDeleteDelayMs: int(3) * 1000,
    retentionMs: -1,
    retentionBytes: -1,
  });
  let log = Log.open({ dir, topicPartition: TP, config, clock, hadCleanShutdown: true });
  let model: ModelBatch[] = [];
  let logStart = 0;
  let logEnd = 0;
  let hw = 0;
  let epoch = 0;
  let step = 0;
  let sequence = 0;
  /** The idempotent producer's most recent batch, if the log still ends with its history intact. */
  let lastIdempotent: ModelBatch | undefined;
  /** Compact mode: where the next cleaning pass starts (the cleaner checkpoint). */
  let cleanedTo = 0;
  const where = () => `seed ${seed} ${mode} step ${step}`;

  const dropBelowStart = () => {
    model = model.filter((b) => b.lastOffset >= logStart);
    // Records below the log start are not the log's any more, even in a batch that straddles it: consumers skip
    // them, and the cleaner treats them as it likes (its dirty section starts at the log start at the earliest).
    for (const b of model) b.records = b.records.filter((r) => r.offset >= logStart);
  };
  const expectRead = (offset: number, maxBytes: number, bound: number, minOne: boolean): Buffer[] => {
    const out: Buffer[] = [];
    let bytes = 0;
    for (const b of model) {
      if (b.lastOffset < offset) continue;
      if (b.lastOffset >= bound) break;
      if (out.length === 0 && b.bytes.length > maxBytes && !minOne) break;
      if (out.length > 0 && bytes + b.bytes.length > maxBytes) break;
      out.push(b.bytes);
      bytes += b.bytes.length;
    }
    return out;
  };
  const checkOffsets = () => {
    assert.equal(log.logEndOffset, logEnd, `${where()}: log end`);
    assert.equal(log.logStartOffset, logStart, `${where()}: log start`);
    assert.equal(log.highWatermark, hw, `${where()}: high watermark`);
  };
  const checkAll = () => {
    let offset = logStart;
    const got: Buffer[] = [];
    while (offset < logEnd) {
      const r = log.read(toOffset(offset), 1 + int(3000));
      assert.ok(r.errorCode === StorageErrorCode.None, `${where()}: read all at ${offset}`);
      if (r.records.length === 0) break;
      got.push(...splitBatches(r.records));
      offset = r.nextOffset;
    }
    if (compact) {
      assert.deepEqual(
        decodeRecords(Buffer.concat(got)).filter((r) => r.offset >= logStart),
        modelRecords(model),
        `${where()}: full read`,
      );
      return;
    }
    assert.deepEqual(
      got,
      model.map((b) => b.bytes),
      `${where()}: full read`,
    );
  };

  try {
    for (step = 0; step < steps; step++) {
      const op = int(100);
      if (op < 40) {
        if (random() < 0.03) epoch++;
        const count = 1 + int(5);
        const idempotent = random() < 0.3;
        const keys = Array.from({ length: count }, () => (compact ? Buffer.from(`k${int(12)}`) : null));
        const values = Array.from({ length: count }, () =>
          compact && random() < 0.15 ? null : Buffer.alloc(int(150), 97 + (step % 26)),
        );
        const batch = buildBatch({
          keys,
          values,
          baseTimestamp: clock.nowMs() - int(5000),
          timestampStepMs: int(50),
          producerId: idempotent ? PRODUCER_ID : -1,
          producerEpoch: idempotent ? 0 : -1,
          baseSequence: idempotent ? sequence : -1,
        });
        if (idempotent) sequence += count;
        batchHeader.setBaseOffset(batch, 0, logEnd);
        batchHeader.setPartitionLeaderEpoch(batch, 0, epoch);
        log.append(batch);
        model.push({
          bytes: batch,
          baseOffset: logEnd,
          lastOffset: logEnd + count - 1,
          maxTimestamp: batchHeader.maxTimestamp(batch),
          sequence: idempotent ? sequence - count : null,
          records: keys.map((k, i) => ({
            offset: logEnd + i,
            key: k?.toString() ?? null,
            value: values[i]?.toString() ?? null,
          })),
        });
        if (idempotent) lastIdempotent = model[model.length - 1];
        logEnd += count;
        clock.advance(int(2000));
      } else if (op < 60) {
        const offset = logStart - 2 + int(logEnd - logStart + 5);
        const maxBytes = int(1500);
        const bound = random() < 0.5 ? hw : logEnd;
        const minOne = random() < 0.8;
        const r = log.read(toOffset(offset), maxBytes, toOffset(bound), minOne);
        if (offset < logStart || offset > logEnd) {
          assert.equal(
            r.errorCode,
            StorageErrorCode.OffsetOutOfRange,
            `${where()}: read ${offset} out of range`,
          );
        } else {
          assert.ok(r.errorCode === StorageErrorCode.None, `${where()}: read ${offset}`);
          if (compact) {
            // Whole batches from the one holding `offset` (or the next one left), a prefix of the model's records.
            const got = decodeRecords(r.records).filter((x) => x.offset >= offset);
            const expected = modelRecords(model).filter((x) => x.offset >= offset && x.offset < bound);
            assert.deepEqual(got, expected.slice(0, got.length), `${where()}: read ${offset}`);
          } else {
            // A read stays in one segment, as Kafka's does: it may stop early, but only where a segment starts.
            const expected = expectRead(offset, maxBytes, bound, minOne);
            const got = splitBatches(r.records);
            assert.deepEqual(got, expected.slice(0, got.length), `${where()}: read ${offset}`);
            if (got.length < expected.length) {
              const next = batchHeader.baseOffset(expected[got.length]!);
              assert.ok(
                log.segmentBaseOffsets().includes(next),
                `${where()}: read ${offset} stopped inside a segment`,
              );
            }
          }
        }
      } else if (op < 68) {
        hw = logStart + int(logEnd - logStart + 1);
        log.setHighWatermark(toOffset(hw));
      } else if (op < 71) {
        log.roll();
      } else if (op < 75) {
        // Followers truncate to batch boundaries (epoch end offsets, high watermarks). On a compacted log also
        // into the offsets compaction emptied before a batch: the log end becomes the target, as in Kafka.
        // (Compacted: only past a batch that still has records, so surely still in the file. A log left with no
        // batch at all restarts at the target, and which emptied batches the cleaner kept is not in the model.)
        const candidates: number[] = [];
        let prevEnd = logStart;
        let keptBefore = false;
        for (const b of model) {
          if (b.baseOffset > logStart && (!compact || keptBefore)) {
            const gap = b.baseOffset - prevEnd;
            candidates.push(compact && gap > 0 && random() < 0.5 ? b.baseOffset - int(gap) : b.baseOffset);
          }
          prevEnd = b.lastOffset + 1;
          keptBefore ||= b.records.length > 0;
        }
        const target = candidates.length === 0 ? logEnd : candidates[int(candidates.length)]!;
        log.truncateTo(toOffset(target));
        model = model.filter((b) => b.baseOffset < target);
        // Producer state is rebuilt from the batches left: one the cleaner emptied may be gone from the file,
        // and then its retry is not known as a duplicate (as in Kafka).
        const lastSequenced = [...model].reverse().find((b) => b.sequence !== null);
        lastIdempotent = compact && lastSequenced?.records.length === 0 ? undefined : lastSequenced;
        logEnd = Math.min(logEnd, target);
        hw = Math.min(hw, logEnd);
        // As the LogCleaner does after a truncation: the checkpoint comes down to the new log end.
        cleanedTo = Math.min(cleanedTo, logEnd);
      } else if (op < 79) {
        const target = logStart + int(hw - logStart + 1);
        const result = log.deleteRecordsBefore(target);
        assert.equal(result.errorCode, StorageErrorCode.None, where());
        logStart = Math.max(logStart, target);
        dropBelowStart();
      } else if (op < 84) {
        log.config.retentionMs = random() < 0.5 ? int(20_000) : -1;
        log.config.retentionBytes = random() < 0.5 ? int(4000) : -1;
        const before = log.logStartOffset;
        log.deleteOldSegments(clock.nowMs());
        assert.ok(log.logStartOffset >= before, `${where()}: retention moved the start back`);
        assert.ok(log.logStartOffset <= hw, `${where()}: retention deleted above the high watermark`);
        logStart = log.logStartOffset;
        dropBelowStart();
        log.config.retentionMs = -1;
        log.config.retentionBytes = -1;
      } else if (compact && op < 90) {
        // The compaction operation: one cleaning pass from the checkpoint, with a map large enough for the whole
        // dirty section, so the pass ends at the first uncleanable segment.
        const firstDirty = Math.min(Math.max(cleanedTo, logStart), logEnd);
        const result = await cleanLog(log, {
          firstDirtyOffset: firstDirty,
          dedupeBufferBytes: 1 << 20,
          loadFactor: 0.9,
          ioBufferBytes: 64 * 1024,
          nowMs: clock.nowMs(),
        });
        if (result !== null) {
          assert.ok(result.endOffset <= hw, `${where()}: cleaned past the high watermark`);
          compactModel(model, result.endOffset, clock.nowMs(), config.deleteRetentionMs);
          cleanedTo = result.endOffset;
          checkAll();
        }
      } else if (op < 90) {
        const target = clock.nowMs() - int(200_000);
        const found = log.offsetForTimestamp(target);
        const expected = model.find((b) => b.maxTimestamp >= target);
        assert.equal(
          found?.offset ?? null,
          expected === undefined ? null : Math.max(expected.baseOffset, logStart),
          `${where()}: by time`,
        );
      } else if (op < 92) {
        clock.advance(int(3000));
        log.runDueDeletes();
      } else if (op < 95) {
        // The producer's latest batch, retried, is a duplicate answered with its offsets (while it is in the log).
        const last = [...model].reverse().find((b) => b.sequence !== null);
        if (last !== undefined && last === lastIdempotent) {
          const retry = Buffer.from(last.bytes);
          const check = log.checkProducerBatch(retry, 0);
          assert.equal(check.kind, 'duplicate', `${where()}: retry of ${last.baseOffset}`);
          if (check.kind === 'duplicate') {
            assert.equal(check.firstOffset, last.baseOffset, `${where()}: duplicate offsets`);
            assert.equal(check.lastOffset, last.lastOffset, `${where()}: duplicate offsets`);
          }
        }
      } else {
        const crash = random() < 0.5;
        const reopen = { recoveryPoint: log.recoveryPoint, logStartOffset: logStart, highWatermark: hw };
        // A log end that a truncation put past the last batch is held by an empty active segment, which
        // recovery after a crash drops: the log end falls back to the end of the segment before (where the
        // last batch in the file ends: the model does not know which batches the cleaner emptied are gone).
        const segments = log.segmentList();
        const lastEnd = segments.length > 1 ? segments[segments.length - 2]!.nextOffset : logStart;
        const fallsBack =
          crash &&
          segments.length > 1 &&
          log.activeSegment.size === 0 &&
          logEnd > Math.max(lastEnd, logStart);
        if (crash) log.abandon();
        else log.close();
        log = Log.open({ dir, topicPartition: TP, config, clock, hadCleanShutdown: !crash, ...reopen });
        if (fallsBack) {
          logEnd = Math.max(lastEnd, logStart);
          model = model.filter((b) => b.baseOffset < logEnd);
          hw = Math.min(hw, logEnd);
          cleanedTo = Math.min(cleanedTo, logEnd);
        }
      }
      checkOffsets();
      if (step % 25 === 0) checkAll();
    }
    checkAll();
  } finally {
    if (!log.isClosed) log.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}
