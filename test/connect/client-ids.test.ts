// The client ids a worker's task clients send to the broker, as Kafka's Worker names them
// (baseProducerConfigs, baseConsumerConfigs, adminConfigs): `connector-producer-<connector>-<task>`,
// `connector-consumer-<connector>-<task>`, `connector-dlq-producer-<connector>-<task>` and
// `connector-dlq-adminclient-`, each replaced by the worker's `producer.`/`consumer.`/`admin.` client.id (the
// admin also by the unprefixed one) and then by the connector's `<client>.override.client.id`. Seen on the wire:
// a proxy in front of the broker records the client id of every request. The task producers also take Kafka's
// Worker defaults (no idempotence, one request in flight, sends retried without a deadline): no InitProducerId.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Producer } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type ClientIdProxy, startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

let proxy: ClientIdProxy;
let worker: ConnectWorker;
let dir: string;

before(async () => {
  proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'auto.create.topics.enable': false,
    'group.initial.rebalance.delay.ms': 0,
  });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-client-ids-'));
  worker = await startConnectWorker(dir, {
    'bootstrap.servers': proxy.bootstrap,
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': false,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
    // A worker-level client id for the admin clients of its tasks; the other clients keep Kafka's defaults.
    'admin.client.id': 'worker-admin',
  });
});

after(async () => {
  await worker?.stop();
  await proxy?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function createTopics(...topics: string[]): Promise<void> {
  const admin = new Admin({ bootstrapServers: proxy.bootstrap });
  try {
    const created = await admin.createTopics(topics.map((topic) => ({ topic, replicationFactor: 1 })));
    assert.deepEqual(
      created.map((c) => c.error),
      topics.map(() => null),
    );
  } finally {
    await admin.close();
  }
}

/** A good record and a poison one (not JSON), so the sink's DLQ producer writes. */
async function produceWithPoison(topic: string): Promise<void> {
  const producer = new Producer({ bootstrapServers: proxy.bootstrap });
  try {
    for (const v of ['{"n":1}', 'not json']) await producer.send({ topic, value: Buffer.from(v) });
  } finally {
    await producer.close();
  }
}

async function startConnectors(name: string, overrides: Record<string, string>): Promise<void> {
  const source = join(dir, `${name}-source.txt`);
  writeFileSync(source, 'one\ntwo\n');
  const configs: Record<string, Record<string, string>> = {
    [`${name}-source`]: {
      'connector.class': 'FileStreamSource',
      file: source,
      topic: `${name}-lines`,
      ...(overrides['producer.override.client.id'] === undefined
        ? {}
        : { 'producer.override.client.id': `${overrides['producer.override.client.id']}-source` }),
    },
    [`${name}-sink`]: {
      'connector.class': 'FileStreamSink',
      topics: `${name}-input`,
      file: join(dir, `${name}-sink.out`),
      'errors.tolerance': 'all',
      'errors.deadletterqueue.topic.name': `${name}-dlq`,
      'errors.deadletterqueue.topic.replication.factor': '1',
      ...overrides,
    },
  };
  for (const [connector, config] of Object.entries(configs)) {
    const res = await rest(worker.url, 'PUT', `/connectors/${connector}/config`, config);
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
}

/** Waits until every id has been seen on requests of its API (or 20 s), then answers what each API saw. */
async function seen(expected: Array<[apiKey: number, clientId: string]>): Promise<Array<[number, boolean]>> {
  const deadline = Date.now() + 20_000;
  const all = () => expected.every(([api, id]) => proxy.clientIds(api).has(id));
  while (!all() && Date.now() < deadline) await sleep(200);
  return expected.map(([api, id]) => [api, proxy.clientIds(api).has(id)]);
}

test("task clients send Kafka's default client ids; the worker's admin.client.id replaces the admin's", async () => {
  await createTopics('defaults-lines', 'defaults-input');
  await produceWithPoison('defaults-input');
  await startConnectors('defaults', {});
  const expected: Array<[number, string]> = [
    [ApiKey.PRODUCE, 'connector-producer-defaults-source-0'],
    [ApiKey.JOIN_GROUP, 'connector-consumer-defaults-sink-0'],
    [ApiKey.PRODUCE, 'connector-dlq-producer-defaults-sink-0'],
    [ApiKey.CREATE_TOPICS, 'worker-admin'],
  ];
  assert.deepEqual(
    await seen(expected),
    expected.map(([api]) => [api, true]),
  );
  assert.equal(proxy.clientIds().has('connector-dlq-adminclient-'), false, 'the worker-level id replaces it');
});

test("a connector's producer, consumer and admin override.client.id replace the worker's and Kafka's", async () => {
  await createTopics('custom-lines', 'custom-input');
  await produceWithPoison('custom-input');
  await startConnectors('custom', {
    'producer.override.client.id': 'custom-producer',
    'consumer.override.client.id': 'custom-consumer',
    'admin.override.client.id': 'custom-admin',
  });
  const expected: Array<[number, string]> = [
    [ApiKey.PRODUCE, 'custom-producer-source'],
    [ApiKey.JOIN_GROUP, 'custom-consumer'],
    // The DLQ producer takes the sink's producer.override. keys, as in Kafka's Worker.sinkTaskReporters.
    [ApiKey.PRODUCE, 'custom-producer'],
    [ApiKey.CREATE_TOPICS, 'custom-admin'],
  ];
  assert.deepEqual(
    await seen(expected),
    expected.map(([api]) => [api, true]),
  );
  const ids = proxy.clientIds();
  for (const id of ['connector-producer-custom-source-0', 'connector-consumer-custom-sink-0'])
    assert.equal(ids.has(id), false, id);
  assert.equal(ids.has('connector-dlq-producer-custom-sink-0'), false);
});

test('task producers send without idempotence, as Kafka Connect: no InitProducerId before their Produce', async () => {
  await createTopics('plain-lines', 'plain-input');
  await produceWithPoison('plain-input');
  await startConnectors('plain', {});
  const producers = ['connector-producer-plain-source-0', 'connector-dlq-producer-plain-sink-0'];
  const expected: Array<[number, string]> = producers.map((id) => [ApiKey.PRODUCE, id]);
  assert.deepEqual(
    await seen(expected),
    expected.map(([api]) => [api, true]),
  );
  // An idempotent producer asks for a producer id before its first Produce (Brook's client default with acks=all).
  const asked = proxy.clientIds(ApiKey.INIT_PRODUCER_ID);
  for (const id of producers) assert.equal(asked.has(id), false, `${id} sent InitProducerId`);
});
