// Worker settings a Kafka Connect user brings over from Java, against a broker process: KIP-605's
// `config.storage.<topic config>` keys (and the offset and status ones) reach the internal topics when the worker
// creates them; a request whose config write meets a fenced leader writer gets Kafka's 500 "can be safely
// retried", and the retry succeeds once the leader has claimed its writer again; Java key stores (JKS, Kafka's
// default store type) and Kerberos (GSSAPI, Kafka's default SASL mechanism) stop `brook connect-distributed` at
// startup with exit code 2 and a message naming the key and what Brook accepts; without `listeners`, the deprecated
// rest.host.name and rest.port place the REST server.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Producer } from '../../src/client/index.js';
import { leaderTransactionalId } from '../../src/connect/runtime/distributed/config-store.js';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { eventually } from '../helpers/wait.js';
import { freePort } from '../helpers/zookeeper.js';

let broker: BrokerProcess;
let dir: string;
const workers: DistributedWorker[] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-settings-'));
});

after(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function workerProps(prefix: string): Record<string, string> {
  return distributedWorkerProps(broker.bootstrap, prefix, { 'offset.storage.partitions': '2' });
}

test('config.storage., offset.storage. and status.storage. topic configs reach the internal topics (KIP-605)', async () => {
  const lines: string[] = [];
  const w = await startDistributed(
    {
      ...workerProps('kip605'),
      'config.storage.segment.bytes': '1048576',
      'config.storage.cleanup.policy': 'delete',
      'config.storage.partitions': '4',
      'offset.storage.max.message.bytes': '2000000',
      'status.storage.min.cleanable.dirty.ratio': '0.1',
    },
    (l) => lines.push(l),
  );
  workers.push(w);
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    const value = async (topic: string, key: string) =>
      (await admin.describeConfigs([{ type: 'topic', name: topic, keys: [key] }]))[0]!.configs[0]?.value;
    assert.equal(await value('kip605-configs', 'segment.bytes'), '1048576');
    assert.equal(await value('kip605-configs', 'cleanup.policy'), 'compact', 'compaction always wins');
    assert.equal(await value('kip605-offsets', 'max.message.bytes'), '2000000');
    assert.equal(await value('kip605-offsets', 'cleanup.policy'), 'compact');
    assert.equal(await value('kip605-status', 'min.cleanable.dirty.ratio'), '0.1');
    // Settings of one topic stay off the others.
    assert.notEqual(await value('kip605-status', 'segment.bytes'), '1048576');
    const described = await admin.describeTopics(['kip605-configs', 'kip605-offsets']);
    const partitions = Object.fromEntries(described.map((d) => [d.topic, d.partitions.length]));
    assert.deepEqual(partitions, { 'kip605-configs': 1, 'kip605-offsets': 2 });
  } finally {
    await admin.close();
  }
  assert.ok(
    lines.some((l) => /Ignoring 'config\.storage\.cleanup\.policy=delete' setting/.test(l)),
    lines.join('\n'),
  );
  assert.ok(lines.some((l) => /Ignoring 'config\.storage\.partitions=4' setting/.test(l)));
});

