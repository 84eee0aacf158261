// The tags of encrypted segments (format version 2): full chunks carry an AES-GCM tag, the growing last chunk a
// GMAC of the bytes it has. These tests hold the growing chunk to what full chunks get: a changed byte in its
// ciphertext, in its tag or in its covered length is never served nor given a fresh tag by a later append; a tag
// record that lost its last update (its .enc write never landed) makes recovery cut to the end of the append it
// still vouches for, as a torn write cuts a plaintext log; a partial chunk continued after a clean reopen reads
// back exactly; and a segment of the retired format version 1 stops the load with a clear error.

import assert from 'node:assert/strict';
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import type { KeyStore } from '../../../src/storage/encryption/key-store.js';
import {
  ENC_CHUNK_BYTES,
  ENC_HEADER_BYTES,
  SegmentIntegrityError,
  TAG_RECORD_BYTES,
} from '../../../src/storage/encryption/segment-cipher.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { appendQueuedAwaitable, Log, type ReadResult } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { buildBatch } from '../batch-builder.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';
import { keyStoreIn } from './key-store-in.js';

const TP = { topic: 't', partition: 0 };
const CONFIG = logConfig({ encrypt: true, segmentBytes: 1024 * 1024, indexIntervalBytes: 4096 });
const LOG = '00000000000000000000.log';
const ENC = '00000000000000000000.enc';

function open(dir: string, keys: KeyStore, clean: boolean, reports: string[] = []): Log {
  const log = Log.open({
    dir,
    topicPartition: TP,
    config: CONFIG,
    clock: new ManualClock(),
    hadCleanShutdown: clean,
    keys,
    onBackgroundError: (err) => reports.push(err.message),
  });
  log.setHighWatermark(log.logEndOffset);
  return log;
}

/** A batch of about `bytes` bytes (sizes vary, so batches straddle chunk boundaries at many offsets). */
function batchFor(log: Log, i: number, bytes: number): Buffer {
  const batch = buildBatch({ values: [Buffer.alloc(bytes, 0x30 + (i % 40))], baseTimestamp: 5000 + i });
  batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
  batchHeader.setPartitionLeaderEpoch(batch, 0, 0);
  return batch;
}

function records(r: ReadResult): Buffer {
  assert.equal(r.errorCode, StorageErrorCode.None, `read failed: ${JSON.stringify(r)}`);
  return (r as { records: Buffer }).records;
}

/** Every stored batch read back by its own offset, or the error code the read answered. */
function readEach(log: Log, stored: Buffer[]): (Buffer | number)[] {
  return stored.map((b) => {
    const r = log.read(toOffset(batchHeader.baseOffset(b, 0)), b.length);
    return r.errorCode === StorageErrorCode.None ? (r as { records: Buffer }).records : r.errorCode;
  });
}

function patch(path: string, position: number, change: (b: Buffer) => void, length = 1): void {
  const fd = openSync(path, 'r+');
  const b = Buffer.alloc(length);
  readSync(fd, b, 0, length, position);
  change(b);
  writeSync(fd, b, 0, length, position);
  closeSync(fd);
}

/** A log of two full chunks and a growing third (about 2.6 chunks), closed cleanly; its batches. */
async function pristine(root: string): Promise<{ dir: string; keys: KeyStore; stored: Buffer[] }> {
  const dir = join(root, 'pristine');
  mkdirSync(dir);
  const keys = await keyStoreIn(root, dir, 'k1', 'b'.repeat(64));
  const log = open(dir, keys, true);
  const stored: Buffer[] = [];
  let i = 0;
  while (statSync(join(dir, LOG)).size < ENC_CHUNK_BYTES * 2.6) {
    const batch = batchFor(log, i, 300 + ((i * 997) % 2500));
    if (i % 3 === 0) await appendQueuedAwaitable(log, batch).acknowledged;
    else log.append(batch);
    stored.push(batch);
    i++;
  }
  log.close();
  return { dir, keys, stored };
}

