// Encryption at rest through the wire, against a real broker process: a produced marker (records, and the
// metadata of a committed offset in __consumer_offsets) is in no file under log.dirs; the data reads back after
// restarts; a flipped byte in a segment is answered KAFKA_STORAGE_ERROR; a missing or wrong master key stops
// the broker at startup with exit code 2 and one line, touching no file; the env and http providers work.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, run, type StartOptions, startBroker } from '../helpers/broker-process.js';
import { waitForCoordinator } from '../helpers/offset-commits.js';
import {
  createTopic,
  FetchError,
  fetchBody,
  produceBatch,
  readPartition,
  WireClient,
} from '../helpers/wire-client.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const MARKER = 'ZEBRA-MARKER-4b1d9e';
const TOPIC = 'secret';
const KEY1 = randomBytes(32).toString('hex');
const KEY2 = randomBytes(32).toString('base64');

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function scratch(): { dataDir: string; keyFile: string } {
  const root = mkdtempSync(join(tmpdir(), 'brook-enc-'));
  roots.push(root);
  return { dataDir: join(root, 'data'), keyFile: join(root, 'master.key') };
}

function fileProvider(keyFile: string): Record<string, string> {
  return {
    'brook.encryption.enable': 'true',
    'brook.encryption.key.provider': 'file',
    'brook.encryption.key.file': keyFile,
    'log.segment.bytes': String(256 * 1024),
  };
}

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
    const r = await produceBatch(c, TOPIC, buildBatch([{ key: `k${i}`, value }]), -1);
    assert.equal(r.errorCode, ErrorCode.NONE, `produce ${i}`);
  }
}

async function readValues(c: WireClient): Promise<string[]> {
  return (await readPartition(c, TOPIC, 0)).map((r) => r.value!.toString());
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
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

/** Runs `brook server` to its exit (a startup failure); resolves with the exit code and stderr. */
function serverExit(
  options: StartOptions & { overrides: Record<string, string> },
): Promise<{ code: number | null; stderr: string }> {
  const args = [join(REPO_ROOT, 'bin/brook'), 'server'];
  const overrides = {
    'broker.id': '0',
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'log.dirs': options.dataDir!,
    'offsets.topic.replication.factor': '1',
    ...options.overrides,
  };
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  return new Promise((done) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(killer);
      done({ code, stderr });
    });
  });
}

