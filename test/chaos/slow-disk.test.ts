// The slow-disk fault's helper, preloaded into a real node process: while the delay file holds a number of
// milliseconds, fs.fsyncSync and fs.fdatasync (the thread pool's, which the log's flushes use) take at least that
// long; once the file is removed they are fast again. The synced file is on a tmpfs when there is one, where an
// fsync has nothing to write, so "fast" holds on a loaded machine. Skipped without gcc.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tryRun } from './shell.js';
import { buildSlowFsync, SLOW_FSYNC_FILE_ENV, setFsyncDelay } from './slow-disk.js';

const DELAY_MS = 1_500;

// The child syncs once per line it reads on stdin and answers how long fsyncSync and fdatasync took.
const CHILD = `
const fs = require('node:fs');
const fd = fs.openSync(process.argv[1], 'w');
fs.writeSync(fd, 'x');
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  while (buffered.includes('\\n')) {
    buffered = buffered.slice(buffered.indexOf('\\n') + 1);
    let t = performance.now();
    fs.fsyncSync(fd);
    const fsyncMs = performance.now() - t;
    t = performance.now();
    fs.fdatasync(fd, (err) => {
      if (err) throw err;
      process.stdout.write(JSON.stringify({ fsyncMs, fdatasyncMs: performance.now() - t }) + '\\n');
    });
  }
});
process.stdin.on('end', () => fs.closeSync(fd));
`;

const hasGcc = (await tryRun('gcc', ['--version'])).code === 0;

describe('slow-disk helper (slow-fsync.c)', { skip: hasGcc ? false : 'no gcc' }, () => {
  it('delays fsync and fdatasync while the delay file is there, and not after it is removed', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-slow-fsync-'));
    const dataDir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'brook-slow-fsync-'));
    t.after(() => {
      rmSync(dir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    });
    const library = await buildSlowFsync(dir);
    const delayFile = join(dir, 'delay');
    const child = spawn(process.execPath, ['-e', CHILD, join(dataDir, 'synced')], {
      env: { ...process.env, LD_PRELOAD: library, [SLOW_FSYNC_FILE_ENV]: delayFile },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const answers: { fsyncMs: number; fdatasyncMs: number }[] = [];
    const waiters: (() => void)[] = [];
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      while (out.includes('\n')) {
        answers.push(JSON.parse(out.slice(0, out.indexOf('\n'))));
        out = out.slice(out.indexOf('\n') + 1);
        waiters.shift()?.();
      }
    });
    const sync = async () => {
      const answered = new Promise<void>((done) => waiters.push(done));
      child.stdin!.write('sync\n');
      await answered;
      return answers[answers.length - 1]!;
    };

    setFsyncDelay(delayFile, DELAY_MS);
    const slow = await sync();
    assert.ok(slow.fsyncMs >= DELAY_MS - 1, `fsyncSync took ${slow.fsyncMs} ms under a ${DELAY_MS} ms delay`);
    assert.ok(slow.fdatasyncMs >= DELAY_MS - 1, `fdatasync took ${slow.fdatasyncMs} ms under the delay`);

    setFsyncDelay(delayFile, 0);
    assert.equal(existsSync(delayFile), false);
    const healed = await sync();
    assert.ok(healed.fsyncMs < DELAY_MS, `fsyncSync took ${healed.fsyncMs} ms after healing`);
    assert.ok(healed.fdatasyncMs < DELAY_MS, `fdatasync took ${healed.fdatasyncMs} ms after healing`);
    child.stdin!.end();
  });
});
