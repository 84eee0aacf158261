// The metrics endpoint of one real broker process (brook.metrics.listener): a kafkajs producer and consumer and
// Brook's own wire client produce and fetch, and /metrics, scraped over HTTP, must have moved by exactly what
// went over the wire: records and bytes in per topic, bytes out, request histograms, partition and log gauges,
// consumer-group offsets and lag. Also /healthz and /readyz, the 4xx answers to bad requests, and the dashboard
// and alert rules in config/ naming only metrics a running broker exposes.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';
import { httpRequest, type Samples, scrape, startMeteredBroker } from './scrape.js';

const { Kafka, logLevel } = kafkajs;
const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const TOPIC = 'metered';
const GROUP = 'metered-group';
const BT = 'kafka_server_brokertopicmetrics';

/** Scrapes until `check` passes (it throws while not), for values that settle a little after an answer. */
async function eventually(port: number, check: (s: Samples) => void, timeoutMs = 15_000): Promise<Samples> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await scrape(port);
    try {
      check(s);
      return s;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

describe('metrics endpoint of a single broker', () => {
  let broker: BrokerProcess;
  let port: number;
  let client: WireClient;

  before(async () => {
    ({ broker, metricsPort: port } = await startMeteredBroker({ 'offsets.topic.num.partitions': 1 }));
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('answers /healthz with 200 and /readyz with 200 once the broker serves', async () => {
    const health = await httpRequest(port, '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { status: 'alive' });
    const ready = await httpRequest(port, '/readyz');
    assert.equal(ready.status, 200, ready.body);
    assert.deepEqual(JSON.parse(ready.body), { status: 'ready' });
  });

  it('counts records and bytes in and out per topic as the wire carried them', {
    timeout: 60_000,
  }, async () => {
    await createTopic(client, TOPIC, { numPartitions: 2, replicationFactor: 1 });
    const before = await scrape(port);
    const kafka = new Kafka({
      clientId: 'metrics-test',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: TOPIC,
      acks: -1,
      messages: [
        ...Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `zero-${i}` })),
        ...Array.from({ length: 5 }, (_, i) => ({ partition: 1, value: `one-${i}` })),
      ],
    });
    await producer.disconnect();
    const batch = buildBatch([{ value: 'a' }, { value: 'bb' }, { value: 'ccc' }]);
    const produced = await produceBatch(client, TOPIC, batch, 1);
    assert.equal(produced.errorCode, ErrorCode.NONE);

    const s = await scrape(port);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      s.value(name, labels) - (before.get(name, labels) ?? 0);
    assert.equal(s.value(`${BT}_messagesin_total`, { topic: TOPIC }), 18);
    assert.equal(delta(`${BT}_messagesin_total`), 18, 'the all-topics series counts the same records');
    assert.equal(s.value(`${BT}_totalproducerequests_total`, { topic: TOPIC }), 3);
    assert.equal(s.value(`${BT}_failedproducerequests_total`, { topic: TOPIC }), 0);
    // The log holds exactly the record sets the producers sent (no recompression), so bytes in equals its size.
    const logBytes =
      s.value('kafka_log_log_size', { topic: TOPIC, partition: 0 }) +
      s.value('kafka_log_log_size', { topic: TOPIC, partition: 1 });
    assert.ok(logBytes > batch.length);
    assert.equal(s.value(`${BT}_bytesin_total`, { topic: TOPIC }), logBytes);
    assert.equal(delta(`${BT}_bytesin_total`), logBytes);
    assert.equal(s.value('kafka_log_log_logendoffset', { topic: TOPIC, partition: 0 }), 13);
    assert.equal(s.value('kafka_log_log_logendoffset', { topic: TOPIC, partition: 1 }), 5);
    assert.equal(s.value('kafka_log_log_logstartoffset', { topic: TOPIC, partition: 0 }), 0);
    assert.equal(s.value('kafka_log_log_numlogsegments', { topic: TOPIC, partition: 0 }), 1);

    // A fetch of partition 0 from the start: bytes out moves by the record bytes of its answer.
    const fetched = await client.call(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0));
    const recordBytes = (fetched.responses[0].partitions[0].records as Buffer).length;
    assert.ok(recordBytes > 0);
    const afterFetch = await scrape(port);
    assert.equal(afterFetch.value(`${BT}_bytesout_total`, { topic: TOPIC }), recordBytes);
    assert.equal(afterFetch.value(`${BT}_totalfetchrequests_total`, { topic: TOPIC }), 1);

    // A fetch of a topic that does not exist makes no series: clients cannot grow the metrics with names.
    const unknown = await client.call(ApiKey.FETCH, 12, fetchBody('no-such-topic', 0, 0));
    assert.equal(unknown.responses[0].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const afterUnknown = await scrape(port);
    assert.equal(afterUnknown.get(`${BT}_totalfetchrequests_total`, { topic: 'no-such-topic' }), undefined);
    assert.equal(
      afterUnknown.value(`${BT}_totalfetchrequests_total`),
      afterFetch.value(`${BT}_totalfetchrequests_total`),
    );
  });

  it('times Produce and Fetch requests in histograms', async () => {
    const s = await scrape(port);
    for (const request of ['Produce', 'Fetch']) {
      const count = s.value('kafka_network_requestmetrics_totaltimems_count', { request });
      assert.ok(count >= 1, `${request} has ${count} timed requests`);
      assert.equal(
        s.value('kafka_network_requestmetrics_totaltimems_bucket', { request, le: '+Inf' }),
        count,
      );
      assert.equal(s.value('kafka_network_requestmetrics_requests_total', { request }), count);
      for (const stage of ['requestqueuetimems', 'localtimems', 'remotetimems', 'responsesendtimems']) {
        assert.equal(s.value(`kafka_network_requestmetrics_${stage}_count`, { request }), count);
      }
      assert.ok(s.value('kafka_network_requestmetrics_totaltimems_sum', { request }) > 0);
    }
    // Two produces (kafkajs with acks=-1 and one wire produce) at least.
    assert.ok(s.value('kafka_network_requestmetrics_totaltimems_count', { request: 'Produce' }) >= 2);
    // As Kafka, every Fetch also counts by sender: here only consumers fetched.
    const fetches = s.value('kafka_network_requestmetrics_totaltimems_count', { request: 'Fetch' });
    assert.equal(
      s.value('kafka_network_requestmetrics_totaltimems_count', { request: 'FetchConsumer' }),
      fetches,
    );
    assert.equal(
      s.value('kafka_network_requestmetrics_requests_total', { request: 'FetchConsumer' }),
      fetches,
    );
    assert.equal(
      s.get('kafka_network_requestmetrics_totaltimems_count', { request: 'FetchFollower' }),
      undefined,
    );
    assert.equal(s.value('kafka_network_requestchannel_requestqueuesize'), 0);
  });

  it('counts a Fetch that names a replica id as FetchFollower, and as Fetch', async () => {
    const earlier = await scrape(port);
    const count = (samples: Samples, request: string) =>
      samples.get('kafka_network_requestmetrics_totaltimems_count', { request }) ?? 0;
    // Replica id 7 is no replica here: the answer is an error, but the request is timed as a follower's.
    await client.call(ApiKey.FETCH, 12, { ...fetchBody(TOPIC, 0, 0), replicaId: 7 });
    const later = await scrape(port);
    assert.equal(count(later, 'FetchFollower'), count(earlier, 'FetchFollower') + 1);
    assert.equal(count(later, 'Fetch'), count(earlier, 'Fetch') + 1);
    assert.equal(count(later, 'FetchConsumer'), count(earlier, 'FetchConsumer'));
    assert.equal(
      later.value('kafka_network_requestmetrics_localtimems_count', { request: 'FetchFollower' }),
      count(later, 'FetchFollower'),
    );
  });

  it('reports partition, controller and process gauges', async () => {
    const s = await scrape(port);
    // The two partitions of the test topic, and __consumer_offsets once a group has used it: what the logs say.
    const hosted = countLogs(s);
    assert.ok(hosted >= 2);
    assert.equal(s.value('kafka_server_replicamanager_partitioncount'), hosted);
    assert.equal(s.value('kafka_server_replicamanager_leadercount'), hosted);
    assert.equal(s.value('kafka_server_replicamanager_underreplicatedpartitions'), 0);
    assert.equal(s.value('kafka_server_replicamanager_underminisrpartitioncount'), 0);
    assert.equal(s.value('kafka_controller_kafkacontroller_activecontrollercount'), 1);
    assert.equal(s.value('kafka_controller_kafkacontroller_offlinepartitionscount'), 0);
    assert.ok(s.value('process_resident_memory_bytes') > 0);
    assert.ok(s.value('process_open_fds') > 0);
    assert.ok(s.value('nodejs_heap_size_used_bytes') > 0);
    assert.ok(s.families.has('nodejs_eventloop_lag_seconds'));
    assert.ok(s.families.has('nodejs_gc_duration_seconds'));
  });

  it('counts a one-replica partition under min.insync.replicas 2 at min ISR, not under it', async () => {
    // Kafka 3.7+'s UnderMinIsr / AtMinIsr compare the ISR with min.insync.replicas capped at the replicas assigned
    // (KAFKA-15583): such a partition takes acks=all writes, and an alert on the under-min-ISR count must not fire.
    await createTopic(client, 'capped-min-isr', {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'min.insync.replicas': '2' },
    });
    await eventually(port, (s) => {
      // The new partition is hosted and led here (value throws while it has no log yet).
      s.value('kafka_log_log_size', { topic: 'capped-min-isr', partition: 0 });
      const led = s.value('kafka_server_replicamanager_leadercount');
      assert.equal(led, countLogs(s));
      assert.equal(s.value('kafka_server_replicamanager_underminisrpartitioncount'), 0);
      // Every partition of this broker has one replica and a minimum of at least 1: all at min ISR.
      assert.equal(s.value('kafka_server_replicamanager_atminisrpartitioncount'), led);
    });
  });

  it('reports network and request-handler idleness as a fraction of the time between scrapes', async () => {
    // A broker serving scrapes and nothing else waits for I/O almost all the time; scrapes less than a second
    // apart report the last window of a second or more.
    await eventually(port, (s) => {
      for (const name of [
        'kafka_network_socketserver_networkprocessoravgidle_percent',
        'kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent',
      ]) {
        const idle = s.value(name);
        assert.ok(idle > 0 && idle <= 1, `${name} ${idle}`);
      }
    });
  });

  it('counts controller events by kind with their queue and run times, under Kafka names', async () => {
    const before = await scrape(port);
    const topicChanges = (s: Samples) =>
      s.get('kafka_controller_controllerstats_topicchangerateandtimems_count') ?? 0;
    await createTopic(client, 'controller-events', { numPartitions: 1, replicationFactor: 1 });
    const s = await eventually(port, (x) => {
      assert.ok(topicChanges(x) > topicChanges(before), 'a topic creation is a TopicChange event');
      assert.equal(x.value('kafka_controller_controllereventmanager_eventqueuesize'), 0);
    });
    // The broker became controller at start: a ControllerChange event ran.
    assert.ok(s.value('kafka_controller_controllerstats_controllerchangerateandtimems_count') >= 1);
    assert.ok(s.value('brook_controller_events_total', { event: 'topicChange' }) >= topicChanges(s));
    let events = 0;
    for (const line of s.text.split('\n'))
      if (line.startsWith('brook_controller_events_total{')) events += Number(line.split(' ').at(-1));
    assert.equal(s.value('kafka_controller_controllereventmanager_eventqueuetimems_count'), events);
    assert.equal(s.value('kafka_controller_controllerstats_uncleanleaderelections_total'), 0);
  });

  it('counts producer ids and transactional ids in flight', { timeout: 60_000 }, async () => {
    // A topic of its own: the group test below counts the records of TOPIC.
    await createTopic(client, 'metered-txn', { numPartitions: 1, replicationFactor: 1 });
    const kafka = new Kafka({
      clientId: 'metrics-txn',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100 },
    });
    const producer = kafka.producer({
      transactionalId: 'metered-tid',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic: 'metered-txn', messages: [{ partition: 0, value: 'in-flight' }] });
      const open = await scrape(port);
      assert.equal(open.value('brook_transaction_coordinator_transactional_ids', { state: 'Ongoing' }), 1);
      assert.ok(open.value('kafka_server_replicamanager_produceridcount') >= 1);
      await txn.commit();
      // The commit answers once PrepareCommit is written; the markers and CompleteCommit follow.
      await eventually(port, (x) => {
        assert.equal(x.get('brook_transaction_coordinator_transactional_ids', { state: 'Ongoing' }) ?? 0, 0);
        assert.equal(
          x.value('brook_transaction_coordinator_transactional_ids', { state: 'CompleteCommit' }),
          1,
        );
      });
    } finally {
      await producer.disconnect();
    }
  });

  it('counts a record set refused for its size as failed and rejected bytes', async () => {
    await createTopic(client, 'small', {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'max.message.bytes': '200' },
    });
    const big = buildBatch([{ value: 'x'.repeat(600) }]);
    const answer = await produceBatch(client, 'small', big, 1);
    assert.equal(answer.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    const s = await scrape(port);
    assert.equal(s.value(`${BT}_failedproducerequests_total`, { topic: 'small' }), 1);
    assert.equal(s.value(`${BT}_bytesrejected_total`, { topic: 'small' }), big.length);
    assert.equal(s.value(`${BT}_messagesin_total`, { topic: 'small' }), 0);
  });

  it('reports a consumer group by state, its committed offsets and its lag', {
    timeout: 90_000,
  }, async () => {
    const kafka = new Kafka({
      clientId: 'metrics-test',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const consumer = kafka.consumer({ groupId: GROUP, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    let received = 0;
    await consumer.run({
      eachMessage: async () => {
        received++;
      },
    });
    try {
      const s = await eventually(
        port,
        (x) => {
          assert.equal(received, 18);
          assert.equal(
            x.value('kafka_consumergroup_current_offset', {
              consumergroup: GROUP,
              topic: TOPIC,
              partition: 0,
            }),
            13,
          );
          assert.equal(
            x.value('kafka_consumergroup_current_offset', {
              consumergroup: GROUP,
              topic: TOPIC,
              partition: 1,
            }),
            5,
          );
        },
        60_000,
      );
      assert.equal(s.value('kafka_coordinator_group_groupmetadatamanager_numgroupsstable'), 1);
      assert.equal(s.value('kafka_coordinator_group_groupmetadatamanager_numgroups'), 1);
      assert.equal(
        s.value('kafka_consumergroup_lag', { consumergroup: GROUP, topic: TOPIC, partition: 0 }),
        0,
      );
    } finally {
      await consumer.disconnect();
    }
    // Four more records to partition 1 (Produce to partition 0 only in the helper: send them by hand).
    const more = buildBatch([{ value: '1' }, { value: '2' }, { value: '3' }, { value: '4' }]);
    const response = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 1, records: more }] }],
    });
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const s = await eventually(port, (x) => {
      assert.equal(x.value('kafka_coordinator_group_groupmetadatamanager_numgroupsempty'), 1);
      assert.equal(
        x.value('kafka_consumergroup_lag', { consumergroup: GROUP, topic: TOPIC, partition: 1 }),
        4,
      );
    });
    assert.equal(s.value('kafka_coordinator_group_groupmetadatamanager_numgroupsstable'), 0);
    assert.ok(s.value('kafka_coordinator_group_groupmetadatamanager_numoffsets') >= 2);
  });

  it('exposes every metric the Grafana dashboard and the Prometheus alert rules use', async () => {
    const s = await scrape(port);
    const exposed = new Set([...s.names(), ...s.families]);
    const dashboard = readFileSync(join(REPO_ROOT, 'config/grafana/brook-dashboard.json'), 'utf8');
    const alerts = readFileSync(join(REPO_ROOT, 'config/prometheus/brook-alerts.yml'), 'utf8');
    const exprs = [
      ...[...dashboard.matchAll(/"expr":\s*"((?:[^"\\]|\\.)*)"/g)].map(
        (m) => JSON.parse(`"${m[1]}"`) as string,
      ),
      ...[...alerts.matchAll(/^\s*expr:\s*(.+)$/gm)].map((m) => m[1]!),
    ];
    assert.ok(exprs.length >= 10, `found ${exprs.length} expressions`);
    const used = new Set<string>();
    for (const expr of exprs)
      for (const m of expr.matchAll(/\b(?:kafka|brook|process|nodejs)_[a-z0-9_]+/g)) used.add(m[0]);
    assert.ok(used.size >= 10);
    const missing = [...used].filter((name) => !exposed.has(name));
    assert.deepEqual(missing, [], `metrics used by config/ but not exposed: ${missing.join(', ')}`);
  });

  it('answers bad requests with 4xx and JSON, and keeps serving', async () => {
    const post = await httpRequest(port, '/metrics', { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET');
    assert.match(JSON.parse(post.body).error, /only GET/);
    const unknown = await httpRequest(port, '/nope');
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.body).error, 'not found');
    const withBody = await httpRequest(port, '/metrics', {
      body: 'payload',
      headers: { 'content-length': '7' },
    });
    assert.equal(withBody.status, 413);
    const huge = await httpRequest(port, '/metrics', { headers: { 'x-filler': 'y'.repeat(20_000) } }).catch(
      (err: Error) => ({ status: -1, body: err.message, headers: {} }),
    );
    assert.equal(huge.status, 431, huge.body);
    assert.equal(await rawAnswerStatus(port, 'NOT HTTP AT ALL\r\n\r\n'), 400);
    assert.equal((await httpRequest(port, '/healthz')).status, 200);
  });
});

describe('brook.metrics.listener validation', () => {
  it('a broker refuses to start with a listener that is not http://host:port', async () => {
    await assert.rejects(
      startBroker({ overrides: { 'brook.metrics.listener': 'tcp://127.0.0.1:9404' } }),
      /brook\.metrics\.listener/,
    );
  });
});

function countLogs(s: Samples): number {
  return s.text.split('\n').filter((line) => line.startsWith('kafka_log_log_size{')).length;
}

/** Sends raw bytes and answers the status code of the first response line, or -1 if none came. */
function rawAnswerStatus(port: number, bytes: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolvePromise(m ? Number(m[1]) : -1);
    });
    socket.setTimeout(5000, () => socket.destroy());
  });
}
