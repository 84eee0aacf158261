// A real cluster for a test: a throwaway ZooKeeper and N broker processes (ids 0..N-1) that share overrides,
// each broker's own overrides on top. Brokers start side by side, or one after another in `order` when a test
// needs to know which one runs the controller (the first to start); startCluster answers once every broker names
// the controller and knows its peers alive. The cluster owns one data directory a broker, kept across a broker's
// restart (start(id) after kill()) and removed by stop().
//
// stop() always runs to the end: it resumes brokers a test paused (SIGSTOP), stops every broker by its PID (the
// controller last, so that the others' controlled shutdowns find it), then ZooKeeper, whatever failed before.
// A cluster that fails to start stops what it started before throwing, and its error says why it could be: each
// started broker's view (the controller it names, the peers it knows alive) and the last lines of its log, with
// every log kept whole in a directory the message names (a start that timed out is otherwise undiagnosable).
// As a last resort, brokers still running when the test process exits are killed by PID from an exit hook.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { agreedController, controllerOf, liveBrokers } from './cluster.js';
import { createTopic, type TopicSpec, WireClient } from './wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from './zookeeper.js';

export type Overrides = Record<string, string | number | boolean>;

/** PIDs of brokers started by a test cluster of this process and not stopped yet. */
const runningPids = new Set<number>();