test('a request meeting a fenced config writer gets a 500 to retry; the leader claims its writer again', async () => {
  const props = { ...workerProps('fenced'), 'exactly.once.source.support': 'preparing' };
  const w = await startDistributed(props, () => {});
  workers.push(w);
  const file = join(dir, 'fenced.txt');
  writeFileSync(file, 'a\n');
  const config = { 'connector.class': 'FileStreamSource', file, topic: 'fenced-out', 'tasks.max': '1' };
  // The worker leads once the group formed and it claimed the writer: creating the connector works then.
  await eventually(
    async () => (await rest(w.restUrl, 'POST', '/connectors', { name: 'src', config })).status === 201,
    60_000,
    'the connector to be created',
  );
  // Its task configs are written (by the leader itself) and the task runs: nothing else is left to write.
  await eventually(
    async () => {
      const s = await rest(w.restUrl, 'GET', '/connectors/src/status');
      const tasks = (s.body as { tasks?: { state: string }[] }).tasks ?? [];
      return tasks.length === 1 && tasks[0]!.state === 'RUNNING';
    },
    60_000,
    'the task to run',
  );

  // Another writer claims the leader's transactional id: the worker's writer is fenced without its knowing.
  const zombie = new Producer({
    bootstrapServers: broker.bootstrap,
    transactionalId: leaderTransactionalId('fenced-cluster'),
  });
  try {
    await zombie.initTransactions();
    // A config update is a privileged write (target states are not, as in Kafka).
    const updated = { ...config, topic: 'fenced-out-2' };
    const refused = await rest(w.restUrl, 'PUT', '/connectors/src/config', updated);
    assert.deepEqual(refused, {
      status: 500,
      body: {
        error_code: 500,
        message:
          'Failed to write to config topic; this may be due to a transient error and the request can be safely retried',
      },
    });
    assert.equal(
      ((await rest(w.restUrl, 'GET', '/connectors/src/config')).body as Record<string, string>).topic,
      'fenced-out',
      'the fenced write is not seen',
    );
    // The worker rejoins, still leads, claims the writer again (fencing the other one) and takes the retry.
    await eventually(
      async () => (await rest(w.restUrl, 'PUT', '/connectors/src/config', updated)).status === 200,
      60_000,
      'the retried update to be accepted',
    );
    assert.equal(
      ((await rest(w.restUrl, 'GET', '/connectors/src/config')).body as Record<string, string>).topic,
      'fenced-out-2',
    );
    // The other writer is fenced in turn.
    await assert.rejects(async () => {
      zombie.beginTransaction();
      await zombie.send({ topic: 'fenced-configs', value: Buffer.from('zombie') });
      await zombie.commitTransaction();
    }, /PRODUCER_FENCED|fenced|epoch/i);
  } finally {
    await zombie.close().catch(() => {});
  }
});

test('Java key stores and Kerberos stop the worker at startup with the key and what Brook accepts', async () => {
  const jks = join(dir, 'truststore.jks');
  // A JKS file starts with 0xFEEDFEED and its version.
  writeFileSync(jks, Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 0]));
  const cases: [Record<string, string>, RegExp][] = [
    [
      { 'security.protocol': 'SSL', 'ssl.truststore.location': jks },
      /ssl\.truststore\.location=.*a Java key store \(JKS\), which Node\.js cannot read; Brook's client reads ssl\.truststore\.type=PEM only .*keytool -importkeystore/,
    ],
    [
      {
        'producer.security.protocol': 'SSL',
        'producer.ssl.keystore.type': 'JKS',
        'producer.ssl.keystore.location': jks,
      },
      /producer\.ssl\.keystore\.type=JKS: Node\.js cannot read JKS stores; Brook's client reads PEM only \(producer\.ssl\.keystore\.type=PEM\)/,
    ],
    [
      { 'security.protocol': 'SASL_PLAINTEXT' },
      /sasl\.mechanism=GSSAPI \(Kafka's default\): Kerberos is not supported by Brook's client; set it to PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER/,
    ],
    [
      { 'consumer.security.protocol': 'SASL_SSL', 'consumer.sasl.mechanism': 'GSSAPI' },
      /consumer\.sasl\.mechanism=GSSAPI: Kerberos is not supported/,
    ],
    [
      {
        listeners: 'https://127.0.0.1:0',
        'listeners.https.ssl.keystore.location': jks,
        'listeners.https.ssl.keystore.type': 'JKS',
      },
      /Invalid value JKS for configuration listeners\.https\.ssl\.keystore\.type: Brook reads PEM and PKCS12 stores, not JKS; convert one with `keytool -importkeystore/,
    ],
  ];
  for (const [bad, message] of cases) {
    const worker = await startConnectWorker(dir, { ...workerProps('startup'), ...bad }, [], {
      expectFailure: true,
      mode: 'distributed',
    });
    try {
      assert.equal(await worker.exited(), 2, worker.stderr());
      assert.match(worker.stderr(), message);
      assert.doesNotMatch(worker.stdout(), /Kafka Connect started/);
    } finally {
      await worker.kill();
    }
  }
});

test('without listeners, the deprecated rest.host.name and rest.port place the REST server', async () => {
  const port = await freePort();
  const worker = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'offset.storage.file.filename': join(dir, 'rest-port.offsets'),
    listeners: '',
    'rest.host.name': '127.0.0.1',
    'rest.port': port,
  });
  try {
    assert.equal(worker.url, `http://127.0.0.1:${port}`);
    const root = await rest(worker.url, 'GET', '/');
    assert.equal(root.status, 200);
    assert.equal(typeof (root.body as { version?: unknown }).version, 'string');
  } finally {
    await worker.stop();
  }
});
