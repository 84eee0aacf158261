// The chaos cluster's processes: one ZooKeeper and N brokers, each started inside its node's network namespace
// (`ip netns exec`, which execs the command, so the PID we hold is the server's own) and listening on the
// node's address. Every process keeps its data directory across kill/restart; its output goes to a log file in
// the run directory, appended across restarts. Processes are ended only by the PIDs we started, SIGCONT first
// so that a paused one can die; an exit hook does the same synchronously when the harness itself dies, and a
// harness killed by a signal takes them with it (they run with the parent-death signal, endingWithParent).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { SERVER_NODE_FLAGS } from '../../src/cli/server-node-flags.js';
import { endingWithParent } from '../../src/common/end-with-parent.js';
import { ZOOKEEPER_CLASSPATH } from '../../src/controller/store/local-zookeeper.js';
import type { NetNode } from './netns.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const ZOOKEEPER_MAIN = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
export const ZOOKEEPER_PORT = 2181;
export const BROKER_PORT = 9092;
const START_TIMEOUT_MS = 60_000;

/** PIDs this process started and that have not exited yet. */
const livePids = new Set<number>();

/** Other processes of the run (the streams workload's instances), ended with the servers by killAllSync. */
export function trackPid(pid: number): void {
  livePids.add(pid);
}

export function untrackPid(pid: number): void {
  livePids.delete(pid);
}

export function killAllSync(): void {
  for (const pid of livePids) {
    for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
  }
}

/** One server process that can be killed, paused and started again on the same data. */
export abstract class NodeProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;
  private readonly log: WriteStream;

  constructor(
    readonly name: string,
    readonly net: NetNode,
    readonly dataDir: string,
    logPath: string,
  ) {
    mkdirSync(dataDir, { recursive: true });
    this.log = createWriteStream(logPath, { flags: 'a' });
  }

  get running(): boolean {
    return this.child !== null;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  protected abstract command(): string[];

  /** Environment variables added to the harness's own for this process. */
  protected extraEnv(): Record<string, string> {
    return {};
  }
  protected abstract ready(): Promise<boolean>;

  async start(): Promise<void> {
    assert(this.child === null, `${this.name} already runs`);
    const [cmd, ...args] = this.command();
    this.log.write(`\n=== ${new Date().toISOString()} start ${this.name}\n`);
    // Ended with the harness even when it is killed by a signal (which runs no exit hook, so killAllSync does
    // not): a broker or ZooKeeper left running would hold its namespace, its tmpfs and its memory for ever.
    const child = spawn('ip', ['netns', 'exec', this.net.netns, ...endingWithParent([cmd!, ...args])], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...this.extraEnv() },
    });
    this.child = child;
    const pid = child.pid;
    if (pid !== undefined) livePids.add(pid);
    child.stdout!.on('data', (d: Buffer) => this.log.write(d));
    child.stderr!.on('data', (d: Buffer) => this.log.write(d));
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        if (pid !== undefined) livePids.delete(pid);
        this.log.write(`=== ${new Date().toISOString()} ${this.name} exited (${code ?? signal})\n`);
        if (this.child === child) {
          this.child = null;
          this.paused = false;
        }
        done();
      }),
    );
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.child !== child) throw new Error(`${this.name} exited while starting (see its log)`);
      if (await this.ready()) return;
      await sleep(200);
    }
    await this.kill();
    throw new Error(`${this.name} did not start in ${START_TIMEOUT_MS} ms (see its log)`);
  }

  /** kill -9, and wait for the exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (a graceful stop), SIGKILL after timeoutMs. */
  async stop(timeoutMs = 15_000): Promise<void> {
    const child = this.child;
    if (child === null) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  pause(): void {
    if (this.child === null) return;
    this.child.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    if (this.child === null) return;
    this.child.kill('SIGCONT');
    this.paused = false;
  }

  async closeLog(): Promise<void> {
    await new Promise<void>((done) => this.log.end(done));
  }
}

export interface ZooKeeperSettings {
  tickTimeMs: number;
}

export class ZooKeeperNode extends NodeProcess {
  constructor(net: NetNode, dataDir: string, logPath: string, settings: ZooKeeperSettings) {
    super('zk', net, dataDir, logPath);
    mkdirSync(join(dataDir, 'data'), { recursive: true });
    const tick = settings.tickTimeMs;
    const config = [
      '# Written by the Brook chaos harness.',
      `tickTime=${tick}`,
      `dataDir=${join(dataDir, 'data')}`,
      `clientPort=${ZOOKEEPER_PORT}`,
      `clientPortAddress=${net.address}`,
      'maxClientCnxns=0',
      'admin.enableServer=false',
      '4lw.commands.whitelist=ruok,srvr,stat,mntr',
      `minSessionTimeout=${2 * tick}`,
      `maxSessionTimeout=${20 * tick}`,
    ];
    writeFileSync(this.configPath, `${config.join('\n')}\n`);
  }

  get connect(): string {
    return `${this.net.address}:${ZOOKEEPER_PORT}`;
  }

  private get configPath(): string {
    return join(this.dataDir, 'zoo.cfg');
  }

  protected command(): string[] {
    return ['java', '-Xmx192m', '-cp', ZOOKEEPER_CLASSPATH, ZOOKEEPER_MAIN, this.configPath];
  }

  protected async ready(): Promise<boolean> {
    return (await fourLetterWord(this.net.address, ZOOKEEPER_PORT, 'ruok').catch(() => '')) === 'imok';
  }
}

export class BrokerNode extends NodeProcess {
  constructor(
    readonly brokerId: number,
    net: NetNode,
    dataDir: string,
    logPath: string,
    private readonly overrides: Record<string, string | number | boolean>,
    private readonly env: Record<string, string> = {},
  ) {
    super(`broker-${brokerId}`, net, dataDir, logPath);
  }

  protected override extraEnv(): Record<string, string> {
    return this.env;
  }

  get bootstrap(): string {
    return `${this.net.address}:${BROKER_PORT}`;
  }

  protected command(): string[] {
    const listener = `PLAINTEXT://${this.net.address}:${BROKER_PORT}`;
    const all: Record<string, string | number | boolean> = {
      ...this.overrides,
      'broker.id': this.brokerId,
      listeners: listener,
      'advertised.listeners': listener,
      'log.dirs': join(this.dataDir, 'log'),
    };
    const args = [process.execPath, ...SERVER_NODE_FLAGS, join(REPO_ROOT, 'bin/brook'), 'server'];
    for (const [k, v] of Object.entries(all)) args.push('--override', `${k}=${String(v)}`);
    return args;
  }

  protected async ready(): Promise<boolean> {
    return canConnect(this.net.address, BROKER_PORT);
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    socket.setTimeout(1_000, () => {
      socket.destroy();
      done(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

function fourLetterWord(host: string, port: number, word: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect({ host, port });
    let reply = '';
    socket.setTimeout(2_000, () => socket.destroy(new Error(`no reply to ${word}`)));
    socket.once('connect', () => socket.write(word));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
    });
    socket.once('end', () => done(reply));
    socket.once('error', fail);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
