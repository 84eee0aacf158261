// Connect's security settings against real TLS and SASL: the REST API on an https listener with Kafka's
// `listeners.https.ssl.*` keys (a PKCS12 key store, a PEM trust store, client certificates required), and a
// worker whose only way into the cluster is a SASL_PLAINTEXT listener: its internal clients use the worker's
// security.protocol/sasl.* keys, its task producer the `producer.`-prefixed ones, as in Kafka.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import { startStandalone } from '../../src/connect/runtime/standalone.js';
import {
  DEV_PKCS12_PASSWORD,
  type DevCertFiles,
  writeDevCertificates,
} from '../../src/security/dev-certs.js';
import { saslOverrides } from '../helpers/acl-broker.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { freePort } from '../helpers/zookeeper.js';

let broker: BrokerProcess;
let dir: string;
let certs: DevCertFiles;
let plainPort: number;
let saslPort: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-security-'));
  certs = writeDevCertificates({ dir: join(dir, 'certs'), hosts: ['127.0.0.1', 'localhost'] });
  plainPort = await freePort();
  saslPort = await freePort();
  const overrides = saslOverrides(plainPort, saslPort);
  delete overrides['authorizer.class.name'];
  delete overrides['super.users'];
  broker = await startBroker({ port: plainPort, overrides: { ...overrides, 'num.partitions': 1 } });
});

after(async () => {
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function get(
  url: string,
  tls: { ca?: string; key?: string; cert?: string },
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ...tls, timeout: 10_000 }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text === '' ? null : JSON.parse(text) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const JAAS = (user: string, password: string) =>
  `org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`;

test('the REST API over https with client certificates, and task clients over SASL', async () => {
  const { readFileSync } = await import('node:fs');
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\nthree\n');
  const worker = await startStandalone(
    {
      'bootstrap.servers': `127.0.0.1:${saslPort}`,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config': JAAS('alice', 'alice-secret'),
      'producer.security.protocol': 'SASL_PLAINTEXT',
      'producer.sasl.mechanism': 'PLAIN',
      'producer.sasl.jaas.config': JAAS('bob', 'bob-secret'),
      'offset.storage.file.filename': join(dir, 'offsets'),
      'offset.flush.interval.ms': '200',
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      listeners: 'https://127.0.0.1:0',
      'listeners.https.ssl.keystore.location': certs.brokerKeystoreP12,
      'listeners.https.ssl.keystore.type': 'PKCS12',
      'listeners.https.ssl.keystore.password': DEV_PKCS12_PASSWORD,
      'listeners.https.ssl.truststore.location': certs.caCert,
      'listeners.https.ssl.truststore.type': 'PEM',
      'listeners.https.ssl.client.auth': 'required',
    },
    () => {},
  );
  try {
    assert.match(worker.restUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = readFileSync(certs.caCert, 'utf8');
    const client = {
      ca,
      key: readFileSync(certs.clientKey, 'utf8'),
      cert: readFileSync(certs.clientCert, 'utf8'),
    };
    // GET / needs the Kafka cluster id: the worker's admin client logs in over SASL.
    const root = await get(`${worker.restUrl}/`, client);
    assert.equal(root.status, 200);
    assert.ok(typeof (root.body as { kafka_cluster_id: string }).kafka_cluster_id === 'string');
    await assert.rejects(get(`${worker.restUrl}/`, { ca }), 'no client certificate: refused');
    await assert.rejects(get(`${worker.restUrl}/`, { ...client, ca: undefined }), 'an unknown CA: refused');

    // A source task whose producer logs in with the producer.-prefixed keys.
    await worker.herder.putConnectorConfig(
      'sasl-source',
      { 'connector.class': 'FileStreamSource', file: input, topic: 'sasl-lines', name: 'sasl-source' },
      false,
    );
    const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${plainPort}` });
    try {
      const tp = { topic: 'sasl-lines', partition: 0 };
      const deadline = Date.now() + 60_000;
      const seen: string[] = [];
      while (seen.length < 3 && Date.now() < deadline) {
        const [end] = await consumer.endOffsets([tp]).catch(() => [{ offset: 0 }]);
        if ((end?.offset ?? 0) >= 3) {
          consumer.assign([tp]);
          await consumer.seekToBeginning([tp]);
          while (seen.length < 3 && Date.now() < deadline)
            for (const r of await consumer.poll(500)) seen.push(r.value!.toString());
        } else await sleep(300);
      }
      assert.deepEqual(seen, ['one', 'two', 'three']);
    } finally {
      await consumer.close();
    }
  } finally {
    await worker.stop();
  }
});

test('a dead letter queue on SASL: its producer logs in with producer.override.*, its admin with the worker keys', {
  timeout: 120_000,
}, async () => {
  // As Kafka's Worker.sinkTaskReporters builds them: the DLQ producer from the worker's producer.* keys and the
  // connector's producer.override.* (here the Principal policy's per-connector login, the only way in), the
  // admin that creates the DLQ topic from the worker's unprefixed keys, then admin.*, then admin.override.*.
  const producer = new Producer({ bootstrapServers: `127.0.0.1:${plainPort}` });
  try {
    for (const v of ['{"n":1}', '{not json', '{"n":3}'])
      await producer.send({ topic: 'sasl-poison', value: Buffer.from(v) });
  } finally {
    await producer.close();
  }
  const lines: string[] = [];
  const worker = await startStandalone(
    {
      'bootstrap.servers': `127.0.0.1:${saslPort}`,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config': JAAS('alice', 'alice-secret'),
      'consumer.security.protocol': 'SASL_PLAINTEXT',
      'consumer.sasl.mechanism': 'PLAIN',
      'consumer.sasl.jaas.config': JAAS('bob', 'bob-secret'),
      'connector.client.config.override.policy': 'Principal',
      'offset.storage.file.filename': join(dir, 'dlq-offsets'),
      'offset.flush.interval.ms': '200',
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'value.converter.schemas.enable': 'false',
      listeners: 'http://127.0.0.1:0',
    },
    (line) => lines.push(line),
  );
  const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${plainPort}` });
  try {
    await worker.herder.putConnectorConfig(
      'sasl-dlq-sink',
      {
        name: 'sasl-dlq-sink',
        'connector.class': 'FileStreamSink',
        topics: 'sasl-poison',
        file: join(dir, 'dlq-sink.txt'),
        'errors.tolerance': 'all',
        'errors.deadletterqueue.topic.name': 'sasl-dlq',
        'errors.deadletterqueue.topic.replication.factor': '1',
        'producer.override.security.protocol': 'SASL_PLAINTEXT',
        'producer.override.sasl.mechanism': 'PLAIN',
        'producer.override.sasl.jaas.config': JAAS('carol', 'carol-secret'),
      },
      false,
    );
    const tp = { topic: 'sasl-dlq', partition: 0 };
    const deadline = Date.now() + 30_000;
    const dead: string[] = [];
    while (dead.length < 1 && Date.now() < deadline) {
      const [end] = await consumer.endOffsets([tp]).catch(() => [{ offset: 0 }]);
      if ((end?.offset ?? 0) >= 1) {
        consumer.assign([tp]);
        await consumer.seekToBeginning([tp]);
        while (dead.length < 1 && Date.now() < deadline)
          for (const r of await consumer.poll(500)) dead.push(r.value!.toString());
      } else await sleep(300);
    }
    assert.deepEqual(dead, ['{not json'], lines.slice(-20).join('\n'));
    assert.equal(worker.herder.taskStatus('sasl-dlq-sink', 0).state, 'RUNNING');
  } finally {
    await consumer.close();
    await worker.stop();
  }
});
