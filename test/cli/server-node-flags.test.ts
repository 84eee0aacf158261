// The V8 flags a broker runs with (src/cli/server-node-flags.ts) reach every way of starting one: bin/brook run
// as a program passes them on its first line, which cannot import the list and is checked against it here.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/cli/server-node-flags.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');

describe('the broker’s V8 flags', () => {
  it('bin/brook’s first line passes exactly the flags the other launchers pass', () => {
    const first = readFileSync(BROOK, 'utf8').split('\n')[0]!;
    const match = /^#!\/usr\/bin\/env -S node((?: --[a-z-]+)*)$/.exec(first);
    assert.ok(match, `first line: ${first}`);
    assert.deepEqual(match[1]!.trim().split(' '), [...SERVER_NODE_FLAGS]);
  });

  it('a server started by running bin/brook itself runs under them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-node-flags-'));
    const child = spawn(
      BROOK,
      ['server', '--override', 'listeners=PLAINTEXT://127.0.0.1:0', '--override', `log.dirs=${dir}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = once(child, 'exit');
    try {
      let out = '';
      await new Promise<void>((resolveListening, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line in 30 s: ${out}`)), 30_000);
        const onData = (data: Buffer): void => {
          out += data.toString();
          if (/listening on/.test(out)) {
            clearTimeout(timer);
            resolveListening();
          }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        child.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
      });
      // env execs node in the same process: its command line is node's.
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      const script = argv.indexOf(BROOK);
      assert.ok(script > 0, argv.join(' '));
      assert.deepEqual(argv.slice(1, script), [...SERVER_NODE_FLAGS]);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
