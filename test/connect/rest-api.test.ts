// The REST API of a standalone worker against Kafka Connect's: the curl commands of the Connect
// documentation (create, config, status, pause/resume, restart, tasks, validate, delete) with their status
// codes and JSON shapes, KIP-875 stop and offsets, KIP-745 restarts, and bad input refused with
// {"error_code", "message"}: invalid configs (400 with the errors), malformed JSON, oversized bodies, unknown
// connectors and paths, wrong methods, duplicate names.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Producer } from '../../src/client/index.js';
import { CONNECT_LOGGERS } from '../../src/connect/runtime/loggers.js';
import { startStandalone } from '../../src/connect/runtime/standalone.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, pluginDirWith, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { releaseStuckStarts } from '../helpers/stuck-source.js';
import { eventually, untilValue, waitUntil } from '../helpers/wait.js';

let broker: BrokerProcess;
let worker: ConnectWorker;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-rest-'));
  worker = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
  });
});

after(async () => {
  await worker?.stop();
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Runs curl with the documentation's arguments against the worker; the body parsed when there is one. */
function curl(...args: string[]): Promise<{ status: number; body: unknown }> {
  const fixed = args.map((a) =>
    a.replace('http://localhost:8083', worker.url).replace(/^localhost:8083/, worker.url),
  );
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '-w', '\n%{http_code}', ...fixed], (err, stdout) => {
      if (err) return reject(err);
      const cut = stdout.lastIndexOf('\n');
      const text = stdout.slice(0, cut);
      resolve({ status: Number(stdout.slice(cut + 1)), body: text === '' ? null : JSON.parse(text) });
    });
  });
}

