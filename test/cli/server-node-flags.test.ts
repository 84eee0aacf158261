// The V8 flags a broker runs with (src/cli/server-node-flags.ts) reach every way of starting one: bin/brook run
// as a program passes them on its first line, which cannot import the list and is checked against it here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/cli/server-node-flags.js';
import { startBroker } from '../helpers/broker-process.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');

describe('the broker’s V8 flags', () => {
  it('bin/brook’s first line passes exactly the flags the other launchers pass', () => {
    const first = readFileSync(BROOK, 'utf8').split('\n')[0]!;
    const match = /^#!\/usr\/bin\/env -S node((?: --[a-z-]+)*)$/.exec(first);
    assert.ok(match, `first line: ${first}`);
    assert.deepEqual(match[1]!.trim().split(' '), [...SERVER_NODE_FLAGS]);
  });

  it('a server started by running bin/brook itself runs under them', async () => {
    const broker = await startBroker({ asProgram: true });
    try {
      // env execs node in the same process: its command line is node's.
      const argv = readFileSync(`/proc/${broker.pid}/cmdline`, 'utf8').split('\0');
      const script = argv.indexOf(BROOK);
      assert.ok(script > 0, argv.join(' '));
      assert.deepEqual(argv.slice(1, script), [...SERVER_NODE_FLAGS]);
    } finally {
      await broker.stop();
    }
  });
});
