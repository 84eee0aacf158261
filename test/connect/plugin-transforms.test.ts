// A single message transform from plugin.path (a class with a static pluginType, as a connector author ships
// it) and the retries of the error handler, through `brook connect-standalone` against a broker process: a
// transform failing with RetriableException is retried with backoff until errors.retry.timeout and every line
// arrives; without retries (errors.retry.timeout=0, Kafka's default) errors.tolerance=none fails the task with
// "Tolerance exceeded in error handler" and errors.tolerance=all skips exactly the records that failed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, pluginDirWith, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

let broker: BrokerProcess;
let worker: ConnectWorker;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-plugin-smt-'));
  const plugins = pluginDirWith(dir, 'flaky-transform');
  worker = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'plugin.path': plugins,
  });
});

after(async () => {
  await worker?.stop();
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const LINES = ['one', 'two', 'three', 'four', 'five'];

/** A FileStreamSource over five lines through the flaky transform, with the given error settings. */
async function createSource(name: string, errors: Record<string, string>): Promise<void> {
  const file = join(dir, `${name}.txt`);
  writeFileSync(file, `${LINES.join('\n')}\n`);
  const res = await rest(worker.url, 'PUT', `/connectors/${name}/config`, {
    'connector.class': 'FileStreamSource',
    file,
    topic: `smt-${name}`,
    'tasks.max': '1',
    transforms: 'flaky',
    'transforms.flaky.type': 'com.example.FlakyTransform',
    'transforms.flaky.failures': '3',
    ...errors,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

/** The values of `topic` once it holds `n` records (and a moment more for any extra to show). */
async function readValues(topic: string, n: number): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  try {
    const tp = { topic, partition: 0 };
    const deadline = Date.now() + 40_000;
    // The topic exists once the first record was produced.
    for (;;) {
      try {
        consumer.assign([tp]);
        await consumer.seekToBeginning([tp]);
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await sleep(250);
      }
    }
    const out: string[] = [];
    while (out.length < n && Date.now() < deadline)
      for (const r of await consumer.poll(500)) out.push(r.value?.toString() ?? '');
    const [end] = await consumer.endOffsets([tp]);
    assert.equal(end!.offset, n, `the topic has exactly ${n} records`);
    return out;
  } finally {
    await consumer.close();
  }
}

async function taskStatus(name: string): Promise<{ state: string; trace?: string } | undefined> {
  const s = await rest(worker.url, 'GET', `/connectors/${name}/status`);
  return (s.body as { tasks?: { state: string; trace?: string }[] }).tasks?.[0];
}

test('the plugin.path transform is listed by the validate endpoint and its failures are retried within errors.retry.timeout', async () => {
  const validated = await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
    'connector.class': 'FileStreamSource',
    topic: 't',
    transforms: 'flaky',
    'transforms.flaky.type': 'com.example.FlakyTransform',
    'transforms.flaky.failures': 'not a number',
  });
  assert.equal(validated.status, 200);
  const failures = (
    validated.body as { configs: { value: { name: string; errors: string[] } }[] }
  ).configs.find((c) => c.value.name === 'transforms.flaky.failures');
  assert.ok(failures !== undefined && failures.value.errors.length > 0, JSON.stringify(validated.body));

  // Listed as Kafka lists every plugin kind (KIP-769), with its version and its config definition.
  const listed = await rest(worker.url, 'GET', '/connector-plugins?connectorsOnly=false');
  assert.deepEqual(
    (listed.body as { class: string }[]).find((p) => p.class === 'com.example.FlakyTransform'),
    { class: 'com.example.FlakyTransform', type: 'transformation', version: '1.0.0' },
  );
  const defined = await rest(worker.url, 'GET', '/connector-plugins/com.example.FlakyTransform/config');
  assert.deepEqual(
    (defined.body as { name: string }[]).map((k) => k.name),
    ['failures'],
  );

  await createSource('retried', { 'errors.retry.timeout': '30000', 'errors.retry.delay.max.ms': '500' });
  assert.deepEqual(await readValues('smt-retried', LINES.length), LINES);
  assert.equal((await taskStatus('retried'))?.state, 'RUNNING');
});

test('without retries, tolerance none fails the task and tolerance all skips the failed records', async () => {
  await createSource('intolerant', {});
  const deadline = Date.now() + 40_000;
  let status = await taskStatus('intolerant');
  while (status?.state !== 'FAILED' && Date.now() < deadline) {
    await sleep(250);
    status = await taskStatus('intolerant');
  }
  assert.equal(status?.state, 'FAILED');
  assert.match(status?.trace ?? '', /Tolerance exceeded in error handler/);

  await createSource('tolerant', { 'errors.tolerance': 'all', 'errors.log.enable': 'true' });
  assert.deepEqual(await readValues('smt-tolerant', 2), ['four', 'five']);
  assert.equal((await taskStatus('tolerant'))?.state, 'RUNNING');
});
