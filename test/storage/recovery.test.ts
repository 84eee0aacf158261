// Recovery from damaged files, hundreds of seeded cases per run: a pristine log is built once, copied, damaged
// (a .log cut short, bytes of a .log overwritten, indexes replaced by garbage), and reopened after a "crash".
// After recovery every batch before the damage must read back identical, nothing after it may be served, and
// appends must continue at the new log end.

import assert from 'node:assert/strict';
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { Log } from '../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../src/storage/log-config.js';
import { buildBatch, seededRandom, splitBatches } from './batch-builder.js';
import { testRoot } from './tmp-dir.js';

const CONFIG: LogConfig = logConfig({ segmentBytes: 2048, indexIntervalBytes: 128 });
const TP = { topic: 't', partition: 0 };

interface StoredBatch {
  bytes: Buffer;
  file: string;
  start: number;
  end: number;
  baseOffset: number;
  lastOffset: number;
}

interface Pristine {
  dir: string;
  batches: StoredBatch[];
}

function buildPristine(seed: number): Pristine {
  const random = seededRandom(seed);
  const dir = mkdtempSync(join(testRoot(), 'brook-recovery-'));
  const clock = new ManualClock();
  const log = Log.open({ dir, topicPartition: TP, config: CONFIG, clock, hadCleanShutdown: true });
  let epoch = 0;
  for (let i = 0; i < 60; i++) {
    if (random() < 0.05) epoch++;
    const count = 1 + Math.floor(random() * 4);
    const values = Array.from({ length: count }, () => Buffer.alloc(Math.floor(random() * 120), i));
    const idempotent = random() < 0.5;
    const batch = buildBatch({
      values,
      baseTimestamp: clock.nowMs(),
      producerId: idempotent ? 7 : -1,
      producerEpoch: idempotent ? 0 : -1,
      baseSequence: idempotent ? log.logEndOffset : -1,
    });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(batch, 0, epoch);
    log.append(batch);
    clock.advance(Math.floor(random() * 1000));
  }
  log.close();
  const batches: StoredBatch[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .sort()) {
    let position = 0;
    for (const bytes of splitBatches(readFileSync(join(dir, name)))) {
      batches.push({
        bytes,
        file: name,
        start: position,
        end: position + bytes.length,
        baseOffset: batchHeader.baseOffset(bytes),
        lastOffset: batchHeader.lastOffset(bytes),
      });
      position += bytes.length;
    }
  }
  return { dir, batches };
}

function readEverything(log: Log): Buffer[] {
  const out: Buffer[] = [];
  let offset: number = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const r = log.read(toOffset(offset), 4096);
    assert.equal(r.errorCode, StorageErrorCode.None);
    if (r.errorCode !== StorageErrorCode.None || r.records.length === 0) break;
    out.push(...splitBatches(r.records));
    offset = r.nextOffset;
  }
  return out;
}

