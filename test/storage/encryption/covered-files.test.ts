// An encrypted log leaves none of its metadata readable: the .index, .timeindex and .txnindex files are encrypted
// (each entry a plaintext log would write is absent from them), producer snapshots and the leader epoch checkpoint
// are sealed (no producer id, timestamp or epoch line in them), and everything still works from those files
// after a clean restart, after a crash (recovery), and after a truncation followed by more appends (the indexes
// then change keystream, since no position may be encrypted twice under one).

import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toLeaderEpoch, toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { isSealedFile } from '../../../src/storage/encryption/file-seal.js';
import { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { Log } from '../../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../../src/storage/log-config.js';
import { type BatchSpec, buildBatch } from '../batch-builder.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';

const TP = { topic: 't', partition: 0 };
const PID = 0x5eed_c0ffee;
const TXN_PID = 0x7a7a_1234_55;
const BASE_TS = 1_612_345_678_000;
const OPTIONS = { segmentBytes: 48 * 1024, indexIntervalBytes: 1024 };

function int64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}

/** The same appends on one log: idempotent batches, an aborted transaction now and then, two leader epochs. */
function fill(log: Log, count: number, from = 0): Buffer[] {
  const stored: Buffer[] = [];
  const append = (spec: BatchSpec, epoch: number): void => {
    const batch = buildBatch(spec);
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(batch, 0, epoch);
    log.append(batch);
    stored.push(batch);
  };
  for (let i = from; i < from + count; i++) {
    const epoch = i < 60 ? 3 : 7;
    if (i % 25 === 12) {
      const txn = { producerId: TXN_PID, producerEpoch: 0, baseTimestamp: BASE_TS + i * 1000 };
      append({ ...txn, baseSequence: i, transactional: true, count: 2 }, epoch);
      append({ ...txn, control: { type: 0, coordinatorEpoch: 4 } }, epoch);
      continue;
    }
    append(
      {
        producerId: PID,
        producerEpoch: 2,
        baseSequence: i,
        baseTimestamp: BASE_TS + i * 1000,
        values: [Buffer.alloc(700, i & 0xff)],
      },
      epoch,
    );
  }
  log.setHighWatermark(log.logEndOffset);
  return stored;
}

function openLog(dir: string, config: LogConfig, keys: KeyStore | null, clean = true): Log {
  return Log.open({
    dir,
    topicPartition: TP,
    config,
    clock: new ManualClock(),
    hadCleanShutdown: clean,
    keys,
  });
}

/** Every lookup the metadata files serve, checked against the batches appended. */
function checkLookups(log: Log, stored: Buffer[]): void {
  log.setHighWatermark(log.logEndOffset);
  for (const b of stored) {
    const offset = batchHeader.baseOffset(b, 0);
    const r = log.read(toOffset(offset), b.length);
    assert.equal(r.errorCode, StorageErrorCode.None);
    assert.deepEqual((r as { records: Buffer }).records, b, `batch at ${offset}`);
    const byTime = log.offsetForTimestamp(batchHeader.maxTimestamp(b, 0));
    assert.ok(byTime !== null && byTime.offset <= offset, `time lookup of ${offset}`);
  }
  const aborted = log.collectAbortedTxns(0, log.logEndOffset);
  assert.ok(
    aborted.length >= 2 && aborted.every((t) => t.producerId === TXN_PID),
    'aborted transactions found',
  );
  assert.equal(log.endOffsetForEpoch(toLeaderEpoch(3)).endOffset > 0, true, 'epoch 3 known');
  const last = stored.filter((b) => batchHeader.producerId(b, 0) === PID).at(-1)!;
  const duplicate = Buffer.from(last);
  assert.equal(log.checkProducerBatch(duplicate).kind, 'duplicate', 'producer state restored');
}

test('indexes, producer snapshots and the epoch checkpoint of an encrypted log hold no plaintext', async (t) => {
  const root = tempDir(t);
  const plainDir = join(root, 'plain');
  const dir = join(root, 'encrypted');
  mkdirSync(plainDir);
  mkdirSync(dir);
  const keyFile = join(root, 'master.key');
  writeFileSync(keyFile, `k1:${'c'.repeat(64)}\n`);
  const keys = await KeyStore.load(dir, new FileKeyProvider(keyFile));
  await keys.ensureCurrent(0);
  // The same appends, once in plaintext: what each metadata file would hold.
  const plain = openLog(plainDir, logConfig(OPTIONS), null);
  fill(plain, 150);
  plain.close();
  const config = logConfig({ ...OPTIONS, encrypt: true });
  let log = openLog(dir, config, keys);
  deferCleanup(t, () => log.isClosed || log.close());
  const stored = fill(log, 150);
  assert.ok(log.segmentCount >= 3, 'several segments, so snapshots were written at rolls');
  log.close();

  const secrets = [int64(PID), int64(TXN_PID), ...stored.map((b) => int64(batchHeader.maxTimestamp(b, 0)))];
  const kinds = new Set<string>();
  for (const name of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, name));
    const kind = name.includes('.') ? name.slice(name.indexOf('.')) : name;
    kinds.add(kind);
    for (const s of secrets)
      assert.equal(bytes.includes(s), false, `${name} holds a producer id or timestamp`);
    if (kind === '.index' || kind === '.timeindex' || kind === '.txnindex') {
      const twin = readFileSync(join(plainDir, name));
      assert.ok(twin.length > 0 && twin.length === bytes.length, `${name}: same size as in plaintext`);
      const entry = kind === '.index' ? 8 : kind === '.timeindex' ? 12 : 34;
      for (let at = 0; at < twin.length; at += entry) {
        assert.equal(bytes.includes(twin.subarray(at, at + entry)), false, `${name}: a plaintext entry`);
      }
    }
    if (kind === '.snapshot' || name === 'leader-epoch-checkpoint') {
      assert.ok(isSealedFile(bytes), `${name} is sealed`);
      assert.equal(bytes.includes(Buffer.from('3 0')), false);
    }
  }
  for (const k of ['.index', '.timeindex', '.txnindex', '.snapshot', 'leader-epoch-checkpoint']) {
    assert.ok(kinds.has(k), `the log has ${k} files`);
  }

  log = openLog(dir, config, keys, true);
  checkLookups(log, stored);
  // A crash: recovery rebuilds indexes and producer state (replaying from the newest snapshot it can open).
  log.abandon();
  log = openLog(dir, config, keys, false);
  checkLookups(log, stored);
  // A truncation into the active segment, then more appends: the indexes go on under a new keystream.
  const cut = batchHeader.baseOffset(stored[stored.length - 20]!, 0);
  log.truncateTo(toOffset(cut));
  const kept = stored.filter((b) => batchHeader.lastOffset(b, 0) < cut);
  const more = fill(log, 40, 150);
  log.close();
  log = openLog(dir, config, keys, true);
  checkLookups(log, [...kept, ...more]);
  // More appends into a segment reopened from disk: its indexes change keystream once, and still read back.
  const last = fill(log, 30, 190);
  log.close();
  log = openLog(dir, config, keys, true);
  checkLookups(log, [...kept, ...more, ...last]);
  const bytes = readdirSync(dir).map((n) => readFileSync(join(dir, n)));
  for (const b of bytes) assert.equal(b.includes(int64(PID)), false, 'still no producer id in any file');
});
