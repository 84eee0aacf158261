// Encrypted segments at the storage level: what is written is ciphertext, every read (sync, async, by any
// offset) gives back the exact batches, recovery cuts what the tags do not vouch for, and a changed byte in a
// .log or an .enc is refused as KAFKA_STORAGE_ERROR, never served.

import assert from 'node:assert/strict';
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';
import {
  ENC_CHUNK_BYTES,
  ENC_HEADER_BYTES,
  SegmentIntegrityError,
} from '../../../src/storage/encryption/segment-cipher.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { appendQueuedAwaitable, Log, type ReadResult } from '../../../src/storage/log.js';
import { type LogConfig, logConfig } from '../../../src/storage/log-config.js';
import { buildBatch } from '../batch-builder.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';

const TP = { topic: 't', partition: 0 };
const MARKER = 'MARKER-7f3a91-plaintext';
const KEY_HEX = 'a'.repeat(64);

async function keyStoreIn(dir: string): Promise<KeyStore> {
  const keyFile = join(dir, '..', `${dir.split('/').pop()}.key`);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(keyFile, `k1:${KEY_HEX}\n`);
  const store = await KeyStore.load(dir, new FileKeyProvider(keyFile));
  await store.ensureCurrent(0);
  return store;
}

interface Opened {
  log: Log;
  reopen(clean: boolean): Log;
}

function openLog(dir: string, keys: KeyStore, config: LogConfig): Opened {
  const clock = new ManualClock();
  const o: Opened = {
    log: Log.open({ dir, topicPartition: TP, config, clock, hadCleanShutdown: true, keys }),
    reopen(clean) {
      const { recoveryPoint, logStartOffset, highWatermark } = o.log;
      if (clean) o.log.close();
      else o.log.abandon();
      o.log = Log.open({
        dir,
        topicPartition: TP,
        config,
        clock,
        hadCleanShutdown: clean,
        recoveryPoint: clean ? recoveryPoint : 0,
        logStartOffset,
        highWatermark,
        keys,
      });
      return o.log;
    },
  };
  return o;
}

function batchAt(log: Log, i: number, valueBytes = 900): Buffer {
  const value = Buffer.alloc(valueBytes, 0x61 + (i % 26));
  value.write(`${MARKER}-${i}`, 0);
  const batch = buildBatch({ values: [value, Buffer.from(`${MARKER}-${i}-b`)], baseTimestamp: 1000 + i });
  batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
  batchHeader.setPartitionLeaderEpoch(batch, 0, 0);
  return batch;
}

function records(r: ReadResult): Buffer {
  assert.equal(r.errorCode, StorageErrorCode.None, `read failed: ${JSON.stringify(r)}`);
  return (r as { records: Buffer }).records;
}

function allFileBytes(dir: string): { name: string; bytes: Buffer }[] {
  return readdirSync(dir).map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
}

const CONFIG = logConfig({ encrypt: true, segmentBytes: 400 * 1024, indexIntervalBytes: 4096 });

test('an encrypted log stores no plaintext and reads back every batch, by any offset, sync and async', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, CONFIG);
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  const stored: Buffer[] = [];
  for (let i = 0; i < 600; i++) {
    const batch = batchAt(o.log, i);
    if (i % 2 === 0) o.log.append(batch);
    else await appendQueuedAwaitable(o.log, batch).acknowledged;
    stored.push(batch);
  }
  o.log.setHighWatermark(o.log.logEndOffset);
  assert.ok(o.log.segmentCount >= 2, 'several segments');
  for (const f of allFileBytes(dir)) {
    assert.equal(f.bytes.includes(MARKER), false, `plaintext marker found in ${f.name}`);
  }
  assert.ok(
    readdirSync(dir).some((n) => n.endsWith('.enc')),
    'segments have .enc files',
  );
  for (const start of [0, 1, 2, 77, 301, 598, 599, 600, 1199]) {
    const want = Buffer.concat(stored.slice(Math.floor(start / 2)));
    const sync = records(o.log.read(toOffset(start), 8 * 1024));
    assert.ok(sync.length > 0 || start >= 1200);
    assert.deepEqual(sync, want.subarray(0, sync.length), `sync read at ${start}`);
    const async = records(await o.log.readAsync(toOffset(start), 100 * 1024));
    assert.deepEqual(async, want.subarray(0, async.length), `async read at ${start}`);
  }
  // Reopened cleanly and after a crash: the same bytes.
  for (const clean of [true, false]) {
    const end = o.log.logEndOffset;
    o.reopen(clean);
    assert.equal(o.log.logEndOffset, end);
    assert.deepEqual(
      records(o.log.read(toOffset(0), 1 << 20)),
      Buffer.concat(stored).subarray(0, records(o.log.read(toOffset(0), 1 << 20)).length),
    );
    const next = batchAt(o.log, 600);
    o.log.append(next);
    stored.push(next);
    assert.deepEqual(records(o.log.read(toOffset(o.log.logEndOffset - 2), 1 << 20)), next);
  }
});

