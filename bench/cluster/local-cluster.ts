// A local cluster for the cluster benchmarks: Debian's ZooKeeper (src/controller/store/local-zookeeper.ts, as
// `brook cluster up` and `brook zookeeper start` run it) and three `brook server` processes of this build
// (../broker/broker-process.ts), all on free 127.0.0.1 ports, every file under one directory the caller owns
// (normally from withTempDir on the checkout's disk). Every process is registered with the process guard and
// stopped by its PID. A broker can be killed (SIGKILL) or terminated (SIGTERM, controlled shutdown) and
// restarted on the same port with the same log directory, as an operator would restart it.
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { assert } from '../../src/common/assert.js';
import {
  type LocalZooKeeper,
  startLocalZooKeeper,
  stopLocalZooKeeper,
} from '../../src/controller/store/local-zookeeper.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../broker/broker-process.js';
import { benchVersions } from '../broker/broker-setup.js';
import { WireConnection } from '../broker/wire-connection.js';
import { guardProcess, releaseProcess } from './process-guard.js';

/** ZooKeeper's tick (its default): sessions may last 2 to 20 ticks, so 4 s to 40 s. */
export const zooKeeperTickMs = 2000;
/**
 * How long a broker stopped with SIGTERM may take before it is killed: above the broker's shutdown.timeout.ms
 * (30 s, how long it waits for requests in flight), so that a slow controlled shutdown is measured, not cut.
 */
const terminateBoundMs = 45_000;
/** How long teardown waits for brokers to shut down cleanly before killing them. */
const teardownBoundMs = 5_000;
/** The same when the brokers write CPU profiles at exit (a killed broker writes none). */
const profilingTeardownBoundMs = 30_000;

export interface ClusterOptions {
  /** Directory for ZooKeeper's data and the brokers' log directories. */
  dir: string;
  brokers: number;
  /** The brokers' zookeeper.session.timeout.ms: how long a killed broker stays registered. */
  sessionTimeoutMs: number;
  /** Further broker configs (the same for every broker). */
  overrides?: Record<string, string | number | boolean>;
  /** Run each broker under `node --cpu-prof`, its profiles in `<cpuProfileDir>/broker-<id>` (written at exit). */
  cpuProfileDir?: string;
}

export interface ClusterBroker {
  readonly id: number;
  /** Fixed at first start; a restart listens on the same port. */
  port: number;
  readonly dataDir: string;
  /** Null while the broker is down. */
  process: BrokerProcess | null;
}

/** The broker configs that bound failover and replication, as recorded with the results. */
export function clusterBrokerConfig(options: ClusterOptions): Record<string, string | number | boolean> {
  return {
    'zookeeper.session.timeout.ms': options.sessionTimeoutMs,
    'default.replication.factor': Math.min(3, options.brokers),
    'offsets.topic.replication.factor': Math.min(3, options.brokers),
    'transaction.state.log.replication.factor': Math.min(3, options.brokers),
    'transaction.state.log.min.isr': options.brokers >= 3 ? 2 : 1,
    'min.insync.replicas': options.brokers >= 3 ? 2 : 1,
    ...options.overrides,
  };
}

export class LocalCluster {
  private readonly probes = new Map<number, WireConnection>();

  private constructor(
    readonly options: ClusterOptions,
    readonly zooKeeper: LocalZooKeeper,
    readonly brokers: ClusterBroker[],
  ) {}

