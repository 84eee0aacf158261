// A broker whose log recovery outlasts its ZooKeeper session still starts. The broker opens its session (to read
// the cluster id) before it recovers its logs, and recovery runs on the event loop; on a slow disk, or with many
// logs after an unclean shutdown, the session expires meanwhile. Kafka's ZooKeeper client waits for a new session
// and the broker registers on it; Brook's failed with "broker registration failed: creating /consumers failed"
// and exited with 1 (seen in a chaos run with the slow-disk fault; this test fails the same way before the fix).
// The disk is made slow by the chaos harness's LD_PRELOAD helper (every fsync and fdatasync sleeps first), so the
// test needs gcc and is skipped without it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { brokerPath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { tryRun } from '../chaos/shell.js';
import { buildSlowFsync, SLOW_FSYNC_FILE_ENV, setFsyncDelay } from '../chaos/slow-disk.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { produceValues, waitFor } from '../helpers/cluster.js';
import { createTopic, readPartition, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper } from '../helpers/zookeeper.js';

const BROKER_ID = 5;
const SESSION_TIMEOUT_MS = 2_000;
/** Each fsync's delay on the restart: recovery of the topic's logs takes several times the session timeout. */
const FSYNC_DELAY_MS = 400;

const hasGcc = (await tryRun('gcc', ['--version'])).code === 0;

describe('broker start with a log recovery longer than its ZooKeeper session', {
  skip: hasGcc ? false : 'no gcc',
}, () => {
  it('registers on a new session and serves the recovered records', { timeout: 180_000 }, async (t) => {
    const zk = await startTestZooKeeper();
    t.after(() => zk.stop());
    const work = mkdtempSync(join(tmpdir(), 'brook-slow-recovery-'));
    const dataDir = join(work, 'data');
    t.after(() => rmSync(work, { recursive: true, force: true }));
    const delayFile = join(work, 'fsync-delay');
    const library = await buildSlowFsync(work);
    const start = () =>
      startBroker({
        dataDir,
        keepDataDir: true,
        overrides: {
          'broker.id': BROKER_ID,
          'zookeeper.connect': zk.connect,
          'zookeeper.session.timeout.ms': SESSION_TIMEOUT_MS,
        },
        env: { LD_PRELOAD: library, [SLOW_FSYNC_FILE_ENV]: delayFile },
      });
    const brokers: BrokerProcess[] = [];
    t.after(async () => {
      setFsyncDelay(delayFile, 0);
      for (const b of brokers) await b.stop();
    });

    const first = await start();
    brokers.push(first);
    const client = await WireClient.connect(first.host, first.port);
    try {
      await createTopic(client, 'slow', { numPartitions: 4, replicationFactor: 1 });
    } finally {
      client.close();
    }
    const values = ['a', 'b', 'c'];
    await waitFor('the topic to take writes', async () => {
      const [code] = await produceValues(first, 'slow', [values[0]!]);
      return code === ErrorCode.NONE ? true : undefined;
    });
    assert.deepEqual(await produceValues(first, 'slow', values.slice(1)), [ErrorCode.NONE, ErrorCode.NONE]);
    await first.kill();

    // Restart on a slow disk: recovery (no clean-shutdown marker) syncs each log.
    setFsyncDelay(delayFile, FSYNC_DELAY_MS);
    const started = Date.now();
    const second = await start();
    brokers.push(second);
    const log = second.log();
    assert.match(log, /no clean-shutdown marker/);
    assert.match(
      log,
      /expired: opening a new one/,
      `the session expired during recovery (start took ${Date.now() - started} ms)`,
    );
    setFsyncDelay(delayFile, 0);

    // Registered by its current session, and the records are all there.
    const opened = await connectZooKeeper({ connect: zk.connect, sessionTimeoutMs: 6_000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    t.after(() => opened.value.close());
    const node = await opened.value.get(brokerPath(BROKER_ID as BrokerId));
    assert.ok(node.ok, 'the broker is registered');
    const reader = await WireClient.connect(second.host, second.port);
    try {
      const read = await waitFor(
        'the recovered records',
        async () => {
          const records = await readPartition(reader, 'slow', 0, 0, {
            untilOffset: values.length,
            timeoutMs: 5_000,
          });
          return records.length === values.length ? records : undefined;
        },
        60_000,
      );
      assert.deepEqual(
        read.map((r) => r.value?.toString()),
        values,
      );
    } finally {
      reader.close();
    }
  });
});
