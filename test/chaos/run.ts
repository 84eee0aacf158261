// One chaos run from start to end: network and cluster up, the workload (queue, or transactional
// read-process-write) started, the nemesis schedule
// (drawn from the seed) played, everything healed, a recovery period, the final reads, the checkers, and the
// history, report and summary written to the run directory. Whatever happens, the cluster and the network are
// torn down before runChaos returns or throws; SIGINT/SIGTERM tear them down too.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Admin } from '../../src/client/index.js';
import { ChaosCluster } from './chaos-cluster.js';
import { anomalyCounts, type Checker, type CheckResult } from './checker.js';
import { CommittedOffsetsChecker } from './checker-committed-offsets.js';
import { QueueChecker } from './checker-queue.js';
import { StreamsCountChecker } from './checker-streams.js';
import { ExactlyOnceChecker } from './checker-txn.js';
import { History } from './history.js';
import { leadersOutsideIsr } from './liveness.js';
import { describeFault, FAULT_KINDS, type FaultKind, Nemesis, planFaults } from './nemesis.js';
import { sleep } from './nodes.js';
import { type RunSummary, writeReport } from './report.js';
import { Rng } from './rng.js';
import { sweepStaleChaosNetworks } from './stale-networks.js';
import { QueueWorkload } from './workload-queue.js';
import { StreamsWorkload } from './workload-streams.js';
import { TxnWorkload } from './workload-txn.js';

