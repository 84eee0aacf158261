// The ZooKeeper a test starts (test/helpers/zookeeper.ts) ends with the test's process even when that process is
// killed by a signal, which runs neither the test's hooks nor the helper's exit hook: the run's timeout or
// tools/run-tests.mjs ending a file with SIGTERM, or kill -9. Without that the server would keep its port, its
// memory and its java process for ever on a shared machine.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { canListen } from './zookeeper.js';

const HELPER = fileURLToPath(new URL('./zookeeper.js', import.meta.url));

/** A test-like process that starts a ZooKeeper with the helper and then waits; answers the server's PID and port. */
async function testWithZooKeeper(): Promise<{ child: ChildProcess; pid: number; port: number }> {
  const script = [
    `const { startTestZooKeeper } = await import(${JSON.stringify(HELPER)});`,
    'const zk = await startTestZooKeeper();',
    'process.stdout.write(JSON.stringify({ pid: zk.pid, port: zk.port }) + "\\n");',
    'setInterval(() => {}, 1000);',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const started = await new Promise<{ pid: number; port: number }>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve(JSON.parse(line!) as { pid: number; port: number });
    });
    child.once('exit', (code) => reject(new Error(`the test process exited (${code}) first:\n${err}`)));
  });
  return { child, ...started };
}

function isZooKeeper(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\)\s+Z\s/.test(stat)) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('QuorumPeerMain');
  } catch {
    return false;
  }
}

/** Polls `done` until it holds or `timeoutMs` passes; answers whether it held. */
async function within(timeoutMs: number, done: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('a test process killed by a signal', () => {
  /** Servers a failed case left running: ended here, by PID, after checking that the PID is still one. */
  const started: number[] = [];
  after(() => {
    for (const pid of started) if (isZooKeeper(pid)) process.kill(pid, 'SIGKILL');
  });

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`takes its ZooKeeper with it (${signal})`, async () => {
      const { child, pid, port } = await testWithZooKeeper();
      started.push(pid);
      assert.ok(isZooKeeper(pid), 'the server runs');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
      const gone = await within(5_000, () => !isZooKeeper(pid));
      assert.ok(gone, `ZooKeeper ${pid} still runs after its test process got ${signal}`);
      // A killed JVM's leader thread shows as a zombie while its other threads still exit, the port with them.
      assert.ok(await within(5_000, () => canListen(port)), `port ${port} is free again`);
    });
  }
});
