// A source task's own offsets store (`offsets.storage.topic`) is opened by the task itself, as Kafka's
// AbstractWorkerSourceTask.initializeAndStart starts its ConnectorOffsetBackingStore in the task's thread: a store
// whose consumer cannot log in to the cluster fails that task alone (FAILED, the trace in the REST status) once the
// consumer's default.api.timeout.ms has passed, its clients closed, while the herder goes on (another connector
// starts, the REST API answers) and the worker stops. Before, the herder opened it with no time limit: the herder's
// loop waited on it for ever, the other connector never started and the worker's stop() hung.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
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
});
