// `brook connect-standalone` reads its connector files as Kafka's ConnectStandalone.parseConnectorConfigurationFile
// does, refusing with Kafka's messages: a POST /connectors shaped JSON file whose config names another connector
// than its `name`, and a config (JSON or properties) without `name`. The worker never starts (exit 2, one line).

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
): Promise<{ code: number | null | 'running'; stderr: string }> {
  const worker = join(dir, 'worker.properties');
  // Nothing listens there: a worker that got as far as starting would not come up.
  writeFileSync(
    worker,
    `bootstrap.servers=127.0.0.1:1\nlisteners=http://127.0.0.1:0\noffset.storage.file.filename=${join(dir, 'offsets')}\n`,
  );
  const path = join(dir, file);
  writeFileSync(path, text);
  const child = spawn(process.execPath, [BROOK, 'connect-standalone', worker, path], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
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
  return { code, stderr };
}

test("a JSON request whose config names another connector is refused with Kafka's message", async () => {
  const r = await standalone(
    'mismatch.json',
    JSON.stringify({ name: 'a', config: { name: 'b', 'connector.class': 'FileStreamSource', topic: 't' } }),
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /Connector name configuration in 'config' doesn't match the one specified in 'name' at '.*mismatch\.json'/,
  );
});

test("a config without a name is refused with Kafka's message, JSON or properties", async () => {
  for (const [file, text] of [
    ['nameless.json', JSON.stringify({ 'connector.class': 'FileStreamSource', topic: 't', 'tasks.max': 1 })],
    ['nameless.properties', 'connector.class=FileStreamSource\ntopic=t\n'],
  ] as const) {
    const r = await standalone(file, text);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `Connector configuration at '.*${file.replace('.', '\\.')}' is missing the mandatory 'name' configuration`,
      ),
    );
  }
});
