// `brook server` with a bad setting prints one line naming the key, its value and why, and exits non-zero,
// without a stack trace: a value that does not parse, a config file that cannot be read, a log directory that
// cannot be made, a listener that cannot be bound.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../helpers/broker-process.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');

describe('brook server with a bad setting', () => {
  let dir: string;
  let taken: Server;
  let takenPort: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'brook-config-errors-'));
    writeFileSync(join(dir, 'a-file'), 'not a directory');
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    takenPort = (taken.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((r) => taken.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const server = async (...args: string[]) => {
    const r = await run(process.execPath, [BROOK, 'server', ...args], { timeoutMs: 30_000 });
    assert.notEqual(r.code, 0, `exited 0:\n${r.stderr}`);
    assert.notEqual(r.code, null, `did not exit:\n${r.stderr}`);
    assert.ok(!/^\s+at /m.test(r.stderr), `a stack trace:\n${r.stderr}`);
    return r.stderr.split('\n').filter((l) => l.trim() !== '');
  };
  const logDirs = (): string => `log.dirs=${join(dir, `logs-${Math.random().toString(36).slice(2)}`)}`;

  it('a value that does not parse', async () => {
    const lines = await server('--override', 'num.partitions=abc', '--override', logDirs());
    assert.deepEqual(lines, [
      'brook server: Invalid value abc for configuration num.partitions: Not a number of type INT',
    ]);
  });

  it('a config file that is a directory', async () => {
    const lines = await server('--config', dir);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, new RegExp(`cannot read --config ${dir}: EISDIR`));
  });

  it('a log directory under a file', async () => {
    const bad = join(dir, 'a-file', 'logs');
    const lines = await server(
      '--override',
      `log.dirs=${bad}`,
      '--override',
      'listeners=PLAINTEXT://127.0.0.1:0',
    );
    const errors = lines.filter((l) => l.includes('ERROR'));
    assert.equal(errors.length, 1, lines.join('\n'));
    assert.ok(errors[0]!.includes(`invalid configuration: log.dirs=${bad}: ENOTDIR`), errors[0]);
  });

  it('a listener whose port is taken', async () => {
    const listeners = `listeners=PLAINTEXT://127.0.0.1:${takenPort}`;
    const lines = await server('--override', listeners, '--override', logDirs());
    const errors = lines.filter((l) => l.includes('ERROR'));
    assert.equal(errors.length, 1, lines.join('\n'));
    assert.ok(errors[0]!.includes(`invalid configuration: ${listeners}: `), errors[0]);
    assert.ok(errors[0]!.includes('EADDRINUSE'), errors[0]);
  });
});