test("the documentation's curl commands: create, read, update, pause, resume, restart, delete a connector", async () => {
  const sinkFile = join(dir, 'test.sink.txt');
  const root = await curl('http://localhost:8083/');
  assert.equal(root.status, 200);
  assert.deepEqual(Object.keys(root.body as object), ['version', 'commit', 'kafka_cluster_id']);
  assert.equal(typeof (root.body as { kafka_cluster_id: string }).kafka_cluster_id, 'string');

  const plugins = await curl('localhost:8083/connector-plugins');
  const listed = plugins.body as { class: string; type: string; version: string }[];
  assert.deepEqual(
    listed.map((p) => p.class),
    listed.map((p) => p.class).sort(),
    'sorted by class',
  );
  for (const [cls, type] of [
    ['org.apache.kafka.connect.file.FileStreamSinkConnector', 'sink'],
    ['org.apache.kafka.connect.file.FileStreamSourceConnector', 'source'],
  ]) {
    const p = listed.find((x) => x.class === cls);
    assert.equal(p?.type, type);
    assert.equal(typeof p?.version, 'string');
  }
  assert.ok(
    listed.every((p) => p.type === 'source' || p.type === 'sink'),
    'connectors only by default',
  );
  const everything = (await curl('localhost:8083/connector-plugins?connectorsOnly=false')).body as {
    class: string;
    type: string;
  }[];
  for (const [cls, type] of [
    ['org.apache.kafka.connect.json.JsonConverter', 'converter'],
    ['org.apache.kafka.connect.transforms.InsertField$Value', 'transformation'],
    ['org.apache.kafka.connect.transforms.predicates.TopicNameMatches', 'predicate'],
  ]) {
    assert.equal(everything.find((p) => p.class === cls)?.type, type, cls);
  }
  const definitions = (await curl('localhost:8083/connector-plugins/FileStreamSource/config')).body as {
    name: string;
    required: boolean;
  }[];
  // The connector's own keys, then the framework's source connector keys (Kafka's connectorPluginConfig).
  assert.deepEqual(
    definitions.slice(0, 5).map((d) => [d.name, d.required]),
    [
      ['file', false],
      ['topic', true],
      ['batch.size', false],
      ['name', true],
      ['connector.class', true],
    ],
  );

  const created = await curl(
    '-X',
    'POST',
    '-H',
    'Content-Type: application/json',
    '--data',
    `{"name": "local-file-sink", "config": {"connector.class":"FileStreamSinkConnector", "tasks.max":"1", "file":"${sinkFile}", "topics":"connect-test" }}`,
    'http://localhost:8083/connectors',
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(created.body, {
    name: 'local-file-sink',
    config: {
      'connector.class': 'FileStreamSinkConnector',
      'tasks.max': '1',
      file: sinkFile,
      topics: 'connect-test',
      name: 'local-file-sink',
    },
    tasks: [{ connector: 'local-file-sink', task: 0 }],
    type: 'sink',
  });
  assert.deepEqual((await curl('localhost:8083/connectors')).body, ['local-file-sink']);
  assert.equal((await curl('localhost:8083/connectors/local-file-sink/config')).status, 200);

  const updated = await curl(
    '-X',
    'PUT',
    '-H',
    'Content-Type: application/json',
    '--data',
    `{"connector.class":"FileStreamSinkConnector", "tasks.max":"2", "file":"${sinkFile}", "topics":"connect-test" }`,
    'localhost:8083/connectors/local-file-sink/config',
  );
  assert.equal(updated.status, 200);
  assert.deepEqual((updated.body as { tasks: unknown[] }).tasks, [
    { connector: 'local-file-sink', task: 0 },
    { connector: 'local-file-sink', task: 1 },
  ]);

  const workerId = new URL(worker.url).host;
  const status = await curl('localhost:8083/connectors/local-file-sink/status');
  assert.equal(status.status, 200);
  assert.deepEqual((status.body as { connector: unknown }).connector, {
    state: 'RUNNING',
    worker_id: workerId,
  });

  const tasks = await curl('localhost:8083/connectors/local-file-sink/tasks');
  assert.deepEqual(
    (tasks.body as { id: unknown }[]).map((t) => t.id),
    [
      { connector: 'local-file-sink', task: 0 },
      { connector: 'local-file-sink', task: 1 },
    ],
  );
  assert.equal((tasks.body as { config: Record<string, string> }[])[0]!.config.topics, 'connect-test');

  assert.equal((await curl('-X', 'PUT', 'localhost:8083/connectors/local-file-sink/pause')).status, 202);
  const paused = (await curl('localhost:8083/connectors/local-file-sink/status')).body as {
    connector: { state: string };
    tasks: { state: string }[];
  };
  assert.equal(paused.connector.state, 'PAUSED');
  assert.deepEqual(
    paused.tasks.map((t) => t.state),
    ['PAUSED', 'PAUSED'],
  );
  assert.equal((await curl('-X', 'PUT', 'localhost:8083/connectors/local-file-sink/resume')).status, 202);
  assert.equal(
    (
      (await curl('localhost:8083/connectors/local-file-sink/status')).body as {
        connector: { state: string };
      }
    ).connector.state,
    'RUNNING',
  );

  assert.equal((await curl('-X', 'POST', 'localhost:8083/connectors/local-file-sink/restart')).status, 204);
  const restarting = await curl(
    '-X',
    'POST',
    'localhost:8083/connectors/local-file-sink/restart?includeTasks=true&onlyFailed=false',
  );
  assert.equal(restarting.status, 202);
  assert.equal((restarting.body as { connector: { state: string } }).connector.state, 'RESTARTING');
  assert.deepEqual(
    (restarting.body as { tasks: { state: string }[] }).tasks.map((t) => t.state),
    ['RESTARTING', 'RESTARTING'],
  );
  const onlyFailed = await curl(
    '-X',
    'POST',
    'localhost:8083/connectors/local-file-sink/restart?includeTasks=true&onlyFailed=true',
  );
  assert.equal(onlyFailed.status, 202);
  assert.equal(
    (await curl('-X', 'POST', 'localhost:8083/connectors/local-file-sink/tasks/0/restart')).status,
    204,
  );
  const taskStatus = await curl('localhost:8083/connectors/local-file-sink/tasks/1/status');
  assert.equal(taskStatus.status, 200);
  assert.equal((taskStatus.body as { id: number }).id, 1);

  const validate = await curl(
    '-X',
    'PUT',
    '-H',
    'Content-Type: application/json',
    '--data',
    '{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max":"1", "topics":"test-topic"}',
    'localhost:8083/connector-plugins/FileStreamSinkConnector/config/validate',
  );
  assert.equal(validate.status, 200);
  const infos = validate.body as {
    name: string;
    error_count: number;
    groups: string[];
    configs: { definition: { name: string }; value: { name: string; errors: string[] } }[];
  };
  assert.equal(infos.name, 'org.apache.kafka.connect.file.FileStreamSinkConnector');
  assert.equal(infos.error_count, 1, JSON.stringify(infos.configs.filter((c) => c.value.errors.length > 0)));
  assert.deepEqual(infos.groups.slice(0, 4), ['Common', 'Transforms', 'Predicates', 'Error Handling']);
  assert.deepEqual(infos.configs.find((c) => c.definition.name === 'name')?.value.errors, [
    'Missing required configuration "name" which has no default value.',
  ]);
  assert.ok(
    infos.configs.some((c) => c.definition.name === 'file'),
    "the connector's own keys are listed",
  );

  assert.equal((await curl('-X', 'DELETE', 'localhost:8083/connectors/local-file-sink')).status, 204);
  assert.deepEqual((await curl('localhost:8083/connectors')).body, []);
});

test("stop, then offsets can be read, altered and reset (KIP-875); a running connector's offsets cannot", async () => {
  const file = join(dir, 'offsets-source.txt');
  writeFileSync(file, 'a\nb\nc\n');
  const create = await rest(worker.url, 'PUT', '/connectors/offsets-source/config', {
    'connector.class': 'FileStreamSource',
    file,
    topic: 'offsets-topic',
  });
  assert.equal(create.status, 201);
  await waitUntil(
    () =>
      existsSync(join(dir, 'connect.offsets')) &&
      readFileSync(join(dir, 'connect.offsets'), 'utf8').includes('offsets-source'),
    15_000,
    () => worker.stderr(),
  );
  const running = await rest(worker.url, 'DELETE', '/connectors/offsets-source/offsets');
  assert.equal(running.status, 400);
  assert.match((running.body as { message: string }).message, /must be in the STOPPED state/);
  // Kafka's stop resource method returns nothing: 204 No Content (pause and resume answer 202), which
  // clients such as Strimzi's operator check for exactly.
  assert.deepEqual(await rest(worker.url, 'PUT', '/connectors/offsets-source/stop'), {
    status: 204,
    body: null,
  });
  const stopped = (await rest(worker.url, 'GET', '/connectors/offsets-source/status')).body as {
    connector: { state: string };
    tasks: unknown[];
  };
  assert.equal(stopped.connector.state, 'STOPPED');
  assert.deepEqual(stopped.tasks, []);
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/offsets-source/offsets')).body, {
    offsets: [{ partition: { filename: file }, offset: { position: 6 } }],
  });
  const altered = await rest(worker.url, 'PATCH', '/connectors/offsets-source/offsets', {
    offsets: [{ partition: { filename: file }, offset: { position: 2 } }],
  });
  assert.deepEqual(altered, {
    status: 200,
    body: { message: 'The offsets for this connector have been altered successfully' },
  });
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/offsets-source/offsets')).body, {
    offsets: [{ partition: { filename: file }, offset: { position: 2 } }],
  });
  const reset = await rest(worker.url, 'DELETE', '/connectors/offsets-source/offsets');
  assert.deepEqual(reset, {
    status: 200,
    body: { message: 'The offsets for this connector have been reset successfully' },
  });
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/offsets-source/offsets')).body, {
    offsets: [],
  });
  assert.equal((await rest(worker.url, 'PUT', '/connectors/offsets-source/resume')).status, 202);
  const resumed = (await rest(worker.url, 'GET', '/connectors/offsets-source/status')).body as {
    connector: { state: string };
    tasks: unknown[];
  };
  assert.equal(resumed.connector.state, 'RUNNING');
  assert.equal(resumed.tasks.length, 1);
  const topics = await rest(worker.url, 'GET', '/connectors/offsets-source/topics');
  assert.deepEqual(topics.body, { 'offsets-source': { topics: ['offsets-topic'] } });
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/offsets-source')).status, 204);
});