  /** Starts ZooKeeper and the brokers and waits until every broker sees all of them alive. */
  static async start(options: ClusterOptions): Promise<LocalCluster> {
    const zooKeeper = await startZooKeeper(join(options.dir, 'zookeeper'));
    const brokers: ClusterBroker[] = [];
    const cluster = new LocalCluster(options, zooKeeper, brokers);
    try {
      for (let id = 0; id < options.brokers; id++) {
        const dataDir = join(options.dir, `broker-${id}`);
        mkdirSync(dataDir, { recursive: true });
        const broker: ClusterBroker = { id, port: 0, dataDir, process: null };
        brokers.push(broker);
        await cluster.startOne(broker);
      }
      await cluster.waitForLiveBrokers(options.brokers, 30_000);
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** Configs every broker runs with (besides its id, listener, log.dirs and zookeeper.connect). */
  get brokerConfig(): Record<string, string | number | boolean> {
    return clusterBrokerConfig(this.options);
  }

  broker(id: number): ClusterBroker {
    const broker = this.brokers[id];
    assert(broker !== undefined, `no broker ${id}`);
    return broker;
  }

  live(): ClusterBroker[] {
    return this.brokers.filter((b) => b.process !== null);
  }

  pids(): number[] {
    return this.live().map((b) => b.process!.pid);
  }

  private async startOne(broker: ClusterBroker): Promise<void> {
    const profileDir = this.options.cpuProfileDir;
    const started = await startBroker({
      dataDir: broker.dataDir,
      cpuProfileDir: profileDir === undefined ? undefined : join(profileDir, `broker-${broker.id}`),
      overrides: {
        'broker.id': broker.id,
        listeners: `PLAINTEXT://127.0.0.1:${broker.port}`,
        'zookeeper.connect': this.zooKeeper.connect,
        'group.initial.rebalance.delay.ms': 0,
        ...this.brokerConfig,
      },
    });
    guardProcess(started.pid);
    broker.port = started.port;
    broker.process = started;
  }

  /**
   * Sends `signal` to a broker and returns at once with the time it was sent (performance.now()), and a
   * promise of its exit. SIGTERM is bounded: killed after 20 s.
   */
  signal(
    id: number,
    signal: 'SIGKILL' | 'SIGTERM',
  ): { sentMs: number; exited: Promise<{ exitedMs: number; killedAfterBound: boolean }> } {
    const broker = this.broker(id);
    const running = broker.process;
    assert(running !== null, `broker ${id} is not running`);
    broker.process = null;
    this.dropProbe(broker.port);
    const sentMs = performance.now();
    process.kill(running.pid, signal);
    const exited = (async () => {
      let killedAfterBound = false;
      const killer = setTimeout(() => {
        killedAfterBound = true;
        process.kill(running.pid, 'SIGKILL');
      }, terminateBoundMs);
      // The broker treats a second SIGTERM as a plain kill, so stop() (which sends one) must wait until the
      // process is gone: watch /proc until then.
      while (alive(running.pid)) await new Promise((resolve) => setTimeout(resolve, 2));
      const exitedMs = performance.now();
      clearTimeout(killer);
      await running.stop();
      releaseProcess(running.pid);
      return { exitedMs, killedAfterBound };
    })();
    return { sentMs, exited };
  }

  /** Starts a stopped broker again, on its port and with its log directory. */
  async restart(id: number): Promise<void> {
    const broker = this.broker(id);
    assert(broker.process === null, `broker ${id} is running`);
    await this.startOne(broker);
  }

  /**
   * Metadata as `broker` sees it (its cache, fed by the controller), on a connection kept per broker. A
   * connection that failed is opened again on the next call.
   */
  async metadata(id: number, topics: readonly string[] | null): Promise<MetadataResponse> {
    const broker = this.broker(id);
    let connection = this.probes.get(broker.port);
    if (connection === undefined || connection.failed !== null) {
      connection = await WireConnection.connect('127.0.0.1', broker.port);
      this.probes.set(broker.port, connection);
    }
    return connection.call<MetadataResponse>(ApiKey.METADATA, benchVersions.metadata, {
      topics: topics === null ? null : topics.map((name) => ({ topicId: '', name })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
  }

  /** The controller's id as the first live broker sees it. */
  async controllerId(): Promise<number> {
    return (await this.metadata(this.live()[0]!.id, [])).controllerId;
  }

  /** Waits until every live broker lists `count` live brokers and a controller. */
  async waitForLiveBrokers(count: number, timeoutMs: number): Promise<void> {
    await pollUntil(`${count} live brokers`, timeoutMs, async () => {
      for (const broker of this.live()) {
        const response = await this.metadata(broker.id, []);
        if (response.brokers.length !== count || response.controllerId < 0) return false;
      }
      return true;
    });
  }

  private dropProbe(port: number): void {
    this.probes.get(port)?.close();
    this.probes.delete(port);
  }

  /**
   * Stops every broker (SIGTERM, killed after a short bound), then ZooKeeper. Never throws. Brokers that write CPU
   * profiles stop one at a time with a longer bound: stopped together, their controlled shutdowns wait on each
   * other past the bound, and a killed broker writes no profile.
   */
  async stop(): Promise<void> {
    for (const port of [...this.probes.keys()]) this.dropProbe(port);
    const profiling = this.options.cpuProfileDir !== undefined;
    const stopOne = (broker: ClusterBroker): Promise<unknown> => {
      const running = broker.process!;
      broker.process = null;
      const boundMs = profiling ? profilingTeardownBoundMs : teardownBoundMs;
      const killer = setTimeout(() => process.kill(running.pid, 'SIGKILL'), boundMs);
      return running
        .stop()
        .catch(() => null)
        .finally(() => {
          clearTimeout(killer);
          releaseProcess(running.pid);
        });
    };
    if (profiling) for (const broker of this.live()) await stopOne(broker);
    else await Promise.all(this.live().map(stopOne));
    await stopLocalZooKeeper(this.zooKeeper.dataDir).catch(() => false);
    releaseProcess(this.zooKeeper.pid);
  }
}

/** Debian's ZooKeeper on a free port (another process may take a probed port first: a few tries). */
async function startZooKeeper(dataDir: string): Promise<LocalZooKeeper> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const server = await startLocalZooKeeper({ port, dataDir, tickTimeMs: zooKeeperTickMs });
      guardProcess(server.pid);
      return server;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** Whether `pid` runs (a zombie, exited but not yet reaped, does not). */
function alive(pid: number): boolean {
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A port on 127.0.0.1 that was free a moment ago (the kernel's choice for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Calls `check` every `intervalMs` until it answers true (a throw counts as false); throws after `timeoutMs`. */
export async function pollUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  intervalMs = 50,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = ` (last error: ${(error as Error).message})`;
    }
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
