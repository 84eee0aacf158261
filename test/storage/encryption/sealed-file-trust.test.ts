// What an encrypted partition trusts of its sealed files (producer snapshots, the leader-epoch-checkpoint), on real
// files in one log directory with one key store:
// - a sealed file is bound to its partition: one copied from another partition of the directory (sealed by the same
//   key-encryption key) fails authentication, as a tampered file does (a snapshot is skipped for a replay of the
//   log, a damaged epoch checkpoint takes the directory offline);
// - a file that is not sealed, in a partition that encrypts, is not trusted: anyone who can write the directory
//   can write one. It is not taken for damage either (it is what a partition holds when its topic has just turned
//   encryption on): the snapshot is skipped and the epoch cache rebuilt from the log's batches, then sealed;
// - a topic turning encryption on for existing data thus keeps its producer state and leader epochs.
// - a file sealed by an earlier version (not bound to its partition) is read while the topic does not encrypt, and
//   treated as an unsealed one while it does.

import assert from 'node:assert/strict';
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import type { ProducerId } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { encodeEpochCheckpoint } from '../../../src/storage/checkpoint-file.js';
import { isSealedFile } from '../../../src/storage/encryption/file-seal.js';
import type { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { Log } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { writeSnapshotFile } from '../../../src/storage/producer-snapshot.js';
import { buildBatch } from '../batch-builder.js';
import { tempDir } from '../tmp-dir.js';
import { keyStoreIn } from './key-store-in.js';

const EPOCH_FILE = 'leader-epoch-checkpoint';
const ENCRYPTED = logConfig({ encrypt: true, segmentBytes: 16 * 1024 });
const PLAIN = logConfig({ encrypt: false, segmentBytes: 16 * 1024 });

function openLog(dir: string, partition: number, keys: KeyStore, encrypt = true): Log {
  return Log.open({
    dir,
    topicPartition: { topic: 't', partition },
    config: encrypt ? ENCRYPTED : PLAIN,
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
  });
}

/** 40 batches of `producerId`, the leader epoch moving from 1 to `lastEpoch` half-way; closed cleanly. */
function fillAndClose(log: Log, producerId: number, lastEpoch: number): void {
  for (let i = 0; i < 40; i++) {
    const batch = buildBatch({
      producerId,
      producerEpoch: 0,
      baseSequence: i,
      values: [Buffer.alloc(500, i)],
    });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(batch, 0, i < 20 ? 1 : lastEpoch);
    log.append(batch);
  }
  log.setHighWatermark(log.logEndOffset);
  log.close();
}

function epochs(log: Log): [number, number][] {
  return log.epochCache.epochEntries.map((e) => [e.epoch, e.startOffset]);
}

/** The last sequence the log's producer state holds for `producerId`, or undefined when it knows none. */
function lastSeq(log: Log, producerId: number): number | undefined {
  return log.producerState.producer(producerId as ProducerId)?.batches.at(-1)?.lastSeq;
}

function snapshotNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.snapshot'))
    .sort();
}

async function twoPartitions(t: TestContext) {
  const root = tempDir(t);
  const logDir = join(root, 'logs');
  mkdirSync(logDir);
  const keys = await keyStoreIn(root, logDir);
  const dirA = join(logDir, 't-0');
  const dirB = join(logDir, 't-1');
  mkdirSync(dirA);
  mkdirSync(dirB);
  fillAndClose(openLog(dirA, 0, keys), 1001, 5);
  fillAndClose(openLog(dirB, 1, keys), 2002, 9);
  return { keys, dirA, dirB };
}

test('an epoch checkpoint sealed for another partition fails authentication: it is damaged', async (t) => {
  const { keys, dirA, dirB } = await twoPartitions(t);
  copyFileSync(join(dirA, EPOCH_FILE), join(dirB, EPOCH_FILE));
  const b = openLog(dirB, 1, keys);
  try {
    assert.match(String(b.loadFailure?.message), /fails authentication/);
    assert.notDeepEqual(epochs(b), [
      [1, 0],
      [5, 20],
    ]);
  } finally {
    b.close();
  }
});

test('a producer snapshot sealed for another partition is skipped: the state is replayed', async (t) => {
  const { keys, dirA, dirB } = await twoPartitions(t);
  const names = snapshotNames(dirA);
  assert.deepEqual(snapshotNames(dirB), names, 'both logs rolled and ended at the same offsets');
  for (const name of names) copyFileSync(join(dirA, name), join(dirB, name));
  const b = openLog(dirB, 1, keys);
  try {
    assert.equal(lastSeq(b, 1001), undefined, "the other partition's producer");
    assert.equal(lastSeq(b, 2002), 39);
  } finally {
    b.close();
  }
});

