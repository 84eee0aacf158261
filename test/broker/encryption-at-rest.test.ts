// Encryption at rest through the wire, against a real broker process: a produced marker (records, and the
// metadata of a committed offset in __consumer_offsets) is in no file under log.dirs; the data reads back after
// restarts; a flipped byte in a segment is answered KAFKA_STORAGE_ERROR; a missing or wrong master key stops
// the broker at startup with exit code 2 and one line, touching no file; the env and http providers work.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { waitForCoordinator } from '../helpers/offset-commits.js';
import {
  createTopic,
  FetchError,
  fetchBody,
  produceBatch,
  readPartition,
  WireClient,
} from '../helpers/wire-client.js';
import {
  fileProvider,
  filesUnder,
  REPO_ROOT,
  readIfPresent,
  scratch,
  serverExit,
} from './encryption-helpers.js';

const MARKER = 'ZEBRA-MARKER-4b1d9e';
/** Record timestamps of the produced markers: they reach the .timeindex files, which must not show them. */
const MARKER_TS = 1_234_567_890_123;
const TOPIC = 'secret';
const KEY1 = randomBytes(32).toString('hex');

async function withClient<T>(broker: BrokerProcess, fn: (c: WireClient) => Promise<T>): Promise<T> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

async function produceMarkers(c: WireClient, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const value = `${MARKER}-${i}-${'x'.repeat(2000)}`;
    const r = await produceBatch(
      c,
      TOPIC,
      buildBatch([{ key: `k${i}`, value }], { timestamp: MARKER_TS + i }),
      -1,
    );
    assert.equal(r.errorCode, ErrorCode.NONE, `produce ${i}`);
  }
}

async function readValues(c: WireClient): Promise<string[]> {
  return (await readPartition(c, TOPIC, 0)).map((r) => r.value!.toString());
}

/** Names, sizes and modification times of everything under `dir`: "touched no file" compares two of these. */
function fingerprintOf(dir: string): string {
  return filesUnder(dir)
    .map((f) => {
      const s = statSync(f);
      return `${f} ${s.size} ${s.mtimeMs}`;
    })
    .sort()
    .join('\n');
}

function partitionDir(dataDir: string): string {
  return join(dataDir, `${TOPIC}-0`);
}

function flipByte(path: string, position: number): void {
  const fd = openSync(path, 'r+');
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, position);
  b[0]! ^= 0x01;
  writeSync(fd, b, 0, 1, position);
  closeSync(fd);
}

