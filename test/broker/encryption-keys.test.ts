// Encryption at rest through the wire, the key side: per-topic opt in and out, the env and http providers (a test
// key service with the documented contract), and master key rotation under a running producer and consumer,
// with the re-wrap of older keys and the refusal to retire a master key that data still depends on.

import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, fetchBody, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';
import { fileProvider, scratch, serverExit } from './encryption-helpers.js';

const MARKER = 'ZEBRA-MARKER-4b1d9e';
const TOPIC = 'secret';
const KEY1 = randomBytes(32).toString('hex');
const KEY2 = randomBytes(32).toString('base64');

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

function partitionDir(dataDir: string): string {
  return join(dataDir, `${TOPIC}-0`);
}

describe('encryption keys', () => {
  it('a topic opts in or out of the broker-wide setting; opting in without a key provider is refused (create or alter)', async () => {
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
        // Nor can an existing topic be altered to opt in.
        await createTopic(c, 'plain-here', { numPartitions: 1, replicationFactor: 1 });
        const altered = await c.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
          resources: [
            {
              resourceType: 2,
              resourceName: 'plain-here',
              configs: [{ name: 'brook.encryption.enable', configOperation: 0, value: 'true' }],
            },
          ],
          validateOnly: false,
        });
        assert.equal(altered.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
        assert.match(altered.responses[0].errorMessage, /brook\.encryption\.key\.provider/);
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
      // The first start unwrapped its new key once to check it: count the second start's calls alone.
      service.calls.unwrap = 0;
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

  it('a topic with data, encrypted from a restart on: online, its epochs rebuilt from the log and sealed', async () => {
    const { dataDir, keyFile } = scratch();
    writeFileSync(keyFile, `k1:${KEY1}\n`);
    const encrypted = fileProvider(keyFile);
    const plain = { ...encrypted, 'brook.encryption.enable': 'false' };
    let broker = await startBroker({ dataDir, keepDataDir: true, overrides: plain });
    try {
      await withClient(broker, async (c) => {
        await createTopic(c, TOPIC, { numPartitions: 1, replicationFactor: 1 });
        await produceMarkers(c, 0, 5);
      });
    } finally {
      await broker.stop();
    }
    const checkpoint = join(partitionDir(dataDir), 'leader-epoch-checkpoint');
    assert.ok(!readFileSync(checkpoint).subarray(0, 4).equals(Buffer.from('BRKF')), 'plaintext before');
    broker = await startBroker({ dataDir, keepDataDir: true, overrides: encrypted });
    try {
      await withClient(broker, async (c) => {
        await produceMarkers(c, 5, 5);
        assert.equal((await readValues(c)).length, 10);
      });
      assert.match(broker.log(), /leader-epoch-checkpoint: not encrypted.*rebuilt from the log/);
    } finally {
      await broker.stop();
    }
    assert.ok(readFileSync(checkpoint).subarray(0, 4).equals(Buffer.from('BRKF')), 'sealed after');
  });

  it('with several log directories, their key stores are unwrapped at once, not one after another', async () => {
    const { dataDir } = scratch();
    const service = await startKeyService();
    const overrides = {
      'log.dirs': ['a', 'b', 'c'].map((d) => join(dataDir, d)).join(','),
      'brook.encryption.enable': 'true',
      'brook.encryption.key.provider': 'http',
      'brook.encryption.key.http.url': service.url,
      'brook.encryption.key.http.token': 'sesame',
    };
    try {
      // The first start makes a key-encryption key in each directory.
      await (await startBroker({ dataDir, keepDataDir: true, overrides })).stop();
      service.calls.unwrapDelayMs = 300;
      const broker = await startBroker({ dataDir, keepDataDir: true, overrides });
      await broker.stop();
      assert.equal(service.calls.unwrapsWaitingMax, 3, 'one unwrap per directory, all three waiting at once');
    } finally {
      await service.close();
    }
  });

  it('rotation under a running producer and consumer: no error, new segments use the new key, old keys re-wrapped', async () => {
    const { dataDir, keyFile } = scratch();
    const k1 = randomBytes(32).toString('hex');
    const k2 = randomBytes(32).toString('hex');
    const k3 = randomBytes(32).toString('hex');
    writeFileSync(keyFile, `k1:${k1}\n`);
    const overrides = {
      ...fileProvider(keyFile),
      'log.segment.bytes': String(64 * 1024),
      'brook.encryption.key.rotation.check.interval.ms': '200',
    };
    let broker = await startBroker({ dataDir, keepDataDir: true, overrides });
    try {
      const producer = await WireClient.connect(broker.host, broker.port);
      const consumer = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(producer, TOPIC, { numPartitions: 1, replicationFactor: 1 });
        const errors: string[] = [];
        let running = true;
        // Set once the last produce is answered: the consumer must not stop before that record is counted.
        let producing = true;
        let produced = 0;
        let slowestMs = 0;
        const produce = (async () => {
          while (running) {
            const started = Date.now();
            const value = `r${produced}-${'y'.repeat(1500)}`;
            const r = await produceBatch(producer, TOPIC, buildBatch([{ key: null, value }]), -1);
            slowestMs = Math.max(slowestMs, Date.now() - started);
            if (r.errorCode !== ErrorCode.NONE) errors.push(`produce ${produced}: error ${r.errorCode}`);
            else produced++;
          }
          producing = false;
        })();
        let consumed = 0;
        const consume = async (until: () => boolean) => {
          while (!until()) {
            const response = await consumer.call(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, consumed, 100));
            const data = response.responses[0].partitions[0];
            if (data.errorCode !== 0) {
              errors.push(`fetch at ${consumed}: error ${data.errorCode}`);
              return;
            }
            for (const record of recordsOf(data.records, consumed)) {
              if (!record.value.startsWith(`r${consumed}-`))
                errors.push(`record ${consumed}: ${record.value.slice(0, 20)}`);
              consumed++;
            }
          }
        };
        const consuming = consume(() => !producing && consumed >= produced);
        await sleep(1500);
        appendFileSync(keyFile, `k2:${k2}\n`);
        await waitFor(() => broker.log().includes("master key 'k2' is current"), 15_000, 'rotation to k2');
        await sleep(1500);
        running = false;
        await produce;
        await consuming;
        assert.deepEqual(errors, []);
        assert.ok(produced > 20, `produced ${produced}`);
        assert.equal(consumed, produced);
        assert.ok(slowestMs < 5000, `slowest produce ${slowestMs} ms`);
      } finally {
        producer.close();
        consumer.close();
      }
      const store = JSON.parse(readFileSync(join(dataDir, 'encryption.keys'), 'utf8')) as {
        current: string;
        keks: { id: string; masterKeyId: string }[];
      };
      assert.ok(store.keks.length >= 2, 'a new key-encryption key for the new master key');
      assert.deepEqual(
        store.keks.map((k) => k.masterKeyId),
        store.keks.map(() => 'k2'),
        'every older key re-wrapped under k2',
      );
      const kekIdsInUse = new Set(
        readdirSync(partitionDir(dataDir))
          .filter((n) => n.endsWith('.enc'))
          .map((n) => readFileSync(join(partitionDir(dataDir), n)).toString('ascii', 13, 29)),
      );
      assert.ok(kekIdsInUse.has(store.current), 'segments made after the rotation use the new key');
      assert.ok(kekIdsInUse.size >= 2, 'segments made before it keep theirs');
      // k1 wraps nothing any more: taking it out of the file is accepted silently.
      writeFileSync(keyFile, `k2:${k2}\n`);
      await sleep(800);
      assert.doesNotMatch(broker.log(), /retirement refused/);
    } finally {
      await broker.stop();
    }
    // Without k1 the data still reads: nothing depends on it.
    broker = await startBroker({ dataDir, keepDataDir: true, overrides });
    try {
      await withClient(broker, async (c) => assert.ok((await readValues(c)).length > 20));
      // k2 replaced by k3 while key-encryption keys depend on k2: the retirement is refused (logged, k2 kept)
      // until they are re-wrapped under k3.
      writeFileSync(keyFile, `k3:${k3}\n`);
      await waitFor(() => broker.log().includes("master key 'k3' is current"), 15_000, 'rotation to k3');
      assert.match(
        broker.log(),
        /master key 'k2' was removed .* retirement refused until they are re-wrapped/,
      );
    } finally {
      await broker.stop();
    }
    // A start with only k2, now that everything depends on k3: refused at startup, naming the key.
    writeFileSync(keyFile, `k2:${k2}\n`);
    const refused = await serverExit({ dataDir, overrides });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /master key 'k3'/);
  });

  it('a key service url with a password in it stops the broker at startup without printing the password', async () => {
    const { dataDir } = scratch();
    const refused = await serverExit({
      dataDir,
      overrides: {
        'brook.encryption.enable': 'true',
        'brook.encryption.key.provider': 'http',
        'brook.encryption.key.http.url': 'http://brook:s3cr3t-pw@127.0.0.1:9/',
      },
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /brook\.encryption\.key\.http\.url=.*must not hold credentials/);
    assert.ok(!refused.stderr.includes('s3cr3t-pw'), refused.stderr);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The records of a fetch answer from `from` on, as strings. */
function recordsOf(bytes: Buffer, from: number): { offset: number; value: string }[] {
  const out: { offset: number; value: string }[] = [];
  for (let pos = 0; pos + 12 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
    if (pos + 12 + bytes.readInt32BE(pos + 8) > bytes.length) break;
    for (const r of readRecords(bytes, pos))
      if (r.offset >= from) out.push({ offset: r.offset, value: r.value!.toString() });
  }
  return out;
}

/**
 * The test key service: the documented wrap/unwrap contract over AES-256-GCM with a key of its own, requiring a
 * bearer token, counting calls.
 */
async function startKeyService(): Promise<{
  url: string;
  /** `unwrapDelayMs` holds each unwrap answer back; `unwrapsWaitingMax` counts the most held at once. */
  calls: {
    wrap: number;
    unwrap: number;
    unwrapDelayMs: number;
    unwrapsWaiting: number;
    unwrapsWaitingMax: number;
  };
  close(): Promise<void>;
}> {
  const key = randomBytes(32);
  const calls = { wrap: 0, unwrap: 0, unwrapDelayMs: 0, unwrapsWaiting: 0, unwrapsWaitingMax: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    const respond = () => {
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
    };
    req.on('end', () => {
      if (req.url !== '/unwrap' || calls.unwrapDelayMs === 0) {
        respond();
        return;
      }
      calls.unwrapsWaiting++;
      calls.unwrapsWaitingMax = Math.max(calls.unwrapsWaitingMax, calls.unwrapsWaiting);
      setTimeout(() => {
        calls.unwrapsWaiting--;
        respond();
      }, calls.unwrapDelayMs);
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
