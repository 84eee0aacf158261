// Encryption at rest through the wire, what the other broker tests leave out: with encryption on broker-wide, a
// topic that opts out (brook.encryption.enable=false) stays plaintext while a compacted topic's cleaned segments
// and __transaction_state (a transactional id is client data) hold no marker; `brook dump-log
// --encryption-config` reads them with the broker's settings; a topic altered to opt in (or out) stores what is
// appended after the change as it now asks; and a key service that is down stops the broker at
// startup with exit code 2, one line naming the key, and no data directory made.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { run, startBroker } from '../helpers/broker-process.js';
import { transactionCompleted } from '../helpers/txn-session.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import {
  fileProvider,
  filesUnder,
  REPO_ROOT,
  readIfPresent,
  scratch,
  serverExit,
} from './encryption-helpers.js';

const MARKER = 'OKAPI-MARKER-7e3a';
const KEYS = 20;
const ROUNDS = 6;

describe('encryption at rest: opt-out, compaction, transactions, dump-log config, key service down', () => {
  it('broker-wide on: an opted-out topic is plaintext; cleaned segments and __transaction_state hold no marker', async () => {
    const { root, dataDir, keyFile } = scratch();
    writeFileSync(keyFile, `m1:${randomBytes(32).toString('hex')}\n`);
    const broker = await startBroker({
      dataDir,
      keepDataDir: true,
      overrides: {
        ...fileProvider(keyFile),
        'log.cleaner.backoff.ms': 200,
        'transaction.state.log.num.partitions': 1,
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.min.isr': 1,
      },
    });
    let stopped = false;
    try {
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, 'opted-out', {
          numPartitions: 1,
          replicationFactor: 1,
          configs: { 'brook.encryption.enable': 'false' },
        });
        const plain = await produceBatch(client, 'opted-out', buildBatch([{ key: 'k', value: MARKER }]), -1);
        assert.equal(plain.errorCode, ErrorCode.NONE);

        await createTopic(client, 'table', {
          numPartitions: 1,
          replicationFactor: 1,
          configs: {
            'cleanup.policy': 'compact',
            'segment.bytes': '8192',
            'min.cleanable.dirty.ratio': '0.01',
          },
        });
        for (let round = 0; round < ROUNDS; round++) {
          for (let k = 0; k < KEYS; k++) {
            const value = `${MARKER}-k${k}-r${round}-`.padEnd(400, 'x');
            const r = await produceBatch(client, 'table', buildBatch([{ key: `key-${k}`, value }]), -1);
            assert.equal(r.errorCode, ErrorCode.NONE);
          }
        }
        // Unique keys after the data, so that all of it leaves the active segment (which is never cleaned).
        for (let i = 0; i < 20; i++) {
          const r = await produceBatch(
            client,
            'table',
            buildBatch([{ key: `filler-${i}`, value: 'f'.repeat(400) }]),
            -1,
          );
          assert.equal(r.errorCode, ErrorCode.NONE);
        }
        // The cleaner's output: one record per key, the last round's.
        const deadline = Date.now() + 120_000;
        for (;;) {
          const keyed = (await readPartition(client, 'table', 0)).filter((r) =>
            r.key?.toString().startsWith('key-'),
          );
          if (keyed.length === KEYS) {
            for (const r of keyed) assert.match(r.value!.toString(), new RegExp(`-r${ROUNDS - 1}-`));
            break;
          }
          assert.ok(Date.now() < deadline, `the cleaner left ${keyed.length} keyed records, not ${KEYS}`);
          await sleep(500);
        }

        const producer = new Producer({
          bootstrapServers: `127.0.0.1:${broker.port}`,
          transactionalId: `${MARKER}-txn`,
        });
        try {
          await producer.initTransactions();
          producer.beginTransaction();
          await producer.send({
            topic: 'table',
            partition: 0,
            key: Buffer.from('txn-key'),
            value: Buffer.from('v'),
          });
          await producer.commitTransaction();
        } finally {
          await producer.close();
        }
        await transactionCompleted(() => [broker], `${MARKER}-txn`, true);
      } finally {
        client.close();
      }
      const check = (phase: string): void => {
        for (const f of filesUnder(dataDir)) {
          if (f.includes(`${join(dataDir, 'opted-out-0')}/`)) continue;
          assert.equal(readIfPresent(f).includes(MARKER), false, `${phase}: plaintext marker in ${f}`);
        }
        const txnDir = join(dataDir, '__transaction_state-0');
        assert.ok(
          readdirSync(txnDir).some((n) => n.endsWith('.enc')),
          `${phase}: __transaction_state is encrypted`,
        );
        const tableFiles = readdirSync(join(dataDir, 'table-0'));
        assert.equal(
          tableFiles.filter((n) => n.endsWith('.enc')).length,
          tableFiles.filter((n) => n.endsWith('.log')).length,
          `${phase}: every segment of the compacted topic, cleaned ones included, is encrypted`,
        );
      };
      check('running');
      assert.equal(await broker.stop(), 0);
      stopped = true;
      check('stopped');
      const optedOut = readdirSync(join(dataDir, 'opted-out-0'));
      assert.equal(optedOut.filter((n) => n.endsWith('.enc')).length, 0, 'the opted-out topic has no .enc');
      assert.ok(readFileSync(join(dataDir, 'opted-out-0', '00000000000000000000.log')).includes(MARKER));

      // dump-log with the broker's settings in a properties file reads the cleaned, encrypted segment.
      const config = join(root, 'encryption.properties');
      writeFileSync(config, `brook.encryption.key.provider=file\nbrook.encryption.key.file=${keyFile}\n`);
      const brook = join(REPO_ROOT, 'bin/brook');
      const segments = readdirSync(join(dataDir, 'table-0'))
        .filter((n) => n.endsWith('.log'))
        .map((n) => join(dataDir, 'table-0', n));
      let shown = '';
      for (const segment of segments) {
        const dumped = await run(process.execPath, [
          brook,
          'dump-log',
          '--files',
          segment,
          '--print-data-log',
          '--encryption-config',
          config,
        ]);
        assert.equal(dumped.code, 0, dumped.stderr);
        shown += dumped.stdout;
      }
      for (let k = 0; k < KEYS; k++)
        assert.match(shown, new RegExp(`payload: ${MARKER}-k${k}-r${ROUNDS - 1}-`));
      assert.doesNotMatch(shown, new RegExp(`payload: ${MARKER}-k\\d+-r0-`), 'cleaned away');
      const first = segments[0]!;
      // A wrong key in the same file: it says it cannot decrypt, and shows nothing.
      const wrongKey = join(root, 'wrong.key');
      writeFileSync(wrongKey, `m1:${randomBytes(32).toString('hex')}\n`);
      writeFileSync(config, `brook.encryption.key.provider=file\nbrook.encryption.key.file=${wrongKey}\n`);
      const refused = await run(process.execPath, [
        brook,
        'dump-log',
        '--files',
        first,
        '--encryption-config',
        config,
      ]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /cannot unwrap/);
      assert.equal(refused.stdout.includes(MARKER), false);
    } finally {
      if (!stopped) await broker.stop();
    }
  });

  it('a topic altered to opt in stores the records appended after the change encrypted, and back out plaintext', async () => {
    const { dataDir, keyFile } = scratch();
    writeFileSync(keyFile, `m1:${randomBytes(32).toString('hex')}\n`);
    const broker = await startBroker({
      dataDir,
      keepDataDir: true,
      overrides: {
        ...fileProvider(keyFile),
        'brook.encryption.enable': 'false',
        'log.segment.bytes': 1 << 30,
      },
    });
    try {
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, 'later', { numPartitions: 1, replicationFactor: 1 });
        const produce = async (value: string): Promise<void> => {
          const r = await produceBatch(client, 'later', buildBatch([{ key: null, value }]), -1);
          assert.equal(r.errorCode, ErrorCode.NONE, value);
        };
        const alter = async (value: string): Promise<void> => {
          const response = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
            resources: [
              {
                resourceType: 2,
                resourceName: 'later',
                configs: [{ name: 'brook.encryption.enable', configOperation: 0, value }],
              },
            ],
            validateOnly: false,
          });
          assert.equal(response.responses[0].errorCode, ErrorCode.NONE, response.responses[0].errorMessage);
        };
        const dir = join(dataDir, 'later-0');
        const segments = (): string[] =>
          readdirSync(dir)
            .filter((n) => n.endsWith('.log'))
            .sort();
        const encrypted = (name: string): boolean => existsSync(join(dir, name.replace(/\.log$/, '.enc')));
        await produce(`${MARKER}-before`);
        assert.deepEqual(segments().map(encrypted), [false]);
        // The change reaches the partition's log through the config change notification: produce until an
        // append lands in an encrypted segment (the log rolls at the first append after the change; without
        // that, the plaintext segment would take records until it filled its 1 GiB).
        await alter('true');
        const deadline = Date.now() + 60_000;
        let waited = 0;
        while (!encrypted(segments().at(-1)!)) {
          assert.ok(Date.now() < deadline, 'no encrypted segment within 60 s of opting in');
          await produce(`filler-${waited++}`);
          await sleep(200);
        }
        await produce(`${MARKER}-after`);
        const newest = join(dir, segments().at(-1)!);
        assert.equal(
          readIfPresent(newest).includes(`${MARKER}-after`),
          false,
          'appended after opting in: encrypted',
        );
        assert.ok(
          readIfPresent(join(dir, segments()[0]!)).includes(`${MARKER}-before`),
          'older records stay as written',
        );
        // Opting out again: later records are stored plaintext, the encrypted segment stays readable.
        await alter('false');
        const outDeadline = Date.now() + 60_000;
        while (encrypted(segments().at(-1)!)) {
          assert.ok(Date.now() < outDeadline, 'still encrypting 60 s after opting out');
          await produce(`filler-${waited++}`);
          await sleep(200);
        }
        await produce(`${MARKER}-out`);
        assert.ok(readIfPresent(join(dir, segments().at(-1)!)).includes(`${MARKER}-out`));
        const values = (await readPartition(client, 'later', 0)).map((r) => r.value!.toString());
        assert.deepEqual(
          values.filter((v) => v.startsWith(MARKER)),
          [`${MARKER}-before`, `${MARKER}-after`, `${MARKER}-out`],
        );
        assert.equal(values.length, waited + 3);
      } finally {
        client.close();
      }
    } finally {
      await broker.stop();
    }
  });

  it('a key service that is down stops the broker at startup: exit code 2, one line, no data directory made', async () => {
    const { dataDir } = scratch();
    // A port nothing listens on: the key service is down.
    const port = await freePort();
    const down = await serverExit({
      dataDir,
      overrides: {
        'brook.encryption.enable': 'true',
        'brook.encryption.key.provider': 'http',
        'brook.encryption.key.http.url': `http://127.0.0.1:${port}`,
      },
    });
    assert.equal(down.code, 2, down.stderr);
    assert.match(
      down.stderr,
      /brook\.encryption\.key\.http\.url=http:\/\/127\.0\.0\.1:\d+: key service .*unreachable/,
    );
    assert.equal(existsSync(dataDir), false, 'the failed start made no data directory');
  });
});
