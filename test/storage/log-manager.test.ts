// Log manager: loading a directory, the clean-shutdown marker, checkpoints, partition deletion and the
// periodic tasks (retention, delayed deletes).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { toOffset } from '../../src/common/ids.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { StorageFormatError } from '../../src/storage/atomic-file.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { appendQueuedAwaitable, type Log } from '../../src/storage/log.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogManager, type LogManagerOptions } from '../../src/storage/log-manager.js';
import { buildBatch } from './batch-builder.js';
import { deferCleanup, tempDir } from './tmp-dir.js';

function appendN(log: Log, n: number, clock: ManualClock): void {
  for (let i = 0; i < n; i++) {
    const b = buildBatch({ values: [Buffer.alloc(100, i)], baseTimestamp: clock.nowMs() });
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    log.append(b);
  }
}

function options(dir: string, clock: ManualClock, extra: Partial<LogManagerOptions> = {}): LogManagerOptions {
  return {
    dir,
    clock,
    configFor: () => logConfig({ segmentBytes: 1000, retentionMs: 60_000, fileDeleteDelayMs: 5_000 }),
    managerConfig: { retentionCheckIntervalMs: 10_000 },
    ...extra,
  };
}

test('a clean shutdown writes checkpoints and the marker; the next start loads every log without recovery', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = LogManager.open(options(dir, clock, { meta: { version: 0, brokerId: 1, clusterId: 'c1' } }));
  assert.equal(first.hadCleanShutdown, false);
  const a = first.getOrCreateLog({ topic: 'orders', partition: 0 }, 'ASNFZ4mrze8BI0VniavN7w');
  const b = first.getOrCreateLog({ topic: 'my-topic', partition: 3 });
  appendN(a, 30, clock);
  appendN(b, 5, clock);
  a.setHighWatermark(toOffset(25));
  first.shutdown();
  assert.ok(existsSync(join(dir, '.kafka_cleanshutdown')));
  assert.match(readFileSync(join(dir, 'replication-offset-checkpoint'), 'utf8'), /^0\n2\n/);
  assert.match(readFileSync(join(dir, 'replication-offset-checkpoint'), 'utf8'), /orders 0 25\n/);
  assert.match(
    readFileSync(join(dir, 'recovery-point-offset-checkpoint'), 'utf8'),
    /orders 0 30\n/,
    'a clean shutdown flushes, so the recovery point is the log end',
  );
  assert.match(
    readFileSync(join(dir, 'orders-0', 'partition.metadata'), 'utf8'),
    /topic_id: ASNFZ4mrze8BI0VniavN7w/,
  );

  const second = LogManager.open(options(dir, clock, { meta: { version: 0, brokerId: 1, clusterId: 'c1' } }));
  deferCleanup(t, () => second.shutdown());
  assert.equal(second.hadCleanShutdown, true);
  assert.ok(!existsSync(join(dir, '.kafka_cleanshutdown')), 'the marker is removed while running');
  const a2 = second.getLog({ topic: 'orders', partition: 0 })!;
  assert.equal(a2.logEndOffset, 30);
  assert.equal(a2.highWatermark, 25);
  assert.equal(a2.recoveredBytesCut, 0);
  assert.equal(second.getLog({ topic: 'my-topic', partition: 3 })!.logEndOffset, 5);
  assert.throws(
    () => second.getOrCreateLog({ topic: 'orders', partition: 0 }, 'AAAAAAAAAAAAAAAAAAAAAA'),
    StorageFormatError,
    'a directory of another topic id is refused',
  );
});

test('meta.properties of another broker is refused', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  LogManager.open(options(dir, clock, { meta: { version: 0, brokerId: 1, clusterId: 'c1' } })).shutdown();
  assert.throws(
    () => LogManager.open(options(dir, clock, { meta: { version: 0, brokerId: 2, clusterId: 'c1' } })),
    StorageFormatError,
  );
});

test('after a crash the logs are recovered, cutting a torn tail', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = LogManager.open(options(dir, clock));
  const log = first.getOrCreateLog({ topic: 'orders', partition: 0 });
  appendN(log, 3, clock);
  first.writeCheckpoints();
  log.abandon(); // the process dies: no marker, no snapshot
  const active = join(dir, 'orders-0', '00000000000000000000.log');
  writeFileSync(active, Buffer.concat([readFileSync(active), Buffer.from([0, 0, 0, 0, 0, 0, 0, 3, 0, 0])]));
  const second = LogManager.open(options(dir, clock));
  deferCleanup(t, () => second.shutdown());
  assert.equal(second.hadCleanShutdown, false);
  const recovered = second.getLog({ topic: 'orders', partition: 0 })!;
  assert.equal(recovered.logEndOffset, 3);
  assert.equal(recovered.recoveredBytesCut, 10);
});

