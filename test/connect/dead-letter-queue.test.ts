// A sink connector's dead letter queue as Kafka's DeadLetterQueueReporter runs it, through a standalone worker
// process and a one-broker cluster: the DLQ topic is created with errors.deadletterqueue.topic.replication.factor
// as configured, so the default of 3 on one broker fails the task instead of quietly taking the broker's default;
// a record the DLQ refuses is logged and the task goes on, as the producer callback of Kafka's reporter only logs.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Producer } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

let broker: BrokerProcess;
let worker: ConnectWorker;
let dir: string;

before(async () => {
  broker = await startBroker({
    overrides: {
      'num.partitions': 1,
      'auto.create.topics.enable': false,
      'group.initial.rebalance.delay.ms': 0,
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-dlq-'));
  worker = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': false,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
  });
});

after(async () => {
  await worker?.stop();
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

interface TaskStatus {
  state: string;
  trace?: string;
}

async function taskStatus(connector: string): Promise<TaskStatus | undefined> {
  const res = await rest(worker.url, 'GET', `/connectors/${connector}/status`);
  return (res.body as { tasks?: TaskStatus[] }).tasks?.[0];
}

/** The first task's status once it is in `state`, or the last one seen after 20 s. */
async function taskInState(connector: string, state: string): Promise<TaskStatus | undefined> {
  const deadline = Date.now() + 20_000;
  let task = await taskStatus(connector);
  while (task?.state !== state && Date.now() < deadline) {
    await sleep(200);
    task = await taskStatus(connector);
  }
  return task;
}

async function withAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}

async function createTopic(topic: string, configs: Record<string, string> = {}): Promise<void> {
  const [created] = await withAdmin((a) =>
    a.createTopics([{ topic, numPartitions: 1, replicationFactor: 1, configs }]),
  );
  assert.equal(created?.error, null);
}

async function produce(topic: string, values: string[]): Promise<void> {
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    for (const v of values) await producer.send({ topic, value: Buffer.from(v) });
  } finally {
    await producer.close();
  }
}

function sinkConfig(topic: string, extra: Record<string, string>): Record<string, string> {
  return {
    'connector.class': 'FileStreamSink',
    topics: topic,
    file: join(dir, `${topic}.out`),
    'errors.tolerance': 'all',
    ...extra,
  };
}

test('a DLQ replication factor larger than the cluster fails the task, and the topic is not created', async () => {
  await createTopic('rf-input');
  // errors.deadletterqueue.topic.replication.factor is left at Kafka's default of 3, on a one-broker cluster.
  const created = await rest(
    worker.url,
    'PUT',
    '/connectors/rf-default/config',
    sinkConfig('rf-input', { 'errors.deadletterqueue.topic.name': 'rf-default-dlq' }),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const task = await taskInState('rf-default', 'FAILED');
  assert.equal(task?.state, 'FAILED');
  assert.match(task?.trace ?? '', /Could not initialize dead letter queue with topic=rf-default-dlq/);
  assert.match(task?.trace ?? '', /INVALID_REPLICATION_FACTOR/);
  const topics = await withAdmin((a) => a.listTopics());
  assert.equal(topics.includes('rf-default-dlq'), false);

  // A factor the cluster has creates the topic with exactly that factor.
  const fitting = await rest(
    worker.url,
    'PUT',
    '/connectors/rf-one/config',
    sinkConfig('rf-input', {
      'errors.deadletterqueue.topic.name': 'rf-one-dlq',
      'errors.deadletterqueue.topic.replication.factor': '1',
    }),
  );
  assert.equal(fitting.status, 201, JSON.stringify(fitting.body));
  assert.equal((await taskInState('rf-one', 'RUNNING'))?.state, 'RUNNING');
  const [described] = await withAdmin((a) => a.describeTopics(['rf-one-dlq']));
  assert.equal(described?.partitions.length, 1);
  assert.equal(described?.partitions[0]?.replicas.length, 1);
});

test('a record the DLQ topic refuses is logged and the task goes on with the next records', async () => {
  await createTopic('refused-input');
  // The DLQ topic takes no record over 200 bytes: the broker answers MESSAGE_TOO_LARGE, which no retry cures.
  await createTopic('refused-dlq', { 'max.message.bytes': '200' });
  const poison = `not json ${'x'.repeat(1000)}`;
  await produce('refused-input', [poison, '{"n":2}']);
  const created = await rest(
    worker.url,
    'PUT',
    '/connectors/refused/config',
    sinkConfig('refused-input', {
      'errors.deadletterqueue.topic.name': 'refused-dlq',
      'errors.deadletterqueue.topic.replication.factor': '1',
    }),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const out = join(dir, 'refused-input.out');
  const deadline = Date.now() + 20_000;
  const written = () => {
    try {
      return readFileSync(out, 'utf8');
    } catch {
      return '';
    }
  };
  while (!written().includes('"n":2') && Date.now() < deadline) await sleep(200);
  assert.equal(written(), '{"n":2}\n');
  assert.equal((await taskStatus('refused'))?.state, 'RUNNING');
  // The DLQ producer's refusal is logged from its send's callback, which may come after the next record is written.
  const refusal = /Could not produce message to dead letter queue\. topic=refused-dlq/;
  const logDeadline = Date.now() + 10_000;
  while (!refusal.test(worker.stderr() + worker.stdout()) && Date.now() < logDeadline) await sleep(100);
  assert.match(worker.stderr() + worker.stdout(), refusal);
});
