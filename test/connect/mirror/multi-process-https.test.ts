// The dedicated mode's internal REST server on https (KIP-710 with Connect's keys: `listeners=https://...` and
// `listeners.https.ssl.*`, client certificates required): two `brook mirror-maker` processes on one file share the
// flow, and a task-config hand-over from the follower reaches the leader over https. The incremental assignor
// moves the last connector by name, MirrorSourceConnector, to the process that joins second; a topic created
// afterwards makes that connector publish new task configs, which only the leader may write: the records of
// the new topic reach the target only if the follower's request got through. The listener refuses plain http
// and peers without a certificate from the trusted CA.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import {
  DEV_PKCS12_PASSWORD,
  type DevCertFiles,
  writeDevCertificates,
} from '../../../src/security/dev-certs.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import {
  describeStatuses,
  flowStatuses,
  startTwoProcesses,
  type UnitStatus,
  waitFor,
  withPrefix,
} from './flow-status.js';
import { type MirrorProcess, writeTwoClusterMm2 } from './mirror-process.js';

const TASKS = 2;

let a: BrokerProcess;
let b: BrokerProcess;
let dir: string;
let certs: DevCertFiles;
const mirrors: MirrorProcess[] = [];

before(async () => {
  const overrides = { 'group.initial.rebalance.delay.ms': 0 };
  [a, b] = await Promise.all([startBroker({ overrides }), startBroker({ overrides })]);
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-https-'));
  certs = writeDevCertificates({ dir: join(dir, 'certs'), hosts: ['127.0.0.1', 'localhost'] });
});

after(async () => {
  for (const m of mirrors) await m.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A POST over https with the given TLS options: its status and body, or the connection's error. */
function post(
  url: string,
  tls: { ca?: string; key?: string; cert?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' }, ...tls, timeout: 30_000 },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', reject);
    req.end('[]');
  });
}

async function produce(topic: string, partitions: number, count: number): Promise<void> {
  const producer = new Producer({ bootstrapServers: a.bootstrap, lingerMs: 5 });
  try {
    await producer.sendBatch(
      Array.from({ length: count }, (_, i) => ({
        topic,
        partition: i % partitions,
        value: Buffer.from(String(i)),
      })),
    );
  } finally {
    await producer.close();
  }
}

/** The distinct values on `topic` of the target, read until `count` are there (or two minutes pass). */
async function valuesOnTarget(topic: string, partitions: number, count: number): Promise<Set<string>> {
  const consumer = new Consumer({
    bootstrapServers: b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const seen = new Set<string>();
  try {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const admin = new Admin({ bootstrapServers: b.bootstrap });
      const have = await admin
        .describeTopics([topic])
        .then((d) => d[0]?.partitions.length ?? 0)
        .catch(() => 0)
        .finally(() => admin.close());
      if (have === partitions) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
    while (seen.size < count && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
    }
  } finally {
    await consumer.close();
  }
  return seen;
}

test('two processes share a flow over the https internal REST server', async () => {
  const admin = new Admin({ bootstrapServers: a.bootstrap });
  try {
    await admin.createTopics([{ topic: 'clicks', numPartitions: 4, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  await produce('clicks', 4, 200);
  const flow = { sourceBootstrap: a.bootstrap, targetBootstrap: b.bootstrap, topics: 'clicks, views' };
  const file = writeTwoClusterMm2(dir, flow, {
    'B.scheduled.rebalance.max.delay.ms': 2000,
    'B.session.timeout.ms': 6000,
    'B.heartbeat.interval.ms': 1000,
    'dedicated.mode.enable.internal.rest': true,
    listeners: 'https://127.0.0.1:0',
    'listeners.https.ssl.keystore.location': certs.brokerKeystoreP12,
    'listeners.https.ssl.keystore.type': 'PKCS12',
    'listeners.https.ssl.keystore.password': DEV_PKCS12_PASSWORD,
    'listeners.https.ssl.truststore.location': certs.caCert,
    'listeners.https.ssl.truststore.type': 'PEM',
    'listeners.https.ssl.client.auth': 'required',
    'tasks.max': TASKS,
    'refresh.topics.interval.ms': 1000,
    'emit.checkpoints.enabled': false,
    'offset.flush.interval.ms': 1000,
  });

  const { first, second, ids } = await startTwoProcesses(file, b.bootstrap, TASKS, mirrors);
  assert.match(first.output(), /Internal REST server listening at https:\/\/127\.0\.0\.1:\d+\//);
  let statuses = new Map<string, UnitStatus>();

  // The second runs MirrorSourceConnector (the balancing round moves the last connector by name) and one task.
  await waitFor(
    async () => {
      statuses = await flowStatuses(b.bootstrap);
      const connector = statuses.get('status-connector-MirrorSourceConnector');
      const tasks = [...withPrefix(statuses, 'status-task-MirrorSourceConnector-').values()];
      return (
        connector?.state === 'RUNNING' &&
        connector.worker === ids[1] &&
        tasks.filter((s) => s.state === 'RUNNING').length === TASKS &&
        ids.every((id) => tasks.some((s) => s.state === 'RUNNING' && s.worker === id))
      );
    },
    120_000,
    () =>
      `MirrorSourceConnector not on ${ids[1]} or tasks not shared:\n${describeStatuses(statuses)}\n${first.output()}\n${second.output()}`,
  );
  // The first process leads the flow's group (only the leader computes assignments).
  assert.match(first.output(), /Generation \d+ assignment for/);
  assert.doesNotMatch(second.output(), /Generation \d+ assignment for/);
  const before = (await valuesOnTarget('A.clicks', 4, 200)).size;
  assert.equal(before, 200, 'records copied before the new topic');

  // A new source topic: the follower's connector hands new task configs to the leader, over https.
  const admin2 = new Admin({ bootstrapServers: a.bootstrap });
  try {
    await admin2.createTopics([{ topic: 'views', numPartitions: 2, replicationFactor: 1 }]);
  } finally {
    await admin2.close();
  }
  await produce('views', 2, 100);
  const views = await valuesOnTarget('A.views', 2, 100);
  assert.equal(
    views.size,
    100,
    `records of the new topic on the target\n${first.output()}\n${second.output()}`,
  );
  assert.match(
    first.output(),
    /Accepted \d+ task configs of MirrorSourceConnector for A->B from another process/,
  );

  // The listener: plain http and a peer without a client certificate are refused; a peer with one reaches
  // the herder, which refuses an unsigned hand-over.
  const address = ids[1]!.slice(0, ids[1]!.indexOf('/'));
  const path = '/A/B/connectors/MirrorSourceConnector/tasks';
  const ca = readFileSync(certs.caCert, 'utf8');
  await assert.rejects(fetch(`http://${address}${path}`, { method: 'POST', body: '[]' }));
  await assert.rejects(post(`https://${address}${path}`, { ca }), 'no client certificate: refused');
  const unsigned = await post(`https://${address}${path}`, {
    ca,
    key: readFileSync(certs.clientKey, 'utf8'),
    cert: readFileSync(certs.clientCert, 'utf8'),
  });
  assert.equal(unsigned.status, 400);
  assert.match(unsigned.body, /signature/);
});