test('a damaged checkpoint file stops the manager, which leaves the file as found (Kafka: directory offline)', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = LogManager.open(options(dir, clock));
  appendN(first.getOrCreateLog({ topic: 'x', partition: 0 }), 4, clock);
  first.shutdown();
  writeFileSync(join(dir, 'recovery-point-offset-checkpoint'), 'garbage');
  const second = LogManager.open(options(dir, clock));
  deferCleanup(t, () => second.shutdown());
  assert.match(
    String(second.loadFailure?.message),
    /recovery-point-offset-checkpoint: missing version or count/,
  );
  second.shutdown();
  assert.equal(readFileSync(join(dir, 'recovery-point-offset-checkpoint'), 'utf8'), 'garbage');
});

test('deleting a partition renames its directory at once and removes it after file.delete.delay.ms', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = LogManager.open(options(dir, clock));
  deferCleanup(t, () => manager.shutdown());
  appendN(manager.getOrCreateLog({ topic: 'gone', partition: 1 }), 3, clock);
  assert.ok(manager.deleteLog({ topic: 'gone', partition: 1 }));
  assert.equal(manager.getLog({ topic: 'gone', partition: 1 }), undefined);
  const renamed = readdirSync(dir).filter((n) => n.endsWith('-delete'));
  assert.equal(renamed.length, 1);
  assert.match(renamed[0]!, /^gone-1\.[0-9a-f]{32}-delete$/);
  clock.advance(4_000);
  manager.runPeriodicTasks();
  assert.ok(existsSync(join(dir, renamed[0]!)));
  clock.advance(1_000);
  manager.runPeriodicTasks();
  assert.ok(!existsSync(join(dir, renamed[0]!)));
  assert.doesNotMatch(readFileSync(join(dir, 'recovery-point-offset-checkpoint'), 'utf8'), /gone/);
});

test('the scheduler applies retention every log.retention.check.interval.ms', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = LogManager.open(options(dir, clock));
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog({ topic: 'r', partition: 0 });
  appendN(log, 40, clock);
  log.setHighWatermark(log.logEndOffset);
  clock.advance(61_000);
  appendN(log, 1, clock);
  log.setHighWatermark(log.logEndOffset);
  const segmentsBefore = log.segmentCount;
  assert.ok(segmentsBefore > 2);
  manager.runPeriodicTasks();
  assert.equal(log.segmentCount, 1, 'retention ran once its interval passed');
  assert.equal(log.logStartOffset, log.activeSegment.baseOffset);
  assert.equal(log.read(toOffset(0), 100).errorCode, StorageErrorCode.OffsetOutOfRange);
});

test('a topic config change reaches its open logs', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = LogManager.open(options(dir, clock));
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog({ topic: 'c', partition: 0 });
  const other = manager.getOrCreateLog({ topic: 'd', partition: 0 });
  manager.updateConfig('c', logConfig({ segmentBytes: 200 }));
  appendN(log, 5, clock);
  appendN(other, 5, clock);
  assert.ok(log.segmentCount >= 3, 'the new segment.bytes rolls c');
  assert.equal(other.segmentCount, 1, 'd keeps its config');
});

test('flush.ms flushes idle data from the scheduler and idle producers expire', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = LogManager.open({
    dir,
    clock,
    configFor: () => logConfig({ flushMs: 5_000 }),
    managerConfig: {
      flushSchedulerIntervalMs: 1_000,
      producerIdExpirationMs: 60_000,
      producerIdExpirationCheckIntervalMs: 10_000,
    },
  });
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog({ topic: 'f', partition: 0 });
  const b = buildBatch({ producerId: 9, producerEpoch: 0, baseSequence: 0, baseTimestamp: clock.nowMs() });
  log.append(b);
  clock.advance(1_000);
  manager.runPeriodicTasks();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(log.recoveryPoint, 0, 'not yet due');
  clock.advance(5_000);
  manager.runPeriodicTasks();
  await log.flush(); // waits behind the scheduler's flush
  assert.equal(log.recoveryPoint, 1);
  assert.equal(log.producerState.producerCount, 1);
  clock.advance(60_000);
  manager.runPeriodicTasks();
  assert.equal(log.producerState.producerCount, 0, 'expired after producer.id.expiration.ms');
});

