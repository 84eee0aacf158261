// Producer snapshots at a clean shutdown follow Kafka's rule (ProducerStateManager.takeSnapshot): a log writes
// one only when its end has moved past the last snapshot (or, without one, past its start). Empty and unchanged
// logs write nothing, so a broker with thousands of idle partitions stops without an fsync each; logs with
// producer state still write one and come back with that state.

import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import type { Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogManager, type LogManagerOptions } from '../../src/storage/log-manager.js';
import { type BatchSpec, buildBatch } from './batch-builder.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

function options(dir: string, clock: ManualClock): LogManagerOptions {
  return {
    dir,
    clock,
    configFor: () => logConfig({ segmentBytes: 100_000 }),
    managerConfig: {},
  };
}

function append(log: Log, spec: BatchSpec): number {
  const b = buildBatch({ count: 1, ...spec });
  const offset = log.logEndOffset;
  batchHeader.setBaseOffset(b, 0, offset);
  log.append(b);
  return offset;
}

/** Every `.snapshot` file under `dir`, as `partition-dir/name`. */
function snapshotFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    for (const name of readdirSync(join(dir, entry.name))) {
      if (name.endsWith('.snapshot')) out.push(`${entry.name}/${name}`);
    }
  }
  return out.sort();
}

const snapshotName = (offset: number): string => `${String(offset).padStart(20, '0')}.snapshot`;

test('empty logs write no producer snapshot at a clean shutdown, at the first stop or the next', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = LogManager.open(options(dir, clock));
  for (let p = 0; p < 50; p++) first.getOrCreateLog({ topic: 'idle', partition: p });
  first.shutdown();
  assert.deepEqual(snapshotFiles(dir), [], 'fails before: one empty snapshot per log');

  const second = LogManager.open(options(dir, clock));
  assert.equal(second.hadCleanShutdown, true);
  assert.equal(second.getLog({ topic: 'idle', partition: 49 })!.logEndOffset, 0);
  second.shutdown();
  assert.deepEqual(snapshotFiles(dir), []);
});

test('an idempotent producer: the snapshot is written once at the log end, and its state survives restarts', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const tp = { topic: 'idem', partition: 0 };
  const producer = { producerId: 7, producerEpoch: 0 };
  const first = LogManager.open(options(dir, clock));
  const log = first.getOrCreateLog(tp);
  first.getOrCreateLog({ topic: 'idle', partition: 0 });
  for (let seq = 0; seq < 3; seq++) append(log, { ...producer, baseSequence: seq });
  first.shutdown();
  assert.deepEqual(snapshotFiles(dir), [`idem-0/${snapshotName(3)}`]);
  const written = statSync(join(dir, 'idem-0', snapshotName(3)));

  // A start and stop with nothing appended writes nothing: the snapshot at the log end already holds the state.
  const second = LogManager.open(options(dir, clock));
  second.shutdown();
  const kept = statSync(join(dir, 'idem-0', snapshotName(3)));
  assert.equal(kept.ino, written.ino, 'the same file, not rewritten (tmp + rename gives a new inode)');
  assert.equal(kept.mtimeMs, written.mtimeMs);

  const third = LogManager.open(options(dir, clock));
  deferCleanup(t, () => third.shutdown());
  const reloaded = third.getLog(tp)!;
  const duplicate = reloaded.checkProducerBatch(buildBatch({ count: 1, ...producer, baseSequence: 2 }));
  assert.equal(duplicate.kind, 'duplicate');
  assert.deepEqual([duplicate.firstOffset, duplicate.lastOffset], [2, 2], 'the original offsets');
  const next = buildBatch({ count: 1, ...producer, baseSequence: 3 });
  assert.deepEqual(reloaded.checkProducerBatch(next), { kind: 'ok' });
  const gap = reloaded.checkProducerBatch(buildBatch({ count: 1, ...producer, baseSequence: 5 }));
  assert.equal(gap.kind, 'error', 'a sequence gap is still refused');
});

test('appends after a restart write a new snapshot at the new end; the older one stays', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const tp = { topic: 'idem', partition: 0 };
  const producer = { producerId: 9, producerEpoch: 2 };
  const first = LogManager.open(options(dir, clock));
  append(first.getOrCreateLog(tp), { ...producer, baseSequence: 0 });
  first.shutdown();
  const second = LogManager.open(options(dir, clock));
  append(second.getLog(tp)!, { ...producer, baseSequence: 1 });
  second.shutdown();
  assert.deepEqual(snapshotFiles(dir), [`idem-0/${snapshotName(1)}`, `idem-0/${snapshotName(2)}`]);
  const third = LogManager.open(options(dir, clock));
  deferCleanup(t, () => third.shutdown());
  const check = third.getLog(tp)!.checkProducerBatch(buildBatch({ count: 1, ...producer, baseSequence: 1 }));
  assert.equal(check.kind, 'duplicate');
});

test('an open transaction survives a restart: the last stable offset stays at its first offset', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const tp = { topic: 'txn', partition: 0 };
  const producer = { producerId: 11, producerEpoch: 0, transactional: true };
  const first = LogManager.open(options(dir, clock));
  const log = first.getOrCreateLog(tp);
  append(log, {}); // a plain batch at 0
  const txnStart = append(log, { ...producer, baseSequence: 0 });
  append(log, { ...producer, baseSequence: 1 });
  log.setHighWatermark(toOffset(log.logEndOffset));
  assert.equal(log.lastStableOffset, txnStart);
  first.shutdown();
  assert.deepEqual(snapshotFiles(dir), [`txn-0/${snapshotName(3)}`]);

  const second = LogManager.open(options(dir, clock));
  deferCleanup(t, () => second.shutdown());
  const reloaded = second.getLog(tp)!;
  reloaded.setHighWatermark(toOffset(reloaded.logEndOffset));
  assert.equal(reloaded.lastStableOffset, txnStart, 'the open transaction still holds the LSO');
  const commit = append(reloaded, { ...producer, control: { type: 1, coordinatorEpoch: 0 } });
  reloaded.setHighWatermark(toOffset(reloaded.logEndOffset));
  assert.equal(reloaded.lastStableOffset, commit + 1, 'its COMMIT marker ends it');
});

test('a log truncated below its last snapshot writes one at its new end at shutdown', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const tp = { topic: 'cut', partition: 0 };
  const producer = { producerId: 5, producerEpoch: 0 };
  const first = LogManager.open(options(dir, clock));
  for (let seq = 0; seq < 4; seq++) append(first.getOrCreateLog(tp), { ...producer, baseSequence: seq });
  first.shutdown();
  const second = LogManager.open(options(dir, clock));
  const log = second.getLog(tp)!;
  log.truncateTo(toOffset(2));
  second.shutdown();
  assert.deepEqual(snapshotFiles(dir), [`cut-0/${snapshotName(2)}`], 'the one above the end is gone');
  const third = LogManager.open(options(dir, clock));
  deferCleanup(t, () => third.shutdown());
  const reloaded = third.getLog(tp)!;
  assert.equal(
    reloaded.checkProducerBatch(buildBatch({ count: 1, ...producer, baseSequence: 1 })).kind,
    'duplicate',
  );
  assert.deepEqual(reloaded.checkProducerBatch(buildBatch({ count: 1, ...producer, baseSequence: 2 })), {
    kind: 'ok',
  });
});
