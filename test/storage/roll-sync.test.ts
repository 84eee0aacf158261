// A roll must not fsync on the event loop (on ext4 one small fsync waits for every dirty byte of the disk), yet
// stay as crash-safe as before: the producer snapshot and the rolled segment's indexes become durable in the
// background flush, before the recovery point moves; a snapshot torn by a crash before that is detected and
// recovery falls back to an older one.

import assert from 'node:assert/strict';
import fs, {
  existsSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { toOffset } from '../../src/common/ids.js';
import type { SnapshotEntry } from '../../src/storage/producer-snapshot.js';
import { buildBatch } from './batch-builder.js';
import { openHarness } from './log-harness.js';

const CONFIG = { segmentBytes: 1000, indexIntervalBytes: 100 };

function snapshotName(offset: number): string {
  return `${String(offset).padStart(20, '0')}.snapshot`;
}

interface FsyncSpy {
  /** fsyncSync and fdatasyncSync calls (event-loop fsyncs) since the spy started. */
  syncCalls: number;
  /** What each thread-pool fsync targeted (the descriptor's path) and the recovery point when it started. */
  background: { path: string; recoveryPoint: number }[];
  /** Background fsyncs of paths matching `hold` wait here until released. */
  held: (() => void)[];
}

/**
 * Replaces node:fs's fsync functions for the test's duration. The storage modules import them by name, so
 * syncBuiltinESMExports carries the replacements to those bindings (and the originals back afterwards).
 */
function spyOnFsync(t: TestContext, recoveryPoint: () => number, hold?: RegExp): FsyncSpy {
  const spy: FsyncSpy = { syncCalls: 0, background: [], held: [] };
  const original = { fsyncSync: fs.fsyncSync, fdatasyncSync: fs.fdatasyncSync, fsync: fs.fsync };
  fs.fsyncSync = (fd) => {
    spy.syncCalls++;
    original.fsyncSync(fd);
  };
  fs.fdatasyncSync = (fd) => {
    spy.syncCalls++;
    original.fdatasyncSync(fd);
  };
  fs.fsync = ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
    const path = readlinkSync(`/proc/self/fd/${fd}`);
    spy.background.push({ path, recoveryPoint: recoveryPoint() });
    if (hold?.test(path) === true) spy.held.push(() => original.fsync(fd, done));
    else original.fsync(fd, done);
  }) as typeof fs.fsync;
  syncBuiltinESMExports();
  t.after(() => {
    Object.assign(fs, original);
    syncBuiltinESMExports();
  });
  return spy;
}

async function until(what: string, done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns > 10_000) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Producer state as a comparable value, ordered by producer id. */
function producerState(entries: readonly SnapshotEntry[]): SnapshotEntry[] {
  return [...entries].sort((a, b) => a.producerId - b.producerId);
}

test('a roll fsyncs nothing on the event loop; the snapshot and indexes are fsynced before the recovery point moves', async (t) => {
  const h = openHarness(t, CONFIG);
  for (let i = 0; i < 4; i++) h.append({ producerId: 7, producerEpoch: 0, baseSequence: i, count: 1 });
  const spy = spyOnFsync(t, () => h.log.recoveryPoint, /\.snapshot$/);
  const recoveryPointBefore = h.log.recoveryPoint;
  const rolledBase = h.log.activeSegment.baseOffset;

  const segment = h.log.roll();
  assert.equal(spy.syncCalls, 0, 'fsyncs on the event loop during roll');
  assert.equal(h.log.segmentCount, 2);
  assert.ok(existsSync(join(h.dir, snapshotName(segment.baseOffset))), 'snapshot written at once');

  // The snapshot's fsync is held: the flush must not move the recovery point without it.
  await until('the snapshot fsync', () => spy.held.length > 0);
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.equal(h.log.recoveryPoint, recoveryPointBefore, 'recovery point moved before the snapshot fsync');
  for (const release of spy.held.splice(0)) release();
  await until('the recovery point', () => h.log.recoveryPoint === segment.baseOffset);
  assert.equal(spy.syncCalls, 0, 'fsyncs on the event loop during the background flush');

  const dir = realpathSync(h.dir);
  const synced = spy.background.map((b) => (b.path === dir ? '' : b.path.slice(dir.length + 1)));
  const stem = String(rolledBase).padStart(20, '0');
  for (const name of [
    `${stem}.log`,
    `${stem}.index`,
    `${stem}.timeindex`,
    snapshotName(segment.baseOffset),
    '',
  ]) {
    assert.ok(synced.includes(name), `${name || 'the directory'} fsynced in the background: ${synced}`);
  }
  for (const b of spy.background)
    assert.equal(b.recoveryPoint, recoveryPointBefore, `${b.path} after the move`);

  // Reopened after a crash at this point, the snapshot is the one recovery uses.
  const expected = producerState(h.log.producerState.toSnapshot());
  h.reopen(false);
  assert.deepEqual(producerState(h.log.producerState.toSnapshot()), expected);
});

