// The chaos harness's servers (nodes.ts: ZooKeeper and the brokers, each in its network namespace) end with the
// harness even when it is killed by a signal, which runs neither its exit hook (killAllSync) nor its SIGTERM
// handler: kill -9 of `npm run chaos`, or tools/run-tests.mjs ending chaos.slow.ts. Without that they would keep
// running in their namespaces, which the next run's sweep then leaves alone as "a run still going" for ever.
// Real namespaces (root and iproute2, as the harness itself needs).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ChaosNetwork } from './netns.js';

const isRoot = process.getuid?.() === 0;
const NODES = fileURLToPath(new URL('./nodes.js', import.meta.url));

/** A harness-like process that starts a ZooKeeper and a broker with nodes.ts, prints their PIDs, and waits. */
function harness(network: ChaosNetwork, dir: string): { child: ChildProcess; started: Promise<number[]> } {
  const script = `
    const { ZooKeeperNode, BrokerNode } = await import(${JSON.stringify(NODES)});
    const [zkNet, brokerNet, dir] = JSON.parse(process.argv[1]);
    const zk = new ZooKeeperNode(zkNet, dir + '/zk', dir + '/zk.log', { tickTimeMs: 500 });
    await zk.start();
    const broker = new BrokerNode(0, brokerNet, dir + '/b0', dir + '/b0.log', {
      'zookeeper.connect': zk.connect,
      'offsets.topic.replication.factor': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
    });
    await broker.start();
    process.stdout.write(JSON.stringify([zk.pid, broker.pid]) + '\\n');
    setInterval(() => {}, 1000);`;
  const args = JSON.stringify([network.node('zk'), network.node('b0'), dir]);
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const started = new Promise<number[]>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as number[]);
    });
    child.once('exit', (code) => reject(new Error(`the harness exited (${code}) first:\n${err}`)));
  });
  return { child, started };
}

/** Whether `pid` is a live (not zombie) server started with a path under `dir`. */
function isServerOf(pid: number, dir: string): boolean {
  try {
    if (/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return false;
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

describe('a chaos harness killed by a signal', {
  skip: isRoot ? false : 'needs root for network namespaces',
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-nodes-test-'));
  let network: ChaosNetwork | undefined;
  let child: ChildProcess | undefined;
  const pids: number[] = [];
  after(async () => {
    child?.kill('SIGKILL');
    // Servers a failed case left running: ended by PID, after checking that the PID is still one of ours.
    for (const pid of pids) if (isServerOf(pid, dir)) process.kill(pid, 'SIGKILL');
    await within(5_000, () => pids.every((pid) => !isServerOf(pid, dir)));
    await network?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes its ZooKeeper and its broker with it (SIGKILL)', async () => {
    network = await ChaosNetwork.create(randomBytes(3).toString('hex').slice(0, 5), ['zk', 'b0']);
    const run = harness(network, dir);
    child = run.child;
    pids.push(...(await run.started));
    for (const pid of pids) assert.ok(isServerOf(pid, dir), `server ${pid} runs`);
    const exited = new Promise((r) => run.child.once('exit', r));
    run.child.kill('SIGKILL');
    await exited;
    for (const pid of pids)
      assert.ok(
        await within(5_000, () => !isServerOf(pid, dir)),
        `server ${pid} still runs after its harness got SIGKILL`,
      );
  });
});