/** Reopens a damaged copy as after a crash, and checks the recovered log against the batches that must survive. */
function checkRecovery(dir: string, survivors: StoredBatch[], what: string, recoveryPoint: number): void {
  const clock = new ManualClock();
  const log = Log.open({
    dir,
    topicPartition: TP,
    config: CONFIG,
    clock,
    hadCleanShutdown: false,
    recoveryPoint,
  });
  try {
    const expectedEnd = survivors.length === 0 ? 0 : survivors[survivors.length - 1]!.lastOffset + 1;
    assert.equal(log.logEndOffset, expectedEnd, `${what}: log end offset`);
    const read = readEverything(log);
    assert.equal(read.length, survivors.length, `${what}: batch count`);
    for (let i = 0; i < survivors.length; i++)
      assert.deepEqual(read[i], survivors[i]!.bytes, `${what}: batch ${i}`);
    // Nothing past the damage is served.
    const past = log.read(toOffset(expectedEnd + 1), 4096);
    assert.equal(past.errorCode, StorageErrorCode.OffsetOutOfRange, `${what}: read past the end`);
    // Appends continue where the surviving log ends, and read back.
    const next = buildBatch({ values: [Buffer.from('after recovery')] });
    batchHeader.setBaseOffset(next, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(next, 0, 99);
    log.append(next);
    const r = log.read(toOffset(expectedEnd), 4096);
    assert.ok(r.errorCode === StorageErrorCode.None, what);
    assert.deepEqual(r.records, next, `${what}: append after recovery`);
  } finally {
    log.close();
  }
}

/** Batches fully before byte `cut` of `file`, plus every batch of earlier files. */
function survivorsBefore(batches: StoredBatch[], file: string, cut: number): StoredBatch[] {
  const out: StoredBatch[] = [];
  for (const b of batches) {
    if (b.file < file || (b.file === file && b.end <= cut)) out.push(b);
    else break;
  }
  return out;
}

/**
 * Header bytes the v2 format leaves outside its CRC and that no check can catch when they grow: the base offset
 * (offsets need only increase, since compaction leaves gaps) and the partition leader epoch.
 */
function isUncheckedHeaderByte(batches: StoredBatch[], file: string, position: number): boolean {
  return batches.some(
    (b) =>
      b.file === file &&
      ((position >= b.start && position < b.start + 8) ||
        (position >= b.start + 12 && position < b.start + 16)),
  );
}

const SEEDS = 4;
const CASES_PER_SEED = 40;

test('recovery after a .log cut short at random points keeps every whole batch before the cut', () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const pristine = buildPristine(seed);
    const random = seededRandom(seed * 7919);
    try {
      for (let c = 0; c < CASES_PER_SEED; c++) {
        const dir = mkdtempSync(join(testRoot(), 'brook-recovery-case-'));
        try {
          cpSync(pristine.dir, dir, { recursive: true });
          const victim = pristine.batches[Math.floor(random() * pristine.batches.length)]!;
          const cut = victim.start + Math.floor(random() * (victim.end - victim.start + 1));
          truncateSync(join(dir, victim.file), cut);
          const before = survivorsBefore(pristine.batches, victim.file, cut);
          // A cut on a batch boundary leaves only whole batches: nothing shows that the segment lost its tail,
          // and (as in Kafka) the later segments stay, after a gap. A cut inside a batch is damage: they go.
          const onBoundary = cut === victim.start || cut === victim.end;
          const survivors = onBoundary
            ? [...before, ...pristine.batches.filter((b) => b.file > victim.file)]
            : before;
          // The recovery point is below the damage: a segment is never cut short once flushed.
          const recoveryPoint =
            before.length === 0 ? 0 : before[Math.floor(random() * before.length)]!.baseOffset;
          checkRecovery(
            dir,
            survivors,
            `seed ${seed} case ${c}: ${victim.file} cut at ${cut}`,
            recoveryPoint,
          );
        } finally {
          rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        }
      }
    } finally {
      rmSync(pristine.dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }
});

test('recovery after bytes of a .log are overwritten keeps every batch before the damage', () => {
  for (let seed = 11; seed < 11 + SEEDS; seed++) {
    const pristine = buildPristine(seed);
    const random = seededRandom(seed * 104729);
    try {
      for (let c = 0; c < CASES_PER_SEED; c++) {
        const dir = mkdtempSync(join(testRoot(), 'brook-recovery-case-'));
        try {
          cpSync(pristine.dir, dir, { recursive: true });
          const victim = pristine.batches[Math.floor(random() * pristine.batches.length)]!;
          let position = victim.start + Math.floor(random() * (victim.end - victim.start));
          while (isUncheckedHeaderByte(pristine.batches, victim.file, position)) position++;
          const path = join(dir, victim.file);
          const bytes = readFileSync(path);
          const length = 1 + Math.floor(random() * 16);
          for (let i = position; i < Math.min(bytes.length, position + length); i++) {
            bytes[i] = bytes[i]! ^ (1 + Math.floor(random() * 255));
          }
          writeFileSync(path, bytes);
          const survivors = survivorsBefore(pristine.batches, victim.file, position);
          checkRecovery(dir, survivors, `seed ${seed} case ${c}: ${victim.file} damaged at ${position}`, 0);
        } finally {
          rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        }
      }
    } finally {
      rmSync(pristine.dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }
});

test('garbage, truncated or oversized indexes are rebuilt, after a crash and after a clean shutdown', () => {
  for (let seed = 21; seed < 21 + SEEDS; seed++) {
    const pristine = buildPristine(seed);
    const random = seededRandom(seed * 15485863);
    const indexes = readdirSync(pristine.dir).filter((n) => n.endsWith('.index') || n.endsWith('.timeindex'));
    try {
      for (let c = 0; c < CASES_PER_SEED; c++) {
        const dir = mkdtempSync(join(testRoot(), 'brook-recovery-case-'));
        try {
          cpSync(pristine.dir, dir, { recursive: true });
          const victim = join(dir, indexes[Math.floor(random() * indexes.length)]!);
          const size = statSync(victim).size;
          const kind = Math.floor(random() * 4);
          if (kind === 0) truncateSync(victim, Math.floor(random() * size));
          else if (kind === 1)
            writeFileSync(victim, Buffer.alloc(1 + Math.floor(random() * 200), Math.floor(random() * 256)));
          else {
            const bytes = Buffer.alloc(kind === 2 ? size : 24 * (1 + Math.floor(random() * 8)));
            for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
            writeFileSync(victim, bytes);
          }
          const clean = random() < 0.5;
          const clock = new ManualClock();
          const recoveryPoint = pristine.batches[pristine.batches.length - 1]!.lastOffset + 1;
          const log = Log.open({
            dir,
            topicPartition: TP,
            config: CONFIG,
            clock,
            hadCleanShutdown: clean,
            recoveryPoint,
          });
          try {
            const what = `seed ${seed} case ${c} (${clean ? 'clean' : 'crash'}, kind ${kind})`;
            assert.equal(log.logEndOffset, recoveryPoint, what);
            // Every offset reads back the batch that holds it, whatever the index says.
            for (const b of pristine.batches) {
              const r = log.read(
                toOffset(b.baseOffset + Math.floor(random() * (b.lastOffset - b.baseOffset + 1))),
                1,
              );
              assert.ok(r.errorCode === StorageErrorCode.None, what);
              assert.deepEqual(r.records, b.bytes, `${what}: offset in batch ${b.baseOffset}`);
            }
          } finally {
            log.close();
          }
        } finally {
          rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        }
      }
    } finally {
      rmSync(pristine.dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }
});

test('recovery cuts at a batch whose base offset goes back, and drops the later segments', () => {
  const pristine = buildPristine(31);
  try {
    const files = [...new Set(pristine.batches.map((b) => b.file))];
    assert.ok(files.length >= 3, 'the pristine log spans several segments');
    const file = files[1]!;
    const inFile = pristine.batches.filter((b) => b.file === file);
    assert.ok(inFile.length >= 2);
    const victim = inFile[1]!;
    const dir = mkdtempSync(join(testRoot(), 'brook-recovery-case-'));
    try {
      cpSync(pristine.dir, dir, { recursive: true });
      const path = join(dir, file);
      const bytes = readFileSync(path);
      // The base offset lies outside the CRC: damage that moves it back overlaps the batch before.
      batchHeader.setBaseOffset(bytes, victim.start, inFile[0]!.baseOffset);
      writeFileSync(path, bytes);
      checkRecovery(dir, survivorsBefore(pristine.batches, file, victim.start), 'base offset moved back', 0);
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  } finally {
    rmSync(pristine.dir, { recursive: true, force: true, maxRetries: 5 });
  }
});

test('a segment that lost its tail on a batch boundary keeps the later segments, after a gap (as Kafka)', () => {
  const pristine = buildPristine(37);
  try {
    const files = [...new Set(pristine.batches.map((b) => b.file))];
    assert.ok(files.length >= 3, 'the pristine log spans several segments');
    const file = files[1]!;
    const inFile = pristine.batches.filter((b) => b.file === file);
    assert.ok(inFile.length >= 2);
    const cut = inFile[inFile.length - 1]!.start;
    const dir = mkdtempSync(join(testRoot(), 'brook-recovery-case-'));
    try {
      cpSync(pristine.dir, dir, { recursive: true });
      truncateSync(join(dir, file), cut);
      const survivors = pristine.batches.filter((b) => !(b.file === file && b.start >= cut));
      assert.equal(survivors.length, pristine.batches.length - 1);
      checkRecovery(dir, survivors, 'tail lost on a boundary', 0);
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  } finally {
    rmSync(pristine.dir, { recursive: true, force: true, maxRetries: 5 });
  }
});
