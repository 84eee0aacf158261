// `brook mirror-maker` between two single-node Brook clusters with the default replication policy: records
// arrive in `A.<topic>` in the same partition with their keys, values, headers and timestamps; heartbeats and
// offset syncs are written in Kafka's layouts; a partition added to the source and a topic config changed there
// appear on the target within the refresh interval; `--status` shows the lag per partition.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Consumer, type ConsumerRecord, Producer } from '../../../src/client/index.js';
import { decodeHeartbeat, decodeOffsetSync } from '../../../src/connect/mirror/records.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { type ConnectWorker, rest, startConnectWorker } from '../../helpers/connect-worker.js';
import { sleep, waitUntil } from '../../helpers/wait.js';
import { type MirrorProcess, mirrorStatus, startMirrorMaker, writeMm2 } from './mirror-process.js';

let a: BrokerProcess;
let b: BrokerProcess;
let dir: string;
let mm: MirrorProcess | null = null;
let mm2File: string;

before(async () => {
  [a, b] = await Promise.all([startBroker(), startBroker()]);
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-'));
});

after(async () => {
  await mm?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function readAll(
  bootstrap: string,
  topic: string,
  partitions: number,
  count: number,
): Promise<ConsumerRecord[]> {
  const consumer = new Consumer({
    // The mirror creates the topic with its own partition count and configs: the reader waits for it.
    allowAutoCreateTopics: false,
    bootstrapServers: bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const out: ConsumerRecord[] = [];
  try {
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
    const deadline = Date.now() + 30_000;
    while (out.length < count && Date.now() < deadline) out.push(...(await consumer.poll(500)));
  } finally {
    await consumer.close();
  }
  return out;
}

test('records, partitions, configs and heartbeats are mirrored to A.<topic>', async () => {
  const source = new Admin({ bootstrapServers: a.bootstrap });
  const target = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: a.bootstrap });
  try {
    await source.createTopics([
      { topic: 'orders', numPartitions: 3, replicationFactor: 1, configs: { 'retention.ms': '86400000' } },
    ]);
    const base = Date.now() - 60_000;
    const sent = Array.from({ length: 300 }, (_, i) => ({
      topic: 'orders',
      partition: i % 3,
      key: i % 10 === 0 ? null : Buffer.from(`k${i}`),
      value: Buffer.from(`v${i}`),
      timestamp: base + i,
      headers: [{ key: 'h', value: Buffer.from([i & 0xff, 0xfe]) }],
    }));
    await producer.sendBatch(sent);

    mm2File = writeMm2(dir, {
      clusters: 'A, B',
      'A.bootstrap.servers': a.bootstrap,
      'B.bootstrap.servers': b.bootstrap,
      'A->B.enabled': true,
      'A->B.topics': 'orders.*',
      'replication.factor': 1,
      'refresh.topics.interval.ms': 1000,
      'sync.topic.configs.interval.ms': 1000,
      'emit.heartbeats.interval.ms': 500,
      'offset.flush.interval.ms': 1000,
      'offset-syncs.topic.replication.factor': 1,
      'heartbeats.topic.replication.factor': 1,
      'checkpoints.topic.replication.factor': 1,
      'offset.storage.replication.factor': 1,
      'brook.metrics.listener': 'http://127.0.0.1:0',
    });
    mm = await startMirrorMaker(mm2File);

    const got = await readAll(b.bootstrap, 'A.orders', 3, 300);
    assert.equal(got.length, 300, mm.output());
    const byValue = new Map(got.map((r) => [r.value!.toString(), r]));
    for (const s of sent) {
      const r = byValue.get(s.value.toString());
      assert.ok(r !== undefined, `missing ${s.value}`);
      assert.equal(r.partition, s.partition);
      assert.deepEqual(r.key, s.key);
      assert.equal(r.timestamp, s.timestamp);
      assert.deepEqual(r.headers, s.headers);
    }
    // MirrorMaker's metric names, per remote partition, on the metrics listener.
    const metricsUrl = /Metrics listening at (\S+)/.exec(mm.output())?.[1];
    assert.ok(metricsUrl !== undefined, mm.output());
    const text = await (await fetch(metricsUrl)).text();
    const count = (p: number) =>
      Number(
        new RegExp(`record_count\\{target="B",topic="A.orders",partition="${p}"\\} (\\d+)`).exec(text)?.[1],
      );
    assert.equal(count(0) + count(1) + count(2), 300, text);
    assert.match(
      text,
      /kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms_max\{target="B",topic="A.orders",partition="0"\} \d+/,
    );
    assert.match(text, /kafka_connect_mirror_mirrorsourceconnector_byte_count\{/);
    assert.match(text, /kafka_connect_mirror_mirrorsourceconnector_record_age_ms_avg\{/);
    assert.equal((await fetch(metricsUrl.replace('/metrics', '/nope'))).status, 404);

    const [remote] = await target.describeTopics(['A.orders']);
    assert.equal(remote!.partitions.length, 3);
    const [cfg] = await target.describeConfigs([{ type: 'topic', name: 'A.orders', keys: ['retention.ms'] }]);
    assert.equal(cfg!.configs[0]!.value, '86400000', 'configs copied when the topic is created');

    // Heartbeats on the target and offset syncs on the source, both in Kafka's layouts.
    const [hb] = await readAll(b.bootstrap, 'heartbeats', 1, 1);
    assert.deepEqual(
      { ...decodeHeartbeat(hb!.key!, hb!.value!), timestamp: 0 },
      { sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 0 },
    );
    const syncs = (await readAll(a.bootstrap, 'mm2-offset-syncs.B.internal', 1, 3)).map((r) =>
      decodeOffsetSync(r.key!, r.value!),
    );
    assert.ok(
      syncs.some((s) => s.topic === 'orders' && s.upstreamOffset === 0 && s.downstreamOffset === 0),
      JSON.stringify(syncs),
    );

    // A partition added and a config changed on the source reach the target within the refresh interval.
    await source.createPartitions([{ topic: 'orders', count: 5 }]);
    await source.incrementalAlterConfigs([
      { type: 'topic', name: 'orders', ops: [{ name: 'retention.ms', op: 'set', value: '3600000' }] },
    ]);
    const changedAt = Date.now();
    let partitions = 0;
    let retention = '';
    while (Date.now() - changedAt < 20_000 && (partitions !== 5 || retention !== '3600000')) {
      await sleep(250);
      partitions = (await target.describeTopics(['A.orders']))[0]!.partitions.length;
      retention =
        (await target.describeConfigs([{ type: 'topic', name: 'A.orders', keys: ['retention.ms'] }]))[0]!
          .configs[0]!.value ?? '';
    }
    assert.equal(partitions, 5, mm.output());
    assert.equal(retention, '3600000');
    // A new producer: the first one's metadata still says 3 partitions.
    const later = new Producer({ bootstrapServers: a.bootstrap });
    await later.send({ topic: 'orders', partition: 4, value: Buffer.from('new-partition') });
    await later.close();
    const fresh = await readAll(b.bootstrap, 'A.orders', 5, 301);
    assert.ok(
      fresh.some((r) => r.partition === 4 && r.value!.toString() === 'new-partition'),
      'records of the new partition are mirrored',
    );

    // --status: each partition's end offset upstream against the stored mirror position.
    let status = '';
    await waitUntil(
      () => {
        status = mirrorStatus(mm2File);
        return /A->B\s+orders\s+4\s+A\.orders\s+1\s+1\s+0/.test(status);
      },
      20_000,
      () => status,
    );
    assert.match(status, /A->B\s+orders\s+0\s+A\.orders\s+100\s+100\s+0/);
  } finally {
    await producer.close();
    await source.close();
    await target.close();
  }
});

test('MirrorSourceConnector runs on a Brook Connect worker (connect-standalone) under its Kafka class name', async () => {
  const source = new Admin({ bootstrapServers: a.bootstrap });
  const producer = new Producer({ bootstrapServers: a.bootstrap });
  let worker: ConnectWorker | null = null;
  try {
    await source.createTopics([{ topic: 'invoices', numPartitions: 2, replicationFactor: 1 }]);
    await producer.sendBatch(
      Array.from({ length: 50 }, (_, i) => ({
        topic: 'invoices',
        partition: i % 2,
        value: Buffer.from(`i${i}`),
      })),
    );
    worker = await startConnectWorker(
      dir,
      {
        'bootstrap.servers': b.bootstrap,
        'offset.storage.file.filename': join(dir, 'standalone.offsets'),
      },
      [
        {
          name: 'mirror-source',
          'connector.class': 'org.apache.kafka.connect.mirror.MirrorSourceConnector',
          'source.cluster.alias': 'X',
          'target.cluster.alias': 'Y',
          'source.cluster.bootstrap.servers': a.bootstrap,
          'target.cluster.bootstrap.servers': b.bootstrap,
          topics: 'invoices',
          'replication.factor': 1,
          'offset-syncs.topic.replication.factor': 1,
          'key.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
          'value.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
        },
      ],
    );
    const got = await readAll(b.bootstrap, 'X.invoices', 2, 50);
    assert.equal(got.length, 50, worker.stderr());
    assert.deepEqual(
      got.map((r) => r.value!.toString()).sort(),
      Array.from({ length: 50 }, (_, i) => `i${i}`).sort(),
    );
    const status = await rest(worker.url, 'GET', '/connectors/mirror-source/status');
    assert.equal((status.body as { connector: { state: string } }).connector.state, 'RUNNING');
  } finally {
    await worker?.stop();
    await producer.close();
    await source.close();
  }
});

test("/admin/loggers levels filter the Mirror connectors' lines, under the loggers of Kafka's classes", async () => {
  // The Mirror connectors wrote their lines to stderr themselves, with no level and under no logger: a level set on
  // org.apache.kafka.connect.mirror.MirrorSourceConnector (or the root) changed none of them.
  const source = new Admin({ bootstrapServers: a.bootstrap });
  const producer = new Producer({ bootstrapServers: a.bootstrap });
  const connectorLogger = 'org.apache.kafka.connect.mirror.MirrorSourceConnector';
  let worker: ConnectWorker | null = null;
  try {
    await source.createTopics([{ topic: 'levels-1', numPartitions: 1, replicationFactor: 1 }]);
    await producer.sendBatch([1, 2, 3].map((i) => ({ topic: 'levels-1', value: Buffer.from(`l${i}`) })));
    worker = await startConnectWorker(dir, {
      'bootstrap.servers': b.bootstrap,
      'offset.storage.file.filename': join(dir, 'levels.offsets'),
    });
    const url = worker.url;
    const setLevel = async (logger: string, level: string) =>
      assert.equal((await rest(url, 'PUT', `/admin/loggers/${logger}`, { level })).status, 200);
    await setLevel(connectorLogger, 'WARN');
    const created = await rest(url, 'PUT', '/connectors/levels-mirror/config', {
      'connector.class': 'org.apache.kafka.connect.mirror.MirrorSourceConnector',
      'source.cluster.alias': 'L',
      'target.cluster.alias': 'M',
      'source.cluster.bootstrap.servers': a.bootstrap,
      'target.cluster.bootstrap.servers': b.bootstrap,
      topics: 'levels-.*',
      'refresh.topics.interval.seconds': 1,
      'replication.factor': 1,
      'offset-syncs.topic.replication.factor': 1,
      'key.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
      'value.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await readAll(b.bootstrap, 'L.levels-1', 1, 3)).length, 3, worker.stderr());
    // The task's logger is at the root's INFO: its start line is written, with its level, logger and flow. (The
    // source may also hold a heartbeats topic, which the task mirrors too, from this file's first test.)
    await waitUntil(
      () =>
        /INFO org\.apache\.kafka\.connect\.mirror\.MirrorSourceTask: \[L->M\] Mirroring \d+ partition/.test(
          worker!.stderr(),
        ),
      15_000,
      () => worker!.stderr().slice(-3000),
    );
    // The connector's is at WARN: its INFO line for the remote topic it created is not.
    assert.ok(!worker.stderr().includes('Created remote topic L.levels-1'), worker.stderr().slice(-3000));

    // Back at INFO, the next topic's creation is logged under the connector's logger.
    await setLevel(connectorLogger, 'INFO');
    await source.createTopics([{ topic: 'levels-2', numPartitions: 1, replicationFactor: 1 }]);
    await waitUntil(
      () =>
        worker!
          .stderr()
          .includes(`INFO ${connectorLogger}: [L->M] Created remote topic L.levels-2 with 1 partitions`),
      20_000,
      () => worker!.stderr().slice(-3000),
    );
  } finally {
    await worker?.stop();
    await producer.close();
    await source.close();
  }
});