test('a flipped byte in a .log or in a tag record is refused as KAFKA_STORAGE_ERROR', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, logConfig({ encrypt: true, indexIntervalBytes: 4096 }));
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  for (let i = 0; i < 300; i++) o.log.append(batchAt(o.log, i));
  o.log.setHighWatermark(o.log.logEndOffset);
  o.log.close();
  const logFile = join(dir, '00000000000000000000.log');
  const encFile = join(dir, '00000000000000000000.enc');
  flip(logFile, 1000); // chunk 0
  flip(encFile, ENC_HEADER_BYTES + 32 * 2 + 12); // the tag of chunk 2
  o.log = Log.open({
    dir,
    topicPartition: TP,
    config: o.log.config,
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
  });
  o.log.setHighWatermark(o.log.logEndOffset);
  const errors: string[] = [];
  assert.equal(o.log.read(toOffset(0), 4096).errorCode, StorageErrorCode.KafkaStorageError);
  assert.equal((await o.log.readAsync(toOffset(0), 4096)).errorCode, StorageErrorCode.KafkaStorageError);
  // Chunk 1 is intact and served; chunk 2's tag no longer matches.
  const inChunk1 = Math.floor((ENC_CHUNK_BYTES * 1.5) / 1000) * 2;
  assert.ok(records(o.log.read(toOffset(inChunk1), 2000)).length > 0);
  const inChunk2 = Math.floor((ENC_CHUNK_BYTES * 2.5) / 1000) * 2;
  assert.equal(
    (await o.log.readAsync(toOffset(inChunk2), 2000)).errorCode,
    StorageErrorCode.KafkaStorageError,
  );
  assert.equal(errors.length, 0);
});

test('a fetch of many chunks, read in pieces, equals the synchronous read and fails on a flipped byte in any piece', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, logConfig({ encrypt: true, indexIntervalBytes: 4096 }));
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  for (let i = 0; i < 300; i++) o.log.append(batchAt(o.log, i));
  o.log.setHighWatermark(o.log.logEndOffset);
  o.log.close();
  const reopen = (): Log =>
    Log.open({
      dir,
      topicPartition: TP,
      config: o.log.config,
      clock: new ManualClock(),
      hadCleanShutdown: true,
      keys,
    });
  // Reopened: nothing verified yet, every chunk comes from the file.
  o.log = reopen();
  o.log.setHighWatermark(o.log.logEndOffset);
  const whole = records(await o.log.readAsync(toOffset(0), 1024 * 1024));
  assert.ok(whole.length > 16 * ENC_CHUNK_BYTES, 'the read spans more than four pieces of four chunks');
  assert.ok(records(o.log.read(toOffset(0), 1024 * 1024)).equals(whole));
  o.log.close();
  // A byte of chunk 13 (the third or fourth piece) flipped: the whole fetch is refused.
  flip(join(dir, '00000000000000000000.log'), 13 * ENC_CHUNK_BYTES + 100);
  o.log = reopen();
  o.log.setHighWatermark(o.log.logEndOffset);
  assert.equal(
    (await o.log.readAsync(toOffset(0), 1024 * 1024)).errorCode,
    StorageErrorCode.KafkaStorageError,
  );
  // Below the damage the log is still served.
  assert.ok(records(await o.log.readAsync(toOffset(0), 8 * ENC_CHUNK_BYTES)).length > 0);
});

