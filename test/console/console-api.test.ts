// The web console's JSON API against a live broker, through `brook console`: topics created, altered, grown,
// browsed, produced to and deleted; groups with lag and an offset reset; ACLs and quotas; bad input answered
// with 4xx JSON; cross-site and rebinding requests refused; the charts' points from offsets and from the broker's
// Prometheus endpoint. The display helpers and the Prometheus text reader are checked on their own.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { asHex, asJson, fromBase64, show } from '../../src/console/format.js';
import { parsePrometheusText, sumOf } from '../../src/console/prometheus-text.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { freePort } from '../helpers/zookeeper.js';
import { type ConsoleProcess, call, startConsole } from './console-process.js';

describe('console display helpers', () => {
  test('bytes show as text, pretty JSON (text when not JSON) and an xxd-style hex dump', () => {
    const b64 = Buffer.from('{"a":[1,2]}').toString('base64');
    assert.equal(show(b64, 'text'), '{"a":[1,2]}');
    assert.equal(show(b64, 'json'), '{\n  "a": [\n    1,\n    2\n  ]\n}');
    assert.equal(show(Buffer.from('plain').toString('base64'), 'json'), 'plain');
    assert.equal(show(null, 'hex'), '(null)');
    assert.equal(asJson(new Uint8Array()), null);
    const hex = asHex(fromBase64(Buffer.from('ABCDEFGHIJKLMNOPQ\u0001').toString('base64')));
    assert.equal(
      hex,
      '00000000  41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50  ABCDEFGHIJKLMNOP\n00000010  51 01                                            Q.',
    );
  });

  test('the Prometheus text reader takes labels with escapes and skips comments and odd lines', () => {
    const samples = parsePrometheusText(
      [
        '# HELP x help',
        '# TYPE x counter',
        'kafka_server_brokertopicmetrics_bytesin_total 100',
        'kafka_server_brokertopicmetrics_bytesin_total{topic="t"} 60',
        'kafka_server_brokertopicmetrics_bytesin_total{topic="u"} 40 1700000000000',
        'weird{label="a\\"b",other="c\\\\d"} 2.5',
        'broken{label=oops} 1',
        'not a sample',
      ].join('\n'),
    );
    assert.equal(samples.length, 4);
    assert.equal(sumOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: '' }), 100);
    assert.equal(sumOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: 't' }), 60);
    assert.equal(sumOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total'), 200);
    assert.deepEqual(samples[3]!.labels, { label: 'a"b', other: 'c\\d' });
    assert.equal(sumOf(samples, 'missing'), null);
  });
});