test("bad input gets Kafka Connect's error bodies and status codes", async () => {
  const err = (r: { status: number; body: unknown }, status: number, message: RegExp) => {
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body as object), ['error_code', 'message']);
    assert.equal((r.body as { error_code: number }).error_code, status);
    assert.match((r.body as { message: string }).message, message);
  };
  const invalid = await rest(worker.url, 'POST', '/connectors', {
    name: 'bad',
    config: { 'connector.class': 'FileStreamSource', 'tasks.max': 'zero', 'batch.size': '-1' },
  });
  err(invalid, 400, /^Connector configuration is invalid and contains the following 3 error\(s\):\n/);
  const message = (invalid.body as { message: string }).message;
  assert.match(message, /Invalid value zero for configuration tasks.max: Not a number of type INT/);
  assert.match(message, /Missing required configuration "topic" which has no default value./);
  assert.match(message, /Invalid value -1 for configuration batch.size: Value must be at least 1/);
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors')).body, [], 'nothing was created');

  err(await rest(worker.url, 'POST', '/connectors', '{"name": "x", "config": {'), 400, /not valid JSON/);
  err(await rest(worker.url, 'POST', '/connectors', '[1,2]'), 400, /must be a JSON object/);
  err(
    await rest(worker.url, 'POST', '/connectors', {
      name: 'x',
      config: { 'connector.class': 'NoSuchConnector' },
    }),
    // Kafka's Plugins throws a plain ConnectException for an unknown class, which its ConnectExceptionMapper
    // answers with 500, for a create as for a validation.
    500,
    /Failed to find any class that implements Connector and which name matches NoSuchConnector/,
  );
  err(
    await rest(worker.url, 'PUT', '/connector-plugins/NoSuchConnector/config/validate', {
      'connector.class': 'NoSuchConnector',
    }),
    500,
    /Failed to find any class that implements Connector and which name matches NoSuchConnector/,
  );
  // A name Kafka's validation refuses (NonEmptyStringWithoutControlChars) stays a 400.
  err(
    await rest(worker.url, 'POST', '/connectors', {
      name: 'a\u0001b',
      config: { 'connector.class': 'FileStreamSource', topic: 't' },
    }),
    400,
    /control sequences/,
  );
  err(
    await rest(worker.url, 'POST', '/connectors', { name: 'x', config: { topics: { nested: true } } }),
    400,
    /must be a string/,
  );
  err(
    await rest(worker.url, 'PUT', '/connectors/a/config', {
      name: 'b',
      'connector.class': 'FileStreamSink',
      topics: 't',
    }),
    400,
    /doesn't match connector name in the URL/,
  );
  const huge = JSON.stringify({
    name: 'big',
    config: { 'connector.class': 'FileStreamSink', topics: 't', pad: 'x'.repeat(2 * 1024 * 1024) },
  });
  err(await rest(worker.url, 'POST', '/connectors', huge), 413, /larger than the limit of 1048576 bytes/);
  const form = await fetch(`${worker.url}/connectors`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'a=b',
  });
  err({ status: form.status, body: await form.json() }, 415, /Unsupported Media Type/);

  // Kafka's AbstractHerder.connectorStatus, pauseConnector and resumeConnector word their 404s so.
  err(await rest(worker.url, 'GET', '/connectors/nope/status'), 404, /^No status found for connector nope$/);
  err(await rest(worker.url, 'PUT', '/connectors/nope/pause'), 404, /^Unknown connector nope$/);
  err(await rest(worker.url, 'PUT', '/connectors/nope/resume'), 404, /^Unknown connector nope$/);
  err(await rest(worker.url, 'DELETE', '/connectors/nope'), 404, /^Connector nope not found$/);
  err(await rest(worker.url, 'GET', '/no/such/path'), 404, /HTTP 404 Not Found/);
  err(await rest(worker.url, 'DELETE', '/connector-plugins'), 405, /HTTP 405 Method Not Allowed/);

  const sink = { 'connector.class': 'FileStreamSink', topics: 'dup-topic', file: join(dir, 'dup.txt') };
  assert.equal((await rest(worker.url, 'POST', '/connectors', { name: 'dup', config: sink })).status, 201);
  err(
    await rest(worker.url, 'POST', '/connectors', { name: 'dup', config: sink }),
    409,
    /^Connector dup already exists$/,
  );
  err(await rest(worker.url, 'GET', '/connectors/dup/tasks/7/status'), 404, /No status found for task dup-7/);
  err(
    await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', sink),
    400,
    /does not match request type FileStreamSource/,
  );
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/dup')).status, 204);
});

test("a bad connector name is refused by the config validation, with Kafka's messages and error count", async () => {
  const source = { 'connector.class': 'FileStreamSource', topic: 'names-topic' };
  const invalid = (...errors: string[]) => ({
    status: 400,
    body: {
      error_code: 400,
      message:
        `Connector configuration is invalid and contains the following ${errors.length} error(s):\n` +
        `${errors.join('\n')}\n` +
        'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
    },
  });
  // Kafka's ConnectorsResource trims the name and takes a missing one as empty: its validation then refuses it.
  for (const name of [undefined, '', '   ']) {
    assert.deepEqual(
      await rest(worker.url, 'POST', '/connectors', { name, config: source }),
      invalid('Invalid value  for configuration name: String may not be empty'),
      JSON.stringify(name),
    );
  }
  // The name comes from the body only (ConnectorsResource.createConnector): a config.name without one is compared
  // with the empty name and refused as a mismatch, untrimmed, as Kafka's checkAndPutConnectorConfigName does.
  const mismatch = (inConfig: string, inBody: string) => ({
    status: 400,
    body: {
      error_code: 400,
      message: `Connector name configuration (${inConfig}) doesn't match connector name in the URL (${inBody})`,
    },
  });
  assert.deepEqual(
    await rest(worker.url, 'POST', '/connectors', { config: { ...source, name: 'from-config' } }),
    mismatch('from-config', ''),
  );
  assert.deepEqual(
    await rest(worker.url, 'POST', '/connectors', {
      name: ' padded ',
      config: { ...source, name: ' padded ' },
    }),
    mismatch(' padded ', 'padded'),
  );
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors')).body, []);
  // Every error of the config is listed, the name's first; Java's isISOControl also covers U+0080 to U+009F.
  assert.deepEqual(
    await rest(worker.url, 'POST', '/connectors', {
      name: ' a\tb\u0085 ',
      config: { 'connector.class': 'FileStreamSource' },
    }),
    invalid(
      'Invalid value a\tb\u0085 for configuration name: String may not contain control sequences but had the following ASCII chars: 9, 133',
      'Missing required configuration "topic" which has no default value.',
    ),
  );
  assert.deepEqual(
    await rest(worker.url, 'PUT', `/connectors/${encodeURIComponent('c\u009f')}/config`, source),
    invalid(
      'Invalid value c\u009f for configuration name: String may not contain control sequences but had the following ASCII chars: 159',
    ),
  );
  // The validate endpoint counts the same error, as a script checking error_count expects.
  const validated = await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
    ...source,
    name: 'a\u0001b',
  });
  assert.equal(validated.status, 200);
  const body = validated.body as {
    error_count: number;
    configs: { value: { name: string; errors: string[] } }[];
  };
  assert.equal(body.error_count, 1);
  assert.deepEqual(body.configs.find((c) => c.value.name === 'name')?.value.errors, [
    'Invalid value a\u0001b for configuration name: String may not contain control sequences but had the following ASCII chars: 1',
  ]);
  // No length limit in Kafka: a long name is a name.
  const long = 'n'.repeat(300);
  assert.equal((await rest(worker.url, 'POST', '/connectors', { name: long, config: source })).status, 201);
  assert.equal((await rest(worker.url, 'DELETE', `/connectors/${long}`)).status, 204);
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors')).body, []);
});