describe('encryption at rest', () => {
  it('a produced marker is in no file under log.dirs, and every record reads back after restarts', async () => {
    const { dataDir, keyFile } = scratch();
    writeFileSync(keyFile, `${KEY1}\n`);
    const start = () => startBroker({ dataDir, keepDataDir: true, overrides: fileProvider(keyFile) });
    let broker = await start();
    try {
      await withClient(broker, async (c) => {
        await createTopic(c, TOPIC, { numPartitions: 1, replicationFactor: 1 });
        await produceMarkers(c, 0, 120);
        // Committed-offset metadata is user data too, stored in __consumer_offsets.
        await waitForCoordinator(c, `${MARKER}-group`);
        const commit = await c.call(ApiKey.OFFSET_COMMIT, 8, {
          groupId: `${MARKER}-group`,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics: [
            {
              name: TOPIC,
              partitions: [
                {
                  partitionIndex: 0,
                  committedOffset: 5n,
                  committedLeaderEpoch: -1,
                  commitTimestamp: -1n,
                  committedMetadata: `${MARKER}-metadata`,
                },
              ],
            },
          ],
        });
        assert.equal(commit.topics[0].partitions[0].errorCode, ErrorCode.NONE);
      });
      // Before and after a clean shutdown (which writes snapshots and checkpoints).
      for (const phase of ['running', 'stopped']) {
        if (phase === 'stopped') assert.equal(await broker.stop(), 0);
        const files = filesUnder(dataDir);
        assert.ok(
          files.some((f) => f.endsWith('.enc')),
          'encrypted segments exist',
        );
        assert.ok(
          files.some((f) => f.includes('__consumer_offsets') && f.endsWith('.enc')),
          'internal topic encrypted',
        );
        // The 120 timestamps share their top six bytes: one search finds any of them (random bytes match it with
        // odds of 2^-48 per position).
        const tsPrefix = Buffer.alloc(8);
        tsPrefix.writeBigInt64BE(BigInt(MARKER_TS));
        assert.equal(Math.floor((MARKER_TS + 119) / 65536), Math.floor(MARKER_TS / 65536));
        for (const f of files) {
          const bytes = readIfPresent(f);
          assert.equal(bytes.includes(MARKER), false, `${phase}: plaintext marker in ${f}`);
          assert.equal(
            bytes.includes(tsPrefix.subarray(0, 6)),
            false,
            `${phase}: a record timestamp in ${f}`,
          );
        }
        const topicFiles = readdirSync(partitionDir(dataDir));
        assert.ok(
          topicFiles.some(
            (n) => n.endsWith('.timeindex') && statSync(join(partitionDir(dataDir), n)).size > 0,
          ),
        );
        // Producer snapshots and the epoch checkpoint are sealed (encryption/file-seal.ts), not text or Kafka's layout.
        for (const n of topicFiles.filter(
          (n) => n.endsWith('.snapshot') || n === 'leader-epoch-checkpoint',
        )) {
          const bytes = readIfPresent(join(partitionDir(dataDir), n));
          if (bytes.length > 0) assert.equal(bytes.subarray(0, 4).toString(), 'BRKF', `${n} is sealed`);
        }
      }
      broker = await start();
      await withClient(broker, async (c) => {
        const values = await readValues(c);
        assert.equal(values.length, 120);
        assert.ok(values.every((v, i) => v.startsWith(`${MARKER}-${i}-`)));
        await produceMarkers(c, 120, 10);
      });
      await broker.kill();
      broker = await start();
      await withClient(broker, async (c) => assert.equal((await readValues(c)).length, 130));
    } finally {
      await broker.stop();
    }
    // brook dump-log decrypts with the provider, and says clearly when it has none.
    const segment = readdirSync(partitionDir(dataDir)).find((n) => n.endsWith('.log'))!;
    const segmentPath = join(partitionDir(dataDir), segment);
    const brook = join(REPO_ROOT, 'bin/brook');
    const blind = await run(process.execPath, [
      brook,
      'dump-log',
      '--files',
      segmentPath,
      '--print-data-log',
    ]);
    assert.equal(blind.code, 1);
    assert.match(
      blind.stderr,
      /is encrypted \(00000000000000000000\.enc\): pass --encryption-config or --key-file/,
    );
    assert.equal(blind.stdout.includes(MARKER), false);
    const dumped = await run(process.execPath, [
      brook,
      'dump-log',
      '--files',
      segmentPath,
      '--print-data-log',
      '--key-file',
      keyFile,
    ]);
    assert.equal(dumped.code, 0, dumped.stderr);
    assert.match(dumped.stdout, new RegExp(`payload: ${MARKER}-0-x`));
    assert.match(dumped.stdout, /isvalid: true/);
    // The segment's time index is encrypted too: dump-log decrypts it with the same key, and without says why not.
    const timeIndex = segmentPath.replace(/\.log$/, '.timeindex');
    const index = await run(process.execPath, [
      brook,
      'dump-log',
      '--files',
      timeIndex,
      '--key-file',
      keyFile,
    ]);
    assert.equal(index.code, 0, index.stderr);
    assert.match(index.stdout, /timestamp: 12345678901\d\d offset: \d+/);
    const blindIndex = await run(process.execPath, [brook, 'dump-log', '--files', timeIndex]);
    assert.equal(blindIndex.code, 1);
    assert.match(blindIndex.stderr, /is encrypted \(00000000000000000000\.enc\)/);
    // A flipped byte in the first segment: fetches of it are refused, never served.

    flipByte(segmentPath, 3000);
    const tampered = await run(process.execPath, [
      brook,
      'dump-log',
      '--files',
      segmentPath,
      '--key-file',
      keyFile,
    ]);
    assert.equal(tampered.code, 1);
    assert.match(tampered.stderr, /stopped at position 0: .*fails authentication/);
    broker = await start();
    try {
      await withClient(broker, async (c) => {
        const response = await c.call(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0));
        const data = response.responses[0].partitions[0];
        assert.equal(data.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
        assert.equal(data.records.length, 0);
        await assert.rejects(readValues(c), (e: unknown) => e instanceof FetchError);
      });
      assert.match(broker.log(), /fails authentication/);
    } finally {
      await broker.stop();
    }

    // A wrong master key (another key under the same place) and a missing key file: exit code 2, one line naming
    // the key, and not a file touched.
    const before = fingerprintOf(dataDir);
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`);
    const wrong = await serverExit({ dataDir, overrides: fileProvider(keyFile) });
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(wrong.stderr, /invalid configuration: brook\.encryption\.key\.file=.*cannot unwrap/);
    rmSync(keyFile);
    const missing = await serverExit({ dataDir, overrides: fileProvider(keyFile) });
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /brook\.encryption\.key\.file=.*cannot be read/);
    const noProvider = await serverExit({ dataDir, overrides: {} });
    assert.equal(noProvider.code, 2, noProvider.stderr);
    assert.match(noProvider.stderr, /brook\.encryption\.key\.provider.*encrypted segments/);
    assert.equal(fingerprintOf(dataDir), before, 'a failed start touched no file');
  });
});
