// A byte flipped in each kind of file of an encrypted log directory is detected: the log either refuses to open
// with a clear error (the key store, a segment's key header), or every read answers the exact bytes written or
// KAFKA_STORAGE_ERROR, never other data. Indexes are encrypted but not authenticated, snapshots and the epoch
// checkpoint are sealed with AES-GCM; their damage is caught as it always was (index entries checked against the
// decrypted batches, a snapshot that does not open is skipped for an older one and a replay), which this test
// holds them to as well.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  cpSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { toOffset } from '../../../src/common/ids.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';
import { StorageErrorCode } from '../../../src/storage/error-codes.js';
import { Log } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { type BatchSpec, buildBatch, seededRandom } from '../batch-builder.js';
import { tempDir } from '../tmp-dir.js';

const TP = { topic: 't', partition: 0 };
const CONFIG = logConfig({ encrypt: true, segmentBytes: 150 * 1024, indexIntervalBytes: 2048 });
const PID = 900;

async function pristine(root: string): Promise<{ dir: string; keyFile: string; all: Buffer; end: number }> {
  const dir = join(root, 'pristine');
  const keyFile = join(root, 'master.key');
  writeFileSync(keyFile, `t1:${randomBytes(32).toString('hex')}\n`);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir);
  const keys = await KeyStore.load(dir, new FileKeyProvider(keyFile));
  await keys.ensureCurrent(0);
  const clock = new ManualClock();
  const log = Log.open({ dir, topicPartition: TP, config: CONFIG, clock, hadCleanShutdown: true, keys });
  const append = (spec: BatchSpec): void => {
    const batch = buildBatch({ baseTimestamp: 1000 + log.logEndOffset, ...spec });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    batchHeader.setPartitionLeaderEpoch(batch, 0, 0);
    log.append(batch);
  };
  for (let i = 0; i < 400; i++) {
    if (i % 50 === 10) {
      // An aborted transaction, so segments have .txnindex files too.
      append({ producerId: PID, producerEpoch: 0, baseSequence: i, transactional: true, count: 2 });
      append({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 1 } });
      continue;
    }
    append({ values: [Buffer.alloc(900, i & 0xff)] });
  }
  log.setHighWatermark(log.logEndOffset);
  const end = log.logEndOffset;
  const all = readAll(log);
  log.close();
  return { dir, keyFile, all, end };
}

function readAll(log: Log): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset < log.logEndOffset) {
    const r = log.read(toOffset(offset), 1 << 20);
    assert.equal(r.errorCode, StorageErrorCode.None);
    const records = (r as { records: Buffer; nextOffset: number }).records;
    parts.push(records);
    offset = (r as { nextOffset: number }).nextOffset;
  }
  return Buffer.concat(parts);
}

function flip(path: string, position: number): void {
  const fd = openSync(path, 'r+');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, position);
  b[0]! ^= 0x10;
  writeSync(fd, b, 0, 1, position);
  closeSync(fd);
}

const KINDS: {
  kind: string;
  match: (name: string) => boolean;
  mustRefuseOpen?: boolean;
  headerOnly?: boolean;
}[] = [
  { kind: '.log', match: (n) => n.endsWith('.log') },
  { kind: '.enc tag records', match: (n) => n.endsWith('.enc') },
  { kind: '.enc header', match: (n) => n.endsWith('.enc'), mustRefuseOpen: true, headerOnly: true },
  { kind: '.index', match: (n) => n.endsWith('.index') },
  { kind: '.timeindex', match: (n) => n.endsWith('.timeindex') },
  { kind: '.txnindex', match: (n) => n.endsWith('.txnindex') },
  { kind: '.snapshot', match: (n) => n.endsWith('.snapshot') },
  { kind: 'leader-epoch-checkpoint', match: (n) => n === 'leader-epoch-checkpoint' },
  { kind: 'encryption.keys', match: (n) => n === 'encryption.keys', mustRefuseOpen: true },
];

test('a byte flipped in each kind of file is detected, never served as data', async (t) => {
  const root = tempDir(t);
  const p = await pristine(root);
  const random = seededRandom(5);
  let copies = 0;
  for (const k of KINDS) {
    const files = readdirSync(p.dir).filter(k.match);
    assert.ok(files.length > 0, `the pristine log has ${k.kind} files`);
    for (let trial = 0; trial < 3; trial++) {
      const dir = join(root, `copy-${copies++}`);
      cpSync(p.dir, dir, { recursive: true });
      const name = files[Math.floor(random() * files.length)]!;
      const size = statSync(join(dir, name)).size;
      const position = k.headerOnly
        ? Math.floor(random() * 200)
        : k.kind === '.enc tag records'
          ? 512 + Math.floor(random() * (size - 512))
          : Math.floor(random() * size);
      flip(join(dir, name), position);
      const where = `${k.kind}: ${name} at ${position}`;
      let log: Log;
      try {
        const keys = await KeyStore.load(dir, new FileKeyProvider(p.keyFile));
        log = Log.open({
          dir,
          topicPartition: TP,
          config: CONFIG,
          clock: new ManualClock(),
          hadCleanShutdown: true,
          keys,
        });
      } catch (err) {
        // Refusing to open is detection: the error names what is wrong.
        assert.match(
          (err as Error).message,
          /encryption|checksum|wrapped|damaged|JSON|unwrap|authentication|header/,
          where,
        );
        continue;
      }
      assert.ok(!k.mustRefuseOpen, `${where}: opened with a damaged ${k.kind}`);
      try {
        log.setHighWatermark(log.logEndOffset);
        let offset = 0;
        while (offset < log.logEndOffset) {
          const r = log.read(toOffset(offset), 64 * 1024);
          if (r.errorCode === StorageErrorCode.KafkaStorageError) break; // refused: detected
          assert.equal(r.errorCode, StorageErrorCode.None, where);
          const { records, firstOffset, nextOffset } = r as {
            records: Buffer;
            firstOffset: number;
            nextOffset: number;
          };
          if (records.length === 0) break;
          // Whatever is served is exactly what was written at those offsets.
          const at = p.all.indexOf(records.subarray(0, 61));
          assert.ok(at >= 0, `${where}: served bytes at ${firstOffset} that were never written`);
          assert.deepEqual(
            records,
            p.all.subarray(at, at + records.length),
            `${where}: batches at ${firstOffset}`,
          );
          offset = nextOffset;
        }
      } finally {
        log.close();
      }
    }
  }
});