test('a crash leaves bytes past the tags: recovery cuts them, seals the segment, and appends roll on', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, CONFIG);
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  for (let i = 0; i < 20; i++) o.log.append(batchAt(o.log, i));
  const end = o.log.logEndOffset;
  const logFile = join(dir, '00000000000000000000.log');
  const size = statSync(logFile).size;
  // What a write that reached the file but never committed (no tag, never acknowledged) leaves behind.
  const fd = openSync(logFile, 'r+');
  writeSync(fd, Buffer.alloc(700, 1), 0, 700, size);
  closeSync(fd);
  o.reopen(false);
  assert.equal(o.log.logEndOffset, end);
  assert.equal(statSync(logFile).size, size);
  o.log.append(batchAt(o.log, 20));
  assert.ok(o.log.segmentCount >= 2, 'the sealed segment took no more bytes: the log rolled');
  o.log.setHighWatermark(o.log.logEndOffset);
  assert.ok(records(o.log.read(toOffset(0), 1 << 20)).length > 0);
  assert.equal(records(o.log.read(end, 1 << 20)).length > 0, true);
});

test('a .log truncated below what its tags cover is detected and cut at load, with a report', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, CONFIG);
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  for (let i = 0; i < 300; i++) o.log.append(batchAt(o.log, i));
  o.log.close();
  const logFile = join(dir, '00000000000000000000.log');
  truncateSync(logFile, statSync(logFile).size - 100);
  const reports: string[] = [];
  o.log = Log.open({
    dir,
    topicPartition: TP,
    config: CONFIG,
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
    onBackgroundError: (err) => reports.push(err.message),
  });
  assert.ok(
    reports.some((r) => r.includes('truncated')),
    reports.join('\n'),
  );
  // The last chunk cannot be authenticated any more (its tag covers bytes that are gone): it is cut whole.
  const end = o.log.logEndOffset;
  assert.ok(end > 0 && end < 600, `log end ${end}`);
  assert.ok(end >= Math.floor((4 * ENC_CHUNK_BYTES) / 1000) * 2 - 4, `earlier chunks kept (log end ${end})`);
  o.log.setHighWatermark(end);
  assert.ok(records(o.log.read(toOffset(0), 1 << 20)).length > 0);
});

test('truncation seals an encrypted segment: later appends go to a new segment with a new key', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, CONFIG);
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  for (let i = 0; i < 10; i++) o.log.append(batchAt(o.log, i));
  o.log.truncateTo(toOffset(10));
  const again = batchAt(o.log, 99);
  o.log.append(again);
  assert.equal(o.log.segmentCount, 2);
  o.log.setHighWatermark(o.log.logEndOffset);
  assert.deepEqual(records(o.log.read(toOffset(10), 1 << 20)), again);
  o.reopen(false);
  assert.deepEqual(records(o.log.read(toOffset(10), 1 << 20)), again);
});

function flip(path: string, position: number): void {
  const fd = openSync(path, 'r+');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, position);
  b[0]! ^= 0x40;
  writeSync(fd, b, 0, 1, position);
  closeSync(fd);
}

test('a truncation into a tampered chunk is refused, and the chunk stays refused to readers', async (t) => {
  const dir = tempDir(t);
  const keys = await keyStoreIn(dir);
  const o = openLog(dir, keys, CONFIG);
  deferCleanup(t, () => o.log.isClosed || o.log.close());
  const stored: Buffer[] = [];
  for (let i = 0; i < 120; i++) {
    const batch = batchAt(o.log, i);
    o.log.append(batch);
    stored.push(batch);
  }
  o.log.close();
  // A byte of chunk 1 changed while the broker was down; chunk 1 is not the tail, so loading does not read it.
  const logFile = join(dir, '00000000000000000000.log');
  flip(logFile, ENC_CHUNK_BYTES + 100);
  o.log = Log.open({
    dir,
    topicPartition: TP,
    config: CONFIG,
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
  });
  // Truncate to a batch boundary inside chunk 1, past the changed byte.
  let position = 0;
  let offset = 0;
  while (position + stored[offset / 2]!.length < ENC_CHUNK_BYTES + 3000) {
    position += stored[offset / 2]!.length;
    offset += 2;
  }
  assert.ok(position > ENC_CHUNK_BYTES + 100);
  // Finding the batch to cut at reads (and verifies) the chunk: the truncation stops there, nothing re-tagged.
  assert.throws(() => o.log.truncateTo(toOffset(offset)), SegmentIntegrityError);
  o.log.setHighWatermark(o.log.logEndOffset);
  const inChunk1 = Math.ceil(ENC_CHUNK_BYTES / stored[0]!.length) * 2;
  assert.equal(o.log.read(toOffset(inChunk1), 1000).errorCode, StorageErrorCode.KafkaStorageError);
  assert.equal(records(o.log.read(toOffset(0), 1000)).length > 0, true, 'chunk 0 is intact and served');
});
