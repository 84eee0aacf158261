// Appends encrypt each chunk with one GCM pass kept open across appends, and a full chunk takes its tag from that
// pass: no second pass over the chunk (SegmentCipher's sealChunk) on the append path, whether appends are
// synchronous or queued several at a time, straddle chunks or fill them exactly, or continue a partial chunk
// after a reopen (the pass catches up over the committed bytes). The tags so made verify: every batch reads back,
// and a recovery that verifies every chunk keeps them all. Where no pass saw a chunk's bytes (a commit without its
// encryption), the chunk is tagged by a pass of its own and reads back too.

import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import type { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { ENC_CHUNK_BYTES, SegmentCipher } from '../../../src/storage/encryption/segment-cipher.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { appendQueuedAwaitable, Log } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { buildBatch } from '../batch-builder.js';
import { deferCleanup, tempDir } from '../tmp-dir.js';
import { keyStoreIn } from './key-store-in.js';

const TP = { topic: 't', partition: 0 };
const CONFIG = logConfig({ encrypt: true, segmentBytes: 4 * 1024 * 1024, indexIntervalBytes: 4096 });
const LOG = '00000000000000000000.log';

/** Counts the second passes over full chunks (the private sealChunk), for the duration of the test. */
function countSealPasses(t: TestContext): { count: number } {
  const proto = SegmentCipher.prototype as unknown as { sealChunk: (...args: unknown[]) => Buffer };
  const original = proto.sealChunk;
  const counter = { count: 0 };
  proto.sealChunk = function (this: unknown, ...args: unknown[]): Buffer {
    counter.count++;
    return original.apply(this, args);
  };
  t.after(() => {
    proto.sealChunk = original;
  });
  return counter;
}

function open(dir: string, keys: KeyStore, clean: boolean): Log {
  const log = Log.open({
    dir,
    topicPartition: TP,
    config: CONFIG,
    clock: new ManualClock(),
    hadCleanShutdown: clean,
    keys,
  });
  log.setHighWatermark(log.logEndOffset);
  return log;
}

function batchFor(log: Log, i: number, bytes: number): Buffer {
  const batch = buildBatch({ values: [Buffer.alloc(bytes, 0x41 + (i % 26))], baseTimestamp: 9000 + i });
  batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
  batchHeader.setPartitionLeaderEpoch(batch, 0, 0);
  return batch;
}

function readEach(log: Log, stored: Buffer[]): (Buffer | number)[] {
  return stored.map((b) => {
    const r = log.read(toOffset(batchHeader.baseOffset(b, 0)), b.length);
    return r.errorCode === StorageErrorCode.None ? (r as { records: Buffer }).records : r.errorCode;
  });
}

/** Appends until the .log reaches `chunks` chunks: sizes vary, every fourth round queues four appends at once. */
async function fill(log: Log, dir: string, stored: Buffer[], chunks: number): Promise<void> {
  let round = 0;
  while (statSync(join(dir, LOG)).size < ENC_CHUNK_BYTES * chunks) {
    if (round % 4 === 3) {
      const written: Promise<void>[] = [];
      for (let k = 0; k < 4; k++) {
        const batch = batchFor(log, stored.length, 200 + ((stored.length * 1231) % 6000));
        const w = appendQueuedAwaitable(log, batch).acknowledged;
        if (w !== null) written.push(w);
        stored.push(batch);
      }
      await Promise.all(written);
    } else {
      const batch = batchFor(log, stored.length, 200 + ((stored.length * 997) % 9000));
      log.append(batch);
      stored.push(batch);
    }
    round++;
  }
}

test('appends tag each full chunk from the GCM pass that encrypted it, also across a reopen', async (t) => {
  const seals = countSealPasses(t);
  const root = tempDir(t);
  const dir = join(root, 'log');
  mkdirSync(dir);
  const keys = await keyStoreIn(root, dir);
  const stored: Buffer[] = [];
  const log = open(dir, keys, true);
  deferCleanup(t, () => log.isClosed || log.close());
  await fill(log, dir, stored, 6.5);
  log.setHighWatermark(log.logEndOffset);
  assert.equal(seals.count, 0, 'no full chunk was passed over a second time');
  assert.deepEqual(readEach(log, stored), stored);
  log.close();

  // A partial last chunk continued after a clean reopen: the pass catches up over its committed bytes.
  const reopened = open(dir, keys, true);
  deferCleanup(t, () => reopened.isClosed || reopened.close());
  await fill(reopened, dir, stored, 9.2);
  reopened.setHighWatermark(reopened.logEndOffset);
  assert.equal(seals.count, 0, 'the continued chunk took its tag from the caught-up pass');
  assert.equal(reopened.segmentCount, 1, 'the partial chunk was continued, not rolled past');
  assert.deepEqual(readEach(reopened, stored), stored);
  const end = reopened.logEndOffset;
  reopened.close();

  // A recovery verifies every chunk against its tag and cuts at the first that fails: it keeps them all.
  const recovered = open(dir, keys, false);
  deferCleanup(t, () => recovered.isClosed || recovered.close());
  assert.equal(recovered.logEndOffset, end);
  assert.deepEqual(readEach(recovered, stored), stored);
});

test('a chunk whose bytes no GCM pass saw is tagged by a pass of its own and reads back', async (t) => {
  const seals = countSealPasses(t);
  const root = tempDir(t);
  const dir = join(root, 'seg');
  mkdirSync(dir);
  const keys = await keyStoreIn(root, dir);
  const cipher = SegmentCipher.create(join(dir, 'x.enc'), 0, keys);
  const logFd = openSync(join(dir, 'x.log'), 'w+');
  t.after(() => {
    closeSync(logFd);
    cipher.close();
  });
  const plain = Buffer.alloc(ENC_CHUNK_BYTES * 2 + 500);
  for (let i = 0; i < plain.length; i++) plain[i] = (i * 31) & 0xff;
  const write = (bytes: Buffer, at: number): void => {
    let done = 0;
    while (done < bytes.length) done += writeSync(logFd, bytes, done, bytes.length - done, at + done);
  };
  // Through the pass: [0, 10000).
  write(cipher.encryptForWrite(plain, 0, 10_000, 0, logFd, 0), 0);
  cipher.commit(logFd, plain, 0, 10_000, 0);
  // Not through it: the rest is encrypted apart and committed without encryptForWrite.
  write(cipher.encrypt(plain, 10_000, plain.length, 10_000), 10_000);
  cipher.commit(logFd, plain, 10_000, plain.length, 10_000);
  assert.equal(seals.count, 2, 'both full chunks had a pass of their own');
  assert.equal(cipher.authenticatedLength(), plain.length);
  assert.deepEqual(cipher.readSync(logFd, 0, plain.length), plain);
  // And the pass takes over again where appends go on through encryptForWrite.
  const more = Buffer.alloc(ENC_CHUNK_BYTES, 0x5a);
  const at = plain.length;
  write(cipher.encryptForWrite(more, 0, more.length, at, logFd, at), at);
  cipher.commit(logFd, more, 0, more.length, at);
  assert.equal(seals.count, 2, 'the chunk filled through encryptForWrite took the pass tag');
  assert.deepEqual(cipher.readSync(logFd, at, more.length), more);
});
