// `npm run bench -- cluster [options]`: the cluster benchmarks of the benchmark protocol, on a real ZooKeeper
// (Debian's) and three local broker processes, every file under one temporary directory on the checkout's disk.
//
// In one run: L_net (for context); replicated produce (rf=3, acks=all, G1) and, interleaved with it repetition
// by repetition, single-node produce (one standalone broker, rf=1, acks=all and acks=1) with the same generator,
// giving R_single = replicated / single-node, and after each repetition one L_sink and one L_replicate
// repetition, the limits each cell is read against (paired-limits.ts); then failover: the leader of a rf=3
// partition killed (SIGKILL) under acks=all writes at a fixed rate, once per zookeeper.session.timeout.ms given,
// and stopped with SIGTERM (controlled shutdown). Prints summaries; appends every figure to bench/results/<date>-cluster.jsonl.
// Latency mode (--rate, --single-rate): the produce cells at fixed rates with a tail consumer and end-to-end
// latency (../broker/tail-latency.ts), for issue 21's goal of e2e p99 at a third of peak throughput.
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { assert } from '../../src/common/assert.js';
import { type BrokerProcess, startBroker } from '../broker/broker-process.js';
import { createTopic, waitForTopic } from '../broker/broker-setup.js';
import { WireConnection } from '../broker/wire-connection.js';
import { Histogram } from '../harness/histogram.js';
import { positiveNumber } from '../harness/options.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { type RatioSummary, ratioOfSummaries } from '../harness/ratio.js';
import { repetitionsMin, type Summary, summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { formatFigure, formatSummaryRange, formatTable, formatValuesRange } from '../harness/table.js';
import { withTempDir } from '../harness/temp-dir.js';
import { type LimitSet, limitDurationMs, measureLimits } from '../limits/measure-limits.js';
import {
  defaultFailoverSettings,
  type FailoverRepetition,
  type FailoverSettings,
  failoverOnce,
  type StopMode,
} from './failover.js';
import {
  formatLatencyFloors,
  hasLatencyFloor,
  type LatencyFloor,
  measureLatencyFloors,
  recordLatencyFloors,
} from './latency-floor.js';
import { LocalCluster, zooKeeperTickMs } from './local-cluster.js';
import {
  ackedWindows,
  formatPairedLimits,
  measurePairedLimits,
  type PairedLimits,
  recordPairedLimits,
} from './paired-limits.js';
import { guardProcess, releaseProcess, withProcessGuard } from './process-guard.js';
import {
  batchBytes,
  cellName,
  inFlight,
  type ProduceCell,
  type ProduceRepetition,
  produceOnce,
  type Workload,
  workloadName,
} from './produce.js';
import { createAssignedTopic, deleteTopic, waitForTopicState } from './topics.js';

const usage = `usage: npm run bench -- cluster [options]
  --quick                  1 KiB on 1 and 16 partitions, 1 s windows, SIGKILL failover with a 6 s session: ~2 min
  --seconds N              measured window of one produce repetition (default 4, quick 1)
  --repetitions N          repetitions of every produce cell and failover case, at least 3 (default 3)
  --records LIST           record sizes of the produce cells (default 1024,100; quick 1024)
  --partitions LIST        partition counts of the produce cells (default 1,16)
  --replicated-acks LIST   acks of the rf=3 cells: all and/or 1 (default all,1; quick all)
  --single-acks LIST       acks of the single-node cells: 1 and/or all (default 1,all)
  --rate N                 latency mode: the rf=3 cells at a fixed N produce requests/s, with a tail consumer
                           and end-to-end latency (intended send time to fetch receipt) (default: unthrottled)
  --single-rate N          fixed rate of the single-node cells (default: --rate's; tail consumer as with --rate)
  --tail                   a tail consumer and end-to-end latency without --rate too
  --session-timeouts LIST  zookeeper.session.timeout.ms of the failover clusters (default 18000,6000; quick 6000)
  --failover-rate N        acks=all writes per second during failover (default 100)
  --request-timeout MS     timeoutMs of the failover producer's requests (default 30000, request.timeout.ms)
  --no-produce             skip the produce cells
  --no-failover            skip failover
  --no-kill                skip the SIGKILL case
  --no-terminate           skip the controlled shutdown (SIGTERM) case (--quick skips it unless --terminate)
  --no-limits              skip L_net
  --no-paired-limits       skip L_sink, L_replicate and L_replicate_acked after each repetition of unthrottled
                           cells (paired R_sink, R_replicate, R_replicate_acked and the bound L_replicate / L_sink),
                           and in latency mode the cells' latency floors (L_sink_acked or L_replicate_acked at
                           the cell's rate)
  --override KEY=VALUE     a config of every cluster broker (repeatable; recorded with the cluster)
  --cpu-prof DIR           run every broker under node --cpu-prof, profiles in DIR/cluster-<session timeout>/
                           broker-<id> and DIR/single, written as they stop (bench/broker/profile-top.ts reads them)
  --dir DIR                parent of the temporary directory of ZooKeeper and brokers (default .)
  --results-dir DIR        where the result file goes (default bench/results)`;

/** Pause between a replicated topic's creation and its first write (see produceCells). */
const replicationSettleMs = 1000;

interface CellResult {
  cell: ProduceCell;
  repetitions: ProduceRepetition[];
  latency: Histogram;
  /** End-to-end latency (intended send time to the tail consumer's receipt), when a tail consumer ran. */
  endToEnd?: Histogram;
}

/** Which cells run and how: acks of each kind, fixed rates (latency mode), tail consumer. */
interface CellSettings {
  replicatedAcks: readonly (1 | -1)[];
  singleAcks: readonly (1 | -1)[];
  replicatedRate?: number;
  singleRate?: number;
  tail: boolean;
}

interface FailoverResult {
  mode: StopMode;
  sessionTimeoutMs: number;
  repetitions: FailoverRepetition[];
  latency: Histogram;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      repetitions: { type: 'string', default: String(repetitionsMin) },
      records: { type: 'string' },
      partitions: { type: 'string', default: '1,16' },
      'replicated-acks': { type: 'string' },
      'single-acks': { type: 'string', default: '1,all' },
      rate: { type: 'string' },
      'single-rate': { type: 'string' },
      tail: { type: 'boolean', default: false },
      'session-timeouts': { type: 'string' },
      'failover-rate': { type: 'string', default: String(defaultFailoverSettings.writesPerSecond) },
      'request-timeout': { type: 'string', default: String(defaultFailoverSettings.requestTimeoutMs) },
      'no-produce': { type: 'boolean', default: false },
      'no-failover': { type: 'boolean', default: false },
      'no-terminate': { type: 'boolean', default: false },
      terminate: { type: 'boolean', default: false },
      'no-kill': { type: 'boolean', default: false },
      'no-limits': { type: 'boolean', default: false },
      'no-paired-limits': { type: 'boolean', default: false },
      override: { type: 'string', multiple: true, default: [] },
      'cpu-prof': { type: 'string' },
      dir: { type: 'string', default: '.' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const quick = values.quick;
  const seconds = values.seconds !== undefined ? positiveNumber('--seconds', values.seconds) : quick ? 1 : 4;
  const durationMs = Math.round(seconds * 1000);
  const repetitions = positiveNumber('--repetitions', values.repetitions);
  assert(
    Number.isInteger(repetitions) && repetitions >= repetitionsMin,
    `--repetitions: at least ${repetitionsMin}`,
  );
  const records = list(values.records ?? (quick ? '1024' : '1024,100')).map((r) =>
    positiveNumber('--records', r),
  );
  const partitions = list(values.partitions).map((p) => positiveNumber('--partitions', p));
  const replicatedAcks = list(values['replicated-acks'] ?? (quick ? 'all' : 'all,1')).map((a): 1 | -1 => {
    assert(a === '1' || a === 'all', `--replicated-acks takes 1 and/or all, got ${a}`);
    return a === '1' ? 1 : -1;
  });
  const singleAcks = list(values['single-acks']).map((a): 1 | -1 => {
    assert(a === '1' || a === 'all', `--single-acks takes 1 and/or all, got ${a}`);
    return a === '1' ? 1 : -1;
  });
  const replicatedRate = values.rate === undefined ? undefined : positiveNumber('--rate', values.rate);
  const singleRate =
    values['single-rate'] === undefined
      ? replicatedRate
      : positiveNumber('--single-rate', values['single-rate']);
  const cellSettings: CellSettings = {
    replicatedAcks,
    singleAcks,
    replicatedRate,
    singleRate,
    // A fixed rate is for latency: every cell gets the tail consumer then.
    tail: values.tail || replicatedRate !== undefined || singleRate !== undefined,
  };
  const sessionTimeouts = list(values['session-timeouts'] ?? (quick ? '6000' : '18000,6000')).map((s) => {
    const ms = positiveNumber('--session-timeouts', s);
    assert(
      ms >= 2 * zooKeeperTickMs && ms <= 20 * zooKeeperTickMs,
      `session timeouts must be within ZooKeeper's 2-20 ticks (${2 * zooKeeperTickMs}-${20 * zooKeeperTickMs} ms)`,
    );
    return ms;
  });
  const failoverSettings: FailoverSettings = {
    ...defaultFailoverSettings,
    writesPerSecond: positiveNumber('--failover-rate', values['failover-rate']),
    requestTimeoutMs: positiveNumber('--request-timeout', values['request-timeout']),
    steadyMs: quick ? 500 : defaultFailoverSettings.steadyMs,
  };
  const overrides: Record<string, string> = {};
  for (const item of values.override) {
    const at = item.indexOf('=');
    assert(at > 0, `--override takes KEY=VALUE, got '${item}'`);
    overrides[item.slice(0, at)] = item.slice(at + 1);
  }
  const cpuProfileDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
  const workloads: Workload[] = records.flatMap((recordBytes) =>
    partitions.map((p) => ({ recordBytes, partitions: p })),
  );

  const writer = new ResultWriter({ bench: 'cluster', args, dir: values['results-dir'] });
  const log = (message: string): void => console.log(message);
  const started = performance.now();
  log(`cluster bench ${writer.runId}: load ${loadText()}`);

  const limits: LimitSet = new Map();
  const produceResults: CellResult[] = [];
  // At fixed rates throughput is the rate: no ratio to a limit says anything then.
  const latencyMode = replicatedRate !== undefined || singleRate !== undefined;
  const pairedLimits: PairedLimits[] | undefined = values['no-paired-limits'] || latencyMode ? undefined : [];
  // In latency mode every cell gets a latency floor after each repetition instead (latency-floor.ts).
  const latencyFloors: Map<string, LatencyFloor>[] | undefined =
    values['no-paired-limits'] || !latencyMode ? undefined : [];
  const failoverResults: FailoverResult[] = [];
  const peakRss: Record<string, number> = {};
  await withProcessGuard(() =>
    withTempDir(values.dir, '.brook-bench-cluster-', async (dir) => {
      if (!values['no-limits']) {
        const measured = await measureLimits({
          names: ['L_net'],
          durationMs: quick ? limitDurationMs.quick : limitDurationMs.full,
          parentDir: dir,
          writer,
          log,
        });
        for (const [k, v] of measured) limits.set(k, v);
      }
      let cluster: LocalCluster | undefined;
      try {
        if (!values['no-produce']) {
          cluster = await startCluster(dir, sessionTimeouts[0]!, overrides, cpuProfileDir, writer, log);
          await produceCells(
            cluster,
            dir,
            workloads,
            cellSettings,
            repetitions,
            durationMs,
            produceResults,
            { limits: pairedLimits, latencyFloors },
            peakRss,
            cpuProfileDir,
            writer,
            log,
          );
        }
        if (!values['no-failover']) {
          for (const [index, sessionTimeoutMs] of sessionTimeouts.entries()) {
            if (cluster === undefined || cluster.options.sessionTimeoutMs !== sessionTimeoutMs) {
              await cluster?.stop();
              cluster = undefined;
              cluster = await startCluster(dir, sessionTimeoutMs, overrides, cpuProfileDir, writer, log);
            }
            const terminate = index === 0 && (values.terminate || (!quick && !values['no-terminate']));
            const modes: StopMode[] = [
              ...(values['no-kill'] ? [] : ['kill' as const]),
              ...(terminate ? ['terminate' as const] : []),
            ];
            for (const mode of modes) {
              const result = await failoverCase(cluster, mode, repetitions, failoverSettings, log);
              failoverResults.push(result);
              recordFailover(writer, result, failoverSettings);
            }
          }
        }
      } finally {
        await cluster?.stop();
      }
    }),
  );

  const elapsedSeconds = (performance.now() - started) / 1000;
  writer.write('summary', { elapsedSeconds, loadAverage: os.loadavg() });
  if (limits.size > 0) {
    const net = limits.get('L_net')!.summary;
    console.log(`\nL_net ${formatSummaryRange(net)} MB/s`);
  }
  if (produceResults.length > 0) {
    console.log(`\n${formatCells(produceResults, limits)}`);
    if (ratios(produceResults).length > 0) console.log(`\n${formatRatios(produceResults)}`);
    if (pairedLimits !== undefined) console.log(`\n${formatPairedLimits(produceResults, pairedLimits)}`);
    if (latencyFloors !== undefined && produceResults.some((r) => hasLatencyFloor(r.cell))) {
      console.log(`\n${formatLatencyFloors(produceResults, latencyFloors)}`);
    }
  }
  if (failoverResults.length > 0) console.log(`\n${formatFailover(failoverResults)}`);
  console.log(
    `\nrun ${writer.runId} (${elapsedSeconds.toFixed(0)} s, load ${loadText()}) written to ${writer.path}`,
  );
}

async function startCluster(
  dir: string,
  sessionTimeoutMs: number,
  overrides: Record<string, string>,
  cpuProfileDir: string | undefined,
  writer: ResultWriter,
  log: (message: string) => void,
): Promise<LocalCluster> {
  const startedMs = performance.now();
  const cluster = await LocalCluster.start({
    dir: join(dir, `cluster-${sessionTimeoutMs}`),
    brokers: 3,
    sessionTimeoutMs,
    overrides,
    cpuProfileDir:
      cpuProfileDir === undefined ? undefined : join(cpuProfileDir, `cluster-${sessionTimeoutMs}`),
  });
  const seconds = (performance.now() - startedMs) / 1000;
  log(
    `cluster up in ${seconds.toFixed(1)} s: zookeeper.session.timeout.ms=${sessionTimeoutMs} (load ${loadText()})`,
  );
  writer.write('cluster', {
    brokers: cluster.brokers.length,
    brokerConfig: cluster.brokerConfig,
    zooKeeper: { tickTimeMs: zooKeeperTickMs, package: 'Debian zookeeper (QuorumPeerMain, standalone)' },
    startSeconds: seconds,
  });
  return cluster;
}

/**
 * The produce cells, interleaved: each repetition runs every cell once (single node acks=1, single node
 * acks=all, then the replicated ones) on fresh topics, so that the machine's drifting load hits the cells of a
 * ratio alike. The standalone broker and the cluster both run throughout (the idle one costs little).
 */
async function produceCells(
  cluster: LocalCluster,
  dir: string,
  workloads: readonly Workload[],
  settings: CellSettings,
  repetitions: number,
  durationMs: number,
  results: CellResult[],
  paired: { limits: PairedLimits[] | undefined; latencyFloors: Map<string, LatencyFloor>[] | undefined },
  peakRss: Record<string, number>,
  cpuProfileDir: string | undefined,
  writer: ResultWriter,
  log: (message: string) => void,
): Promise<void> {
  const cells: ProduceCell[] = workloads.flatMap((w) => [
    ...settings.singleAcks.map((acks) => ({
      ...w,
      replicationFactor: 1 as const,
      acks,
      requestsPerSecond: settings.singleRate,
    })),
    ...settings.replicatedAcks.map((acks) => ({
      ...w,
      replicationFactor: 3 as const,
      acks,
      requestsPerSecond: settings.replicatedRate,
    })),
  ]);
  for (const cell of cells) {
    results.push({
      cell,
      repetitions: [],
      latency: new Histogram('us'),
      endToEnd: settings.tail ? new Histogram('us') : undefined,
    });
  }
  const single: BrokerProcess = await startBroker({
    dataDir: join(dir, 'single'),
    cpuProfileDir: cpuProfileDir === undefined ? undefined : join(cpuProfileDir, 'single'),
  });
  guardProcess(single.pid);
  const watches = new Map<string, ProcessWatch>([['single', watchProcess(single.pid)]]);
  for (const b of cluster.live()) watches.set(`broker-${b.id}`, watchProcess(b.process!.pid));
  const leader = cluster.broker(0);
  try {
    for (let repetition = 0; repetition < repetitions; repetition++) {
      for (const result of results) {
        const { cell } = result;
        const topic = `${cellName(cell)}-${repetition}`.toLowerCase();
        let port: number;
        if (cell.replicationFactor === 1) {
          port = single.port;
          const setup = await WireConnection.connect('127.0.0.1', port);
          try {
            await createTopic(setup, topic, cell.partitions);
            await waitForTopic(setup, topic, cell.partitions);
          } finally {
            setup.close();
          }
        } else {
          port = leader.port;
          const replicas = Array.from({ length: cell.partitions }, () => cluster.brokers.map((b) => b.id));
          await createAssignedTopic(port, topic, replicas, { 'min.insync.replicas': '2' });
          await waitForTopicState(
            cluster,
            topic,
            cell.partitions,
            3,
            30_000,
            replicas.map(() => leader.id),
          );
          // Followers start fetching once the controller's LeaderAndIsr reaches them, and a first fetch that
          // races the leader's own LeaderAndIsr backs off: the first acks=all write to a new topic can take
          // 0.1-0.4 s. Give them a second, so that a short window measures replication, not its start.
          await new Promise((resolve) => setTimeout(resolve, replicationSettleMs));
        }
        const repetitionLatency = {
          produce: new Histogram('us'),
          endToEnd: result.endToEnd === undefined ? undefined : new Histogram('us'),
        };
        const figures = await produceOnce(
          cell,
          cell.replicationFactor === 1
            ? { port, brokerPids: [single.pid] }
            : { port, brokerPids: cluster.pids(), zooKeeperPid: cluster.zooKeeper.pid },
          topic,
          durationMs,
          repetitionLatency,
        );
        result.latency.merge(repetitionLatency.produce);
        if (repetitionLatency.endToEnd !== undefined) result.endToEnd!.merge(repetitionLatency.endToEnd);
        result.repetitions.push(figures);
        log(
          `  ${cellName(cell)} #${repetition + 1}: ${figures.wireMBPerSecond.toFixed(1)} MB/s wire, ` +
            (result.endToEnd
              ? `tail ${figures.tailFetchMBPerSecond.toFixed(1)} MB/s, produce/e2e p99 ` +
                `${figures.produceP99Ms.toFixed(2)}/${figures.endToEndP99Ms!.toFixed(2)} ms, `
              : '') +
            `broker CPU ${figures.brokerCpuSeconds.map((c) => c.toFixed(2)).join('/')} s, ` +
            `of it in the kernel ${figures.brokerSystemCpuSeconds.map((c) => c.toFixed(2)).join('/')} s ` +
            `(load ${figures.loadAverage1m.toFixed(1)})`,
        );
        await deleteTopic(port, topic);
      }
      if (paired.limits !== undefined) {
        paired.limits.push(await measurePairedLimits(dir, durationMs, log, repetition, ackedWindows(cells)));
      }
      if (paired.latencyFloors !== undefined) {
        paired.latencyFloors.push(await measureLatencyFloors(dir, durationMs, log, repetition, cells));
      }
    }
  } finally {
    for (const [name, watch] of watches) peakRss[name] = watch.stop().peakRssBytes;
    await single.stop();
    releaseProcess(single.pid);
  }
  for (const result of results) recordCell(writer, result);
  writer.write('produce-peak-rss', {
    unit: 'bytes',
    byProcess: peakRss,
    note: 'VmHWM over all produce cells; broker-0 leads every replicated partition',
  });
  recordRatios(writer, results);
  if (paired.limits !== undefined) recordPairedLimits(writer, results, paired.limits);
  if (paired.latencyFloors !== undefined) recordLatencyFloors(writer, results, paired.latencyFloors);
}

async function failoverCase(
  cluster: LocalCluster,
  mode: StopMode,
  repetitions: number,
  settings: FailoverSettings,
  log: (message: string) => void,
): Promise<FailoverResult> {
  const result: FailoverResult = {
    mode,
    sessionTimeoutMs: cluster.options.sessionTimeoutMs,
    repetitions: [],
    latency: new Histogram('us'),
  };
  for (let repetition = 0; repetition < repetitions; repetition++) {
    const r = await failoverOnce(cluster, mode, repetition, settings, result.latency);
    result.repetitions.push(r);
    log(
      `  ${failoverName(result)} #${repetition + 1}: leader ${r.oldLeader} -> ${r.newLeader}, metadata ` +
        `${r.metadataMs.toFixed(0)} ms, first write ${r.firstWriteMs.toFixed(0)} ms, lost ${r.lostWrites} of ` +
        `${r.acknowledged}, rejoin ${r.rejoinMs.toFixed(0)} ms (load ${r.loadAverage1m.toFixed(1)})`,
    );
    assert(r.lostWrites === 0, `${failoverName(result)}: ${r.lostWrites} acknowledged writes lost`);
  }
  return result;
}

function failoverName(result: { mode: StopMode; sessionTimeoutMs: number }): string {
  return `failover-${result.mode === 'kill' ? 'sigkill' : 'sigterm'}-session${result.sessionTimeoutMs}`;
}

function recordCell(writer: ResultWriter, result: CellResult): void {
  const name = cellName(result.cell);
  const s = (f: (r: ProduceRepetition) => number): Summary => summarize(result.repetitions.map(f));
  writer.figure(
    `produce-${name}`,
    'MB/s',
    s((r) => r.wireMBPerSecond),
    {
      measured: 'produce request bytes on the wire acknowledged in the window',
      cell: {
        ...result.cell,
        acks: result.cell.acks === -1 ? 'all' : 1,
        batchBytes,
        inFlight,
        durability: 'D0',
      },
      payloadMiBPerSecond: s((r) => r.payloadMiBPerSecond),
      recordsPerSecond: s((r) => r.recordsPerSecond),
      tailFetchMBPerSecond: result.endToEnd ? s((r) => r.tailFetchMBPerSecond) : undefined,
      wireMBPerBrokerCpuSecond: s((r) => r.wireMBPerBrokerCpuSecond),
      repetitions: result.repetitions,
    },
  );
  writer.latency(`produce-latency-${name}`, result.latency.summary(), {
    from: result.cell.requestsPerSecond === undefined ? 'intended send time' : 'place in the fixed schedule',
  });
  if (result.endToEnd !== undefined && result.endToEnd.count > 0) {
    writer.latency(`e2e-latency-${name}`, result.endToEnd.summary(), {
      from: 'intended send time to the tail consumer receiving the batch (fetch from the leader, up to its HW)',
    });
  }
}

/** R_single of each replicated cell against the single-node cells of the same workload. */
function ratios(results: readonly CellResult[]): {
  name: string;
  ratio: RatioSummary;
  paired: Summary;
  replicated: CellResult;
  single: CellResult;
}[] {
  const out = [];
  // At fixed rates throughput is the rate: no ratio says anything then.
  for (const replicated of results.filter(
    (r) => r.cell.replicationFactor === 3 && r.cell.requestsPerSecond === undefined,
  )) {
    for (const single of results.filter(
      (r) =>
        r.cell.replicationFactor === 1 &&
        r.cell.requestsPerSecond === undefined &&
        r.cell.recordBytes === replicated.cell.recordBytes &&
        r.cell.partitions === replicated.cell.partitions,
    )) {
      const a = replicated.repetitions.map((r) => r.wireMBPerSecond);
      const b = single.repetitions.map((r) => r.wireMBPerSecond);
      out.push({
        name: `R_single-${cellName(replicated.cell)}-over-${cellName(single.cell)}`,
        ratio: ratioOfSummaries(summarize(a), summarize(b)),
        paired: summarize(a.map((x, i) => x / b[i]!)),
        replicated,
        single,
      });
    }
  }
  return out;
}

function recordRatios(writer: ResultWriter, results: readonly CellResult[]): void {
  for (const r of ratios(results)) {
    writer.write(r.name, {
      ...r.ratio,
      measured: 'wire MB/s of the replicated cell over the single-node cell, same run',
      pairedByRepetition: r.paired,
    });
  }
}

function recordFailover(writer: ResultWriter, result: FailoverResult, settings: FailoverSettings): void {
  const name = failoverName(result);
  const s = (f: (r: FailoverRepetition) => number): Summary => summarize(result.repetitions.map(f));
  writer.figure(
    `${name}-first-write`,
    'ms',
    s((r) => r.firstWriteMs),
    {
      measured: 'signal to the leader until the first acks=all write acknowledged by the new leader',
      metadataMs: s((r) => r.metadataMs),
      writeGapMs: s((r) => r.writeGapMs),
      exitMs: s((r) => r.exitMs),
      rejoinMs: s((r) => r.rejoinMs),
      lostWrites: result.repetitions.reduce((a, r) => a + r.lostWrites, 0),
      acknowledgedWrites: result.repetitions.reduce((a, r) => a + r.acknowledged, 0),
      settings,
      repetitions: result.repetitions,
    },
  );
  writer.figure(
    `${name}-metadata`,
    'ms',
    s((r) => r.metadataMs),
    {
      measured: 'signal to the leader until a surviving broker names a new leader in Metadata',
    },
  );
  writer.latency(`${name}-write-latency`, result.latency.summary(), {
    from: 'intended send time (fixed schedule), across the failover',
  });
}

function formatCells(results: readonly CellResult[], limits: LimitSet): string {
  const net = limits.get('L_net');
  const rows = results.map((result) => {
    const s = (f: (r: ProduceRepetition) => number): string => {
      return formatValuesRange(result.repetitions.map(f));
    };
    const latency = result.latency.summary();
    const ms = (us: number): string => formatFigure(us / 1000);
    const e2e =
      result.endToEnd !== undefined && result.endToEnd.count > 0 ? result.endToEnd.summary() : undefined;
    const brokers = result.repetitions[0]!.brokerCpuSeconds.length;
    const cpu = Array.from({ length: brokers }, (_, i) =>
      formatFigure(summarize(result.repetitions.map((r) => r.brokerCpuSeconds[i]!)).median),
    ).join('/');
    // Loopback bytes of a replicated cell: the produce once in, and the batches fetched by each follower.
    const copies = result.cell.replicationFactor;
    const loads = result.repetitions.map((r) => r.loadAverage1m);
    return [
      cellName(result.cell),
      s((r) => r.wireMBPerSecond),
      s((r) => r.payloadMiBPerSecond),
      `${ms(latency.p50)}/${ms(latency.p99)}/${ms(latency.p999)}`,
      e2e ? `${ms(e2e.p50)}/${ms(e2e.p99)}` : '-',
      cpu,
      s((r) => r.wireMBPerBrokerCpuSecond),
      net
        ? ratioText(
            ratioOfSummaries(
              summarize(result.repetitions.map((r) => r.wireMBPerSecond * copies)),
              net.summary,
            ),
          )
        : '-',
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    ];
  });
  return formatTable(
    [
      'cell',
      'wire MB/s',
      'payload MiB/s',
      'p50/p99/p99.9 ms',
      'e2e p50/p99 ms',
      'CPU s by broker',
      'MB/CPU-s',
      'loopback/L_net',
      'load',
    ],
    rows,
  );
}

function formatRatios(results: readonly CellResult[]): string {
  const rows = ratios(results).map((r) => [
    workloadName(r.replicated.cell),
    `${cellName(r.replicated.cell)} / ${cellName(r.single.cell)}`,
    ratioText(r.ratio),
    formatSummaryRange(r.paired),
  ]);
  return formatTable(['workload', 'R_single', 'ratio of medians (range)', 'paired by repetition'], rows);
}

function formatFailover(results: readonly FailoverResult[]): string {
  const rows = results.map((result) => {
    const s = (f: (r: FailoverRepetition) => number): string => {
      return formatValuesRange(result.repetitions.map(f));
    };
    const loads = result.repetitions.map((r) => r.loadAverage1m);
    return [
      result.mode === 'kill' ? 'SIGKILL leader' : 'SIGTERM leader',
      String(result.sessionTimeoutMs),
      s((r) => r.metadataMs),
      s((r) => r.firstWriteMs),
      `${s((r) => r.exitMs)}${result.repetitions.some((r) => r.killedAfterBound) ? ' killed' : ''}`,
      s((r) => r.rejoinMs),
      `${result.repetitions.reduce((a, r) => a + r.lostWrites, 0)} of ${result.repetitions.reduce((a, r) => a + r.acknowledged, 0)}`,
      String(result.repetitions.reduce((a, r) => a + r.duplicates, 0)),
      s((r) => r.maxLatencyMs),
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    ];
  });
  return formatTable(
    [
      'case',
      'session ms',
      'metadata ms',
      'first write ms',
      'exit ms',
      'rejoin ms',
      'lost',
      'dup',
      'max wait ms',
      'load',
    ],
    rows,
  );
}

function ratioText(ratio: RatioSummary): string {
  return `${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)})`;
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function loadText(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}
