// The temporary directory of a test ZooKeeper (test/helpers/zookeeper.ts) whose test process was killed by a signal
// (no exit hook ran, so nothing removed it) is removed by the next process that starts a test ZooKeeper, and only
// such a directory: one whose owner still runs, one a server runs from, and one without an owner that changed
// recently are kept (owned-temp-dirs.ts). Real processes, real files, real ZooKeeper servers.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeOwnedTempDir, UNOWNED_QUIET_MS } from './owned-temp-dirs.js';
import { startTestZooKeeper, type TestZooKeeper } from './zookeeper.js';

const HELPER = fileURLToPath(new URL('./zookeeper.js', import.meta.url));

/**
 * A test-like process that starts a ZooKeeper with the helper and prints its PID; then waits (to be killed), or
 * with `stop`, stops it and exits.
 */
function testWithZooKeeper(stop: boolean): { child: ChildProcess; pid: Promise<number> } {
  const script = [
    `const { startTestZooKeeper } = await import(${JSON.stringify(HELPER)});`,
    'const zk = await startTestZooKeeper();',
    'process.stdout.write(zk.pid + "\\n");',
    stop ? 'await zk.stop();' : 'setInterval(() => {}, 1000);',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const pid = new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(Number(out.split('\n')[0]));
    });
    child.once('exit', (code) => reject(new Error(`the test process exited (${code}) first:\n${err}`)));
  });
  return { child, pid };
}

/** The directory a running test ZooKeeper was started from (its zoo.cfg's), or null when it no longer runs. */
function serverDir(pid: number): string | null {
  try {
    if (/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return null;
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const config = args.find((a) => a.endsWith('/zoo.cfg'));
    return config === undefined ? null : dirname(config);
  } catch {
    return null;
  }
}

async function within(timeoutMs: number, done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (done()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('temporary directories of killed test processes', () => {
  let own: TestZooKeeper | undefined;
  const made: string[] = [];
  const children: ChildProcess[] = [];
  const servers: number[] = [];
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const pid of servers) if (serverDir(pid) !== null) process.kill(pid, 'SIGKILL');
    await own?.stop();
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  it("are removed by the next start of a test ZooKeeper, and no one else's", async () => {
    // This process's own server (its first start swept already) and an owned directory with no server in it.
    own = await startTestZooKeeper();
    const ownDir = serverDir(own.pid)!;
    const ownedIdle = makeOwnedTempDir('brook-zk-');
    // Without an owner: one made just now (as a start in progress is), one untouched for two quiet periods.
    const young = mkdtempSync(join(tmpdir(), 'brook-zk-'));
    const old = mkdtempSync(join(tmpdir(), 'brook-zk-'));
    const longAgo = (Date.now() - 2 * UNOWNED_QUIET_MS) / 1000;
    utimesSync(old, longAgo, longAgo);
    // Another kind of directory whose name starts the same way, as other tests make, quiet as long.
    const otherKind = mkdtempSync(join(tmpdir(), 'brook-zk-acl-'));
    utimesSync(otherKind, longAgo, longAgo);
    made.push(ownedIdle, young, old, otherKind);

    const killed = testWithZooKeeper(false);
    children.push(killed.child);
    const killedPid = await killed.pid;
    servers.push(killedPid);
    const killedDir = serverDir(killedPid)!;
    made.push(killedDir);
    const exited = new Promise((r) => killed.child.once('exit', r));
    killed.child.kill('SIGKILL');
    await exited;
    assert.ok(await within(5_000, () => serverDir(killedPid) === null), 'its server ends with it');
    assert.ok(existsSync(killedDir), 'a killed test process leaves its directory behind');

    const next = testWithZooKeeper(true);
    children.push(next.child);
    const nextExited = new Promise((r) => next.child.once('exit', r));
    servers.push(await next.pid);
    await nextExited;

    assert.equal(existsSync(killedDir), false, `the killed test's ${killedDir} is removed`);
    assert.equal(existsSync(old), false, 'an unowned directory quiet for long is removed');
    for (const kept of [ownDir, ownedIdle, young, otherKind]) assert.ok(existsSync(kept), `${kept} is kept`);
    assert.ok(existsSync(join(ownDir, 'zoo.cfg')), 'the running server keeps its files');
  });
});
