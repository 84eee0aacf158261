// `brook connect-standalone` end to end through a real broker: Kafka's quickstart (FileStreamSource ->
// topic -> FileStreamSink with JsonConverter envelopes), source offsets kept across a restart so that no line
// is produced twice, and a connector loaded from plugin.path.

import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { rest, startConnectWorker } from '../helpers/connect-worker.js';
import { waitUntil } from '../helpers/wait.js';

let broker: BrokerProcess;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-'));
});

after(async () => {
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function lines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

async function topicValues(topic: string, expected: number): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  try {
    consumer.assign([{ topic, partition: 0 }]);
    await consumer.seekToBeginning();
    const out: string[] = [];
    const deadline = Date.now() + 15_000;
    while (out.length < expected && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) out.push(r.value?.toString('utf8') ?? 'null');
    }
    // Anything beyond the expected count would be a duplicate: give it a moment to show up.
    for (const r of await consumer.poll(500)) out.push(r.value?.toString('utf8') ?? 'null');
    return out;
  } finally {
    await consumer.close();
  }
}

test('file -> topic -> file: the quickstart connectors, with offsets kept across a worker restart', async () => {
  const source = join(dir, 'test.txt');
  const sink = join(dir, 'test.sink.txt');
  const worker = {
    'bootstrap.servers': broker.bootstrap,
    'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'key.converter.schemas.enable': true,
    'value.converter.schemas.enable': true,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
  };
  const connectors: Record<string, string | number>[] = [
    {
      name: 'local-file-source',
      'connector.class': 'FileStreamSource',
      'tasks.max': 1,
      file: source,
      topic: 'connect-test',
    },
    {
      name: 'local-file-sink',
      'connector.class': 'FileStreamSink',
      'tasks.max': 1,
      file: sink,
      topics: 'connect-test',
    },
  ];
  const first = Array.from({ length: 100 }, (_, i) => `line ${i} ünïcode`);
  writeFileSync(source, `${first.join('\n')}\n`);
  let w = await startConnectWorker(dir, worker, connectors);
  try {
    await waitUntil(
      () => lines(sink).length >= 100,
      20_000,
      () => `sink has ${lines(sink).length}\n${w.stderr()}`,
    );
    assert.deepEqual(lines(sink), first);
    const status = await rest(w.url, 'GET', '/connectors/local-file-source/status');
    assert.equal(status.status, 200);
    assert.deepEqual(status.body, {
      name: 'local-file-source',
      connector: { state: 'RUNNING', worker_id: new URL(w.url).host },
      tasks: [{ id: 0, state: 'RUNNING', worker_id: new URL(w.url).host }],
      type: 'source',
    });
  } finally {
    assert.equal(await w.stop(), 0, w.stderr());
  }
  // The worker flushed its offsets when it stopped: the lines written meanwhile are the only new ones.
  const second = Array.from({ length: 50 }, (_, i) => `more ${i}`);
  appendFileSync(source, `${second.join('\n')}\n`);
  w = await startConnectWorker(dir, worker, connectors);
  try {
    await waitUntil(
      () => lines(sink).length >= 150,
      20_000,
      () => `sink has ${lines(sink).length}\n${w.stderr()}`,
    );
    // GET offsets (KIP-875) shows what is committed: after the first run's lines at least, at most the end.
    const offsets = await rest(w.url, 'GET', '/connectors/local-file-source/offsets');
    assert.equal(offsets.status, 200);
    const [only] = (offsets.body as { offsets: { partition: unknown; offset: { position: number } }[] })
      .offsets;
    assert.deepEqual(only?.partition, { filename: source });
    assert.ok(only!.offset.position >= Buffer.byteLength(`${first.join('\n')}\n`));
    assert.ok(only!.offset.position <= readFileSync(source).length);
  } finally {
    assert.equal(await w.stop(), 0, w.stderr());
  }
  assert.deepEqual(lines(sink), [...first, ...second]);
  const values = await topicValues('connect-test', 150);
  assert.equal(values.length, 150, 'each line once in the topic');
  assert.equal(values[0], `{"schema":{"type":"string","optional":false},"payload":"line 0 ünïcode"}`);
  assert.equal(values[149], `{"schema":{"type":"string","optional":false},"payload":"more 49"}`);
  const stored = JSON.parse(readFileSync(join(dir, 'connect.offsets'), 'utf8')) as Record<string, string>;
  assert.deepEqual(stored, {
    [JSON.stringify(['local-file-source', { filename: source }])]: JSON.stringify({
      position: readFileSync(source).length,
    }),
  });
});

test('a connector package in plugin.path is loaded, listed and run', async () => {
  const plugins = join(dir, 'plugins');
  const pkg = join(plugins, 'counting-connector');
  mkdirSync(pkg, { recursive: true });
  const api = resolve(import.meta.dirname, '../../src/connect/index.js');
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'counting-connector', main: 'main.mjs' }));
  writeFileSync(
    join(pkg, 'main.mjs'),
    `import { ConfigDef, SourceConnector, SourceTask, SourceRecord, SchemaBuilder, Schemas, Struct } from ${JSON.stringify(api)};
const schema = SchemaBuilder.struct().name('count').field('n', Schemas.INT32).build();
export class CountingTask extends SourceTask {
  version() { return '1.0'; }
  start(props) { this.topic = props.topic; this.n = this.context.offsetStorageReader().offset({ counter: 'c' })?.n ?? 0; this.max = Number(props.max); }
  async poll() {
    if (this.n >= this.max) { await new Promise((r) => setTimeout(r, 200)); return null; }
    const out = [];
    while (this.n < this.max && out.length < 10) {
      this.n++;
      out.push(new SourceRecord({ sourcePartition: { counter: 'c' }, sourceOffset: { n: this.n }, topic: this.topic, valueSchema: schema, value: new Struct(schema).put('n', this.n) }));
    }
    return out;
  }
  stop() {}
}
export class CountingConnector extends SourceConnector {
  static className = 'com.example.CountingConnector';
  version() { return '1.0'; }
  start(props) { this.props = props; }
  taskClass() { return CountingTask; }
  taskConfigs() { return [{ topic: this.props.topic, max: this.props.max }]; }
  stop() {}
  config() { return new ConfigDef().define({ name: 'topic', type: 'STRING', importance: 'HIGH', documentation: 'topic' }).define({ name: 'max', type: 'INT', importance: 'HIGH', documentation: 'how many' }); }
}
`,
  );
  const w = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'value.converter.schemas.enable': false,
    'offset.storage.file.filename': join(dir, 'plugin.offsets'),
    'plugin.path': plugins,
  });
  try {
    const listed = await rest(w.url, 'GET', '/connector-plugins');
    assert.ok(
      (listed.body as { class: string; type: string; version: string }[]).some(
        (p) => p.class === 'com.example.CountingConnector' && p.type === 'source' && p.version === '1.0',
      ),
      JSON.stringify(listed.body),
    );
    const missing = await rest(w.url, 'POST', '/connectors', {
      name: 'count',
      config: { 'connector.class': 'Counting', topic: 'counted' },
    });
    assert.equal(missing.status, 400);
    assert.match(
      (missing.body as { message: string }).message,
      /Missing required configuration "max" which has no default value/,
    );
    const created = await rest(w.url, 'POST', '/connectors', {
      name: 'count',
      config: { 'connector.class': 'Counting', topic: 'counted', max: '25' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const values = await topicValues('counted', 25);
    assert.deepEqual(
      values,
      Array.from({ length: 25 }, (_, i) => `{"n":${i + 1}}`),
    );
  } finally {
    await w.stop();
  }
});
