// A source task's own offsets store (`offsets.storage.topic`) is opened by the task itself, as Kafka's
// AbstractWorkerSourceTask.initializeAndStart starts its ConnectorOffsetBackingStore in the task's thread: a store
// whose consumer cannot log in to the cluster fails that task alone (FAILED, the trace in the REST status) once the
// consumer's default.api.timeout.ms has passed, its clients closed, while the herder goes on (another connector
// starts, the REST API answers) and the worker stops. Before, the herder opened it with no time limit: the herder's
// loop waited on it for ever, the other connector never started and the worker's stop() hung.
//
// A task opens only a store of its own: a task on the worker's offsets store must not start that store again (a
// second start of its log replaced its consumer and producer without closing them, and two sockets outlived the
// worker's stop, which kept MirrorMaker's process from exiting). A stop that comes while a task's store is still
// opening closes what the store opened. Both are checked by counting the client sockets to the broker left open.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { socketsLeftOpen } from '../helpers/open-sockets.js';
import { sleep } from '../helpers/wait.js';

type Status = { connector?: { state: string }; tasks?: { id: number; state: string; trace?: string }[] };

async function statusOf(url: string, name: string): Promise<Status> {
  return (await rest(url, 'GET', `/connectors/${name}/status`)).body as Status;
}

test('a task whose offsets store cannot log in fails alone, bounded by default.api.timeout.ms', {
  timeout: 120_000,
}, async (t) => {
  const broker = await startInProcessBroker({ 'num.partitions': 1 });
  const dir = mkdtempSync(join(tmpdir(), 'brook-task-offsets-'));
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const worker = await startDistributed(
    distributedWorkerProps(`127.0.0.1:${broker.port}`, 'stuck'),
    () => {},
  ).catch(async (err) => {
    await broker.stop();
    throw err;
  });
  let workerStopped = false;
  t.after(async () => {
    if (!workerStopped) await worker.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // The store's consumer speaks SASL to a plaintext listener: it never gets an answer it can use.
  const stuck = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'stuck',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'stuck-out',
      'offsets.storage.topic': 'stuck-offsets',
      'consumer.override.security.protocol': 'SASL_PLAINTEXT',
      'consumer.override.sasl.mechanism': 'PLAIN',
      'consumer.override.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";',
      'consumer.override.default.api.timeout.ms': '3000',
    },
  });
  assert.equal(stuck.status, 201, JSON.stringify(stuck.body));
  // Another connector created meanwhile starts and runs.
  const fine = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'fine',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'fine-out' },
  });
  assert.equal(fine.status, 201, JSON.stringify(fine.body));

  const deadline = Date.now() + 45_000;
  let stuckStatus: Status = {};
  let fineStatus: Status = {};
  for (;;) {
    stuckStatus = await statusOf(worker.restUrl, 'stuck');
    fineStatus = await statusOf(worker.restUrl, 'fine');
    if (stuckStatus.tasks?.[0]?.state === 'FAILED' && fineStatus.tasks?.[0]?.state === 'RUNNING') break;
    assert.ok(
      Date.now() < deadline,
      `stuck: ${JSON.stringify(stuckStatus)}, fine: ${JSON.stringify(fineStatus)}`,
    );
    await sleep(300);
  }
  assert.match(stuckStatus.tasks![0]!.trace ?? '', /stuck-offsets/);

  const stopStart = Date.now();
  await worker.stop();
  workerStopped = true;
  assert.ok(Date.now() - stopStart < 20_000, `the worker took ${Date.now() - stopStart} ms to stop`);
  assert.equal(await socketsLeftOpen(broker.port), 0, 'client sockets left open after the worker stopped');
});

/** A distributed worker on an in-process broker, both stopped after the test. */
async function workerOnBroker(
  t: { after(fn: () => Promise<void>): void },
  name: string,
): Promise<{
  broker: Awaited<ReturnType<typeof startInProcessBroker>>;
  worker: Awaited<ReturnType<typeof startDistributed>>;
  input: string;
  stop(): Promise<void>;
}> {
  const broker = await startInProcessBroker({ 'num.partitions': 1 });
  const dir = mkdtempSync(join(tmpdir(), 'brook-task-offsets-'));
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const worker = await startDistributed(
    distributedWorkerProps(`127.0.0.1:${broker.port}`, name),
    () => {},
  ).catch(async (err) => {
    await broker.stop();
    throw err;
  });
  let stopped = false;
  t.after(async () => {
    if (!stopped) await worker.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    broker,
    worker,
    input,
    async stop() {
      stopped = true;
      await worker.stop();
    },
  };
}

test('a task on the worker offsets store does not open it again: no client is left open after stop', {
  timeout: 60_000,
}, async (t) => {
  const { broker, worker, input, stop } = await workerOnBroker(t, 'shared');
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'shared',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'shared-out' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deadline = Date.now() + 30_000;
  let status: Status = {};
  while ((status = await statusOf(worker.restUrl, 'shared')).tasks?.[0]?.state !== 'RUNNING') {
    assert.ok(Date.now() < deadline, JSON.stringify(status));
    await sleep(200);
  }
  await stop();
  assert.equal(await socketsLeftOpen(broker.port), 0, 'client sockets left open after the worker stopped');
});

test('a stop while a task store is still opening closes what the store opened', {
  timeout: 60_000,
}, async (t) => {
  const { broker, worker, input, stop } = await workerOnBroker(t, 'racing');
  // The store's consumer never gets an answer to its ListOffsets (key 2), with Kafka's default time limit (60 s):
  // the store is still opening, its consumer's connection open, when the worker stops.
  let held = 0;
  broker.interception.set((request) => {
    if (request.apiKey !== 2 || request.header.clientId !== 'connector-consumer-racing-0') return undefined;
    held++;
    return null;
  });
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'racing',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'racing-out',
      'offsets.storage.topic': 'racing-offsets',
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deadline = Date.now() + 30_000;
  while (((await rest(worker.restUrl, 'GET', '/connectors/racing/tasks')).body as unknown[]).length !== 1) {
    assert.ok(Date.now() < deadline, 'the task was never created');
    await sleep(200);
  }
  while (held === 0) {
    assert.ok(Date.now() < deadline, 'the task store never asked for its offsets');
    await sleep(100);
  }
  const stopStart = Date.now();
  await stop();
  assert.ok(Date.now() - stopStart < 20_000, `the worker took ${Date.now() - stopStart} ms to stop`);
  assert.equal(await socketsLeftOpen(broker.port), 0, 'client sockets left open after the worker stopped');
});