test('leftovers of interrupted operations are removed when a log loads', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = LogManager.open(options(dir, clock));
  appendN(first.getOrCreateLog({ topic: 'l', partition: 0 }), 3, clock);
  first.shutdown();
  const pdir = join(dir, 'l-0');
  for (const name of [
    '00000000000000000000.log.deleted',
    '00000000000000000000.index.cleaned',
    // An index .swap without its .log.swap: the swap never started (a .log.swap is completed, see cleaner tests).
    '00000000000000000000.index.swap',
    'leader-epoch-checkpoint.tmp',
    '00000000000000000099.index',
  ]) {
    writeFileSync(join(pdir, name), 'x');
  }
  mkdirSync(join(dir, 'old-0.0123456789abcdef0123456789abcdef-delete'));
  const second = LogManager.open(options(dir, clock));
  deferCleanup(t, () => second.shutdown());
  assert.deepEqual(
    readdirSync(pdir).filter((n) => /deleted|cleaned|swap|tmp|99/.test(n)),
    [],
    'half-done files are gone',
  );
  assert.ok(!existsSync(join(dir, 'old-0.0123456789abcdef0123456789abcdef-delete')));
  assert.equal(second.getLog({ topic: 'l', partition: 0 })!.logEndOffset, 3);
});

test('the scheduler writes the offset checkpoints off the event loop, the newest content last', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = LogManager.open(options(dir, clock));
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog({ topic: 'cp', partition: 0 });
  appendN(log, 4, clock);
  log.setHighWatermark(toOffset(3));
  clock.advance(61_000);
  manager.runPeriodicTasks();
  const path = join(dir, 'replication-offset-checkpoint');
  assert.doesNotMatch(readFileSync(path, 'utf8'), /cp 0 3/, 'not written on the event loop');
  log.setHighWatermark(toOffset(4));
  manager.writeCheckpoints(true);
  await manager.whenCheckpointsWritten();
  assert.match(readFileSync(path, 'utf8'), /cp 0 4\n/);
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.endsWith('.tmp')),
    [],
  );
});

test('the logs a manager opens or creates write inline only when appendInlineEnable says so (off by default)', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const appendIdle = (log: Log) => {
    const b = buildBatch({ values: [Buffer.from('x')], baseTimestamp: clock.nowMs() });
    batchHeader.setBaseOffset(b, 0, log.logEndOffset);
    return appendQueuedAwaitable(log, b);
  };
  const queued = LogManager.open(options(dir, clock));
  const created = queued.getOrCreateLog({ topic: 'q', partition: 0 });
  const info = appendIdle(created);
  assert.notEqual(info.acknowledged, null, 'the default sends an idle append through the thread pool');
  assert.equal(created.writtenEndOffset, 0, 'not readable before its write completes');
  await info.acknowledged;
  assert.equal(created.writtenEndOffset, 1);
  queued.shutdown();

  const inline = LogManager.open(
    options(dir, clock, { managerConfig: { retentionCheckIntervalMs: 10_000, appendInlineEnable: true } }),
  );
  const loaded = inline.getLog({ topic: 'q', partition: 0 })!;
  assert.equal(appendIdle(loaded).acknowledged, null, 'a log loaded at start-up writes inline when told to');
  assert.equal(loaded.writtenEndOffset, 2, 'readable on return');
  assert.equal(appendIdle(inline.getOrCreateLog({ topic: 'r', partition: 0 })).acknowledged, null);
  inline.shutdown();
});

test("a new partition's partition.metadata is durable once whenCreatedDurable resolves, written off the event loop", async (t) => {
  const dir = tempDir(t);
  const manager = LogManager.open(options(dir, new ManualClock()));
  deferCleanup(t, () => manager.shutdown());
  for (let p = 0; p < 40; p++)
    manager.getOrCreateLog({ topic: 'many', partition: p }, 'ASNFZ4mrze8BI0VniavN7w');
  assert.ok(
    !existsSync(join(dir, 'many-0', 'partition.metadata')),
    'nothing is written in the turn that creates the logs (the writes run in the background, many at once)',
  );
  await manager.whenCreatedDurable();
  for (let p = 0; p < 40; p++) {
    assert.match(
      readFileSync(join(dir, `many-${p}`, 'partition.metadata'), 'utf8'),
      /^version: 0\ntopic_id: ASNFZ4mrze8BI0VniavN7w\n$/,
    );
  }
  assert.deepEqual(
    readdirSync(join(dir, 'many-0')).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file is left',
  );
});

test('a partition created again while its partition.metadata is on its way compares the topic id it is writing', (t) => {
  const dir = tempDir(t);
  const manager = LogManager.open(options(dir, new ManualClock()));
  deferCleanup(t, () => manager.shutdown());
  const tp = { topic: 'orders', partition: 0 };
  const log = manager.getOrCreateLog(tp, 'ASNFZ4mrze8BI0VniavN7w');
  assert.equal(manager.getOrCreateLog(tp, 'ASNFZ4mrze8BI0VniavN7w'), log);
  assert.throws(
    () => manager.getOrCreateLog(tp, 'AAAAAAAAAAAAAAAAAAAAAA'),
    StorageFormatError,
    'another topic id is refused before the file is even on disk',
  );
});

