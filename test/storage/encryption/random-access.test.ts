// Reads of an encrypted segment stay random access: a fetch (Log.readAsync, the fetch path) or a synchronous read
// by offset verifies and decrypts only the chunks its range and its offset lookup touch, never the whole segment. Shown with damage:
// in a segment of about 60 chunks, two chunks far from the ones read are tampered with after a clean close; reads
// elsewhere answer exactly the batches written, and only reads that touch a damaged chunk are refused.

import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import type { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { ENC_CHUNK_BYTES } from '../../../src/storage/encryption/segment-cipher.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { Log, type ReadResult } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { buildBatch } from '../batch-builder.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';
import { keyStoreIn } from './key-store-in.js';

const TP = { topic: 't', partition: 0 };
const CONFIG = logConfig({ encrypt: true, segmentBytes: 8 * 1024 * 1024, indexIntervalBytes: 4096 });
const LOG = '00000000000000000000.log';
const DAMAGED = [10, 40];

function open(dir: string, keys: KeyStore): Log {
  const log = Log.open({
    dir,
    topicPartition: TP,
    config: CONFIG,
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
  });
  log.setHighWatermark(log.logEndOffset);
  return log;
}

function flip(path: string, position: number): void {
  const fd = openSync(path, 'r+');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, position);
  b[0]! ^= 0x04;
  writeSync(fd, b, 0, 1, position);
  closeSync(fd);
}

test('a read verifies only the chunks it touches: damage elsewhere in the segment does not fail it', async (t) => {
  const root = tempDir(t);
  const dir = join(root, 'log');
  mkdirSync(dir);
  const keys = await keyStoreIn(root, dir, 'r1', 'd'.repeat(64));

  const log = open(dir, keys);
  deferCleanup(t, () => log.isClosed || log.close());
  const stored: { offset: number; position: number; batch: Buffer }[] = [];
  let position = 0;
  while (position < ENC_CHUNK_BYTES * 60) {
    const batch = buildBatch({
      values: [Buffer.alloc(2500 + (stored.length % 7) * 100, stored.length & 0xff)],
    });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(batch, 0, 0);
    stored.push({ offset: log.logEndOffset, position, batch });
    log.append(batch);
    position += batch.length;
  }
  assert.equal(log.segmentCount, 1);
  assert.equal(statSync(join(dir, LOG)).size, position);
  log.close();
  for (const chunk of DAMAGED) flip(join(dir, LOG), chunk * ENC_CHUNK_BYTES + 777);

  const reopened = open(dir, keys);
  deferCleanup(t, () => reopened.isClosed || reopened.close());
  const touches = (s: { position: number; batch: Buffer }, chunk: number): boolean =>
    s.position < (chunk + 1) * ENC_CHUNK_BYTES && s.position + s.batch.length > chunk * ENC_CHUNK_BYTES;
  let served = 0;
  let refused = 0;
  for (const s of stored) {
    // The batch alone (maxBytes = its size), so a read covers the chunks of the batch's own range and of the
    // offset lookup's header scan: from the index entry before it (at most 4 KiB and a batch back), reading 4 KiB
    // and then 8 KiB ahead (batch-scan.ts). Damage outside that window must not fail the read.
    const firstChunk = Math.floor(Math.max(0, s.position - 4096 - 3300) / ENC_CHUNK_BYTES);
    const lastChunk = Math.floor(
      (Math.max(s.position + s.batch.length, s.position + 12_288) - 1) / ENC_CHUNK_BYTES,
    );
    const nearDamage = DAMAGED.some((c) => c >= firstChunk && c <= lastChunk);
    const results: ReadResult[] = [
      reopened.read(toOffset(s.offset), s.batch.length),
      await reopened.readAsync(toOffset(s.offset), s.batch.length),
    ];
    for (const r of results) {
      if (r.errorCode === StorageErrorCode.None) {
        assert.deepEqual((r as { records: Buffer }).records, s.batch, `batch at ${s.offset} served exactly`);
        served++;
      } else {
        assert.equal(r.errorCode, StorageErrorCode.KafkaStorageError, `read at ${s.offset}`);
        assert.ok(
          nearDamage,
          `a read at ${s.offset} (byte ${s.position}), far from the damaged chunks, was refused`,
        );
        refused++;
      }
    }
    if (DAMAGED.some((c) => touches(s, c))) {
      assert.ok(
        results.every((r) => r.errorCode === StorageErrorCode.KafkaStorageError),
        `a read of the batch at byte ${s.position}, in a damaged chunk, was served`,
      );
    }
  }
  assert.ok(served > stored.length * 2 * 0.75, `most reads served (${served} of ${stored.length * 2})`);
  assert.ok(refused > 0, 'the damaged chunks were refused');
});