test('a partial chunk continued after a clean reopen reads back exactly, also once it fills', async (t) => {
  const root = tempDir(t);
  const { dir, keys, stored } = await pristine(root);
  const log = open(dir, keys, true);
  deferCleanup(t, () => log.isClosed || log.close());
  while (statSync(join(dir, LOG)).size < ENC_CHUNK_BYTES * 3.4) {
    const batch = batchFor(log, stored.length, 700);
    log.append(batch);
    stored.push(batch);
  }
  log.setHighWatermark(log.logEndOffset);
  assert.equal(log.segmentCount, 1, 'the partial chunk was continued, not rolled past');
  assert.deepEqual(readEach(log, stored), stored);
  const reopened = open(dir, keys, false);
  deferCleanup(t, () => reopened.isClosed || reopened.close());
  log.abandon();
  assert.equal(reopened.logEndOffset, log.logEndOffset, 'recovery verified every chunk and kept them all');
  assert.deepEqual(readEach(reopened, stored), stored);
});

/** How many of `stored` lie wholly below `position` (what a cut at the chunk boundary there keeps). */
function batchesBelow(stored: Buffer[], position: number): number {
  let kept = 0;
  let at = 0;
  while (at + stored[kept]!.length <= position) at += stored[kept++]!.length;
  return kept;
}

const DAMAGES = [
  { what: 'a byte of its ciphertext', file: LOG, position: 2 * ENC_CHUNK_BYTES + 40 },
  { what: 'a byte of its GMAC tag', file: ENC, position: ENC_HEADER_BYTES + 2 * TAG_RECORD_BYTES + 8 + 5 },
];

for (const damage of DAMAGES) {
  test(`the growing last chunk with ${damage.what} changed: cut at load like a torn write, never served`, async (t) => {
    const root = tempDir(t);
    const { dir, keys, stored } = await pristine(root);
    patch(join(dir, damage.file), damage.position, (b) => {
      b[0]! ^= 0x08;
    });
    const reports: string[] = [];
    const log = open(dir, keys, true, reports);
    deferCleanup(t, () => log.isClosed || log.close());
    assert.ok(
      reports.some((r) => r.includes('fails authentication')),
      reports.join('\n'),
    );
    const kept = batchesBelow(stored, 2 * ENC_CHUNK_BYTES);
    assert.ok(kept > 0 && kept < stored.length);
    assert.equal(log.logEndOffset, batchHeader.lastOffset(stored[kept - 1]!, 0) + 1);
    assert.deepEqual(readEach(log, stored.slice(0, kept)), stored.slice(0, kept));
    const next = batchFor(log, 999, 800);
    log.append(next);
    log.setHighWatermark(log.logEndOffset);
    assert.ok(log.segmentCount >= 2, 'the cut segment is sealed: the append rolled');
    assert.deepEqual(records(log.read(toOffset(batchHeader.baseOffset(next, 0)), 1 << 20)), next);
  });

  test(`${damage.what} of the growing chunk changed while open: the next append fails before writing, nothing re-tagged`, async (t) => {
    const root = tempDir(t);
    const { dir, keys, stored } = await pristine(root);
    const log = open(dir, keys, true);
    deferCleanup(t, () => log.isClosed || log.close());
    patch(join(dir, damage.file), damage.position, (b) => {
      b[0]! ^= 0x08;
    });
    const sizeBefore = statSync(join(dir, LOG)).size;
    const encBefore = readFileSync(join(dir, ENC)).subarray(ENC_HEADER_BYTES);
    // The first append reads the committed part of the chunk back to extend its tag, and finds the damage.
    assert.throws(() => log.append(batchFor(log, stored.length, 500)), SegmentIntegrityError);
    assert.equal(statSync(join(dir, LOG)).size, sizeBefore, 'nothing written');
    assert.deepEqual(readFileSync(join(dir, ENC)).subarray(ENC_HEADER_BYTES), encBefore, 'no tag rewritten');
    const inTail = stored.length - 1;
    assert.equal(
      log.read(toOffset(batchHeader.baseOffset(stored[inTail]!, 0)), 1 << 20).errorCode,
      StorageErrorCode.KafkaStorageError,
    );
    const kept = batchesBelow(stored, 2 * ENC_CHUNK_BYTES);
    assert.deepEqual(readEach(log, stored.slice(0, kept)), stored.slice(0, kept));
    // A restart recovers as from a torn write: the chunk that fails goes, everything before it stays.
    log.abandon();
    const recovered = open(dir, keys, false);
    deferCleanup(t, () => recovered.isClosed || recovered.close());
    assert.equal(recovered.logEndOffset, batchHeader.lastOffset(stored[kept - 1]!, 0) + 1);
    assert.deepEqual(readEach(recovered, stored.slice(0, kept)), stored.slice(0, kept));
  });
}