describe('console API against a broker', () => {
  let broker: BrokerProcess | undefined;
  let web: ConsoleProcess | undefined;
  let admin: Admin | undefined;
  let base = '';

  before(async () => {
    const metricsPort = await freePort();
    broker = await startBroker({
      overrides: { 'num.partitions': 1, 'brook.metrics.listener': `http://127.0.0.1:${metricsPort}` },
    });
    web = await startConsole([
      '--bootstrap-server',
      broker.bootstrap,
      '--metrics-url',
      `http://127.0.0.1:${metricsPort}/metrics`,
    ]);
    base = web.url;
    admin = new Admin({ bootstrapServers: broker.bootstrap });
  });
  after(async () => {
    await admin?.close();
    await web?.stop();
    await broker?.stop();
  });

  test('serves the bundled page with a strict content security policy', async () => {
    const index = await fetch(`${base}/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    const html = await index.text();
    assert.match(html, /<script type="module" src="\/app.js">/);
    const js = await fetch(`${base}/app.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.ok((await js.text()).length > 5_000, 'the bundle holds the page and Preact');
    assert.equal((await fetch(`${base}/app.css`)).status, 200);
    assert.equal((await fetch(`${base}/../../etc/passwd`)).status, 404);
  });

  test('brokers, and a topic created, described, altered, grown, browsed and deleted', async () => {
    const cluster = await call(base, 'GET', '/cluster');
    assert.equal(cluster.status, 200);
    assert.equal(cluster.body.brokers[0].state, 'online');
    assert.equal(cluster.body.brokers[0].isController, true);

    const created = await call(base, 'POST', '/topics', {
      name: 'api-orders',
      partitions: 2,
      configs: { 'retention.ms': '3600000' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const again = await call(base, 'POST', '/topics', { name: 'api-orders' });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'TOPIC_ALREADY_EXISTS');

    const list = await call(base, 'GET', '/topics');
    const summary = list.body.find((t: { name: string }) => t.name === 'api-orders');
    assert.equal(summary.partitions, 2);
    assert.equal(summary.replicationFactor, 1);

    const producer = new Producer({ bootstrapServers: broker!.bootstrap, lingerMs: 0 });
    for (let i = 0; i < 5; i++) {
      await producer.send({
        topic: 'api-orders',
        partition: i % 2,
        key: Buffer.from(`k${i}`),
        value: Buffer.from(`{"n":${i}}`),
        timestamp: 1_000_000 + i,
      });
    }
    await producer.close();

    const topic = await call(base, 'GET', '/topics/api-orders');
    assert.equal(topic.status, 200);
    assert.deepEqual(
      topic.body.partitions.map((p: { latestOffset: number }) => p.latestOffset),
      [3, 2],
    );
    assert.ok(
      Number(topic.body.partitions[0].sizeBytes['0']) > 0,
      'DescribeLogDirs size of the written partition',
    );
    const retention = topic.body.configs.find((c: { name: string }) => c.name === 'retention.ms');
    assert.equal(retention.value, '3600000');
    assert.equal(retention.source, 'DYNAMIC_TOPIC_CONFIG');

    const newest = await call(base, 'GET', '/topics/api-orders/messages?limit=2');
    assert.deepEqual(
      newest.body.records.map((r: { key: string }) => Buffer.from(r.key, 'base64').toString()),
      ['k4', 'k3'],
    );
    const fromOffset = await call(
      base,
      'GET',
      '/topics/api-orders/messages?mode=offset&partition=0&offset=1',
    );
    assert.deepEqual(
      fromOffset.body.records.map((r: { offset: number }) => r.offset),
      [1, 2],
    );
    const byTime = await call(base, 'GET', '/topics/api-orders/messages?mode=timestamp&timestamp=1000003');
    assert.deepEqual(
      byTime.body.records.map((r: { timestamp: number }) => r.timestamp),
      [1_000_003, 1_000_004],
    );

    const produced = await call(base, 'POST', '/topics/api-orders/messages', {
      partition: 1,
      key: 'hello',
      value: 'from the console',
      headers: { source: 'test' },
    });
    assert.equal(produced.status, 201, JSON.stringify(produced.body));
    assert.deepEqual(produced.body, { partition: 1, offset: 2 });
    const last = await call(base, 'GET', '/topics/api-orders/messages?partition=1&limit=1');
    const record = last.body.records[0];
    assert.equal(Buffer.from(record.value, 'base64').toString(), 'from the console');
    assert.deepEqual(record.headers, [{ key: 'source', value: Buffer.from('test').toString('base64') }]);

    const altered = await call(base, 'POST', '/topics/api-orders/configs', {
      set: { 'cleanup.policy': 'compact', 'retention.ms': null },
    });
    assert.equal(altered.status, 200, JSON.stringify(altered.body));
    const [configs] = await admin!.describeConfigs([{ type: 'topic', name: 'api-orders' }]);
    assert.equal(configs!.configs.find((c) => c.name === 'cleanup.policy')!.value, 'compact');
    assert.equal(configs!.configs.find((c) => c.name === 'retention.ms')!.source, 'DEFAULT_CONFIG');

    assert.equal((await call(base, 'POST', '/topics/api-orders/partitions', { count: 2 })).status, 400);
    assert.equal((await call(base, 'POST', '/topics/api-orders/partitions', { count: 3 })).status, 200);
    const [grown] = await admin!.describeTopics(['api-orders']);
    assert.equal(grown!.partitions.length, 3);

    const unconfirmed = await call(base, 'DELETE', '/topics/api-orders', { confirm: 'api-order' });
    assert.equal(unconfirmed.status, 400);
    assert.ok((await admin!.listTopics()).includes('api-orders'), 'not deleted without the name typed again');
    assert.equal((await call(base, 'DELETE', '/topics/api-orders', { confirm: 'api-orders' })).status, 200);
    let topics = await admin!.listTopics();
    for (let i = 0; i < 100 && topics.includes('api-orders'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      topics = await admin!.listTopics();
    }
    assert.ok(!topics.includes('api-orders'), 'deleted');
    assert.equal((await call(base, 'GET', '/topics/api-orders')).status, 404);
  });

  test('a group shows lag per partition; an offset reset moves it, clamped to the log', async () => {
    await admin!.createTopics([{ topic: 'api-lag', numPartitions: 2 }]);
    const producer = new Producer({ bootstrapServers: broker!.bootstrap, lingerMs: 0 });
    for (let i = 0; i < 10; i++)
      await producer.send({ topic: 'api-lag', partition: i % 2, value: Buffer.from(`v${i}`) });
    await producer.close();
    await admin!.alterConsumerGroupOffsets('api-group', [
      { topic: 'api-lag', partition: 0, offset: 1 },
      { topic: 'api-lag', partition: 1, offset: 5 },
    ]);
    const group = await call(base, 'GET', '/groups/api-group');
    assert.equal(group.status, 200, JSON.stringify(group.body));
    assert.deepEqual(
      group.body.offsets.map(
        (o: { partition: number; committedOffset: number; endOffset: number; lag: number }) => [
          o.partition,
          o.committedOffset,
          o.endOffset,
          o.lag,
        ],
      ),
      [
        [0, 1, 5, 4],
        [1, 5, 5, 0],
      ],
    );
    assert.equal(group.body.totalLag, 4);
    const groups = await call(base, 'GET', '/groups');
    assert.ok(groups.body.some((g: { groupId: string }) => g.groupId === 'api-group'));

    const reset = await call(base, 'POST', '/groups/api-group/reset-offsets', { to: 'earliest' });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.equal((await call(base, 'GET', '/groups/api-group')).body.totalLag, 10);
    const toOffset = await call(base, 'POST', '/groups/api-group/reset-offsets', {
      topic: 'api-lag',
      to: 'offset',
      value: 99,
    });
    assert.deepEqual(
      toOffset.body.partitions.map((p: { offset: number }) => p.offset),
      [5, 5],
      'offsets past the end are clamped to it',
    );
    assert.equal((await call(base, 'GET', '/groups/api-group')).body.totalLag, 0);

    const missing = await call(base, 'GET', '/groups/no-such-group');
    assert.equal(missing.status, 404);
  });

  test('ACLs without an authorizer say so; quotas list what is set', async () => {
    const acls = await call(base, 'GET', '/acls');
    assert.equal(acls.status, 200);
    assert.equal(acls.body.enabled, false);
    const added = await call(base, 'POST', '/acls', {
      principal: 'User:alice',
      operation: 'Read',
      permission: 'Allow',
      resourceType: 'Topic',
      resourceName: 'orders',
    });
    assert.equal(added.status, 409, JSON.stringify(added.body));
    assert.equal(added.body.code, 'SECURITY_DISABLED');
    const errors = await admin!.alterClientQuotas([
      { entity: { user: 'alice' }, ops: [{ key: 'producer_byte_rate', value: 1024 }] },
    ]);
    assert.equal(errors[0]!.error, null);
    const quotas = await call(base, 'GET', '/quotas');
    assert.deepEqual(quotas.body, [{ user: 'alice', values: { producer_byte_rate: 1024 } }]);
  });

  test('a window that ends in a transaction marker is read to its end at once, not at the time budget', async () => {
    await admin!.createTopics([{ topic: 'api-txn', numPartitions: 1 }]);
    const script = [
      'import sys',
      'from confluent_kafka import Producer',
      'p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "console-txn"})',
      'p.init_transactions()',
      'p.begin_transaction()',
      'p.produce("api-txn", b"committed", partition=0)',
      'p.commit_transaction()',
      'print("committed")',
    ].join('\n');
    const result = await run('/usr/bin/python3', ['-c', script, broker!.bootstrap], { timeoutMs: 60_000 });
    assert.equal(result.stdout.trim(), 'committed', result.stderr);
    const started = Date.now();
    const browsed = await call(base, 'GET', '/topics/api-txn/messages');
    const elapsedMs = Date.now() - started;
    assert.deepEqual(
      browsed.body.records.map((r: { value: string }) => Buffer.from(r.value, 'base64').toString()),
      ['committed'],
    );
    assert.equal(browsed.body.partitions[0].endOffset, 2, 'the record and the commit marker');
    // The browse budget is 5 s; a read that waited for it would take that long.
    assert.ok(elapsedMs < 4_000, `browsed in ${elapsedMs} ms`);
  });

  test('bad input gets 4xx JSON errors, never a crash', async () => {
    const ACL = {
      principal: 'User:alice',
      operation: 'Read',
      permission: 'Allow',
      resourceType: 'Topic',
      resourceName: 'orders',
    };
    const cases: [string, string, unknown, number][] = [
      ['POST', '/topics', { name: 'bad name!' }, 400],
      ['POST', '/topics', { name: 'ok', partitions: 0 }, 400],
      ['POST', '/topics', { name: 'ok', partitions: 'many' }, 400],
      ['POST', '/topics', [1, 2], 400],
      ['POST', '/topics', '{not json', 400],
      ['GET', '/topics/nope', undefined, 404],
      ['GET', '/topics/nope/messages', undefined, 404],
      ['GET', '/topics/api-lag/messages?mode=sideways', undefined, 400],
      ['GET', '/topics/api-lag/messages?limit=100000', undefined, 400],
      ['GET', '/topics/api-lag/messages?partition=9', undefined, 404],
      ['POST', '/topics/api-lag/configs', { set: {} }, 400],
      ['POST', '/topics/api-lag/configs', { set: { 'no.such.config': '1' } }, 400],
      ['POST', '/topics/api-lag/messages', { value: 42 }, 400],
      ['POST', '/groups/g/reset-offsets', { to: 'yesterday' }, 400],
      ['GET', '/acls?resourceType=Table', undefined, 400],
      ['GET', '/acls?patternType=MATCH', undefined, 400],
      ['GET', '/acls?principal=alice', undefined, 400],
      ['POST', '/acls', { ...ACL, principal: 'alice' }, 400],
      ['POST', '/acls', { ...ACL, operation: 'Any' }, 400],
      ['POST', '/acls', { ...ACL, permission: 'Maybe' }, 400],
      ['POST', '/acls', { ...ACL, resourceType: 'Any' }, 400],
      ['POST', '/acls', { ...ACL, patternType: 'MATCH' }, 400],
      ['POST', '/acls', { ...ACL, resourceName: '' }, 400],
      ['DELETE', '/acls', ACL, 400],
      ['PUT', '/acls', ACL, 405],
      ['POST', '/quotas', { entity: {}, set: { producer_byte_rate: 1 } }, 400],
      ['POST', '/quotas', { entity: { group: 'g' }, set: { producer_byte_rate: 1 } }, 400],
      ['POST', '/quotas', { entity: { user: '' }, set: { producer_byte_rate: 1 } }, 400],
      ['POST', '/quotas', { entity: { ip: null, user: 'a' }, set: { connection_creation_rate: 1 } }, 400],
      ['POST', '/quotas', { entity: { user: 'a' }, set: {} }, 400],
      ['POST', '/quotas', { entity: { user: 'a' }, set: { speed: 1 } }, 400],
      ['POST', '/quotas', { entity: { user: 'a' }, set: { producer_byte_rate: 'fast' } }, 400],
      ['POST', '/quotas', { entity: { user: 'a' }, set: { producer_byte_rate: 0 } }, 400],
      ['POST', '/quotas', { entity: { ip: 'a' }, set: { producer_byte_rate: 10 } }, 400],
      ['PUT', '/topics', { name: 'x' }, 405],
      ['GET', '/nothing', undefined, 404],
    ];
    for (const [method, path, body, status] of cases) {
      const answer = await call(base, method, path, body);
      assert.equal(
        answer.status,
        status,
        `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`,
      );
      assert.equal(typeof answer.body.error, 'string');
    }
    const big = await fetch(`${base}/api/topics/api-lag/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'x'.repeat(1024 * 1024 + 10) }),
    });
    assert.equal(big.status, 413);
    const notJson = await fetch(`${base}/api/topics`, { method: 'POST', body: 'name=x' });
    assert.equal(notJson.status, 415);
    const crossSite = await call(
      base,
      'POST',
      '/topics',
      { name: 'csrf' },
      { origin: 'http://evil.example' },
    );
    assert.equal(crossSite.status, 403);
    assert.ok(!(await admin!.listTopics()).includes('csrf'));
    // DNS rebinding: a page at evil.example resolving to 127.0.0.1 sends its own Host.
    const { code, stdout } = await run('curl', ['-s', '-H', 'Host: evil.example', `${base}/api/topics`], {
      timeoutMs: 10_000,
    });
    assert.equal(code, 0);
    assert.match(stdout, /not this console/);
    assert.equal((await call(base, 'GET', '/cluster')).status, 200, 'still serving');
  });

  test("the charts' points come from the broker's Prometheus metrics, with lag from offsets", async () => {
    const first = await call(base, 'GET', '/metrics');
    assert.equal(first.body.source, 'prometheus');
    const producer = new Producer({ bootstrapServers: broker!.bootstrap, lingerMs: 0 });
    let points: {
      bytesInPerSec: number | null;
      messagesInPerSec: number | null;
      produceLatencyMs: number | null;
      lag: Record<string, number>;
    }[] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      await producer.send({ topic: 'api-lag', partition: 0, value: Buffer.alloc(1000) });
      points = (await call(base, 'GET', '/metrics')).body.points;
      if (points.some((p) => (p.bytesInPerSec ?? 0) > 0 && p.produceLatencyMs !== null)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await producer.close();
    const busy = points.find((p) => (p.bytesInPerSec ?? 0) > 0 && p.produceLatencyMs !== null);
    assert.ok(busy, `a point with bytes in and produce latency: ${JSON.stringify(points)}`);
    assert.ok((busy.messagesInPerSec ?? 0) > 0);
    assert.ok('api-group' in busy.lag, 'lag per group');
  });

  test('a metrics endpoint that does not answer blanks only its lines; lag still comes, with the error', async () => {
    const dead = `http://127.0.0.1:${await freePort()}/metrics`;
    const other = await startConsole(['--bootstrap-server', broker!.bootstrap, '--metrics-url', dead]);
    try {
      let series = (await call(other.url, 'GET', '/metrics')).body;
      const deadline = Date.now() + 30_000;
      while (series.points.length < 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        series = (await call(other.url, 'GET', '/metrics')).body;
      }
      const point = series.points[0];
      assert.ok(point, JSON.stringify(series));
      assert.equal(point.bytesInPerSec, null);
      assert.equal(point.messagesInPerSec, null);
      assert.equal(typeof point.lag['api-group'], 'number', 'lag from offsets');
      assert.match(series.error, /^metrics: /);
    } finally {
      await other.stop();
    }
  });
});
