// A Brook cluster on the chaos network: ZooKeeper in namespace `zk`, brokers 0..N-1 in namespaces `b0`..`bN-1`,
// with timeouts short enough that the nemesis's pauses and partitions outlast them (ZooKeeper session 6 s,
// replica lag 5 s). One broker may keep its log directory on a small tmpfs so that the disk-full nemesis can
// fill it. destroy() ends every process by its PID, unmounts what was mounted, removes the network and the
// working directory, and keeps going when a step fails.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Admin } from '../../src/client/index.js';
import { ChaosNetwork } from './netns.js';
import { BrokerNode, killAllSync, type NodeProcess, sleep, ZooKeeperNode } from './nodes.js';
import { run, tryRun } from './shell.js';
import { buildSlowFsync, SLOW_FSYNC_FILE_ENV, setFsyncDelay } from './slow-disk.js';

export interface ChaosClusterOptions {
  /** 5 hex digits, unique per run. */
  tag: string;
  /** Where logs go (kept). */
  runDir: string;
  /** Where data goes (removed at the end). */
  workDir: string;
  brokers: number;
  uncleanLeaderElection: boolean;
  /** The broker whose log directory is a tmpfs of tmpfsMb, for the disk-full nemesis; null for none. */
  diskBroker: number | null;
  tmpfsMb: number;
  /** Run brokers under libfaketime so that the clock-jump nemesis can move their wall clocks. */
  clockFaults: boolean;
  /** Preload the slow-disk helper (slow-fsync.c) into the brokers, so that their fsyncs can be slowed. */
  slowDisk: boolean;
}

export const ZK_SESSION_TIMEOUT_MS = 6_000;
export const REPLICA_LAG_TIME_MAX_MS = 5_000;
const ZK_TICK_MS = 500;
const FILLER = 'chaos-disk-filler';
/** libfaketime (Debian's faketime package); the MT build is the one for threaded programs such as node. */
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

export class ChaosCluster {
  readonly brokers: BrokerNode[] = [];
  zk!: ZooKeeperNode;
  private readonly mounts: string[] = [];
  private admin: Admin | null = null;
  private destroyed = false;

  private constructor(
    readonly options: ChaosClusterOptions,
    readonly net: ChaosNetwork,
  ) {}

  static async start(
    options: ChaosClusterOptions,
    onProgress: (line: string) => void,
  ): Promise<ChaosCluster> {
    const names = ['zk', ...Array.from({ length: options.brokers }, (_, i) => `b${i}`)];
    const net = await ChaosNetwork.create(options.tag, names);
    const cluster = new ChaosCluster(options, net);
    process.once('exit', () => cluster.destroySync());
    try {
      await cluster.startProcesses(onProgress);
    } catch (e) {
      await cluster.destroy();
      throw e;
    }
    return cluster;
  }

  private async startProcesses(onProgress: (line: string) => void): Promise<void> {
    const o = this.options;
    const logs = join(o.runDir, 'logs');
    mkdirSync(logs, { recursive: true });
    this.zk = new ZooKeeperNode(this.net.node('zk'), join(o.workDir, 'zk'), join(logs, 'zookeeper.log'), {
      tickTimeMs: ZK_TICK_MS,
    });
    await this.zk.start();
    onProgress(`zookeeper up at ${this.zk.connect}`);
    const overrides = {
      'zookeeper.connect': this.zk.connect,
      'zookeeper.session.timeout.ms': ZK_SESSION_TIMEOUT_MS,
      'replica.lag.time.max.ms': REPLICA_LAG_TIME_MAX_MS,
      'replica.fetch.wait.max.ms': 100,
      'default.replication.factor': 3,
      'min.insync.replicas': 2,
      'unclean.leader.election.enable': o.uncleanLeaderElection,
      'offsets.topic.replication.factor': 3,
      'offsets.topic.num.partitions': 3,
      'transaction.state.log.replication.factor': 3,
      'transaction.state.log.min.isr': 2,
      'transaction.state.log.num.partitions': 3,
      'group.initial.rebalance.delay.ms': 0,
      'controlled.shutdown.retry.backoff.ms': 200,
      'auto.create.topics.enable': false,
      'log.segment.bytes': 8 * 1024 * 1024,
    };
    if (o.clockFaults && !existsSync(LIBFAKETIME))
      onProgress(`no ${LIBFAKETIME} (Debian's faketime package): clock jumps will fail`);
    let slowFsync: string | null = null;
    if (o.slowDisk) {
      mkdirSync(o.workDir, { recursive: true });
      slowFsync = await buildSlowFsync(o.workDir).catch((e: unknown) => {
        onProgress(`the slow-disk helper could not be built (${String(e)}): slow disks will fail`);
        return null;
      });
    }
    for (let id = 0; id < o.brokers; id++) {
      const dataDir = join(o.workDir, `broker-${id}`);
      mkdirSync(dataDir, { recursive: true });
      let env: Record<string, string> = {};
      if (o.clockFaults && existsSync(LIBFAKETIME)) {
        // The offset file is read again at most once a second; only the wall clock moves (Date.now), never the
        // monotonic clock that timers and performance.now() use, as when an NTP daemon steps the clock.
        writeFileSync(this.clockFile(id), '+0\n');
        env = {
          LD_PRELOAD: LIBFAKETIME,
          FAKETIME_TIMESTAMP_FILE: this.clockFile(id),
          FAKETIME_CACHE_DURATION: '1',
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
        };
      }
      if (slowFsync !== null) {
        // No delay file yet: fsyncs run at the disk's own speed until the slow-disk fault writes one.
        env = {
          ...env,
          LD_PRELOAD: env.LD_PRELOAD === undefined ? slowFsync : `${env.LD_PRELOAD}:${slowFsync}`,
          [SLOW_FSYNC_FILE_ENV]: this.fsyncDelayFile(id),
        };
      }
      if (o.diskBroker === id) {
        await run('mount', ['-t', 'tmpfs', '-o', `size=${o.tmpfsMb}m`, 'brook-chaos-tmpfs', dataDir]);
        this.mounts.push(dataDir);
      }
      this.brokers.push(
        new BrokerNode(id, this.net.node(`b${id}`), dataDir, join(logs, `broker-${id}.log`), overrides, env),
      );
    }
    await Promise.all(this.brokers.map((b) => b.start()));
    await this.waitForController(30_000);
    onProgress(`${o.brokers} brokers up: ${this.bootstrap}`);
  }