test('a covered length changed in the last tag record is refused and recovered as a torn write', async (t) => {
  const root = tempDir(t);
  const { dir, keys, stored } = await pristine(root);
  patch(
    join(dir, ENC),
    ENC_HEADER_BYTES + 2 * TAG_RECORD_BYTES,
    (b) => b.writeUInt32BE(b.readUInt32BE(0) - 1, 0),
    4,
  );
  const reports: string[] = [];
  const log = open(dir, keys, true, reports);
  deferCleanup(t, () => log.isClosed || log.close());
  assert.ok(
    reports.some((r) => r.includes('past the authenticated end')),
    reports.join('\n'),
  );
  // Its GMAC was over the real length: the shorter claim fails, so the chunk is cut whole; the others stay.
  const kept = batchesBelow(stored, 2 * ENC_CHUNK_BYTES);
  assert.equal(log.logEndOffset, batchHeader.lastOffset(stored[kept - 1]!, 0) + 1);
  assert.deepEqual(readEach(log, stored.slice(0, kept)), stored.slice(0, kept));
});

test('a tag record that lost its last update: recovery cuts to the end of the append it vouches for', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'log');
  mkdirSync(dir);
  const keys = await keyStoreIn(root, dir, 'k1', 'b'.repeat(64));
  let log = open(dir, keys, true);
  deferCleanup(t, () => log.isClosed || log.close());
  const stored: Buffer[] = [];
  // Several appends inside the third chunk, so its GMAC has been rewritten a few times.
  while (statSync(join(dir, LOG)).size < ENC_CHUNK_BYTES * 2.5) {
    const batch = batchFor(log, stored.length, 900);
    log.append(batch);
    stored.push(batch);
  }
  const encBefore = readFileSync(join(dir, ENC));
  const endBefore = log.logEndOffset;
  // One more append in the same chunk, whose tag record update is then lost (a crash between the two writes
  // cannot do this, since the tag follows the bytes; a lost page of the .enc can).
  const last = batchFor(log, stored.length, 900);
  log.append(last);
  assert.ok(statSync(join(dir, LOG)).size < ENC_CHUNK_BYTES * 3, 'still in the third chunk');
  log.abandon();
  writeFileSync(join(dir, ENC), encBefore);
  const reports: string[] = [];
  log = open(dir, keys, false, reports);
  assert.equal(log.logEndOffset, endBefore, 'cut to the last append the tags vouch for');
  assert.deepEqual(readEach(log, stored), stored);
  assert.equal(
    statSync(join(dir, LOG)).size,
    stored.reduce((n, b) => n + b.length, 0),
  );
  const next = batchFor(log, 77, 900);
  log.append(next);
  log.setHighWatermark(log.logEndOffset);
  assert.deepEqual(records(log.read(toOffset(batchHeader.baseOffset(next, 0)), 1 << 20)), next);
});

test('a segment of encryption format version 1 stops the load with a clear error', async (t) => {
  const root = tempDir(t);
  const { dir, keys } = await pristine(root);
  patch(
    join(dir, ENC),
    0,
    (header) => {
      header[4] = 1;
      header.writeUInt32BE(crc32c(header.subarray(0, 508)), 508);
    },
    ENC_HEADER_BYTES,
  );
  assert.throws(() => open(dir, keys, true), /format version 1 is not readable by this broker/);
});
