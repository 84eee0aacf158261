// A simulated crash is a kill -9: no file write of the crashed incarnation may land once the broker restarted.
// Real files under a temporary directory; the background checkpoint writes are held at the storage's test gate
// (atomic-file.ts) across the crash and the restart, then let go.

import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalController } from '../../src/broker/cluster/isr-manager.js';
import type { LeaderEndPoint } from '../../src/broker/cluster/leader-end-point.js';
import { ManualClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { backgroundWriteSlots, setBackgroundWriteGateForTests } from '../../src/storage/atomic-file.js';
import { SNAPSHOT_SUFFIX, segmentFilePath } from '../../src/storage/file-names.js';
import { tempDir } from '../storage/tmp-dir.js';
import { SimBroker } from './sim-broker.js';

const CHECKPOINTS = [
  'recovery-point-offset-checkpoint',
  'log-start-offset-checkpoint',
  'replication-offset-checkpoint',
];

const noLeader = (): LeaderEndPoint => {
  throw new Error('no fetches in this test');
};
const noController = { isActive: () => false } as unknown as LocalController;

/** Waits until no background replacement runs or waits (each finished, or was dropped). */
async function backgroundWritesIdle(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const slots = backgroundWriteSlots();
    if (slots.running === 0 && slots.waiting === 0) return;
    await sleep(5);
  }
  assert.fail('background writes never ended');
}

test('a crashed incarnation checkpoint writes never replace the files its restarted incarnation loaded', async (t) => {
  const dir = tempDir(t, 'brook-sim-broker-');
  const broker = new SimBroker(1 as BrokerId, dir, new ManualClock(), 2);
  const held: (() => void)[] = [];
  setBackgroundWriteGateForTests((path) =>
    path.startsWith(dir) ? new Promise<void>((resolve) => held.push(resolve)) : Promise.resolve(),
  );
  t.after(() => {
    setBackgroundWriteGateForTests(null);
    for (const release of held) release();
    broker.crash();
  });

  const first = broker.start(noLeader, noController);
  first.logs.getOrCreateLog({ topic: 't', partition: 0 });
  first.logs.writeCheckpoints(true);
  // The writes start on the next turn and stop at the gate, before their tmp files.
  await sleep(5);
  assert.ok(held.length >= CHECKPOINTS.length, `${held.length} writes held`);

  broker.crash();
  broker.start(noLeader, noController);
  // The restarted incarnation loaded these files and wrote them again (each a new inode).
  const loaded = CHECKPOINTS.map((name) => statSync(join(dir, name)).ino);

  for (const release of held.splice(0)) release();
  await backgroundWritesIdle();
  await sleep(20);
  const now = CHECKPOINTS.map((name) => statSync(join(dir, name)).ino);
  assert.deepEqual(now, loaded, 'a write of the crashed incarnation replaced a checkpoint after the restart');
});

test('a power loss empties the producer snapshot of a roll whose flush had not synced it, as it does the bytes', async (t) => {
  // A roll writes its producer snapshot unsynced and leaves the fsync to the flush it starts, before that flush
  // moves the recovery point (Log.roll). A power loss before then may leave the snapshot missing, empty or torn:
  // the simulated one takes the harshest, as it takes every segment byte from the recovery point.
  const dir = tempDir(t, 'brook-sim-broker-');
  const broker = new SimBroker(1 as BrokerId, dir, new ManualClock(), 2);
  t.after(() => broker.crash());
  const running = broker.start(noLeader, noController);
  const log = running.logs.getOrCreateLog({ topic: 't', partition: 0 });
  const batch = buildBatch([{ key: 'k', value: 'v' }], { producerId: 7, producerEpoch: 0, baseSequence: 0 });
  batchHeader.setBaseOffset(batch, 0, 0);
  log.append(batch);
  log.roll();
  const snapshot = segmentFilePath(log.dir, 1, SNAPSHOT_SUFFIX);
  assert.ok(statSync(snapshot).size > 0, 'the roll wrote the producer state');
  assert.deepEqual(log.unsyncedSnapshotOffsets(), [1], 'its fsync waits for the flush the roll started');
  assert.equal(log.recoveryPoint, 0);
  broker.crash({ powerLoss: true });
  assert.ok(
    !existsSync(snapshot) || statSync(snapshot).size === 0,
    'the unsynced snapshot survived the power loss',
  );
  // Recovery replays the log instead (its bytes went too: nothing of producer 7 is left).
  await sleep(20);
  const restarted = broker.start(noLeader, noController);
  assert.equal(restarted.logs.getLog({ topic: 't', partition: 0 })?.logEndOffset, 0);
});
