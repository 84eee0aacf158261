// The clients of a distributed worker's config, status and offsets stores start from the worker config's own keys,
// as Kafka 3.9's KafkaConfigBackingStore (baseProducerProps), KafkaStatusBackingStore.configure and
// KafkaOffsetBackingStore.configure build them from `config.originals()`: an unprefixed `compression.type=gzip`
// in the worker config compresses every store write. A task's producer does not take it (Kafka's
// Worker.baseProducerConfigs reads only the `producer.` keys). Seen on the wire: a proxy in front of the broker
// decodes every Produce request. Before the fix the stores' clients took only the worker's security keys, and
// their batches went uncompressed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { brokerBehind, startProduceProxy } from '../helpers/produce-proxy.js';
import { eventually } from '../helpers/wait.js';

/** The record batch codec of Kafka's attributes (low 3 bits). */
const NONE = 0;
const GZIP = 1;

test("an unprefixed worker setting reaches the stores' producers (compression.type), not the tasks'", async (t) => {
  const proxy = await startProduceProxy();
  const broker = await brokerBehind(proxy, { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 });
  const dir = mkdtempSync(join(tmpdir(), 'brook-store-settings-'));
  const props = distributedWorkerProps(`127.0.0.1:${proxy.port}`, 'originals', {
    'compression.type': 'gzip',
  });
  const worker = await startDistributed(props, () => {}).catch(async (err) => {
    await broker.stop();
    await proxy.close();
    throw err;
  });
  // One hook, in this order: the worker writes its last statuses before the broker goes.
  t.after(async () => {
    await worker.stop();
    await broker.stop();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'lines',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'originals-lines' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const wrote = (topic: string) => proxy.forwarded.filter((b) => b.topic === topic);
  await eventually(
    async () =>
      ['originals-configs', 'originals-status', 'originals-offsets'].every((t) => wrote(t).length > 0),
    30_000,
    'a write to each internal topic',
  );
  await eventually(async () => wrote('originals-lines').length > 0, 30_000, 'the lines copied');

  const codecs = (topic: string) => [...new Set(wrote(topic).map((b) => b.compression))];
  assert.deepEqual(codecs('originals-configs'), [GZIP], 'the config store producer');
  assert.deepEqual(codecs('originals-status'), [GZIP], 'the status store producer');
  assert.deepEqual(codecs('originals-offsets'), [GZIP], 'the offsets store producer');
  assert.deepEqual(codecs('originals-lines'), [NONE], "the source task's producer");
});