  /** Waits until the cluster names a controller and knows every broker (brokers serve before that). */
  private async waitForController(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const answer = await withTimeout(this.adminClient().describeCluster(), 5_000).catch(() => null);
      if (answer !== null && answer.controllerId >= 0 && answer.brokers.length === this.brokers.length)
        return;
      await sleep(250);
    }
    throw new Error(`no controller with all ${this.brokers.length} brokers registered after ${timeoutMs} ms`);
  }

  get bootstrap(): string {
    return this.brokers.map((b) => b.bootstrap).join(',');
  }

  /** Every process, ZooKeeper first. */
  get processes(): NodeProcess[] {
    return [this.zk, ...this.brokers];
  }

  broker(id: number): BrokerNode {
    const b = this.brokers[id];
    if (b === undefined) throw new Error(`no broker ${id}`);
    return b;
  }

  /** One admin client for the harness's own questions (controller, partition state). */
  adminClient(): Admin {
    if (this.admin === null)
      this.admin = new Admin({
        bootstrapServers: this.bootstrap,
        clientId: 'chaos-harness',
        requestTimeoutMs: 3_000,
        connectionTimeoutMs: 2_000,
        retries: 2,
      });
    return this.admin;
  }

  /** The controller's broker id as the cluster reports it, or null if no answer in time. */
  async controllerId(): Promise<number | null> {
    const answer = await withTimeout(this.adminClient().describeCluster(), 8_000).catch(() => null);
    if (answer === null || answer.controllerId < 0) return null;
    return answer.controllerId;
  }

  private clockFile(id: number): string {
    return join(this.options.workDir, `broker-${id}.faketime`);
  }

  private fsyncDelayFile(id: number): string {
    return join(this.options.workDir, `broker-${id}.fsync-delay`);
  }

  /** Makes broker id's fsyncs and fdatasyncs take delayMs more (0: the disk's own speed again). */
  setFsyncDelay(id: number, delayMs: number): void {
    if (!this.options.slowDisk) throw new Error('brokers run without the slow-disk helper');
    setFsyncDelay(this.fsyncDelayFile(id), delayMs);
  }

  /** Moves broker id's wall clock to offsetSeconds from the real one (0: back to the real time). */
  setClockOffset(id: number, offsetSeconds: number): void {
    const file = this.clockFile(id);
    if (!existsSync(file)) throw new Error(`broker ${id} does not run under libfaketime`);
    writeFileSync(file, `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}s\n`);
  }

  /**
   * Fills the disk broker's tmpfs with a file (all space but a few KiB); answers the bytes taken. The broker
   * writes meanwhile, so a size that no longer fits is tried again a MiB smaller.
   */
  async fillDisk(id: number): Promise<number> {
    const dir = this.broker(id).dataDir;
    if (!this.mounts.includes(dir)) throw new Error(`broker ${id} has no tmpfs log directory`);
    let failure = '';
    for (let attempt = 0; attempt < 8; attempt++) {
      const stats = statfsSync(dir);
      const bytes = Math.max(0, stats.bavail * stats.bsize - 4096 - attempt * 1024 * 1024);
      const r = await tryRun('fallocate', ['-l', String(bytes), join(dir, FILLER)]);
      if (r.code === 0) return bytes;
      failure = r.stderr.trim();
      rmSync(join(dir, FILLER), { force: true });
    }
    throw new Error(`fallocate in ${dir} kept failing: ${failure}`);
  }

  async freeDisk(id: number): Promise<void> {
    rmSync(join(this.broker(id).dataDir, FILLER), { force: true });
  }

  /** Ends everything the cluster made; never throws. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.admin?.close().catch(() => {});
    for (const p of [...this.brokers].reverse()) await p.kill().catch(() => {});
    await this.zk?.kill().catch(() => {});
    for (const p of this.processes) if (p !== undefined) await p.closeLog().catch(() => {});
    for (const dir of this.mounts) await tryRun('umount', [dir]);
    await this.net.destroy();
    rmSync(this.options.workDir, { recursive: true, force: true });
  }

  /** destroy() from an exit hook. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    killAllSync();
    for (const dir of this.mounts) spawnSync('umount', ['-l', dir], { timeout: 10_000 });
    this.net.destroySync();
    rmSync(this.options.workDir, { recursive: true, force: true });
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

export { sleep };