test('an unsealed epoch checkpoint and snapshot in an encrypting partition are not trusted', async (t) => {
  const { keys, dirB } = await twoPartitions(t);
  // Plaintext files claiming other epochs and a producer that never wrote here.
  writeFileSync(join(dirB, EPOCH_FILE), encodeEpochCheckpoint([{ epoch: 42, startOffset: 0 }] as never));
  const offset = Number(snapshotNames(dirB).at(-1)!.slice(0, -'.snapshot'.length));
  const fake = { epoch: 0, lastSequence: 7, lastOffset: offset - 1, offsetDelta: 0, timestamp: 1 };
  writeSnapshotFile(dirB, offset, [
    { producerId: 777, ...fake, coordinatorEpoch: -1, currentTxnFirstOffset: -1 },
  ]);
  const b = openLog(dirB, 1, keys);
  try {
    assert.equal(b.loadFailure, null, 'not damage: the partition stays online');
    assert.deepEqual(epochs(b), [
      [1, 0],
      [9, 20],
    ]);
    assert.equal(lastSeq(b, 777), undefined);
    assert.equal(lastSeq(b, 2002), 39);
  } finally {
    b.close();
  }
  assert.ok(isSealedFile(readFileSync(join(dirB, EPOCH_FILE))), 'the rebuilt checkpoint is sealed');
});

test('a partition whose topic turns encryption on keeps its leader epochs and producer state', async (t) => {
  const root = tempDir(t);
  const logDir = join(root, 'logs');
  mkdirSync(logDir);
  const keys = await keyStoreIn(root, logDir);
  const dir = join(logDir, 't-0');
  mkdirSync(dir);
  fillAndClose(openLog(dir, 0, keys, false), 3003, 4);
  assert.ok(!isSealedFile(readFileSync(join(dir, EPOCH_FILE))));
  const log = openLog(dir, 0, keys, true);
  try {
    assert.equal(log.loadFailure, null);
    assert.deepEqual(epochs(log), [
      [1, 0],
      [4, 20],
    ]);
    assert.equal(lastSeq(log, 3003), 39);
  } finally {
    log.close();
  }
  assert.ok(isSealedFile(readFileSync(join(dir, EPOCH_FILE))), 'sealed from then on');
});

/** A checkpoint sealed as Brook sealed it before files were bound to their partition (format version 1). */
function sealedVersion1(keys: KeyStore, plain: Buffer): Buffer {
  const kek = keys.current();
  const kind = 'leader-epoch-checkpoint';
  const header = Buffer.concat([
    Buffer.from('BRKF'),
    Buffer.from([1, kind.length]),
    Buffer.from(kind),
    Buffer.from([kek.id.length]),
    Buffer.from(kek.id),
  ]);
  const key = Buffer.from(hkdfSync('sha256', kek.key, Buffer.alloc(0), Buffer.from('brook file seal 1'), 32));
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([header, nonce, body, cipher.getAuthTag()]);
}

test('an epoch checkpoint sealed by version 1 is read without encryption, rebuilt with it', async (t) => {
  const { keys, dirB } = await twoPartitions(t);
  const claimed = Buffer.from(
    encodeEpochCheckpoint([
      { epoch: 1, startOffset: 0 },
      { epoch: 6, startOffset: 30 },
    ] as never),
  );
  writeFileSync(join(dirB, EPOCH_FILE), sealedVersion1(keys, claimed));
  const plain = openLog(dirB, 1, keys, false);
  try {
    assert.equal(plain.loadFailure, null);
    assert.deepEqual(epochs(plain), [
      [1, 0],
      [6, 30],
    ]);
  } finally {
    plain.close();
  }
  writeFileSync(join(dirB, EPOCH_FILE), sealedVersion1(keys, claimed));
  const encrypted = openLog(dirB, 1, keys, true);
  try {
    assert.equal(encrypted.loadFailure, null);
    assert.deepEqual(epochs(encrypted), [
      [1, 0],
      [9, 20],
    ]);
  } finally {
    encrypted.close();
  }
});

test('a topic opting in while its log is open has its snapshots and epoch checkpoint sealed at once', async (t) => {
  const root = tempDir(t);
  const logDir = join(root, 'logs');
  mkdirSync(logDir);
  const keys = await keyStoreIn(root, logDir);
  const dir = join(logDir, 't-0');
  mkdirSync(dir);
  const log = openLog(dir, 0, keys, false);
  for (let i = 0; i < 40; i++) {
    const batch = buildBatch({
      producerId: 4004,
      producerEpoch: 0,
      baseSequence: i,
      values: [Buffer.alloc(500, i)],
    });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(batch, 0, i < 20 ? 1 : 2);
    log.append(batch);
  }
  await log.epochCache.whenPersisted();
  const names = snapshotNames(dir);
  assert.ok(names.length > 0, 'a roll wrote a snapshot');
  const sealed = () => [EPOCH_FILE, ...names].map((n) => isSealedFile(readFileSync(join(dir, n))));
  assert.deepEqual(
    sealed(),
    [EPOCH_FILE, ...names].map(() => false),
  );
  log.config = ENCRYPTED;
  await log.epochCache.whenPersisted();
  assert.deepEqual(
    sealed(),
    [EPOCH_FILE, ...names].map(() => true),
  );
  log.close();
  const errors: Error[] = [];
  const reopened = Log.open({
    dir,
    topicPartition: { topic: 't', partition: 0 },
    config: ENCRYPTED,
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
    onBackgroundError: (err) => errors.push(err),
  });
  try {
    assert.deepEqual(errors, [], 'nothing to rebuild');
    assert.deepEqual(epochs(reopened), [
      [1, 0],
      [2, 20],
    ]);
  } finally {
    reopened.close();
  }
});
