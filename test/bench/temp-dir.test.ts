// Temporary benchmark directories are removed on return, on a throw and when the process is interrupted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withTempDir } from '../../bench/harness/temp-dir.js';

const tempDirModule = fileURLToPath(new URL('../../bench/harness/temp-dir.js', import.meta.url));

describe('temporary directories', () => {
  it('are removed after the work returns and after it throws', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'brook-temp-test-'));
    try {
      const seen = await withTempDir(parent, '.brook-bench-', async (dir) => {
        writeFileSync(join(dir, 'data.bin'), Buffer.alloc(1024));
        return dir;
      });
      assert.equal(existsSync(seen), false);
      await assert.rejects(
        withTempDir(parent, '.brook-bench-', async () => {
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.deepEqual(readdirSync(parent), []);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('are removed when the process gets SIGINT in the middle of the work, which still ends it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'brook-temp-test-'));
    const script = `
      const { withTempDir } = await import(${JSON.stringify(tempDirModule)});
      const { writeFileSync } = await import('node:fs');
      await withTempDir(${JSON.stringify(parent)}, '.brook-bench-', async (dir) => {
        writeFileSync(dir + '/data.bin', Buffer.alloc(1024));
        console.log('ready');
        await new Promise((resolve) => setTimeout(resolve, 10000));
      });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await once(child.stdout, 'data');
      assert.equal(readdirSync(parent).length, 1);
      child.kill('SIGINT');
      const [code, signal] = await once(child, 'exit');
      assert.equal(signal, 'SIGINT', `exited with code ${code} instead of by the signal`);
      assert.deepEqual(readdirSync(parent), []);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
