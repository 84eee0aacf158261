// A task releases each of its resources on its own, as Kafka's AbstractWorkerSourceTask.close and
// WorkerTask.doClose do (Utils.closeQuietly for each): a producer whose close throws must not keep the task's own
// offsets store (its consumer, producer and admin) from closing, and the task's transformation chain is closed
// too. Before, the store was released after the producer's close inside one finally, so a throwing close left the
// store's clients connected after the worker stopped; and the chain's close() was never called.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Producer } from '../../src/client/index.js';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { TransformChain } from '../../src/connect/transforms/transformation.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { socketsLeftOpen } from '../helpers/open-sockets.js';
import { sleep } from '../helpers/wait.js';

test('a source task whose producer close throws still closes its offsets store and its transforms', {
  timeout: 60_000,
}, async (t) => {
  const broker = await startInProcessBroker({ 'num.partitions': 1 });
  const dir = mkdtempSync(join(tmpdir(), 'brook-task-close-'));
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  // The task's producer closes its connections, then throws, as a close that fails late would. Its offsets store's
  // producer has the same client id and closes after it: only the first close throws.
  const originalClose = Producer.prototype.close;
  let thrown = 0;
  Producer.prototype.close = async function (this: Producer, timeoutMs?: number) {
    await originalClose.call(this, timeoutMs);
    if (this.cluster.options.clientId === 'connector-producer-closing-0' && thrown === 0) {
      thrown++;
      throw new Error('producer close failed');
    }
  };
  const originalChainClose = TransformChain.prototype.close;
  let chainsClosed = 0;
  TransformChain.prototype.close = function (this: TransformChain) {
    if (this.steps.some((s) => s.alias === 'tagged')) chainsClosed++;
    originalChainClose.call(this);
  };
  const worker = await startDistributed(
    distributedWorkerProps(`127.0.0.1:${broker.port}`, 'closing'),
    () => {},
  ).catch(async (err) => {
    await broker.stop();
    throw err;
  });
  let workerStopped = false;
  t.after(async () => {
    Producer.prototype.close = originalClose;
    TransformChain.prototype.close = originalChainClose;
    if (!workerStopped) await worker.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'closing',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'closing-out',
      'offsets.storage.topic': 'closing-offsets',
      transforms: 'tagged',
      'transforms.tagged.type': 'org.apache.kafka.connect.transforms.DropHeaders',
      'transforms.tagged.headers': 'unused',
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = (await rest(worker.restUrl, 'GET', '/connectors/closing/status')).body as {
      tasks?: { state: string }[];
    };
    if (status.tasks?.[0]?.state === 'RUNNING') break;
    assert.ok(Date.now() < deadline, JSON.stringify(status));
    await sleep(200);
  }

  await worker.stop();
  workerStopped = true;
  assert.equal(thrown, 1, 'the task producer close was not called once');
  assert.equal(await socketsLeftOpen(broker.port), 0, 'client sockets left open after the worker stopped');
  assert.equal(chainsClosed, 1, 'the task transformation chain was not closed');
});
