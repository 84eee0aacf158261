// A sink task's dead letter queue producer closes as Kafka's DeadLetterQueueReporter.close() closes it: with the
// producer's unbounded close, so a DLQ record still in flight when the task stops is delivered once the cluster
// answers, however long that takes (the task producers' delivery.timeout.ms is unbounded too), rather than dropped
// after 30 s. A proxy holds the DLQ's Produce request without answering; the connector is deleted; 35 s later the
// proxy answers NOT_LEADER_OR_FOLLOWER and the producer's retry must still reach the broker.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import { startStandalone } from '../../src/connect/runtime/standalone.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { rest } from '../helpers/connect-worker.js';
import { brokerBehind, startProduceProxy } from '../helpers/produce-proxy.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

test('a DLQ record in flight when the sink task stops is delivered after more than 30 s', async (t) => {
  const proxy = await startProduceProxy();
  const broker = await brokerBehind(proxy, { 'num.partitions': 1 });
  const dir = mkdtempSync(join(tmpdir(), 'brook-dlq-close-'));
  const wire = await WireClient.connect(broker.host, broker.port);
  for (const topic of ['poison', 'poison-dlq']) await createTopic(wire, topic, { numPartitions: 1 });
  wire.close();
  const worker = await startStandalone(
    {
      'bootstrap.servers': `127.0.0.1:${proxy.port}`,
      listeners: 'http://127.0.0.1:0',
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'task.shutdown.graceful.timeout.ms': '1000',
    },
    () => {},
  );
  t.after(async () => {
    await worker.stop();
    await broker.stop();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const producer = new Producer({ bootstrapServers: `127.0.0.1:${proxy.port}` });
  await producer.send({ topic: 'poison', value: Buffer.from('{not json') });
  await producer.close();
  const held = proxy.holdNext(0, false);
  const created = await rest(worker.restUrl, 'PUT', '/connectors/tolerant/config', {
    'connector.class': 'FileStreamSink',
    topics: 'poison',
    file: join(dir, 'out.txt'),
    'errors.tolerance': 'all',
    'errors.deadletterqueue.topic.name': 'poison-dlq',
    'errors.deadletterqueue.topic.replication.factor': '1',
    // The held request must not time out and be sent again before the proxy answers it.
    'producer.override.request.timeout.ms': '120000',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await held.caught;
  const deleted = await rest(worker.restUrl, 'DELETE', '/connectors/tolerant');
  assert.equal(deleted.status, 204, JSON.stringify(deleted.body));
  await sleep(35_000);
  held.answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);

  const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${proxy.port}`, autoOffsetReset: 'earliest' });
  t.after(() => consumer.close());
  const tp = { topic: 'poison-dlq', partition: 0 };
  consumer.assign([tp]);
  const values: string[] = [];
  const deadline = Date.now() + 20_000;
  while (values.length === 0 && Date.now() < deadline)
    for (const r of await consumer.poll(500)) values.push(r.value?.toString() ?? '');
  assert.deepEqual(values, ['{not json']);
});