test('a shutdown writes a partition.metadata still on its way; a deleted log drops its write without an error', async (t) => {
  const dir = tempDir(t);
  const errors: Error[] = [];
  const manager = LogManager.open(
    options(dir, new ManualClock(), { onBackgroundError: (e) => errors.push(e) }),
  );
  manager.getOrCreateLog({ topic: 'kept', partition: 0 }, 'ASNFZ4mrze8BI0VniavN7w');
  manager.getOrCreateLog({ topic: 'gone', partition: 0 }, 'ASNFZ4mrze8BI0VniavN7w');
  assert.ok(manager.deleteLog({ topic: 'gone', partition: 0 }));
  manager.shutdown();
  assert.match(
    readFileSync(join(dir, 'kept-0', 'partition.metadata'), 'utf8'),
    /topic_id: ASNFZ4mrze8BI0VniavN7w/,
  );
  assert.ok(!existsSync(join(dir, 'gone-0')), 'the deleted log directory is gone');
  // Let any background step of the dropped writes run: none may report an error or recreate a file.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await manager.whenCreatedDurable();
  assert.deepEqual(errors, []);
  assert.ok(!existsSync(join(dir, 'gone-0')));
  const again = LogManager.open(options(dir, new ManualClock()));
  deferCleanup(t, () => again.shutdown());
  assert.equal(again.hadCleanShutdown, true);
  assert.ok(again.getLog({ topic: 'kept', partition: 0 }) !== undefined);
});

test('a truncation below the recovery point on disk rewrites the checkpoint at once, for crash recovery', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const first = LogManager.open(options(dir, clock));
  const log = first.getOrCreateLog({ topic: 'orders', partition: 0 });
  appendN(log, 30, clock);
  await log.flush();
  first.writeCheckpoints();
  assert.match(readFileSync(join(dir, 'recovery-point-offset-checkpoint'), 'utf8'), /orders 0 30\n/);
  // A follower truncates to the new leader's epoch end and fetches other records over the same offsets. Kafka's
  // LogManager.truncateTo writes the recovery-point checkpoint right away: the one on disk (30) no longer vouches
  // for these offsets, whose new bytes are not flushed.
  log.truncateTo(toOffset(8));
  appendN(log, 22, clock);
  const segments = log.segmentBaseOffsets();
  assert.ok(segments.length >= 3, `several segments: ${segments}`);
  log.abandon(); // the process dies before the periodic checkpoint
  first.abandon();
  // Bytes of a batch below the old recovery point, in a segment that is not the active one, are damaged (a
  // write of a page that never reached the disk): recovery must check them.
  const damaged = segments[segments.length - 2]!;
  const file = join(dir, 'orders-0', `${String(damaged).padStart(20, '0')}.log`);
  const bytes = readFileSync(file);
  bytes.writeUInt8(bytes.readUInt8(bytes.length - 5) ^ 0xff, bytes.length - 5);
  writeFileSync(file, bytes);
  const second = LogManager.open(options(dir, clock));
  deferCleanup(t, () => second.shutdown());
  const recovered = second.getLog({ topic: 'orders', partition: 0 })!;
  assert.ok(recovered.recoveredBytesCut > 0, 'fails before: the damaged batch is served, never checked');
  assert.ok(recovered.logEndOffset < segments[segments.length - 1]!, `log end ${recovered.logEndOffset}`);
});

test('high watermarks are checkpointed every replica.high.watermark.checkpoint.interval.ms', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const manager = LogManager.open(
    options(dir, clock, {
      managerConfig: { retentionCheckIntervalMs: 10_000, highWatermarkCheckpointIntervalMs: 5_000 },
    }),
  );
  deferCleanup(t, () => manager.shutdown());
  const log = manager.getOrCreateLog({ topic: 'orders', partition: 0 });
  appendN(log, 30, clock);
  await log.flush();
  log.setHighWatermark(toOffset(25));
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  clock.advance(4_000);
  manager.runPeriodicTasks();
  await manager.whenCheckpointsWritten();
  assert.doesNotMatch(read('replication-offset-checkpoint'), /orders 0/, 'not due yet');
  clock.advance(1_000);
  manager.runPeriodicTasks();
  await manager.whenCheckpointsWritten();
  assert.match(
    read('replication-offset-checkpoint'),
    /orders 0 25\n/,
    'due after 5 s, as Kafka (default 5000)',
  );
  assert.doesNotMatch(
    read('recovery-point-offset-checkpoint'),
    /orders 0/,
    'the recovery points keep log.flush.offset.checkpoint.interval.ms (60 s)',
  );
  clock.advance(55_000);
  manager.runPeriodicTasks();
  await manager.whenCheckpointsWritten();
  assert.match(read('recovery-point-offset-checkpoint'), /orders 0 30\n/);
});