process.once('exit', () => {
  // Only synchronous work is possible here.
  for (const pid of runningPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export interface ClusterOptions {
  /** How many brokers (ids 0..brokers-1); 3 unless told. */
  brokers?: number;
  /** Overrides every broker gets (zookeeper.connect and broker.id are set by the cluster). */
  overrides?: Overrides;
  /** Overrides of single brokers, by id, on top of the shared ones. */
  brokerOverrides?: Record<number, Overrides>;
  /** Start the brokers one after another in this order (the first runs the controller); else side by side. */
  order?: number[];
  /** The zookeeper.connect brokers get, given the cluster's ZooKeeper (a proxy in front of it); zk.connect unless told. */
  zookeeperConnect?: (zk: TestZooKeeper) => Promise<string>;
  /** As zookeeperConnect, for one broker (a proxy of its own, to cut that broker alone off ZooKeeper). */
  brokerZookeeperConnect?: (zk: TestZooKeeper, brokerId: number) => Promise<string>;
}

export interface TestCluster {
  readonly zk: TestZooKeeper;
  /** The brokers by id; a broker killed or stopped by the test stays here until start(id) replaces it. */
  readonly brokers: BrokerProcess[];
  /** host:port of every broker, comma-separated. */
  readonly bootstrap: string;
  /** Starts broker `id` again (after the test killed or stopped it) on its data directory. */
  start(id: number, overrides?: Overrides): Promise<BrokerProcess>;
  /** Stops everything: brokers (the controller last), ZooKeeper, the data directories. */
  stop(): Promise<void>;
}

function resume(broker: BrokerProcess): void {
  try {
    process.kill(broker.pid, 'SIGCONT');
  } catch {
    // already gone
  }
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const count = options.brokers ?? 3;
  const ids = Array.from({ length: count }, (_, id) => id);
  const zk = await startTestZooKeeper();
  const zookeeperConnect = options.zookeeperConnect ? await options.zookeeperConnect(zk) : zk.connect;
  const dataDirs = ids.map((id) => mkdtempSync(join(tmpdir(), `brook-cluster-${id}-`)));
  const brokers: BrokerProcess[] = [];
  const started = new Set<BrokerProcess>();

  async function start(id: number, overrides: Overrides = {}): Promise<BrokerProcess> {
    const child = await startBroker({
      dataDir: dataDirs[id],
      keepDataDir: true,
      overrides: {
        // Followers ask again every 100 ms rather than 500: acks=all writes and ISR changes do not wait for them.
        'replica.fetch.wait.max.ms': 100,
        // The last broker to stop has nowhere to move its leaders: do not wait 3 x 5 s for that in stop().
        'controlled.shutdown.retry.backoff.ms': 200,
        // __transaction_state as replicated as Kafka's defaults (3, min.isr 2) allow with this many brokers: the
        // single broker's 1 of startBroker would leave a transaction coordinator with nowhere to fail over.
        'transaction.state.log.replication.factor': Math.min(3, count),
        'transaction.state.log.min.isr': Math.min(2, count),
        ...options.overrides,
        ...options.brokerOverrides?.[id],
        ...overrides,
        'broker.id': id,
        'zookeeper.connect': options.brokerZookeeperConnect
          ? await options.brokerZookeeperConnect(zk, id)
          : zookeeperConnect,
      },
    });
    runningPids.add(child.pid);
    // Once it has exited, its PID is no longer ours to kill.
    const broker: BrokerProcess = {
      ...child,
      async stop() {
        const code = await child.stop();
        runningPids.delete(child.pid);
        return code;
      },
      async kill() {
        await child.kill();
        runningPids.delete(child.pid);
      },
    };
    brokers[id] = broker;
    started.add(broker);
    return broker;
  }

  let stopped = false;
  async function stop(): Promise<void> {
    if (stopped) return;
    stopped = true;
    try {
      for (const b of started) resume(b);
      let controllerId = -1;
      for (const b of started) {
        if (!runningPids.has(b.pid)) continue;
        controllerId = await controllerOf(b).catch(() => -1);
        if (controllerId >= 0) break;
      }
      const controller = brokers[controllerId];
      const order = [...started].sort((a, b) => Number(a === controller) - Number(b === controller));
      for (const b of order) await b.stop().catch(() => b.kill().catch(() => {}));
    } finally {
      try {
        await zk.stop();
      } finally {
        for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
      }
    }
  }

  try {
    if (options.order !== undefined) {
      for (const id of options.order) await start(id);
    } else {
      const results = await Promise.allSettled(ids.map((id) => start(id)));
      for (const r of results) if (r.status === 'rejected') throw r.reason;
    }
    // A broker answers Metadata before it has learnt the controller (controller id -1, as Kafka's does); clients
    // such as kafkajs's admin fail at once on that, so a test starts on a cluster that has settled.
    await agreedController(brokers);
  } catch (e) {
    // The brokers' views and logs first (stopping adds shutdown lines and ends the views), then stop every
    // broker that did start: they are all in `started`.
    const failure = await explainFailedStart(e, [...started]);
    await stop();
    throw failure;
  }
  return {
    zk,
    brokers,
    get bootstrap() {
      return brokers.map((b) => b.bootstrap).join(',');
    },
    start,
    stop,
  };
}

/** Lines of each broker's log that a failed start's error shows (the whole logs are kept in a directory). */
const LOG_TAIL_LINES = 40;

/**
 * An error for a cluster that did not start: `cause`'s message, then per broker its view of the cluster and the
 * tail of its log; the whole logs are written to a new directory under the temporary directory, named in the
 * message and kept (CI keeps a failed run's output; the directory is for a run on a workstation).
 */
export async function explainFailedStart(cause: unknown, brokers: readonly BrokerProcess[]): Promise<Error> {
  const lines = [`the cluster did not start: ${cause instanceof Error ? cause.message : String(cause)}`];
  let logDir: string | null = null;
  try {
    logDir = mkdtempSync(join(tmpdir(), 'brook-cluster-failed-'));
  } catch {
    // Only the message then.
  }
  for (const b of brokers) {
    const controller = await controllerOf(b).catch((err: unknown) => `unanswered (${String(err)})`);
    const peers = await liveBrokers(b).then(
      (ids) => `[${ids.join(',')}]`,
      (err: unknown) => `unanswered (${String(err)})`,
    );
    const log = b.log();
    if (logDir !== null) writeFileSync(join(logDir, `broker-${b.brokerId}.log`), log);
    const tail = log.trimEnd().split('\n').slice(-LOG_TAIL_LINES);
    lines.push(
      `--- broker ${b.brokerId} (pid ${b.pid}, ${b.bootstrap}): controller ${controller}, live brokers ${peers}; last ${tail.length} log lines:`,
      ...tail,
    );
  }
  if (logDir !== null) lines.push(`--- whole broker logs in ${logDir}`);
  return new Error(lines.join('\n'), { cause });
}

/** Creates `topic` through `broker` (see wire-client's createTopic) and asserts that it was created. */
export async function createTopicOn(broker: BrokerProcess, topic: string, spec: TopicSpec): Promise<void> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    await createTopic(client, topic, spec);
  } finally {
    client.close();
  }
}
