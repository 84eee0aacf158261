// Brook's client as another project gets it: `npm pack` of this repository, installed from the tarball into a
// fresh project, imported as `brook/client` (package.json `exports`), type-checked against the packed
// declarations (with the README's client examples), and run against a real broker: an admin creates a topic, a
// producer writes one record, a consumer group reads it back. Deep imports into dist/ must be refused.
//
// The pack uses the dist/ this test run was built from (--ignore-scripts skips the prepack build). The install
// prefers npm's cache and reaches the registry only for what is not cached. It skips install scripts: the one
// dependency that has them, zstd-napi, would compile zstd for minutes when no prebuilt binary can be downloaded,
// so the temporary project gets the native binding this repository already built instead.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const NPM_TIMEOUT_MS = 240_000;

function npm(args: string[], cwd: string): string {
  const result = spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: NPM_TIMEOUT_MS });
  assert.equal(result.status, 0, `npm ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function node(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): { status: number | null; out: string } {
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, ...env },
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

// The application, written as a user of the package would: only `brook/client`.
const APP = `import { Admin, Consumer, type ConsumerRecord, Producer, stringSerde } from 'brook/client';

const bootstrapServers = process.env.BOOTSTRAP!;
const topic = 'packaged-client';
const admin = new Admin({ bootstrapServers });
const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
await admin.close();

const producer = new Producer({ bootstrapServers, keySerializer: stringSerde, valueSerializer: stringSerde });
const sent = await producer.send({ topic, key: 'k1', value: 'from the packed client' });
await producer.close();

const consumer = new Consumer({
  bootstrapServers,
  groupId: 'packaged-group',
  autoOffsetReset: 'earliest',
  keyDeserializer: stringSerde,
  valueDeserializer: stringSerde,
});
consumer.subscribe([topic]);
let records: ConsumerRecord<string | null, string | null>[] = [];
const deadline = Date.now() + 30_000;
while (records.length === 0 && Date.now() < deadline) records = await consumer.poll(1000);
await consumer.commit();
await consumer.close();

let deepImport = 'allowed';
try {
  await import('brook/dist/src/client/index.js' as string);
} catch (e) {
  deepImport = (e as { code?: string }).code ?? String(e);
}
console.log(JSON.stringify({
  created: created?.error?.message ?? null,
  sent: { partition: sent.partition, offset: sent.offset },
  received: records.map((r) => ({ offset: r.offset, key: r.key, value: r.value })),
  deepImport,
}));
`;

// A streams application as a user writes it with `brook/streams`: word count in the test driver.
const STREAMS_APP = `import { Consumed, Materialized, Produced, Serdes, StreamsBuilder, TopologyTestDriver } from 'brook/streams';

const builder = new StreamsBuilder();
builder
  .stream('text-lines', Consumed.with(Serdes.String(), Serdes.String()))
  .flatMapValues((line) => line.toLowerCase().split(/\\W+/))
  .groupBy((_key, word) => word)
  .count(Materialized.as('counts'))
  .toStream()
  .to('word-counts', Produced.with(Serdes.String(), Serdes.Long()));
const driver = new TopologyTestDriver(builder.build());
driver.createInputTopic('text-lines', Serdes.String(), Serdes.String()).pipeInput(null, 'to be or not to be');
const counts = driver.createOutputTopic('word-counts', Serdes.String(), Serdes.Long()).readKeyValuesToMap();
driver.close();
console.log(JSON.stringify(Object.fromEntries(counts)));
`;

/** The TypeScript examples of the README's section on the client package. */
function readmeExamples(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf("## Brook's client in your project");
  assert.ok(start >= 0, 'the README has no section on the client package');
  const next = readme.indexOf('\n## ', start + 3);
  const section = readme.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('the packed package', () => {
  let work = '';
  let tarball = '';
  let broker: BrokerProcess | null = null;

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'brook-pack-'));
  });

  after(async () => {
    await broker?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('holds the built client and streams with their type declarations, and no tests or sources', () => {
    const [packed] = JSON.parse(
      npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO_ROOT),
    ) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed!.filename);
    const paths = new Set(packed!.files.map((f) => f.path));
    for (const path of [
      'dist/src/client/index.js',
      'dist/src/client/index.d.ts',
      'dist/src/streams/index.js',
      'dist/src/streams/index.d.ts',
      'bin/brook',
      'package.json',
    ]) {
      assert.ok(paths.has(path), `${path} missing from the tarball`);
    }
    const unwanted = [...paths].filter((p) => /^(src|test|bench|tools|dist\/test|dist\/bench)\//.test(p));
    assert.deepEqual(unwanted, []);
  });

  it('installs into a fresh project, type-checks there, produces and consumes through `brook/client` and runs a `brook/streams` topology', async () => {
    assert.ok(tarball, 'the pack step failed');
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    npm(['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball], app);
    const installed = JSON.parse(readFileSync(join(app, 'node_modules/brook/package.json'), 'utf8'));
    assert.equal(installed.name, 'brook');
    const binding = 'node_modules/zstd-napi/build';
    if (!existsSync(join(app, binding)))
      cpSync(join(REPO_ROOT, binding), join(app, binding), { recursive: true });

    writeFileSync(join(app, 'main.ts'), APP);
    writeFileSync(join(app, 'streams.ts'), STREAMS_APP);
    const examples = readmeExamples();
    assert.ok(examples.length >= 4, `only ${examples.length} README examples`);
    examples.forEach((text, i) => {
      writeFileSync(join(app, `readme-${i + 1}.ts`), text);
    });
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          outDir: 'out',
          rootDir: '.',
          types: ['node'],
          typeRoots: [join(REPO_ROOT, 'node_modules/@types')],
        },
        files: ['main.ts', 'streams.ts', ...examples.map((_, i) => `readme-${i + 1}.ts`)],
      }),
    );
    const tsc = node([join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app);
    assert.equal(
      tsc.status,
      0,
      `the application or a README example does not type-check against the packed declarations:\n${tsc.out}`,
    );

    broker = await startBroker();
    const run = node(['out/main.js'], app, { BOOTSTRAP: broker.bootstrap });
    assert.equal(run.status, 0, run.out);
    const result = JSON.parse(run.out.trim().split('\n').at(-1)!);
    assert.deepEqual(result, {
      created: null,
      sent: { partition: 0, offset: 0 },
      received: [{ offset: 0, key: 'k1', value: 'from the packed client' }],
      deepImport: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
    const streams = node(['out/streams.js'], app);
    assert.equal(streams.status, 0, streams.out);
    assert.deepEqual(JSON.parse(streams.out.trim().split('\n').at(-1)!), { to: 2, be: 2, or: 1, not: 1 });
  });
});