test("a client setting that does not parse fails a sink's offsets request with Kafka's 500, not a 400", async () => {
  // Kafka's ConfigException is no ConnectRestException: its ConnectExceptionMapper answers 500. Building the
  // offsets admin fails on the override; the offsets changes wrap it (Worker's maybeWrap), the read does not.
  const sink = {
    'connector.class': 'FileStreamSink',
    topics: 'bad-admin-topic',
    file: join(dir, 'bad-admin.txt'),
    'admin.override.request.timeout.ms': 'soon',
  };
  const created = await rest(worker.url, 'POST', '/connectors', {
    name: 'bad-admin',
    config: sink,
    initial_state: 'STOPPED',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const read = await rest(worker.url, 'GET', '/connectors/bad-admin/offsets');
  assert.equal(read.status, 500, JSON.stringify(read.body));
  assert.match((read.body as { message: string }).message, /Invalid value soon for configuration/);
  const modified = {
    status: 500,
    body: { error_code: 500, message: 'Failed to modify offsets for sink connector bad-admin' },
  };
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/bad-admin/offsets', {
      offsets: [
        { partition: { kafka_topic: 'bad-admin-topic', kafka_partition: 0 }, offset: { kafka_offset: 1 } },
      ],
    }),
    modified,
  );
  assert.deepEqual(await rest(worker.url, 'DELETE', '/connectors/bad-admin/offsets'), modified);
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/bad-admin')).status, 204);
});

test("query flags read as Kafka's Jersey reads a Boolean: 'true' in any case is true, anything else false", async () => {
  const sink = { 'connector.class': 'FileStreamSink', topics: 'flags-topic', file: join(dir, 'flags.txt') };
  assert.equal((await rest(worker.url, 'POST', '/connectors', { name: 'flags', config: sink })).status, 201);
  // Python's requests writes params={"includeTasks": True, "onlyFailed": False} as True and False.
  const plan = await rest(worker.url, 'POST', '/connectors/flags/restart?includeTasks=True&onlyFailed=False');
  assert.equal(plan.status, 202, JSON.stringify(plan.body));
  assert.equal((plan.body as { connector: { state: string } }).connector.state, 'RESTARTING');
  assert.deepEqual(
    (plan.body as { tasks: { state: string }[] }).tasks.map((t) => t.state),
    ['RESTARTING'],
  );
  // Neither flag true: the connector alone restarts, 204 with no body.
  assert.deepEqual(await rest(worker.url, 'POST', '/connectors/flags/restart?includeTasks=no&onlyFailed=0'), {
    status: 204,
    body: null,
  });
  const all = (await rest(worker.url, 'GET', '/connector-plugins?connectorsOnly=False')).body as {
    type: string;
  }[];
  assert.ok(
    all.some((p) => p.type === 'converter'),
    'connectorsOnly=False lists converters too',
  );
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/flags')).status, 204);
});

test("a stopped sink's offsets: Kafka's accepted forms, refused without partitions, a refused write not reported done", async () => {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    await admin.createTopics([{ topic: 'sink-offsets', numPartitions: 1, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  const sink = { 'connector.class': 'FileStreamSink', topics: 'sink-offsets', file: join(dir, 'so.txt') };
  assert.equal((await rest(worker.url, 'POST', '/connectors', { name: 'so', config: sink })).status, 201);
  assert.equal((await rest(worker.url, 'PUT', '/connectors/so/stop')).status, 204);
  const err = (r: { status: number; body: unknown }, message: string) =>
    assert.deepEqual(r, { status: 400, body: { error_code: 400, message } });
  // Kafka refuses an alter request with nothing in it rather than answering that offsets were altered.
  const none = 'Partitions / offsets need to be provided for an alter offsets request';
  err(await rest(worker.url, 'PATCH', '/connectors/so/offsets', { offsets: [] }), none);
  err(await rest(worker.url, 'PATCH', '/connectors/so/offsets', {}), none);
  // Kafka's SinkUtils takes "0" as well as 0 for the partition, and "5" as well as 5 for the offset.
  const altered = await rest(worker.url, 'PATCH', '/connectors/so/offsets', {
    offsets: [
      {
        partition: { kafka_topic: 'sink-offsets', kafka_partition: '0' },
        offset: { kafka_offset: '5' },
      },
    ],
  });
  assert.equal(altered.status, 200, JSON.stringify(altered.body));
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/so/offsets')).body, {
    offsets: [
      { partition: { kafka_topic: 'sink-offsets', kafka_partition: 0 }, offset: { kafka_offset: 5 } },
    ],
  });
  err(
    await rest(worker.url, 'PATCH', '/connectors/so/offsets', {
      offsets: [{ partition: { kafka_topic: 'sink-offsets', kafka_partition: 'one' }, offset: null }],
    }),
    "Failed to parse the following Kafka partition value in the provided offsets: 'one'. Partition values for sink connectors need to be integers.",
  );
  err(
    await rest(worker.url, 'PATCH', '/connectors/so/offsets', {
      offsets: [
        { partition: { kafka_topic: 'sink-offsets', kafka_partition: 0 }, offset: { kafka_offset: 1.5 } },
      ],
    }),
    "Failed to parse the following Kafka offset value in the provided offsets: '1.5'. Offset values for sink connectors need to be integers.",
  );
  // The coordinator refuses a commit for a topic that does not exist: Kafka fails the request (500) where
  // Brook answered that the offsets had been altered, and a resumed sink then started elsewhere than asked.
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/so/offsets', {
      offsets: [
        { partition: { kafka_topic: 'no-such-topic', kafka_partition: 0 }, offset: { kafka_offset: 1 } },
      ],
    }),
    {
      status: 500,
      body: { error_code: 500, message: 'Failed to alter consumer group offsets for connector so' },
    },
  );
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/so')).status, 204);
});

