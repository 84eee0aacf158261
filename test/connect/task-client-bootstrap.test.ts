// Task clients take `bootstrap.servers` as Kafka's Worker layers it (baseProducerConfigs, baseConsumerConfigs,
// adminConfigs): the worker's, then its `producer.` / `consumer.` / `admin.` key, then the connector's
// `*.override.` key as the override policy allows it (All, the default). A source connector's producer may so write
// to another cluster than the worker's, its own offsets topic then lives on that cluster (read and created by its
// consumer and admin there), and, the clusters differing, the worker's offsets topic of the same name is a second
// store that gets a copy (Kafka's sameOffsetTopicAsWorker compares the bootstrap servers too). A sink's consumer
// reads from the cluster its override names, and the offsets endpoint reads its group there with the connector's
// admin settings. Two single-node brokers: the worker's (A) and the other (B). Before, the key was ignored: every
// task client went to A.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Admin, Consumer } from '../../src/client/index.js';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { sleep } from '../helpers/wait.js';

/** The values of a topic's records on a cluster, read from the start for up to `ms`, until `want` are seen. */
async function values(bootstrap: string, topic: string, want: number, ms: number): Promise<string[]> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  const deadline = Date.now() + ms;
  try {
    while (!(await admin.listTopics()).includes(topic)) {
      if (Date.now() > deadline) return [];
      await sleep(300);
    }
  } finally {
    await admin.close();
  }
  const consumer = new Consumer({ bootstrapServers: bootstrap });
  const out: string[] = [];
  try {
    consumer.assign([{ topic, partition: 0 }]);
    await consumer.seekToBeginning([{ topic, partition: 0 }]);
    while (out.length < want && Date.now() < deadline)
      for (const r of await consumer.poll(300)) out.push(r.value?.toString('utf8') ?? 'null');
  } finally {
    await consumer.close();
  }
  return out;
}

test("task clients go to the cluster their bootstrap.servers override names, as Kafka's Worker", {
  timeout: 150_000,
}, async (t) => {
  const a = await startInProcessBroker({ 'num.partitions': 1 });
  const b = await startInProcessBroker({ 'num.partitions': 1 }).catch(async (err) => {
    await a.stop();
    throw err;
  });
  const bootA = `127.0.0.1:${a.port}`;
  const bootB = `127.0.0.1:${b.port}`;
  const dir = mkdtempSync(join(tmpdir(), 'brook-task-bootstrap-'));
  const input = join(dir, 'in.txt');
  const output = join(dir, 'out.txt');
  writeFileSync(input, 'one\ntwo\n');
  const worker = await startDistributed(distributedWorkerProps(bootA, 'boot'), () => {}).catch(
    async (err) => {
      await b.stop();
      await a.stop();
      throw err;
    },
  );
  t.after(async () => {
    await worker.stop();
    await b.stop();
    await a.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // The connector's own offsets topic has the worker's offsets topic's name, on the other cluster.
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'remote',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'remote-out',
      'offsets.storage.topic': 'boot-offsets',
      'producer.override.bootstrap.servers': bootB,
      'consumer.override.bootstrap.servers': bootB,
      'admin.override.bootstrap.servers': ` ${bootB} `,
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));

  assert.deepEqual(await values(bootB, 'remote-out', 2, 30_000), ['one', 'two'], 'the records are on B');
  const offsetsB = await values(bootB, 'boot-offsets', 1, 30_000);
  assert.ok(offsetsB.includes('{"position":8}'), `offsets on B: ${JSON.stringify(offsetsB)}`);
  // The worker's own offsets topic (on A) gets its copy: the two stores are not the same topic.
  const offsetsA = await values(bootA, 'boot-offsets', 1, 30_000);
  assert.ok(offsetsA.includes('{"position":8}'), `offsets on A: ${JSON.stringify(offsetsA)}`);
  assert.deepEqual(await values(bootA, 'remote-out', 1, 1_000), [], 'no record on A');

  // A sink whose consumer reads from B.
  const sink = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'remote-sink',
    config: {
      'connector.class': 'FileStreamSink',
      file: output,
      topics: 'remote-out',
      'consumer.override.bootstrap.servers': bootB,
      'admin.override.bootstrap.servers': bootB,
    },
  });
  assert.equal(sink.status, 201, JSON.stringify(sink.body));
  const deadline = Date.now() + 30_000;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(output, 'utf8');
    } catch {}
    if (text === 'one\ntwo\n') break;
    const status = await rest(worker.restUrl, 'GET', '/connectors/remote-sink/status');
    assert.ok(Date.now() < deadline, `sink output ${JSON.stringify(text)}, ${JSON.stringify(status.body)}`);
    await sleep(300);
  }
  // Its offsets, those of its group on B, read by the endpoint through the connector's admin settings (Kafka's
  // Worker.sinkConnectorOffsets uses adminConfigs).
  const offsetsDeadline = Date.now() + 30_000;
  for (;;) {
    const res = await rest(worker.restUrl, 'GET', '/connectors/remote-sink/offsets');
    const offsets = (res.body as { offsets?: { offset: { kafka_offset: number } }[] }).offsets ?? [];
    if (offsets.some((o) => o.offset.kafka_offset === 2)) break;
    assert.ok(Date.now() < offsetsDeadline, `sink offsets: ${JSON.stringify(res.body)}`);
    await sleep(300);
  }
});