export const WORKLOADS = ['queue', 'txn', 'streams'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

/** What the run asks of a workload, in this order. */
interface Workload {
  setup(admin: Admin): Promise<void>;
  start(): void;
  watchLeaders(admin: Admin, until: () => boolean): Promise<void>;
  waitForReplicas(admin: Admin, timeoutMs: number): Promise<boolean>;
  stopProducers(): Promise<void>;
  drain(admin: Admin, timeoutMs: number): Promise<Record<number, { polled: number; end: number }>>;
  stopConsumers(): Promise<void>;
  finalRead(admin: Admin): Promise<void>;
  /** Ends whatever the workload still runs outside this process (a run that was aborted). */
  close?(): Promise<void>;
}

export interface Profile {
  warmupMs: number;
  nemesisMs: number;
  recoveryMs: number;
  partitions: number;
  producers: number;
  consumers: number;
  ratePerProducer: number;
}

export const PROFILES: Record<string, Profile> = {
  // About 2.5 minutes in all, with cluster start and the final read.
  short: {
    warmupMs: 5_000,
    nemesisMs: 95_000,
    recoveryMs: 10_000,
    partitions: 4,
    producers: 2,
    consumers: 2,
    ratePerProducer: 25,
  },
  long: {
    warmupMs: 10_000,
    nemesisMs: 600_000,
    recoveryMs: 20_000,
    partitions: 6,
    producers: 3,
    consumers: 3,
    ratePerProducer: 25,
  },
};

export interface ChaosOptions {
  seed: number;
  profile: string;
  /** queue (default), txn or streams. */
  workload?: WorkloadName;
  brokers: number;
  uncleanLeaderElection: boolean;
  /** min.insync.replicas of the workload's topics (2 unless told; the internal topics keep 2). */
  minInsyncReplicas?: number;
  faults: readonly FaultKind[];
  /** Parent of the run directories. */
  outDir: string;
  log?: (line: string) => void;
}

export interface ChaosResult {
  runDir: string;
  summary: RunSummary;
  results: CheckResult[];
}

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
export const DEFAULT_OUT_DIR = join(REPO_ROOT, '.brook-chaos');

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const profile = PROFILES[o.profile];
  if (profile === undefined) throw new Error(`unknown profile ${o.profile} (short, long)`);
  if (o.brokers < 3 || o.brokers > 5) throw new Error('--brokers: 3 to 5');
  const workloadName = o.workload ?? 'queue';
  const minInsyncReplicas = o.minInsyncReplicas ?? 2;
  if (minInsyncReplicas < 1 || minInsyncReplicas > 3) throw new Error('--min-isr: 1 to 3');
  if (!WORKLOADS.includes(workloadName))
    throw new Error(`unknown workload ${workloadName} (${WORKLOADS.join(', ')})`);
  const tag = randomBytes(3).toString('hex').slice(0, 5);
  const startedAt = new Date();
  const runDir = join(o.outDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}-seed${o.seed}-${tag}`);
  mkdirSync(runDir, { recursive: true });
  const log = (line: string) => {
    const text = `[${((Date.now() - startedAt.getTime()) / 1000).toFixed(1).padStart(6)}s] ${line}`;
    (o.log ?? console.log)(text);
  };
  const rng = new Rng(o.seed);
  const kinds = o.faults;
  const plan = planFaults(rng, { brokers: o.brokers, durationMs: profile.nemesisMs, kinds });
  writeFileSync(join(runDir, 'plan.json'), `${JSON.stringify(plan, null, 1)}\n`);
  log(
    `run ${tag}, seed ${o.seed}, profile ${o.profile}, workload ${workloadName}: ${plan.length} faults planned; output in ${runDir}`,
  );
  const stale = await sweepStaleChaosNetworks();
  if (stale.swept.length > 0) log(`removed the networks of killed runs ${stale.swept.join(', ')}`);
  const history = new History(join(runDir, 'history.jsonl'));
  const notes: string[] = [];
  let cluster: ChaosCluster | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: tearing down`);
    cluster?.destroySync();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const topic = 'chaos';
  let watching = true;
  let watcher: Promise<void> = Promise.resolve();
  let workload: Workload | null = null;
  // The cluster's scratch directory (removed with it); the streams instances keep their state there too.
  const workDir = join(tmpdir(), `brook-chaos-${tag}`);
  // The streams workload's instances need longer to catch up: a rebalance after a kill waits out the session.
  const drainMs = workloadName === 'streams' ? 60_000 : 20_000;
  try {
    cluster = await ChaosCluster.start(
      {
        tag,
        runDir,
        workDir,
        brokers: o.brokers,
        uncleanLeaderElection: o.uncleanLeaderElection,
        diskBroker: kinds.includes('disk-full') ? 0 : null,
        tmpfsMb: 256,
        clockFaults: kinds.includes('clock-jump'),
        slowDisk: kinds.includes('slow-disk'),
      },
      log,
    );
    if (!cluster.net.hasNetem)
      notes.push('no netem in this kernel: slow links are tbf throttling, lossy links iptables random drops');
    workload =
      workloadName === 'streams'
        ? new StreamsWorkload(
            cluster.bootstrap,
            history,
            {
              inputTopic: topic,
              outputTopic: `${topic}-out`,
              partitions: profile.partitions,
              producers: profile.producers,
              ratePerProducer: profile.ratePerProducer,
              applicationId: 'chaos-streams',
              uncleanLeaderElection: o.uncleanLeaderElection,
              minInsyncReplicas,
              seed: o.seed,
              workDir: join(workDir, 'streams'),
              logDir: join(runDir, 'logs'),
            },
            log,
          )
        : workloadName === 'txn'
          ? new TxnWorkload(
              cluster.bootstrap,
              history,
              {
                inputTopic: topic,
                outputTopic: `${topic}-out`,
                partitions: profile.partitions,
                producers: profile.producers,
                processors: profile.consumers,
                ratePerProducer: profile.ratePerProducer,
                groupId: 'chaos-txn-group',
                uncleanLeaderElection: o.uncleanLeaderElection,
                minInsyncReplicas,
                seed: o.seed,
              },
              log,
            )
          : new QueueWorkload(
              cluster.bootstrap,
              history,
              {
                topic,
                partitions: profile.partitions,
                producers: profile.producers,
                consumers: profile.consumers,
                ratePerProducer: profile.ratePerProducer,
                inFlightPerProducer: 5,
                groupId: 'chaos-group',
                uncleanLeaderElection: o.uncleanLeaderElection,
                minInsyncReplicas,
              },
              log,
            );
    const admin = cluster.adminClient();
    await workload.setup(admin);
    log(`topics ready (${profile.partitions} partitions, rf 3); workload ${workloadName} starts`);
    workload.start();
    watcher = workload.watchLeaders(admin, () => !watching);
    await sleep(profile.warmupMs);
    const nemesis = new Nemesis(cluster, history, log, topic);
    await nemesis.play(plan);
    await nemesis.healAll();
    log('healed; waiting for the replicas to catch up');
    if (!(await workload.waitForReplicas(admin, 60_000)))
      notes.push('not every partition had a full ISR 60 s after healing');
    await sleep(profile.recoveryMs);
    log('stopping producers');
    await workload.stopProducers();
    const behind = await workload.drain(admin, drainMs);
    if (Object.keys(behind).length > 0) {
      const text = Object.entries(behind).map(([p, b]) => `partition ${p} polled to ${b.polled} of ${b.end}`);
      notes.push(
        `liveness: ${drainMs / 1000} s after the producers stopped, the group had not consumed everything: ${text.join(', ')}`,
      );
      history.add('info', 'harness', 'drain', behind);
    }
    await workload.stopConsumers();
    log('final read');
    await workload.finalRead(admin);
  } catch (e) {
    notes.push(`run aborted: ${String(e)}`);
    log(`run aborted: ${String(e)}`);
  } finally {
    watching = false;
    await watcher;
    await workload?.close?.().catch(() => {});
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cluster?.destroy();
    await history.close();
  }

  // The txn workload's input topic is a queue (its producers and final read are the queue workload's), so the
  // queue checker judges it too; its consumers commit inside transactions, which the exactly-once checker judges.
  // So is the streams workload's input; the application's counts go through the streams checker.
  const checkers: Checker[] =
    workloadName === 'txn'
      ? [new QueueChecker(profile.partitions), new ExactlyOnceChecker(profile.partitions)]
      : workloadName === 'streams'
        ? [new QueueChecker(profile.partitions), new StreamsCountChecker(profile.partitions)]
        : [new QueueChecker(profile.partitions), new CommittedOffsetsChecker(profile.partitions)];
  const results = checkers.map((c) => c.check(history.ops));
  const counts = anomalyCounts(results);
  const unclean = leadersOutsideIsr(history.ops);
  if (unclean.length > 0)
    notes.push(
      `${unclean.length} leader change(s) to a replica outside the ISR of the previous sample (unclean elections, or an ISR that grew back within one sample), see the report`,
    );
  const verdict = results.some((r) => r.valid === false)
    ? 'anomalies'
    : results.some((r) => r.valid === null)
      ? 'unknown'
      : 'valid';
  const summary: RunSummary = {
    seed: o.seed,
    profile: o.profile,
    workload: workloadName,
    brokers: o.brokers,
    uncleanLeaderElection: o.uncleanLeaderElection,
    minInsyncReplicas,
    tag,
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    faults: plan.map(describeFault),
    faultsArg:
      kinds.length === FAULT_KINDS.length && FAULT_KINDS.every((k) => kinds.includes(k))
        ? null
        : kinds.join(','),
    verdict,
    anomaliesExpected: o.uncleanLeaderElection,
    anomalyCounts: counts,
    notes,
  };
  writeFileSync(join(runDir, 'summary.json'), `${JSON.stringify({ ...summary, results }, null, 1)}\n`);
  writeReport(join(runDir, 'report.md'), summary, history.ops, results);
  log(`verdict ${verdict}; anomalies: ${JSON.stringify(counts)}; report ${join(runDir, 'report.md')}`);
  return { runDir, summary, results };
}

export { FAULT_KINDS };
