// The worker REST API's shapes that Kafka 3.9 has and scripts, probes and UIs rely on, through real HTTP against
// standalone workers and a broker process: GET /health (KIP-1017) with its 503 "starting" and 200 "healthy", the
// Location header of a 201, /connector-plugins/{plugin}/config listing the framework's connector keys beside the
// connector's own, the plugin-name rule of /config/validate, a plugin without a version listed without "version",
// the 403s of the topic.tracking.enable and topic.tracking.allow.reset worker settings, and the CORS headers of
// access.control.allow.origin and access.control.allow.methods with JAX-RS's OPTIONS and HEAD answers.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type StandaloneWorker, startStandalone } from '../../src/connect/runtime/standalone.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { rest, startConnectWorker } from '../helpers/connect-worker.js';
import { eventually } from '../helpers/wait.js';

let broker: BrokerProcess;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-shapes-'));
});

after(async () => {
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** An in-process standalone worker on a free port; `fn` runs against it and the worker is always stopped. */
async function withWorker(
  name: string,
  props: Record<string, string>,
  fn: (w: StandaloneWorker) => Promise<void>,
  restOptions: { healthCheckTimeoutMs?: number } = {},
): Promise<void> {
  const w = await startStandalone(
    {
      'bootstrap.servers': broker.bootstrap,
      listeners: 'http://127.0.0.1:0',
      'offset.storage.file.filename': join(dir, `${name}.offsets`),
      ...props,
    },
    () => {},
    restOptions,
  );
  try {
    await fn(w);
  } finally {
    await w.stop();
  }
}

const HEALTHY = {
  status: 'healthy',
  message: 'Worker has completed startup and is ready to handle requests.',
};

test('GET /health answers 503 "starting" until a standalone worker has started, then 200 "healthy" (KIP-1017)', async () => {
  await withWorker(
    'health',
    {},
    async (w) => {
      // As Kafka's ConnectStandalone, startup is complete once the command line's connectors are created.
      assert.deepEqual(await rest(w.restUrl, 'GET', '/health'), {
        status: 503,
        body: { status: 'starting', message: 'Worker is still starting up.' },
      });
      w.herder.ready();
      assert.deepEqual(await rest(w.restUrl, 'GET', '/health'), { status: 200, body: HEALTHY });
    },
    { healthCheckTimeoutMs: 300 },
  );
});

test('the connect-standalone command is healthy once the connectors of its files are created', async () => {
  const worker = await startConnectWorker(
    dir,
    { 'bootstrap.servers': broker.bootstrap, 'offset.storage.file.filename': join(dir, 'cli.offsets') },
    [{ name: 'cli-sink', 'connector.class': 'FileStreamSink', topics: 'cli', file: join(dir, 'cli.txt') }],
  );
  try {
    assert.deepEqual(await rest(worker.url, 'GET', '/health'), { status: 200, body: HEALTHY });
  } finally {
    await worker.stop();
  }
});

test('a created connector is answered 201 with its Location, an updated one 200 without', async () => {
  await withWorker('location', {}, async (w) => {
    const send = (method: string, path: string, body: unknown) =>
      fetch(`${w.restUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const sink = { 'connector.class': 'FileStreamSink', topics: 'loc', file: join(dir, 'loc.txt') };
    const posted = await send('POST', '/connectors', { name: 'by post', config: sink });
    assert.equal(posted.status, 201);
    assert.equal(posted.headers.get('location'), `${w.restUrl}/connectors/by%20post`);
    const put = await send('PUT', '/connectors/by-put/config', sink);
    assert.equal(put.status, 201);
    assert.equal(put.headers.get('location'), `${w.restUrl}/connectors/by-put`);
    const updated = await send('PUT', '/connectors/by-put/config', { ...sink, topics: 'loc2' });
    assert.equal(updated.status, 200);
    assert.equal(updated.headers.get('location'), null);
    // The Location names the connector: a GET on it answers the connector.
    const info = await fetch(posted.headers.get('location')!);
    assert.equal(((await info.json()) as { name: string }).name, 'by post');
  });
});

test("a connector plugin's config definition lists the framework's connector keys after its own", async () => {
  await withWorker('plugin-config', {}, async (w) => {
    const sink = await rest(w.restUrl, 'GET', '/connector-plugins/FileStreamSink/config');
    assert.equal(sink.status, 200);
    const sinkKeys = (sink.body as { name: string }[]).map((k) => k.name);
    assert.equal(sinkKeys[0], 'file', 'the connector own key first');
    for (const key of ['name', 'connector.class', 'tasks.max', 'topics', 'topics.regex', 'errors.tolerance'])
      assert.ok(sinkKeys.includes(key), `${key} in ${sinkKeys.join(',')}`);
    assert.equal(new Set(sinkKeys).size, sinkKeys.length, 'each key once');
    const source = await rest(w.restUrl, 'GET', '/connector-plugins/FileStreamSource/config');
    const sourceKeys = (source.body as { name: string }[]).map((k) => k.name);
    for (const key of ['file', 'topic', 'name', 'exactly.once.support', 'offsets.storage.topic'])
      assert.ok(sourceKeys.includes(key), `${key} in ${sourceKeys.join(',')}`);
    assert.ok(!sourceKeys.includes('topics'), 'no sink key for a source');
    const tasksMax = (source.body as { name: string; default_value: string | null }[]).find(
      (k) => k.name === 'tasks.max',
    );
    assert.equal(tasksMax?.default_value, '1');
  });
});

test("/config/validate matches the path's plugin as Kafka does, and leaves a missing connector.class to validation", async () => {
  await withWorker('validate', {}, async (w) => {
    const full = 'org.apache.kafka.connect.file.FileStreamSinkConnector';
    // Kafka: the config's class without "Connector" must end with the path's name without it.
    const byTail = await rest(w.restUrl, 'PUT', '/connector-plugins/StreamSink/config/validate', {
      'connector.class': full,
      topics: 't',
    });
    assert.equal(byTail.status, 200, JSON.stringify(byTail.body));
    const aliasAgainstFull = await rest(w.restUrl, 'PUT', `/connector-plugins/${full}/config/validate`, {
      'connector.class': 'FileStreamSink',
      topics: 't',
    });
    assert.deepEqual(aliasAgainstFull, {
      status: 400,
      body: {
        error_code: 400,
        message: `Included connector type FileStreamSink does not match request type ${full}`,
      },
    });
    const missing = await rest(w.restUrl, 'PUT', '/connector-plugins/FileStreamSink/config/validate', {
      topics: 't',
    });
    assert.equal(missing.status, 400);
    assert.match((missing.body as { message: string }).message, /contains no connector type$/);
  });
});

test('a plugin without a version is listed without "version", as Kafka\'s NoVersionFilter', async () => {
  const plugins = join(dir, 'unversioned-plugins');
  mkdirSync(plugins);
  writeFileSync(
    join(plugins, 'always.mjs'),
    'export class Always { static pluginType = "predicate"; static className = "com.example.Always";\n' +
      '  configure() {} test() { return true; } close() {} }\n',
  );
  await withWorker('unversioned', { 'plugin.path': plugins }, async (w) => {
    const listed = await rest(w.restUrl, 'GET', '/connector-plugins?connectorsOnly=false');
    const always = (listed.body as Record<string, unknown>[]).find((p) => p.class === 'com.example.Always');
    assert.deepEqual(always, { class: 'com.example.Always', type: 'predicate' });
  });
});

test('topic.tracking.enable=false and topic.tracking.allow.reset=false answer 403 as Kafka, and tracking off records nothing', async () => {
  const input = join(dir, 'tracked.txt');
  writeFileSync(input, 'a\nb\n');
  const source = (topic: string) => ({
    name: 'src',
    config: { 'connector.class': 'FileStreamSource', file: input, topic },
  });
  await withWorker('no-reset', { 'topic.tracking.allow.reset': 'false' }, async (w) => {
    assert.equal((await rest(w.restUrl, 'POST', '/connectors', source('tracked-a'))).status, 201);
    await eventually(
      async () =>
        JSON.stringify((await rest(w.restUrl, 'GET', '/connectors/src/topics')).body) ===
        JSON.stringify({ src: { topics: ['tracked-a'] } }),
      30_000,
      'the topic tracked',
    );
    assert.deepEqual(await rest(w.restUrl, 'PUT', '/connectors/src/topics/reset'), {
      status: 403,
      body: { error_code: 403, message: 'Topic tracking reset is disabled.' },
    });
  });
  const noTracking = { 'topic.tracking.enable': 'false', 'offset.flush.interval.ms': '200' };
  await withWorker('no-tracking', noTracking, async (w) => {
    assert.equal((await rest(w.restUrl, 'POST', '/connectors', source('tracked-b'))).status, 201);
    const disabled = { status: 403, body: { error_code: 403, message: 'Topic tracking is disabled.' } };
    assert.deepEqual(await rest(w.restUrl, 'GET', '/connectors/src/topics'), disabled);
    assert.deepEqual(await rest(w.restUrl, 'PUT', '/connectors/src/topics/reset'), disabled);
    // The task sends its lines, and records no topic (Kafka's tasks skip recordActiveTopic).
    await eventually(
      async () => {
        const offsets = await rest(w.restUrl, 'GET', '/connectors/src/offsets');
        return (offsets.body as { offsets: unknown[] }).offsets.length > 0;
      },
      30_000,
      'the lines sent and their offset committed',
    );
    assert.deepEqual(w.herder.connectorActiveTopics('src'), []);
  });
});

/** A request with the given headers (Origin and the like, which browsers set); status, headers and body text. */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

test('access.control.allow.origin and .methods give a browser console the CORS answers of Kafka (Jetty CrossOriginFilter)', async () => {
  const origin = 'http://console.example:8000';
  const props = {
    'access.control.allow.origin': 'http://*.example:8000',
    'access.control.allow.methods': 'GET,POST,PUT,DELETE,OPTIONS',
  };
  await withWorker('cors', props, async (w) => {
    const preflight = await raw(w.restUrl, 'OPTIONS', '/connectors/x/config', {
      origin,
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'content-type',
    });
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers['access-control-allow-origin'], origin);
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET,POST,PUT,DELETE,OPTIONS');
    assert.equal(
      preflight.headers['access-control-allow-headers'],
      'X-Requested-With,Content-Type,Accept,Origin',
    );
    assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
    assert.equal(preflight.headers['access-control-max-age'], '1800');
    assert.equal(preflight.headers.vary, 'Origin');
    assert.equal(preflight.headers.allow, 'GET,HEAD,OPTIONS,PATCH,PUT');

    const listed = await raw(w.restUrl, 'GET', '/connectors', { origin });
    assert.deepEqual([listed.status, listed.body], [200, '[]']);
    assert.equal(listed.headers['access-control-allow-origin'], origin);
    // A method the setting leaves out, and an origin it does not name, get no CORS headers (the browser refuses).
    const patch = await raw(w.restUrl, 'OPTIONS', '/connectors/x/config', {
      origin,
      'access-control-request-method': 'PATCH',
    });
    assert.equal(patch.headers['access-control-allow-origin'], undefined);
    const other = await raw(w.restUrl, 'GET', '/connectors', { origin: 'http://elsewhere.test' });
    assert.equal(other.status, 200);
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    // JAX-RS answers HEAD as GET without the body.
    const head = await raw(w.restUrl, 'HEAD', '/connectors', {});
    assert.deepEqual([head.status, head.body], [200, '']);
  });
  await withWorker('no-cors', {}, async (w) => {
    const listed = await raw(w.restUrl, 'GET', '/connectors', { origin });
    assert.equal(listed.headers['access-control-allow-origin'], undefined, 'blank setting: no CORS');
  });
});

test("a config value given as null is refused with Kafka's validation error, not dropped", async () => {
  await withWorker('nulls', {}, async (w) => {
    const sink = { 'connector.class': 'FileStreamSink', topics: 'nulls' };
    const error = 'Null value can not be supplied as the configuration value.';
    const put = await rest(w.restUrl, 'PUT', '/connectors/n/config', { ...sink, file: null });
    assert.equal(put.status, 400, JSON.stringify(put.body));
    assert.match(
      (put.body as { message: string }).message,
      new RegExp(
        `^Connector configuration is invalid and contains the following 1 error\\(s\\):\\n${error}\\n`,
      ),
    );
    const posted = await rest(w.restUrl, 'POST', '/connectors', {
      name: 'n',
      config: { ...sink, 'tasks.max': null },
    });
    assert.equal(posted.status, 400, JSON.stringify(posted.body));
    assert.deepEqual((await rest(w.restUrl, 'GET', '/connectors')).body, [], 'nothing created');
    const validated = await rest(w.restUrl, 'PUT', '/connector-plugins/FileStreamSink/config/validate', {
      ...sink,
      name: 'n',
      file: null,
    });
    const infos = validated.body as {
      error_count: number;
      configs: { value: { name: string; errors: string[] } }[];
    };
    assert.equal(infos.error_count, 1);
    assert.deepEqual(infos.configs.find((c) => c.value.name === 'file')?.value.errors, [error]);
    // A null name is the connector's name, as Kafka's ConnectorsResource puts it there.
    const named = await rest(w.restUrl, 'PUT', '/connectors/n/config', { ...sink, name: null });
    assert.equal(named.status, 201, JSON.stringify(named.body));
    assert.equal((named.body as { config: { name: string } }).config.name, 'n');
  });
});

test('response.http.headers.config adds its headers to every answer, and a rule that does not parse stops the worker', async () => {
  const rules = 'set X-Frame-Options:DENY, add Cache-Control:no-store, "set X-Listed:a,b", setDate Expires:0';
  await withWorker('headers', { 'response.http.headers.config': rules }, async (w) => {
    for (const path of ['/connectors', '/no-such-path']) {
      const answer = await raw(w.restUrl, 'GET', path, {});
      assert.equal(answer.headers['x-frame-options'], 'DENY', path);
      assert.equal(answer.headers['cache-control'], 'no-store', path);
      assert.equal(answer.headers['x-listed'], 'a,b', path);
      assert.ok(Math.abs(Date.parse(answer.headers.expires!) - Date.now()) < 60_000, answer.headers.expires);
    }
  });
  await assert.rejects(
    withWorker('bad-headers', { 'response.http.headers.config': 'put X-Frame-Options:DENY' }, async () => {}),
    { message: "Invalid header config action: 'put'. Expected one of [set, add, setDate, addDate]" },
  );
});

test('PATCH /connectors/{name}/config takes a "name" in its body as Kafka 3.9 does: merged, not refused', async () => {
  await withWorker('patch-name', {}, async (w) => {
    const sink = { 'connector.class': 'FileStreamSink', topics: 'patched', file: join(dir, 'patched.txt') };
    assert.equal((await rest(w.restUrl, 'PUT', '/connectors/p/config', sink)).status, 201);
    // Kafka's patchConnectorConfig merges the body into the config (ConnectUtils.patchConfig) and puts it
    // without ConnectorsResource's name check, which only PUT and POST make.
    const patched = await rest(w.restUrl, 'PATCH', '/connectors/p/config', {
      name: 'other',
      topics: 'patched2',
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const info = patched.body as { name: string; config: Record<string, string> };
    assert.equal(info.name, 'p');
    assert.equal(info.config.name, 'other');
    assert.equal(info.config.topics, 'patched2');
    const missing = await rest(w.restUrl, 'PATCH', '/connectors/nope/config', { topics: 'x' });
    assert.deepEqual(missing, {
      status: 404,
      body: { error_code: 404, message: 'Connector nope not found' },
    });
  });
});

test("a converter's config definition lists its keys as Kafka's ConverterConfig and its subclasses", async () => {
  await withWorker('converter-config', {}, async (w) => {
    const names = async (plugin: string) => {
      const r = await rest(w.restUrl, 'GET', `/connector-plugins/${plugin}/config`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body as { name: string }[]).map((k) => k.name);
    };
    const string = await rest(w.restUrl, 'GET', '/connector-plugins/StringConverter/config');
    assert.deepEqual(string.body, [
      {
        name: 'converter.type',
        type: 'STRING',
        required: true,
        default_value: null,
        importance: 'LOW',
        documentation: 'How this converter will be used.',
        group: null,
        width: 'NONE',
        display_name: 'converter.type',
        dependents: [],
        order: -1,
      },
      {
        name: 'converter.encoding',
        type: 'STRING',
        required: false,
        default_value: 'UTF-8',
        importance: 'HIGH',
        documentation: 'The name of the Java character set to use for encoding strings as byte arrays.',
        group: null,
        width: 'MEDIUM',
        display_name: 'Encoding',
        dependents: [],
        order: -1,
      },
    ]);
    assert.deepEqual(await names('ByteArrayConverter'), ['converter.type']);
    assert.deepEqual(await names('JsonConverter'), [
      'converter.type',
      'schemas.enable',
      'schemas.cache.size',
      'decimal.format',
      'replace.null.with.default',
    ]);
    // Kafka's SimpleHeaderConverter defines no keys.
    assert.deepEqual(await names('SimpleHeaderConverter'), []);
  });
});