test("a sink's consumer.override.group.id is its consumer group, for its tasks and its offsets (KIP-458)", async () => {
  // A sink moved from Kafka Connect keeps the group its offsets are in; Brook used connect-<name> regardless,
  // so the sink read the topic again from the start and the offsets endpoints showed another group.
  const topic = 'override-group';
  const group = 'migrated-sink-group';
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const file = join(dir, 'override-group.txt');
  try {
    await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
    for (const line of ['a', 'b', 'c', 'd']) await producer.send({ topic, value: Buffer.from(line) });
    // What the group committed under Kafka Connect: the first two records are done.
    await admin.alterConsumerGroupOffsets(group, [{ topic, partition: 0, offset: 2 }]);
    const sink = {
      'connector.class': 'FileStreamSink',
      topics: topic,
      file,
      'consumer.override.group.id': group,
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    };
    assert.equal((await rest(worker.url, 'POST', '/connectors', { name: 'og', config: sink })).status, 201);
    const committed = async (g: string) => (await admin.listConsumerGroupOffsets(g)).map((o) => o.offset);
    await untilValue('the sink to commit offset 4 in its group', async () =>
      (await committed(group))[0] === 4 ? true : null,
    );
    assert.equal(readFileSync(file, 'utf8'), 'c\nd\n');
    assert.deepEqual(await committed('connect-og'), []);

    // KIP-875 reads and writes the same group.
    assert.equal((await rest(worker.url, 'PUT', '/connectors/og/stop')).status, 204);
    assert.deepEqual((await rest(worker.url, 'GET', '/connectors/og/offsets')).body, {
      offsets: [{ partition: { kafka_topic: topic, kafka_partition: 0 }, offset: { kafka_offset: 4 } }],
    });
    const altered = await rest(worker.url, 'PATCH', '/connectors/og/offsets', {
      offsets: [{ partition: { kafka_topic: topic, kafka_partition: 0 }, offset: { kafka_offset: 1 } }],
    });
    assert.equal(altered.status, 200, JSON.stringify(altered.body));
    assert.deepEqual(await committed(group), [1]);
    assert.equal((await rest(worker.url, 'DELETE', '/connectors/og/offsets')).status, 200);
    assert.deepEqual(await committed(group), []);
    assert.deepEqual(await committed('connect-og'), []);
  } finally {
    await producer.close();
    await admin.close();
  }
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/og')).status, 204);
});

test('connector.client.config.override.policy None and Principal refuse overrides at creation and validation, as Kafka', async () => {
  // Brook enforced None only when a task started (the connector was created, its task FAILED) and did not know
  // Principal at all; Kafka's herder refuses a disallowed override when it validates the config: 400 on create
  // and update, an error on the key in the validate endpoint.
  const props = {
    'bootstrap.servers': broker.bootstrap,
    'offset.storage.file.filename': join(dir, 'policy.offsets'),
  };
  const workers: ConnectWorker[] = [];
  const refusal = (policy: string, key: string) =>
    `The '${policy}' policy does not allow '${key}' to be overridden in the connector configuration.`;
  const invalid = (message: string) => ({
    status: 400,
    body: {
      error_code: 400,
      message: `Connector configuration is invalid and contains the following 1 error(s):\n${message}\nYou can also find the above list of errors at the endpoint \`/connector-plugins/{connectorType}/config/validate\``,
    },
  });
  const sink = {
    'connector.class': 'FileStreamSink',
    topics: 'policy-topic',
    file: join(dir, 'policy-sink.txt'),
  };
  const source = {
    'connector.class': 'FileStreamSource',
    topic: 'policy-topic',
    file: join(dir, 'policy-source.txt'),
  };
  try {
    const none = await startConnectWorker(dir, {
      ...props,
      'connector.client.config.override.policy': 'None',
    });
    workers.push(none);
    writeFileSync(source.file, '');
    const overridden = { ...sink, 'consumer.override.max.poll.records': '5' };
    assert.deepEqual(
      await rest(none.url, 'POST', '/connectors', { name: 'p1', config: overridden }),
      invalid(refusal('None', 'max.poll.records')),
    );
    assert.deepEqual(
      await rest(none.url, 'POST', '/connectors', {
        name: 'p2',
        config: { ...source, 'producer.override.linger.ms': '5' },
      }),
      invalid(refusal('None', 'linger.ms')),
    );
    assert.deepEqual((await rest(none.url, 'GET', '/connectors')).body, []);
    const validation = (await rest(none.url, 'PUT', '/connector-plugins/FileStreamSink/config/validate', {
      ...overridden,
      name: 'p1',
    })) as { status: number; body: ConfigInfosBody };
    assert.equal(validation.status, 200);
    assert.equal(validation.body.error_count, 1);
    assert.deepEqual(validatedValue(validation.body, 'consumer.override.max.poll.records'), {
      name: 'consumer.override.max.poll.records',
      value: '5',
      recommended_values: [],
      errors: [refusal('None', 'max.poll.records')],
      visible: true,
    });

    // A connector without overrides runs; an update adding one is refused and leaves the config as it was.
    assert.equal((await rest(none.url, 'PUT', '/connectors/p3/config', sink)).status, 201);
    assert.deepEqual(
      await rest(none.url, 'PUT', '/connectors/p3/config', overridden),
      invalid(refusal('None', 'max.poll.records')),
    );
    assert.equal(
      ((await rest(none.url, 'GET', '/connectors/p3/config')).body as Record<string, string>)[
        'consumer.override.max.poll.records'
      ],
      undefined,
    );
    // As in Kafka, only the overrides of the clients a connector uses are judged: a source has no consumer.
    const unused = { ...source, 'consumer.override.max.poll.records': '5' };
    assert.equal((await rest(none.url, 'POST', '/connectors', { name: 'p4', config: unused })).status, 201);
    await untilValue('p4 and its task running', async () => {
      const s = (await rest(none.url, 'GET', '/connectors/p4/status')).body as {
        connector: { state: string };
        tasks: { state: string }[];
      };
      return s.connector.state === 'RUNNING' && s.tasks[0]?.state === 'RUNNING' ? true : null;
    });

    // Principal (named by its class) allows the keys that choose a principal, and nothing else.
    const principal = await startConnectWorker(dir, {
      ...props,
      'connector.client.config.override.policy':
        'org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy',
    });
    workers.push(principal);
    const mixed = (await rest(principal.url, 'PUT', '/connector-plugins/FileStreamSink/config/validate', {
      ...sink,
      name: 'p5',
      'consumer.override.security.protocol': 'PLAINTEXT',
      'consumer.override.group.id': 'another-group',
    })) as { status: number; body: ConfigInfosBody };
    assert.equal(mixed.body.error_count, 1);
    assert.deepEqual(validatedValue(mixed.body, 'consumer.override.security.protocol')?.errors, []);
    assert.deepEqual(validatedValue(mixed.body, 'consumer.override.group.id')?.errors, [
      refusal('Principal', 'group.id'),
    ]);
    assert.deepEqual(
      await rest(principal.url, 'POST', '/connectors', {
        name: 'p6',
        config: { ...sink, 'consumer.override.group.id': 'another-group' },
      }),
      invalid(refusal('Principal', 'group.id')),
    );
    const allowed = { ...sink, 'consumer.override.security.protocol': 'PLAINTEXT' };
    assert.equal(
      (await rest(principal.url, 'POST', '/connectors', { name: 'p7', config: allowed })).status,
      201,
    );
  } finally {
    for (const w of workers) await w.stop();
  }
});

