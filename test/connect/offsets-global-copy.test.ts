// A source connector with its own offsets topic (`offsets.storage.topic`) has its offsets copied to the worker's
// global offsets topic. As Kafka's ConnectorOffsetBackingStore.set, that copy is not part of the write: once the
// connector's topic holds the offsets, a failing copy is a warning ("Failed to write offsets to secondary backing
// store") and PATCH /connectors/{name}/offsets succeeds; only tombstones go to the global topic first, and a failure
// there fails the write with nothing written. The global copy is made to fail on the wire: the worker's offsets
// topic is created with a small max.message.bytes (KIP-605's offset.storage.* keys), so the broker refuses a record
// whose key is larger (MESSAGE_TOO_LARGE) while the connector's own topic, created beforehand with the broker's
// defaults (the worker would create it with the offset.storage.* keys too, as Kafka's KafkaOffsetBackingStore),
// takes it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

test("a failed copy to the worker's offsets topic is a warning once the connector's own topic holds the offsets", async (t) => {
  const broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  const dir = mkdtempSync(join(tmpdir(), 'brook-offsets-global-'));
  const lines: string[] = [];
  const worker = await startDistributed(
    distributedWorkerProps(broker.bootstrap, 'gcopy', { 'offset.storage.max.message.bytes': '1024' }),
    (line) => lines.push(line),
  ).catch(async (err) => {
    await broker.stop();
    throw err;
  });
  t.after(async () => {
    await worker.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const made = await admin.createTopics([
      {
        topic: 'big-offsets',
        numPartitions: 1,
        replicationFactor: 1,
        configs: { 'cleanup.policy': 'compact' },
      },
    ]);
    assert.deepEqual(
      made.map((m) => m.error),
      [null],
    );
  } finally {
    await admin.close();
  }
  const input = join(dir, 'in.txt');
  writeFileSync(input, '');
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'big',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'big-out',
      'offsets.storage.topic': 'big-offsets',
    },
    initial_state: 'STOPPED',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = (await rest(worker.restUrl, 'GET', '/connectors/big/status')).body as {
      connector?: { state: string };
    };
    if (status.connector?.state === 'STOPPED') break;
    assert.ok(Date.now() < deadline, JSON.stringify(status));
    await sleep(200);
  }

  // A source partition whose key alone is beyond the global topic's max.message.bytes.
  const partition = { filename: `${input}-${'x'.repeat(2000)}` };
  const altered = await rest(worker.restUrl, 'PATCH', '/connectors/big/offsets', {
    offsets: [{ partition, offset: { position: 7 } }],
  });
  assert.equal(altered.status, 200, JSON.stringify(altered.body));
  const stored = (await rest(worker.restUrl, 'GET', '/connectors/big/offsets')).body as {
    offsets: { partition: unknown; offset: unknown }[];
  };
  assert.deepEqual(stored.offsets, [{ partition, offset: { position: 7 } }]);
  const warnDeadline = Date.now() + 30_000;
  while (!lines.some((l) => l.includes('Failed to write offsets to secondary backing store'))) {
    assert.ok(Date.now() < warnDeadline, `no warning in:\n${lines.join('\n')}`);
    await sleep(200);
  }

  // Tombstones go to the global topic first: refused there, the reset fails and the connector's topic keeps them.
  const reset = await rest(worker.restUrl, 'DELETE', '/connectors/big/offsets');
  assert.equal(reset.status, 500, JSON.stringify(reset.body));
  const kept = (await rest(worker.restUrl, 'GET', '/connectors/big/offsets')).body as {
    offsets: { partition: unknown; offset: unknown }[];
  };
  assert.deepEqual(kept.offsets, [{ partition, offset: { position: 7 } }]);
});