test('rolls inside appends fsync nothing on the event loop, and close still makes every snapshot durable', async (t) => {
  const h = openHarness(t, CONFIG);
  const spy = spyOnFsync(t, () => h.log.recoveryPoint);
  for (let i = 0; i < 40; i++)
    h.append({ producerId: 3, producerEpoch: 0, baseSequence: i, values: [Buffer.alloc(100, i)] });
  assert.ok(h.log.segmentCount > 5, `rolled into ${h.log.segmentCount} segments`);
  assert.equal(spy.syncCalls, 0, 'fsyncs on the event loop during appends that roll');
  await until('the background flushes', () => h.log.recoveryPoint === h.log.activeSegment.baseOffset);
  h.log.close();
  assert.ok(spy.syncCalls > 0, 'close fsyncs synchronously');
});

test('a snapshot deleted before its background fsync runs does not fail the flush', async (t) => {
  const h = openHarness(t, CONFIG);
  const errors: Error[] = [];
  h.reopen(true, { onBackgroundError: (err) => errors.push(err) });
  for (let i = 0; i < 4; i++) h.append({ producerId: 5, producerEpoch: 0, baseSequence: i, count: 1 });
  const base = h.log.roll().baseOffset;
  h.append({ producerId: 5, producerEpoch: 0, baseSequence: 4, count: 1 });
  // Truncation below the roll removes its snapshot in the same turn, before the flush's fsync opens it.
  h.log.truncateTo(toOffset(base - 1));
  assert.ok(!existsSync(join(h.dir, snapshotName(base))));
  await h.log.flush();
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.deepEqual(errors, []);
  assert.equal(h.log.recoveryPoint, h.log.logEndOffset);
});

for (const damage of ['an empty', 'a torn'] as const) {
  test(`${damage} snapshot at the roll offset after a crash: recovery falls back to an older one and replays`, async (t) => {
    const h = openHarness(t, CONFIG);
    let sequence = 0;
    let other = 0;
    const appendBoth = (): void => {
      h.append({ producerId: 11, producerEpoch: 2, baseSequence: sequence, count: 2 });
      sequence += 2;
      // A second producer appears only every third batch, so snapshots differ in content, not only offsets.
      if (sequence % 3 === 0) {
        h.append({ producerId: 12, producerEpoch: 0, baseSequence: other, count: 1 });
        other++;
      }
    };
    while (h.log.segmentCount < 4) appendBoth();
    await until('the background flushes', () => h.log.recoveryPoint === h.log.activeSegment.baseOffset);
    const rollOffset = h.log.activeSegment.baseOffset;
    for (let i = 0; i < 3; i++) appendBoth();
    assert.equal(h.log.activeSegment.baseOffset, rollOffset, 'still in the last segment');
    const expected = producerState(h.log.producerState.toSnapshot());

    // The crash left the newest snapshot damaged. Recovery is told the recovery point is the roll offset, so
    // it would load exactly that snapshot if it were whole.
    const path = join(h.dir, snapshotName(rollOffset));
    if (damage === 'an empty') truncateSync(path, 0);
    else writeFileSync(path, readFileSync(path).subarray(0, 30));
    h.reopen(false, { recoveryPoint: rollOffset });
    assert.deepEqual(producerState(h.log.producerState.toSnapshot()), expected);
    // The state is usable, not only equal: a retry of the last batch is a duplicate, the next one is accepted.
    const last = buildBatch({ producerId: 11, producerEpoch: 2, baseSequence: sequence - 2, count: 2 });
    assert.equal(h.log.checkProducerBatch(last).kind, 'duplicate');
    const next = buildBatch({ producerId: 11, producerEpoch: 2, baseSequence: sequence, count: 1 });
    assert.deepEqual(h.log.checkProducerBatch(next), { kind: 'ok' });
  });
}

test('a segment deleted while its .log fsync runs keeps its descriptor until the fsync is done', async (t) => {
  const h = openHarness(t, CONFIG);
  const errors: Error[] = [];
  h.reopen(true, { onBackgroundError: (err) => errors.push(err) });
  for (let i = 0; i < 4; i++) h.append({ producerId: 9, producerEpoch: 0, baseSequence: i, count: 1 });
  const spy = spyOnFsync(t, () => h.log.recoveryPoint, /\.log$/);
  const rolled = h.log.activeSegment;
  const fd = rolled.logFd;
  h.log.roll();
  await until('the rolled segment fsync', () => spy.held.length > 0);

  // Truncation deletes the rolled segment while its fsync waits in the thread pool: closing the descriptor now
  // would let another file take its number and be synced in its place.
  h.log.truncateTo(toOffset(rolled.baseOffset));
  assert.ok(rolled.isDeleted);
  // The kernel names an unlinked file "<path> (deleted)"; a descriptor closed and reused would name a live file.
  const stem = String(rolled.baseOffset).padStart(20, '0');
  assert.match(
    readlinkSync(`/proc/self/fd/${fd}`),
    new RegExp(`${stem}\\.log.* \\(deleted\\)$`),
    'the descriptor is still the deleted segment',
  );
  for (const release of spy.held.splice(0)) release();
  await until('the descriptor to close', () => rolled.logFd < 0);
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.deepEqual(errors, []);
});
