// `brook dump-log` on an encrypted segment's index files: the .txnindex (aborted transactions: producer ids and
// offsets) is decrypted with the master key like the .index and .timeindex, printed as Kafka prints it, and
// without the key the tool says the file is encrypted instead of printing ciphertext as entries.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { batchHeader } from '../../../src/protocol/records/batch-header.js';
import { KeyStore } from '../../../src/storage/encryption/key-store.js';
import { FileKeyProvider } from '../../../src/storage/encryption/local-key-providers.js';
import { Log } from '../../../src/storage/log.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { run } from '../../helpers/broker-process.js';
import { type BatchSpec, buildBatch } from '../batch-builder.js';
import { tempDir } from '../tmp-dir.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
const PID = 0x5eed_1234_5;

test('dump-log decrypts an encrypted .txnindex with the key file, and refuses without it', async (t) => {
  const root = tempDir(t);
  const keyFile = join(root, 'master.key');
  writeFileSync(keyFile, `k1:${randomBytes(32).toString('hex')}\n`);
  // The tool finds encryption.keys in the log directory, the parent of the partition directory.
  const logDir = join(root, 'logs');
  const dir = join(logDir, 't-0');
  mkdirSync(dir, { recursive: true });
  const keys = await KeyStore.load(logDir, new FileKeyProvider(keyFile));
  await keys.ensureCurrent(0);
  const log = Log.open({
    dir,
    topicPartition: { topic: 't', partition: 0 },
    config: logConfig({ encrypt: true }),
    clock: new ManualClock(),
    hadCleanShutdown: true,
    keys,
  });
  const append = (spec: BatchSpec): void => {
    const batch = buildBatch({ baseTimestamp: 1000, ...spec });
    batchHeader.setBaseOffset(batch, 0, log.logEndOffset);
    log.append(batch);
  };
  const aborted: { first: number; last: number }[] = [];
  for (let i = 0; i < 30; i++) {
    if (i % 10 === 5) {
      const first = log.logEndOffset;
      append({ producerId: PID, producerEpoch: 0, baseSequence: i, transactional: true, count: 2 });
      aborted.push({ first, last: log.logEndOffset });
      append({ producerId: PID, producerEpoch: 0, control: { type: 0, coordinatorEpoch: 1 } });
      continue;
    }
    append({ values: [Buffer.alloc(200, i)] });
  }
  log.close();
  const txnIndex = join(dir, readdirSync(dir).find((n) => n.endsWith('.txnindex'))!);
  // Encrypted on disk: the producer id is not in the file.
  const pidBytes = Buffer.alloc(8);
  pidBytes.writeBigInt64BE(BigInt(PID));
  assert.equal(
    readFileSync(txnIndex).includes(pidBytes),
    false,
    'the .txnindex holds no plaintext producer id',
  );

  const brook = join(REPO_ROOT, 'bin/brook');
  const dumped = await run(process.execPath, [brook, 'dump-log', '--files', txnIndex, '--key-file', keyFile]);
  assert.equal(dumped.code, 0, dumped.stderr);
  const lines = dumped.stdout.split('\n').filter((l) => l.startsWith('version:'));
  assert.deepEqual(
    lines.map((l) => /producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+)/.exec(l)?.slice(1).map(Number)),
    aborted.map((a) => [PID, a.first, a.last]),
  );
  const blind = await run(process.execPath, [brook, 'dump-log', '--files', txnIndex]);
  assert.equal(blind.code, 1);
  assert.match(
    blind.stderr,
    /is encrypted \(00000000000000000000\.enc\): pass --encryption-config or --key-file/,
  );
  assert.equal(blind.stdout.includes('producerId'), false);
});