/** A file's bytes, or none when it went meanwhile (a checkpoint's temporary file, on a running broker). */
function readIfPresent(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
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
        await produceMarkers(c, 0, 200);
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
        for (const f of files) {
          assert.equal(readIfPresent(f).includes(MARKER), false, `${phase}: plaintext marker in ${f}`);
        }
      }
      broker = await start();
      await withClient(broker, async (c) => {
        const values = await readValues(c);
        assert.equal(values.length, 200);
        assert.ok(values.every((v, i) => v.startsWith(`${MARKER}-${i}-`)));
        await produceMarkers(c, 200, 10);
      });
      await broker.kill();
      broker = await start();
      await withClient(broker, async (c) => assert.equal((await readValues(c)).length, 210));
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

  it('a topic opts in or out of the broker-wide setting; opting in without a key provider is refused', async () => {
    const { dataDir, keyFile } = scratch();
    writeFileSync(keyFile, `${KEY1}\n`);
    // A provider, encryption off broker-wide: only the topic that opts in is encrypted.
    let broker = await startBroker({
      dataDir,
      keepDataDir: true,
      overrides: { ...fileProvider(keyFile), 'brook.encryption.enable': 'false' },
    });
    try {
      await withClient(broker, async (c) => {
        await createTopic(c, 'plain', { numPartitions: 1, replicationFactor: 1 });
        await createTopic(c, 'opted-in', {
          numPartitions: 1,
          replicationFactor: 1,
          configs: { 'brook.encryption.enable': 'true' },
        });
        for (const topic of ['plain', 'opted-in']) {
          const r = await produceBatch(c, topic, buildBatch([{ key: 'k', value: MARKER }]), -1);
          assert.equal(r.errorCode, ErrorCode.NONE);
        }
      });
    } finally {
      await broker.stop();
    }
    const has = (topic: string) => readdirSync(join(dataDir, `${topic}-0`)).some((n) => n.endsWith('.enc'));
    assert.equal(has('opted-in'), true);
    assert.equal(has('plain'), false);
    assert.equal(
      readFileSync(join(dataDir, 'opted-in-0', '00000000000000000000.log')).includes(MARKER),
      false,
    );
    assert.equal(readFileSync(join(dataDir, 'plain-0', '00000000000000000000.log')).includes(MARKER), true);
    // No provider at all: opting in is refused with INVALID_CONFIG.
    broker = await startBroker();
    try {
      await withClient(broker, async (c) => {
        const response = await c.call(ApiKey.CREATE_TOPICS, 5, {
          topics: [
            {
              name: 'wants-encryption',
              numPartitions: 1,
              replicationFactor: 1,
              assignments: [],
              configs: [{ name: 'brook.encryption.enable', value: 'true' }],
            },
          ],
          timeoutMs: 10_000,
          validateOnly: false,
        });
        assert.equal(response.topics[0].errorCode, ErrorCode.INVALID_CONFIG);
        assert.match(response.topics[0].errorMessage, /brook\.encryption\.key\.provider/);
      });
    } finally {
      await broker.stop();
    }
  });

  it('the env provider reads the master key from the environment; unset, the broker stops with exit code 2', async () => {
    const { dataDir } = scratch();
    const overrides = {
      'brook.encryption.enable': 'true',
      'brook.encryption.key.provider': 'env',
      'brook.encryption.key.env': 'TEST_BROOK_MASTER',
    };
    const broker = await startBroker({
      dataDir,
      keepDataDir: true,
      overrides,
      env: { TEST_BROOK_MASTER: `env1:${KEY2}` },
    });
    try {
      await withClient(broker, async (c) => {
        await createTopic(c, TOPIC, { numPartitions: 1, replicationFactor: 1 });
        await produceMarkers(c, 0, 5);
        assert.equal((await readValues(c)).length, 5);
      });
    } finally {
      await broker.stop();
    }
    const unset = await serverExit({ dataDir, overrides });
    assert.equal(unset.code, 2, unset.stderr);
    assert.match(
      unset.stderr,
      /brook\.encryption\.key\.env=TEST_BROOK_MASTER: environment variable TEST_BROOK_MASTER is not set/,
    );
  });

  it('the http provider wraps and unwraps through a key service; the service down stops the broker at startup', async () => {
    const { dataDir } = scratch();
    const service = await startKeyService();
    const overrides = {
      'brook.encryption.enable': 'true',
      'brook.encryption.key.provider': 'http',
      'brook.encryption.key.http.url': service.url,
      'brook.encryption.key.http.token': 'sesame',
    };
    try {
      let broker = await startBroker({ dataDir, keepDataDir: true, overrides });
      try {
        await withClient(broker, async (c) => {
          await createTopic(c, TOPIC, { numPartitions: 1, replicationFactor: 1 });
          await produceMarkers(c, 0, 5);
        });
      } finally {
        await broker.stop();
      }
      assert.ok(service.calls.wrap >= 1, 'a key-encryption key was wrapped by the service');
      broker = await startBroker({ dataDir, keepDataDir: true, overrides });
      try {
        await withClient(broker, async (c) => assert.equal((await readValues(c)).length, 5));
      } finally {
        await broker.stop();
      }
      assert.ok(service.calls.unwrap >= 1, 'unwrapped through the service at startup');
      const refused = await serverExit({
        dataDir,
        overrides: { ...overrides, 'brook.encryption.key.http.token': 'wrong' },
      });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /brook\.encryption\.key\.http\.url=.*answered 403/);
    } finally {
      await service.close();
    }
  });
});

/**
 * The test key service: the documented wrap/unwrap contract over AES-256-GCM with a key of its own, requiring a
 * bearer token, counting calls.
 */
async function startKeyService(): Promise<{
  url: string;
  calls: { wrap: number; unwrap: number };
  close(): Promise<void>;
}> {
  const key = randomBytes(32);
  const calls = { wrap: 0, unwrap: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const answer = (status: number, json: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.headers.authorization !== 'Bearer sesame') return answer(403, { error: 'bad token' });
      const input = JSON.parse(body) as { keyId?: string; plaintext?: string; ciphertext?: string };
      if (req.url === '/wrap') {
        calls.wrap++;
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', key, iv);
        const ct = Buffer.concat([
          c.update(Buffer.from(input.plaintext!, 'base64')),
          c.final(),
          c.getAuthTag(),
        ]);
        return answer(200, { keyId: 'svc-v1', ciphertext: Buffer.concat([iv, ct]).toString('base64') });
      }
      if (req.url === '/unwrap') {
        calls.unwrap++;
        if (input.keyId !== 'svc-v1') return answer(404, { error: 'unknown key' });
        const raw = Buffer.from(input.ciphertext!, 'base64');
        const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        d.setAuthTag(raw.subarray(raw.length - 16));
        try {
          const plain = Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]);
          return answer(200, { plaintext: plain.toString('base64') });
        } catch {
          return answer(400, { error: 'does not unwrap' });
        }
      }
      answer(404, { error: 'no such operation' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
