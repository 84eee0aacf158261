// `brook connect-standalone` reads its connector files as Kafka's ConnectStandalone.parseConnectorConfigurationFile
// does, refusing with Kafka's messages: a POST /connectors shaped JSON file whose config names another connector
// than its `name`, and a config (JSON or properties) without `name`. As Kafka's ConnectStandalone, the files are
// read once the worker serves and a bad one stops it with exit code 3 (processExtraArgs); missing arguments and
// --help exit 1 (AbstractConnectCli.run).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const dir = mkdtempSync(join(tmpdir(), 'brook-connect-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command on one connector file; its exit code and stderr, or 'running' (then killed) after 15 s. */
async function standalone(
  file: string,
  text: string,
): Promise<{ code: number | null | 'running'; stderr: string; stdout: string }> {
  const worker = join(dir, 'worker.properties');
  // Nothing listens there: the connectors refused here never reach the cluster.
  writeFileSync(
    worker,
    `bootstrap.servers=127.0.0.1:1\nlisteners=http://127.0.0.1:0\noffset.storage.file.filename=${join(dir, 'offsets')}\n`,
  );
  const path = join(dir, file);
  writeFileSync(path, text);
  return run([worker, path]);
}

async function run(
  args: string[],
): Promise<{ code: number | null | 'running'; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [BROOK, 'connect-standalone', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    exited,
    new Promise<'running'>((r) => {
      timer = setTimeout(() => r('running'), 15_000);
    }),
  ]);
  clearTimeout(timer);
  if (code === 'running') {
    child.kill('SIGKILL');
    await exited;
  }
  return { code, stderr, stdout };
}

test("a JSON request whose config names another connector is refused with Kafka's message", async () => {
  const r = await standalone(
    'mismatch.json',
    JSON.stringify({ name: 'a', config: { name: 'b', 'connector.class': 'FileStreamSource', topic: 't' } }),
  );
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /Connector name configuration in 'config' doesn't match the one specified in 'name' at '.*mismatch\.json'/,
  );
});

test("a config without a name is refused with Kafka's message, JSON or properties", async () => {
  for (const [file, text] of [
    ['nameless.json', JSON.stringify({ 'connector.class': 'FileStreamSource', topic: 't', 'tasks.max': 1 })],
    ['nameless.properties', 'connector.class=FileStreamSource\ntopic=t\n'],
    // Jackson refuses an initial_state that is no InitialState, so Kafka reads the JSON as properties: no `name`.
    [
      'badstate.json',
      JSON.stringify({
        name: 'a',
        config: { 'connector.class': 'FileStreamSource' },
        initial_state: 'SLEEPING',
      }),
    ],
  ] as const) {
    const r = await standalone(file, text);
    assert.equal(r.code, 3, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `Connector configuration at '.*${file.replace('.', '\\.')}' is missing the mandatory 'name' configuration`,
      ),
    );
  }
});

test('a connector file is read once the worker serves, and one that cannot be read exits 3', async () => {
  const worker = join(dir, 'worker.properties');
  writeFileSync(
    worker,
    `bootstrap.servers=127.0.0.1:1\nlisteners=http://127.0.0.1:0\noffset.storage.file.filename=${join(dir, 'offsets')}\n`,
  );
  const r = await run([worker, join(dir, 'absent.json')]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stdout, /REST server listening at http:\/\/127\.0\.0\.1:\d+/);
  assert.match(r.stderr, /absent\.json/);
  assert.doesNotMatch(r.stdout, /Kafka Connect started/);
});

test('missing arguments and --help exit 1, a worker config that cannot be read exits 2', async () => {
  const none = await run([]);
  assert.equal(none.code, 1, none.stderr);
  assert.match(none.stderr, /usage: brook connect-standalone/);
  const help = await run(['--help']);
  assert.equal(help.code, 1, help.stderr);
  assert.match(help.stdout, /usage: brook connect-standalone/);
  const unreadable = await run([join(dir, 'no-worker.properties')]);
  assert.equal(unreadable.code, 2, unreadable.stderr);
  assert.match(unreadable.stderr, /no-worker\.properties/);
});