interface ConfigInfosBody {
  error_count: number;
  configs: { value: { name: string; value: string | null; errors: string[] } }[];
}

function validatedValue(infos: ConfigInfosBody, name: string) {
  return infos.configs.find((c) => c.value.name === name)?.value;
}

test('a request the worker cannot answer gets Kafka\'s 500 "Request timed out" instead of hanging', async () => {
  // A connector whose start() waits on a system that does not answer held POST /connectors, and every later
  // operation on that connector, for ever; Kafka's REST layer answers 500 "Request timed out" after 90 s
  // (lowered here through the test-only option, as Kafka's tests lower it) while the operation goes on.
  const pluginDir = pluginDirWith(dir, 'stuck-source', 'stuck-plugins');
  const timeoutMs = 1500;
  const stuck = await startStandalone(
    {
      'bootstrap.servers': broker.bootstrap,
      listeners: 'http://127.0.0.1:0',
      'offset.storage.file.filename': join(dir, 'stuck.offsets'),
      'plugin.path': pluginDir,
    },
    () => {},
    { requestTimeoutMs: timeoutMs },
  );
  // The client gives up well after the worker should have answered, so a hang fails the test instead of stalling it.
  const call = async (method: string, path: string, body?: unknown) => {
    const startedMs = Date.now();
    const res = await fetch(`${stuck.restUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs * 10),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text === '' ? null : JSON.parse(text),
      elapsedMs: Date.now() - startedMs,
    };
  };
  const timedOut = { error_code: 500, message: 'Request timed out' };
  try {
    const config = { 'connector.class': 'StuckSource', 'tasks.max': '1' };
    const created = await call('POST', '/connectors', { name: 'stuck', config });
    assert.deepEqual(created.body, timedOut);
    assert.equal(created.status, 500);
    assert.ok(created.elapsedMs >= timeoutMs - 100, `answered after ${created.elapsedMs} ms`);
    // An operation queued behind the stuck one is bounded too; reads that need nothing of it are answered.
    const deleted = await call('DELETE', '/connectors/stuck');
    assert.deepEqual([deleted.status, deleted.body], [500, timedOut]);
    assert.deepEqual((await call('GET', '/connectors')).body, ['stuck']);

    // Once start() returns, the creation that went on completes, and then the delete queued behind it.
    releaseStuckStarts();
    await untilValue('the queued delete to remove the connector', async () =>
      ((await call('GET', '/connectors')).body as string[]).length === 0 ? true : null,
    );
    assert.equal((await call('POST', '/connectors', { name: 'stuck2', config })).status, 201);
    assert.equal((await call('DELETE', '/connectors/stuck2')).status, 204);
  } finally {
    releaseStuckStarts();
    await stuck.stop();
  }
});

test('/admin/loggers lists, reads and sets logger levels with the rules and answers of Kafka (KIP-495, KIP-976)', async () => {
  // Brook had no /admin/loggers: 404 for the endpoint Strimzi's operator reads and sets on every reconcile.
  const loggers = (path = '') => rest(worker.url, 'GET', `/admin/loggers${path}`);
  const put = (name: string, body: unknown, query = '') =>
    rest(worker.url, 'PUT', `/admin/loggers/${name}${query}`, body);
  assert.deepEqual(await loggers(), { status: 200, body: { root: { level: 'INFO', last_modified: null } } });
  assert.deepEqual((await loggers('/ROOT')).body, { level: 'INFO', last_modified: null });

  // The worker's own loggers, named after Kafka's classes, are known from the start, at the root's level.
  const sinkTask = 'org.apache.kafka.connect.runtime.WorkerSinkTask';
  assert.deepEqual((await loggers(`/${sinkTask}`)).body, { level: 'INFO', last_modified: null });
  const own = Object.values(CONNECT_LOGGERS);
  for (const name of [
    'org.apache.kafka.connect.runtime.Worker',
    sinkTask,
    'org.apache.kafka.connect.runtime.WorkerSourceTask',
    'org.apache.kafka.connect.runtime.distributed.DistributedHerder',
  ])
    assert.ok(own.includes(name as (typeof own)[number]), name);

  const beforeMs = Date.now();
  const ns = 'org.apache.kafka.connect';
  // A namespace applies to every known logger under it, itself created: here the worker's own loggers.
  assert.deepEqual(await put(ns, { level: 'debug' }), { status: 200, body: [ns, ...own].sort() });
  const set = (await loggers(`/${ns}`)).body as { level: string; last_modified: number };
  assert.equal(set.level, 'DEBUG');
  assert.ok(set.last_modified >= beforeMs && set.last_modified <= Date.now(), String(set.last_modified));
  assert.equal(((await loggers(`/${sinkTask}`)).body as { level: string }).level, 'DEBUG');
  // A logger created at the level it already inherits keeps inheriting: not listed, never modified.
  const child = `${ns}.file.FileStreamSinkTask`;
  assert.deepEqual(await put(child, { level: 'DEBUG' }), { status: 200, body: [child] });
  assert.deepEqual((await loggers(`/${child}`)).body, { level: 'DEBUG', last_modified: null });
  assert.deepEqual(Object.keys((await loggers()).body as object), [ns, ...own].sort().concat('root'));
  // A namespace applies to every known logger under it; root to every logger.
  assert.deepEqual((await put(ns, { level: 'WARN' })).body, [ns, child, ...own].sort());
  assert.equal(((await loggers(`/${child}`)).body as { level: string }).level, 'WARN');
  assert.deepEqual((await put('root', { level: 'ERROR' }, '?scope=cluster')).status, 204);
  assert.deepEqual(
    Object.entries((await loggers()).body as Record<string, { level: string }>).map(([n, l]) => [n, l.level]),
    [ns, child, ...own]
      .sort()
      .concat('root')
      .map((n) => [n, 'ERROR']),
  );

  assert.deepEqual(await loggers('/org.example.Unknown'), {
    status: 404,
    body: { error_code: 404, message: 'Logger org.example.Unknown not found.' },
  });
  assert.deepEqual(await put(ns, { level: 'LOUD' }), {
    status: 404,
    body: { error_code: 404, message: "invalid log level 'LOUD'." },
  });
  assert.deepEqual(await put(ns, {}), {
    status: 400,
    body: { error_code: 400, message: "Desired 'level' parameter was not specified in request." },
  });
  assert.deepEqual((await put('root', { level: 'INFO' })).status, 200);
});

test("/admin/loggers levels filter the worker's lines: a Kafka class's logger at DEBUG, the root at WARN", async () => {
  // Brook kept and reported the levels, but the worker's lines had neither a level nor a logger name: a PUT
  // changed no line. Each worker part now logs through its Kafka class's logger, as Strimzi's operators set them.
  const name = 'log-levels-sink';
  const topic = 'log-levels';
  const sinkFile = join(dir, 'log-levels.sink.txt');
  const sinkTask = 'org.apache.kafka.connect.runtime.WorkerSinkTask';
  const taskDebug = `DEBUG ${sinkTask}: WorkerSinkTask{id=${name}-0} `;
  const setLevel = async (logger: string, level: string) =>
    assert.equal((await rest(worker.url, 'PUT', `/admin/loggers/${logger}`, { level })).status, 200);
  // Kafka's WARN line for a GET of an unknown logger: once it is in the output, so is every earlier line.
  let markers = 0;
  const outputNow = async (): Promise<number> => {
    const marker = `org.example.Marker${++markers}`;
    await rest(worker.url, 'GET', `/admin/loggers/${marker}`);
    const line = `WARN org.apache.kafka.connect.runtime.Loggers: Unable to find level for logger ${marker}`;
    await waitUntil(
      () => worker.stderr().includes(line),
      15_000,
      () => worker.stderr().slice(-3000),
    );
    return worker.stderr().length;
  };
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const deliver = async (value: string, records: number) => {
    await producer.send({ topic, value: Buffer.from(value) });
    await waitUntil(
      () => existsSync(sinkFile) && readFileSync(sinkFile, 'utf8').split('\n').length - 1 === records,
      15_000,
      () => worker.stderr().slice(-3000),
    );
    await untilValue(`the commit of ${records} records`, async () => {
      const committed = await admin.listConsumerGroupOffsets(`connect-${name}`).catch(() => []);
      return committed.some((o) => o.offset === records) ? true : null;
    });
  };
  try {
    await setLevel('root', 'INFO');
    const created = await rest(worker.url, 'PUT', `/connectors/${name}/config`, {
      'connector.class': 'FileStreamSink',
      file: sinkFile,
      topics: topic,
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await deliver('a', 1);
    let from = await outputNow();
    assert.match(
      worker.stderr(),
      new RegExp(`INFO ${sinkTask}: WorkerSinkTask\\{id=${name}-0\\} Executing sink task`),
    );
    assert.ok(!worker.stderr().includes(taskDebug), 'no DEBUG line of the sink task at INFO');

    // Kafka's DEBUG lines of WorkerSinkTask appear once its logger is at DEBUG...
    await setLevel(sinkTask, 'DEBUG');
    await deliver('b', 2);
    await waitUntil(
      () => worker.stderr().slice(from).includes(`${taskDebug}Committing offsets: [${topic}-0=2]`),
      15_000,
      () => worker.stderr().slice(from),
    );
    // ...and stop once it is back at INFO.
    await setLevel(sinkTask, 'INFO');
    from = await outputNow();
    await deliver('c', 3);
    await outputNow();
    assert.ok(!worker.stderr().slice(from).includes(taskDebug), worker.stderr().slice(from));

    // The root at WARN takes every logger there: the worker's INFO lines of a restart are not written...
    await setLevel('root', 'WARN');
    from = await outputNow();
    assert.equal((await rest(worker.url, 'POST', `/connectors/${name}/restart`)).status, 204);
    await outputNow();
    assert.doesNotMatch(worker.stderr().slice(from), / INFO /);
    // ...and are again at INFO.
    await setLevel('root', 'INFO');
    from = worker.stderr().length;
    assert.equal((await rest(worker.url, 'POST', `/connectors/${name}/restart`)).status, 204);
    await waitUntil(
      () =>
        worker
          .stderr()
          .slice(from)
          .includes(
            `INFO org.apache.kafka.connect.runtime.Worker: Creating connector ${name} of type FileStreamSink`,
          ),
      15_000,
      () => worker.stderr().slice(from),
    );
  } finally {
    await rest(worker.url, 'DELETE', `/connectors/${name}`);
    await producer.close();
    await admin.close();
  }
});

test("a task runner's logger at TRACE writes Kafka's per-record lines, and none at DEBUG", async () => {
  // Brook accepted TRACE but wrote no line at it: WorkerSinkTask/WorkerSourceTask at TRACE showed what DEBUG did.
  const sinkTask = 'org.apache.kafka.connect.runtime.WorkerSinkTask';
  const sourceTask = 'org.apache.kafka.connect.runtime.WorkerSourceTask';
  const topic = 'trace-lines';
  const input = join(dir, 'trace.source.txt');
  const sinkFile = join(dir, 'trace.sink.txt');
  writeFileSync(input, '');
  const setLevel = async (logger: string, level: string) =>
    assert.equal((await rest(worker.url, 'PUT', `/admin/loggers/${logger}`, { level })).status, 200);
  const sinkLines = (from: number) => readFileSync(sinkFile, 'utf8').split('\n').length - 1 >= from;
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    await setLevel(sinkTask, 'DEBUG');
    await setLevel(sourceTask, 'DEBUG');
    for (const [name, config] of [
      ['trace-sink', { 'connector.class': 'FileStreamSink', file: sinkFile, topics: topic }],
      ['trace-source', { 'connector.class': 'FileStreamSource', file: input, topic }],
    ] as const) {
      const created = await rest(worker.url, 'PUT', `/connectors/${name}/config`, {
        ...config,
        'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
    }
    await producer.send({ topic, value: Buffer.from('at debug') });
    await waitUntil(
      () => existsSync(sinkFile) && sinkLines(1),
      15_000,
      () => worker.stderr().slice(-3000),
    );
    assert.doesNotMatch(worker.stderr(), / TRACE /);

    await setLevel(sinkTask, 'TRACE');
    await setLevel(sourceTask, 'TRACE');
    writeFileSync(input, 'from the file\n');
    await waitUntil(
      () => sinkLines(2),
      15_000,
      () => worker.stderr().slice(-3000),
    );
    const sourcePrefix = `TRACE ${sourceTask}: WorkerSourceTask{id=trace-source-0} `;
    const sinkPrefix = `TRACE ${sinkTask}: WorkerSinkTask{id=trace-sink-0} `;
    for (const line of [
      `${sourcePrefix}About to send 1 records to Kafka`,
      `${sourcePrefix}Appending record to the topic ${topic} with key null, value 13 bytes`,
      `${sinkPrefix}Consuming and converting message in topic '${topic}' partition 0 at offset 1 and timestamp`,
      `${sinkPrefix}Delivering batch of 1 messages to task`,
    ])
      await waitUntil(
        () => worker.stderr().includes(line),
        15_000,
        () => `${line}\n${worker.stderr().slice(-3000)}`,
      );
  } finally {
    for (const name of ['trace-sink', 'trace-source'])
      await rest(worker.url, 'DELETE', `/connectors/${name}`);
    await setLevel(sinkTask, 'INFO');
    await setLevel(sourceTask, 'INFO');
    await producer.close();
  }
});

test("pausing a STOPPED connector pauses it with no tasks, and a resume starts it with its tasks (Kafka's testPauseStopResume)", async () => {
  const sink = { 'connector.class': 'FileStreamSink', topics: 'pause-stopped', file: join(dir, 'ps.txt') };
  const created = await rest(worker.url, 'POST', '/connectors', {
    name: 'pause-stopped',
    config: sink,
    initial_state: 'STOPPED',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const status = async () =>
    (await rest(worker.url, 'GET', '/connectors/pause-stopped/status')).body as {
      connector: { state: string };
      tasks: { state: string }[];
    };
  assert.equal((await status()).connector.state, 'STOPPED');
  // As Kafka's AbstractHerder.pauseConnector: the target state becomes PAUSED whatever it was; the connector
  // (WorkerConnector.suspend) reports PAUSED, and with no task configs there are no tasks to pause.
  assert.equal((await rest(worker.url, 'PUT', '/connectors/pause-stopped/pause')).status, 202);
  const paused = await status();
  assert.equal(paused.connector.state, 'PAUSED');
  assert.deepEqual(paused.tasks, []);
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/pause-stopped/offsets')).status, 400);

  assert.equal((await rest(worker.url, 'PUT', '/connectors/pause-stopped/resume')).status, 202);
  await eventually(
    async () => {
      const s = await status();
      return s.connector.state === 'RUNNING' && s.tasks.length === 1 && s.tasks[0]!.state === 'RUNNING';
    },
    10_000,
    'running with its task',
  );
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/pause-stopped')).status, 204);
});

test("validation defines a transformation's keys as Kafka's enriched ConfigDef, and a value of no key has no definition", async () => {
  interface Definition {
    name: string;
    type: string;
    required: boolean;
    default_value: string | null;
    importance: string;
    documentation: string;
    group: string | null;
    order: number;
    width: string;
    display_name: string;
  }
  const transform = 'org.apache.kafka.connect.transforms.InsertField$Value';
  const validated = await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
    'connector.class': 'FileStreamSource',
    name: 'enriched',
    topic: 't',
    transforms: 'ins',
    'transforms.ins.type': transform,
    'transforms.ins.static.field': 'origin',
    'transforms.ins.static.value': 'file',
    'no.such.key': null,
  });
  assert.equal(validated.status, 200, JSON.stringify(validated.body));
  const infos = validated.body as {
    groups: string[];
    configs: {
      definition: Definition | null;
      value: { name: string; value: string | null; errors: string[] };
    }[];
  };
  // Kafka's generateResult: a value of no defined key comes first, with a null definition.
  assert.deepEqual(infos.configs[0], {
    definition: null,
    value: {
      name: 'no.such.key',
      value: null,
      recommended_values: [],
      errors: ['Null value can not be supplied as the configuration value.'],
      visible: true,
    },
  });
  assert.ok(infos.groups.includes('Transforms: ins'), JSON.stringify(infos.groups));
  const byName = new Map(infos.configs.map((c) => [c.value.name, c]));
  assert.deepEqual(byName.get('transforms.ins.type')?.definition, {
    name: 'transforms.ins.type',
    type: 'CLASS',
    required: true,
    default_value: null,
    importance: 'HIGH',
    documentation: "Class for the 'ins' transformation.",
    group: 'Transforms: ins',
    order: 0,
    width: 'LONG',
    display_name: 'Transformation type for ins',
    dependents: [],
  });
  // The implicit keys of every transformation, then the transformation's own, under its prefix and group.
  const negate = byName.get('transforms.ins.negate')?.definition;
  assert.equal(negate?.type, 'BOOLEAN');
  assert.equal(negate?.default_value, 'false');
  assert.equal(negate?.group, 'Transforms: ins');
  assert.equal(byName.get('transforms.ins.predicate')?.definition?.group, 'Transforms: ins');
  const own = (await rest(worker.url, 'GET', `/connector-plugins/${transform}/config`)).body as Definition[];
  assert.ok(own.length > 0);
  for (const k of own) {
    const embedded = byName.get(`transforms.ins.${k.name}`)?.definition;
    assert.deepEqual(
      embedded && [
        embedded.type,
        embedded.importance,
        embedded.documentation,
        embedded.group,
        embedded.display_name,
      ],
      [k.type, k.importance, k.documentation, 'Transforms: ins', k.display_name],
      k.name,
    );
  }
  assert.equal(byName.get('transforms.ins.static.value')?.value.value, 'file');
  // Each key of the alias has its own place in the group, the type first.
  const orders = infos.configs
    .filter((c) => c.definition?.group === 'Transforms: ins')
    .map((c) => c.definition!.order);
  assert.deepEqual(orders, [...orders.keys()], 'orders 0, 1, 2, ...');
});
