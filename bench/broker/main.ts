// `npm run bench -- broker [options]`: the broker matrix of the benchmark protocol with generator G1.
//
// In one run: the limits (L_net, L_sink, L_relay, L_null for each record size and partition count, L_disk_sync first;
// L_disk_async last, since it leaves writeback behind), then one cell per (record size, partitions, acks,
// durability), each on a fresh broker: three G1 produce runs with a tail consumer, and for acks=1 D0 cells a read
// of the stored backlog. Prints a summary and appends every figure and the ratios R_net, R_relay, R_disk, R_null
// to bench/results/<date>-broker.jsonl; ratios are only ever taken against limits of the same run.
//
// R_relay divides the same bytes as R_net by L_relay, the work any broker must do for them on this machine
// (receive, append to the page cache, send to the tail reader) without a protocol: it says how far the broker
// is from its data path's ceiling, where R_net mixes that with how far the machine is from L_net. R_sink divides
// the produce bytes alone by L_sink (receive and append to the page cache, no protocol).
//
// The C mock peer (mock-peer.ts, librdkafka's mock cluster) runs the same G1 load in every D0 cell, one
// repetition after each of Brook's, and its figure is printed beside Brook's (`--no-peer` skips it). So does an
// L_sink repetition whose file stays until the cell ends (paired-sink.ts: the paired R_sink, `--no-paired-sink`
// skips it), since the run-start L_sink writes into warmer memory than a broker whose topics accumulate.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assert } from '../../src/common/assert.js';
import { codecList, parseOverrides, positiveNumber } from '../harness/options.js';
import { type RatioSummary, ratioOfSummaries } from '../harness/ratio.js';
import { repetitionsMin, type Summary, summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { formatFigure, formatSummaryRange, formatTable, formatValuesRange } from '../harness/table.js';
import { withTempDir } from '../harness/temp-dir.js';
import { type LimitSet, limitDurationMs, measureLimits } from '../limits/measure-limits.js';
import { defaultNullWorkload, nullBrokerLimit } from '../limits/null-broker.js';
import {
  type CellResult,
  type CellSpec,
  type ClientCellResult,
  cellName,
  type PeerRepetition,
  runCell,
  runClientCell,
  runPeerRepetition,
} from './cell.js';
import { type G2Client, g2Clients } from './g2-clients.js';
import { type MetricsComparison, runMetricsOnCell } from './metrics-compare.js';
import { buildMockPeer, type MockPeer, type PeerBuild, startMockPeer } from './mock-peer.js';
import {
  formatPairedSinks,
  type PairedSinkRepetition,
  type PairedSinkResult,
  recordPairedSink,
  runPairedSink,
} from './paired-sink.js';

const usage = `usage: npm run bench -- broker [options]
  --quick                three cells, 1 s windows, 1 s limits: about a minute
  --seconds N            measured window of one produce repetition (default 4, quick 1)
  --repetitions N        produce repetitions per cell, at least 3 (default 3)
  --records LIST         record sizes in bytes (default 100,1024)
  --partitions LIST      partition counts (default 1,16)
  --acks LIST            1 and/or all (default 1,all)
  --durability LIST      D0 and/or D1 (D1: brook.log.flush.group.commit.enable=true) (default D0,D1)
  --connections N        producer connections (default 1)
  --compression LIST     G1's codecs: none, gzip, snappy, lz4, zstd (default none); compressed batches carry word
                         text; no L_null ratio for them (the null broker's load is uncompressed)
  --rate N               fixed rate in produce requests per second over all connections (default: unthrottled)
  --no-tail              no consumer beside the produce runs
  --g2 LIST              also drive each cell with real clients (G2): kafkajs, platformatic, kcat
  --no-g1                skip G1 (with --g2: real clients only)
  --no-limits            skip the limits (no ratios; for profiling)
  --no-peer              skip the C mock broker peer (librdkafka's mock cluster) in D0 cells
  --no-paired-sink       skip the L_sink repetitions alternated with Brook's in D0 cells (the paired R_sink)
  --broker-override K=V  a broker setting for every cell (repeatable), to compare settings in one sitting
  --metrics-compare      run each cell again with brook.metrics.listener set, scraped every second; ratios on/off
  --compare-env K=V      a second broker with this environment variable (repeatable) beside each cell's, its
                         repetitions alternated with the first's; ratios second/first (same build, one sitting)
  --cpu-prof DIR         run each broker under node --cpu-prof, profiles written to DIR
  --gc-prof DIR          each broker's GC trace and a heap profile of what survives scavenges, in DIR
                         (summary: node dist/bench/broker/gc-top.js DIR)
  --dir DIR              parent of the brokers' data directories, on the disk under test (default .)
  --results-dir DIR      where the result file goes (default bench/results)`;

const batchBytes = 128 * 1024;
const inFlight = 5;

/** The --quick subset: the goal's cell (1 KiB), a small-record cell, and the most demanding durability. */
const quickCells: readonly Pick<CellSpec, 'recordBytes' | 'partitions' | 'acks' | 'durability'>[] = [
  { recordBytes: 1024, partitions: 1, acks: 1, durability: 'D0' },
  { recordBytes: 100, partitions: 16, acks: 1, durability: 'D0' },
  { recordBytes: 1024, partitions: 16, acks: -1, durability: 'D1' },
];

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      repetitions: { type: 'string', default: String(repetitionsMin) },
      records: { type: 'string', default: '100,1024' },
      partitions: { type: 'string', default: '1,16' },
      acks: { type: 'string', default: '1,all' },
      durability: { type: 'string', default: 'D0,D1' },
      connections: { type: 'string', default: '1' },
      compression: { type: 'string', default: 'none' },
      rate: { type: 'string' },
      'no-tail': { type: 'boolean', default: false },
      g2: { type: 'string' },
      'no-g1': { type: 'boolean', default: false },
      'no-limits': { type: 'boolean', default: false },
      'no-peer': { type: 'boolean', default: false },
      'no-paired-sink': { type: 'boolean', default: false },
      'broker-override': { type: 'string', multiple: true, default: [] },
      'metrics-compare': { type: 'boolean', default: false },
      'compare-env': { type: 'string', multiple: true, default: [] },
      'cpu-prof': { type: 'string' },
      'gc-prof': { type: 'string' },
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
  const connections = positiveNumber('--connections', values.connections);
  const explicit = args.some((a) => /^--(records|partitions|acks|durability)\b/.test(a));
  const codecs = codecList('--compression', values.compression);
  const specs: CellSpec[] = (quick && !explicit ? quickCells : crossProduct(values)).flatMap((c) =>
    codecs.map((compression) => ({
      ...c,
      batchBytes,
      partitionsPerRequest: Math.min(c.partitions, 4),
      inFlight,
      connections,
      requestsPerSecond: values.rate === undefined ? undefined : positiveNumber('--rate', values.rate),
      compression,
    })),
  );
  if (values['cpu-prof'] !== undefined) mkdirSync(values['cpu-prof'], { recursive: true });
  if (values['gc-prof'] !== undefined) mkdirSync(values['gc-prof'], { recursive: true });
  const brokerOverrides = parseOverrides(values['broker-override']);
  const compareEnv =
    values['compare-env'].length > 0 ? parseOverrides(values['compare-env'], '--compare-env') : undefined;
  const writer = new ResultWriter({ bench: 'broker', args, dir: values['results-dir'] });
  const log = (message: string): void => console.log(message);
  const started = performance.now();
  log(
    `broker bench ${writer.runId}: ${specs.length} cells, ${repetitions} x ${seconds} s, load ${loadText()}`,
  );

  const limits: LimitSet = new Map();
  const nullNames = new Map<string, string>();
  if (!values['no-limits']) {
    const limitMs = quick ? limitDurationMs.quick : limitDurationMs.full;
    const first = await measureLimits({
      names: ['L_net', 'L_sink', 'L_relay', 'L_disk_sync'],
      durationMs: limitMs,
      parentDir: values.dir,
      writer,
      log,
    });
    for (const [k, v] of first) limits.set(k, v);
    const ceiling = relayCeiling(limits);
    if (ceiling)
      writer.write('L_relay-over-L_net', { ...ceiling, meaning: 'the highest R_net a broker could reach' });
    const nullDefinitions = uniqueNullWorkloads(specs).map(({ spec, name }) => {
      nullNames.set(nullKey(spec), name);
      return nullBrokerLimit({ ...defaultNullWorkload, ...pick(spec), acks: 1 }, name);
    });
    const nulls = await measureLimits({
      definitions: nullDefinitions,
      durationMs: quick ? limitDurationMs.quick : durationMs,
      parentDir: values.dir,
      writer,
      log,
    });
    for (const [k, v] of nulls) limits.set(k, v);
  }

  const clients = (values.g2 ?? '').split(',').filter(Boolean);
  for (const client of clients) {
    assert(
      (g2Clients as readonly string[]).includes(client),
      `--g2 takes ${g2Clients.join(', ')}; got ${client}`,
    );
  }
  const results: CellResult[] = [];
  const comparisons: MetricsComparison[] = [];
  const peerResults: PeerCellResult[] = [];
  const pairedSinkResults: PairedSinkResult[] = [];
  const peerDir = mkdtempSync(join(os.tmpdir(), 'brook-bench-peer-'));
  try {
    const g1Specs = values['no-g1'] ? [] : specs;
    const peerBuild: PeerBuild | undefined =
      values['no-peer'] || !g1Specs.some((s) => s.durability === 'D0') ? undefined : buildMockPeer(peerDir);
    if (peerBuild !== undefined && 'skipped' in peerBuild) {
      log(`C mock broker peer skipped: ${peerBuild.skipped}`);
      writer.write('peer-skipped', { reason: peerBuild.skipped });
    }
    for (const spec of g1Specs) {
      log(`cell ${cellName(spec)}`);
      const peer =
        peerBuild !== undefined && 'binary' in peerBuild && spec.durability === 'D0'
          ? await startMockPeer(peerBuild.binary)
          : undefined;
      const peerRepetitions: PeerRepetition[] = [];
      const cellOptions = {
        repetitions,
        durationMs,
        tail: !values['no-tail'],
        backlog: spec.acks === 1 && spec.durability === 'D0',
        parentDir: values.dir,
        cpuProfileDir: values['cpu-prof'],
        gcProfileDir: values['gc-prof'],
        brokerOverrides,
        log,
      };
      const sinkRepetitions: PairedSinkRepetition[] = [];
      const pairSink = !values['no-paired-sink'] && spec.durability === 'D0';
      let result: CellResult;
      try {
        result = await withTempDir(values.dir, '.brook-bench-sink-', (sinkDir) =>
          runCell(spec, {
            ...cellOptions,
            compareEnv,
            afterRepetition:
              peer || pairSink
                ? async (r) => {
                    if (peer) peerRepetitions.push(await runPeer(peer, spec, r));
                    if (pairSink)
                      sinkRepetitions.push(await runPairedSink(spec, sinkDir, durationMs, log, r));
                  }
                : undefined,
          }),
        );
      } finally {
        await peer?.stop();
      }
      results.push(result);
      record(writer, result, limits, nullNames.get(nullKey(spec)));
      if (result.compared && compareEnv) recordCompared(writer, result, compareEnv);
      if (peerRepetitions.length > 0) {
        const peerResult = { brook: result, peer: peerRepetitions };
        peerResults.push(peerResult);
        recordPeer(writer, peerResult, limits);
      }
      if (sinkRepetitions.length > 0) {
        const paired = { brook: result, sink: sinkRepetitions };
        pairedSinkResults.push(paired);
        recordPairedSink(writer, paired);
      }
      if (values['metrics-compare']) {
        log(`cell ${cellName(spec)} with metrics on`);
        comparisons.push(await runMetricsOnCell(spec, result, { ...cellOptions, backlog: false }, writer));
      }
    }
  } finally {
    rmSync(peerDir, { recursive: true, force: true });
  }
  function runPeer(peer: MockPeer, spec: CellSpec, repetition: number): Promise<PeerRepetition> {
    return runPeerRepetition(spec, { durationMs, log }, peer, repetition);
  }

  const clientResults: ClientCellResult[] = [];
  for (const spec of specs) {
    for (const client of clients as G2Client[]) {
      log(`cell ${cellName(spec)} with ${client}`);
      const result = await runClientCell(spec, client, {
        repetitions,
        durationMs,
        tail: false,
        backlog: false,
        parentDir: values.dir,
        cpuProfileDir: values['cpu-prof'],
        gcProfileDir: values['gc-prof'],
        brokerOverrides,
        log,
      });
      clientResults.push(result);
      recordClient(writer, result, limits, nullNames.get(nullKey(spec)));
    }
  }

  if (!values['no-limits']) {
    const last = await measureLimits({
      names: ['L_disk_async'],
      durationMs: quick ? limitDurationMs.quick : limitDurationMs.full,
      parentDir: values.dir,
      writer,
      log,
    });
    for (const [k, v] of last) limits.set(k, v);
    // R_disk at D0 divides by L_disk_async, which only now exists: written after it.
    for (const result of results) recordDiskRatio(writer, result, limits);
  }
  const elapsedSeconds = (performance.now() - started) / 1000;
  writer.write('summary', { elapsedSeconds, loadAverage: os.loadavg() });
  if (limits.size > 0) console.log(`\n${formatLimitsLine(limits)}`);
  if (results.length > 0) console.log(`\n${formatCells(results, limits, nullNames)}`);
  if (peerResults.length > 0) console.log(`\n${formatPeers(peerResults, limits)}`);
  if (pairedSinkResults.length > 0) console.log(`\n${formatPairedSinks(pairedSinkResults)}`);
  if (compareEnv) console.log(`\n${formatCompared(results, compareEnv)}`);
  console.log('');
  if (clientResults.length > 0) console.log(`${formatClients(clientResults, limits, nullNames)}\n`);
  if (comparisons.length > 0) console.log(`${formatComparisons(comparisons)}\n`);
  const backlog = formatBacklog(results);
  if (backlog) console.log(`${backlog}\n`);
  console.log(
    `run ${writer.runId} (${elapsedSeconds.toFixed(0)} s, load ${loadText()}) written to ${writer.path}`,
  );
}

/** --metrics-compare: each cell's produce throughput and broker efficiency with metrics on and off. */
function formatComparisons(comparisons: readonly MetricsComparison[]): string {
  const wire = (r: CellResult): string => {
    return formatValuesRange(r.repetitions.map((rep) => rep.wireMBPerSecond));
  };
  const rows = comparisons.map((c) => [
    c.name,
    wire(c.off),
    wire(c.on),
    ratioText(c.throughput),
    ratioText(c.cpuEfficiency),
    String(c.scrapes),
  ]);
  return formatTable(
    ['cell', 'off wire MB/s', 'on wire MB/s', 'on/off throughput', 'on/off MB per CPU-s', 'scrapes'],
    rows,
  );
}

/** Second broker over first (`--compare-env`): produce wire MB/s and broker MB per CPU-second. */
function comparedRatios(result: CellResult): { throughput: RatioSummary; cpuEfficiency: RatioSummary } {
  const second = result.compared!;
  return {
    throughput: ratioOfSummaries(
      summaryOf(second, (r) => r.wireMBPerSecond),
      summaryOf(result, (r) => r.wireMBPerSecond),
    ),
    cpuEfficiency: ratioOfSummaries(
      summaryOf(second, (r) => r.wireMBPerBrokerCpuSecond),
      summaryOf(result, (r) => r.wireMBPerBrokerCpuSecond),
    ),
  };
}

function recordCompared(writer: ResultWriter, result: CellResult, env: Record<string, string>): void {
  const name = cellName(result.spec);
  const second = result.compared!;
  writer.figure(
    `produce-compared-${name}`,
    'records/s',
    summaryOf(second, (r) => r.recordsPerSecond),
    {
      env,
      wireMBPerSecond: summaryOf(second, (r) => r.wireMBPerSecond),
      tailFetchMBPerSecond: summaryOf(second, (r) => r.tailFetchMBPerSecond),
      wireMBPerBrokerCpuSecond: summaryOf(second, (r) => r.wireMBPerBrokerCpuSecond),
      brokerPeakRssBytes: second.brokerPeakRssBytes,
      repetitions: second.repetitions,
    },
  );
  writer.write(`compared-over-first-${name}`, {
    env,
    ...comparedRatios(result),
    meaning: 'produce wire MB/s and broker MB per CPU-second, the broker with env over the one without',
  });
}

function formatCompared(results: readonly CellResult[], env: Record<string, string>): string {
  const label = Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const rows = results
    .filter((r) => r.compared !== undefined)
    .map((result) => {
      const s = (r: CellResult, f: (x: CellResult['repetitions'][number]) => number): string => {
        return formatSummaryRange(summaryOf(r, f));
      };
      const second = result.compared!;
      const ratios = comparedRatios(result);
      const loads = [...result.repetitions, ...second.repetitions].map((r) => r.loadAverage1m);
      return [
        cellName(result.spec),
        s(result, (r) => r.wireMBPerSecond),
        s(second, (r) => r.wireMBPerSecond),
        ratioText(ratios.throughput),
        s(result, (r) => r.wireMBPerBrokerCpuSecond),
        s(second, (r) => r.wireMBPerBrokerCpuSecond),
        ratioText(ratios.cpuEfficiency),
        `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
      ];
    });
  return `second broker: ${label}, repetitions alternated with the first's\n${formatTable(
    [
      'cell',
      'first wire MB/s',
      'second wire MB/s',
      'second/first',
      'first MB/CPU-s',
      'second MB/CPU-s',
      'second/first MB/CPU-s',
      'load',
    ],
    rows,
  )}`;
}

/** `--broker-override key=value` (or `--compare-env`) settings, in order (a later one wins). */
function crossProduct(
  values: Record<string, unknown>,
): Pick<CellSpec, 'recordBytes' | 'partitions' | 'acks' | 'durability'>[] {
  const list = (name: string): string[] =>
    String(values[name])
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const out: Pick<CellSpec, 'recordBytes' | 'partitions' | 'acks' | 'durability'>[] = [];
  for (const records of list('records'))
    for (const partitions of list('partitions'))
      for (const durability of list('durability'))
        for (const acks of list('acks')) {
          assert(durability === 'D0' || durability === 'D1', `durability is D0 or D1, got ${durability}`);
          assert(acks === '1' || acks === 'all' || acks === '-1', `acks is 1 or all, got ${acks}`);
          out.push({
            recordBytes: positiveNumber('--records', records),
            partitions: positiveNumber('--partitions', partitions),
            acks: acks === '1' ? 1 : -1,
            durability,
          });
        }
  return out;
}

function pick(spec: CellSpec) {
  const { recordBytes, partitions, batchBytes, partitionsPerRequest, inFlight, connections } = spec;
  return { recordBytes, partitions, batchBytes, partitionsPerRequest, inFlight, connections };
}

/** The L_null a cell divides by; compressed cells have none (the null broker's load is uncompressed). */
function nullKey(spec: CellSpec): string {
  const codec = spec.compression ? `-${spec.compression}` : '';
  return `${spec.recordBytes}B-${spec.partitions}p${codec}`;
}

/** One L_null per (record size, partitions): acks and durability mean nothing to the null broker. */
function uniqueNullWorkloads(specs: readonly CellSpec[]): { spec: CellSpec; name: string }[] {
  const seen = new Map<string, CellSpec>();
  for (const spec of specs) if (!spec.compression && !seen.has(nullKey(spec))) seen.set(nullKey(spec), spec);
  return [...seen].map(([key, spec]) => ({ spec, name: `L_null-${key}` }));
}

function summaryOf(result: CellResult, figure: (r: CellResult['repetitions'][number]) => number): Summary {
  return summarize(result.repetitions.map(figure));
}

/** Produce + tail fetch bytes per second, what R_net divides. */
function netMBPerSecond(r: CellResult['repetitions'][number]): number {
  return r.wireMBPerSecond + r.tailFetchMBPerSecond;
}

function record(
  writer: ResultWriter,
  result: CellResult,
  limits: LimitSet,
  nullName: string | undefined,
): void {
  const name = cellName(result.spec);
  const spec = { ...result.spec, acks: result.spec.acks === -1 ? 'all' : 1 };
  writer.figure(
    `produce-${name}`,
    'records/s',
    summaryOf(result, (r) => r.recordsPerSecond),
    {
      spec,
      payloadMiBPerSecond: summaryOf(result, (r) => r.payloadMiBPerSecond),
      wireMBPerSecond: summaryOf(result, (r) => r.wireMBPerSecond),
      tailFetchMBPerSecond: summaryOf(result, (r) => r.tailFetchMBPerSecond),
      diskWriteMBPerSecond: summaryOf(result, (r) => r.diskWriteMBPerSecond),
      brokerPeakRssBytes: result.brokerPeakRssBytes,
      rssSeriesMiB: result.rssSeriesMiB,
      repetitions: result.repetitions,
    },
  );
  writer.latency(`produce-latency-${name}`, result.produceLatency.summary(), { from: 'intended send time' });
  if (result.endToEndLatency.count > 0) {
    writer.latency(`e2e-latency-${name}`, result.endToEndLatency.summary(), {
      from: 'intended send time to fetch receipt',
    });
  }
  if (result.backlogMBPerSecond.length > 0) {
    writer.figure(`fetch-backlog-${name}`, 'MB/s', summarize(result.backlogMBPerSecond), {
      recordsPerSecond: summarize(result.backlogRecordsPerSecond),
    });
  }
  for (const [ratioName, limit] of [
    ['R_net', 'L_net'],
    ['R_relay', 'L_relay'],
  ] as const) {
    const ratio = netRatio(result, limits, limit);
    if (ratio) writer.write(`${ratioName}-${name}`, { ...ratio, limit });
  }
  const sinkRatio = produceOverSink(
    summaryOf(result, (r) => r.wireMBPerSecond),
    limits,
  );
  if (sinkRatio)
    writer.write(`R_sink-${name}`, { ...sinkRatio, limit: 'L_sink', measured: 'produce wire MB/s' });
  const nullLimit = nullName === undefined ? undefined : limits.get(nullName);
  if (nullLimit) {
    writer.write(`R_null-${name}`, {
      ...ratioOfSummaries(
        summaryOf(result, (r) => r.recordsPerSecond),
        nullLimit.summary,
      ),
      limit: nullName,
    });
  }
}

/** Produce + tail fetch over L_net (R_net) or over L_relay (R_relay); undefined when the limit was not measured. */
function netRatio(
  result: CellResult,
  limits: LimitSet,
  limit: 'L_net' | 'L_relay',
): RatioSummary | undefined {
  const measured = limits.get(limit);
  return measured && ratioOfSummaries(summaryOf(result, netMBPerSecond), measured.summary);
}

/** Produce wire MB/s over L_sink (receive and append, no protocol); undefined when L_sink was not measured. */
function produceOverSink(produce: Summary, limits: LimitSet): RatioSummary | undefined {
  const sink = limits.get('L_sink');
  return sink && ratioOfSummaries(produce, sink.summary);
}

/** A D0 cell's Brook result and the C mock peer's repetitions, alternated with Brook's. */
interface PeerCellResult {
  brook: CellResult;
  peer: PeerRepetition[];
}

function recordPeer(writer: ResultWriter, result: PeerCellResult, limits: LimitSet): void {
  const name = cellName(result.brook.spec);
  const peerWire = summarize(result.peer.map((r) => r.wireMBPerSecond));
  writer.figure(`peer-${name}`, 'MB/s', peerWire, {
    peer: 'librdkafka mock cluster (C, in memory), Produce v7, no tail consumer',
    recordsPerSecond: summarize(result.peer.map((r) => r.recordsPerSecond)),
    wireMBPerPeerCpuSecond: summarize(result.peer.map((r) => r.wireMBPerPeerCpuSecond)),
    repetitions: result.peer,
  });
  writer.write(`brook-over-peer-${name}`, {
    throughput: ratioOfSummaries(
      summaryOf(result.brook, (r) => r.wireMBPerSecond),
      peerWire,
    ),
    cpuEfficiency: ratioOfSummaries(
      summaryOf(result.brook, (r) => r.wireMBPerBrokerCpuSecond),
      summarize(result.peer.map((r) => r.wireMBPerPeerCpuSecond)),
    ),
    peerOverSink: produceOverSink(peerWire, limits),
  });
}

function formatPeers(results: readonly PeerCellResult[], limits: LimitSet): string {
  const rows = results.map(({ brook, peer }) => {
    const peerWire = summarize(peer.map((r) => r.wireMBPerSecond));
    const loads = [...brook.repetitions.map((r) => r.loadAverage1m), ...peer.map((r) => r.loadAverage1m)];
    return [
      cellName(brook.spec),
      formatValuesRange(brook.repetitions.map((r) => r.wireMBPerSecond)),
      formatValuesRange(peer.map((r) => r.wireMBPerSecond)),
      ratioText(
        ratioOfSummaries(
          summaryOf(brook, (r) => r.wireMBPerSecond),
          peerWire,
        ),
      ),
      formatValuesRange(brook.repetitions.map((r) => r.wireMBPerBrokerCpuSecond)),
      formatValuesRange(peer.map((r) => r.wireMBPerPeerCpuSecond)),
      ratioText(
        produceOverSink(
          summaryOf(brook, (r) => r.wireMBPerSecond),
          limits,
        ),
      ),
      ratioText(produceOverSink(peerWire, limits)),
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    ];
  });
  return formatTable(
    [
      'cell (C mock peer alternated)',
      'Brook wire MB/s',
      'peer wire MB/s',
      'Brook/peer',
      'Brook MB/CPU-s',
      'peer MB/CPU-s',
      'Brook/L_sink',
      'peer/L_sink',
      'load',
    ],
    rows,
  );
}

function diskLimitName(result: CellResult): string {
  return result.spec.durability === 'D1' ? 'L_disk_sync' : 'L_disk_async';
}

function diskRatio(result: CellResult, limits: LimitSet): RatioSummary | undefined {
  const limit = limits.get(diskLimitName(result));
  if (!limit) return undefined;
  return ratioOfSummaries(
    summaryOf(result, (r) => r.diskWriteMBPerSecond),
    limit.summary,
  );
}

function recordDiskRatio(writer: ResultWriter, result: CellResult, limits: LimitSet): void {
  const ratio = diskRatio(result, limits);
  if (ratio) {
    writer.write(`R_disk-${cellName(result.spec)}`, {
      ...ratio,
      limit: diskLimitName(result),
      measured: 'broker write_bytes (/proc/PID/io) per second of the window',
    });
  }
}

function ratioText(ratio: RatioSummary | undefined): string {
  return ratio === undefined
    ? '-'
    : `${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)})`;
}

function formatLimitsLine(limits: LimitSet): string {
  const rows = [...limits.values()].map((l) => [l.name, formatSummaryRange(l.summary), l.unit, l.note]);
  const table = formatTable(['limit', 'median (range)', 'unit', 'notes'], rows);
  const ceiling = relayCeiling(limits);
  return ceiling === undefined
    ? table
    : `${table}\nL_relay / L_net (the highest R_net a broker could reach here): ${ratioText(ceiling)}`;
}

/** L_relay over L_net: what R_net would read for a broker that cost nothing beyond its data path. */
function relayCeiling(limits: LimitSet): RatioSummary | undefined {
  const net = limits.get('L_net');
  const relay = limits.get('L_relay');
  return net && relay ? ratioOfSummaries(relay.summary, net.summary) : undefined;
}

function formatCells(
  results: readonly CellResult[],
  limits: LimitSet,
  nullNames: Map<string, string>,
): string {
  const rows = results.map((result) => {
    const s = (f: (r: CellResult['repetitions'][number]) => number): string => {
      return formatSummaryRange(summaryOf(result, f));
    };
    const latency = result.produceLatency.summary();
    const e2e = result.endToEndLatency.count > 0 ? result.endToEndLatency.summary() : undefined;
    const ms = (us: number): string => formatFigure(us / 1000);
    const nullName = nullNames.get(`${result.spec.recordBytes}B-${result.spec.partitions}p`);
    const nullLimit = nullName === undefined ? undefined : limits.get(nullName);
    const loads = result.repetitions.map((r) => r.loadAverage1m);
    return [
      cellName(result.spec),
      s((r) => r.recordsPerSecond),
      s((r) => r.payloadMiBPerSecond),
      s((r) => r.wireMBPerSecond),
      s((r) => r.tailFetchMBPerSecond),
      `${ms(latency.p50)}/${ms(latency.p99)}/${ms(latency.p999)}`,
      e2e ? `${ms(e2e.p50)}/${ms(e2e.p99)}` : '-',
      `${formatFigure(result.brokerPeakRssBytes / 1048576)} (${result.repetitions.map((r) => formatFigure(r.brokerRssBytesAfter / 1048576)).join('/')})`,
      s((r) => r.wireMBPerBrokerCpuSecond),
      s((r) => r.brokerEventLoopDelayP99Ms),
      ratioText(netRatio(result, limits, 'L_net')),
      ratioText(netRatio(result, limits, 'L_relay')),
      ratioText(
        produceOverSink(
          summaryOf(result, (r) => r.wireMBPerSecond),
          limits,
        ),
      ),
      ratioText(diskRatio(result, limits)),
      ratioText(
        nullLimit
          ? ratioOfSummaries(
              summaryOf(result, (r) => r.recordsPerSecond),
              nullLimit.summary,
            )
          : undefined,
      ),
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    ];
  });
  return formatTable(
    [
      'cell',
      'records/s',
      'payload MiB/s',
      'wire MB/s',
      'tail fetch MB/s',
      'p50/p99/p99.9 ms',
      'e2e p50/p99 ms',
      'RSS peak (after each) MiB',
      'MB/CPU-s',
      'loop p99 ms',
      'R_net',
      'R_relay',
      'R_sink',
      'R_disk',
      'R_null',
      'load',
    ],
    rows,
  );
}

function recordClient(
  writer: ResultWriter,
  result: ClientCellResult,
  limits: LimitSet,
  nullName: string | undefined,
): void {
  const name = `g2-${result.client}-${cellName(result.spec)}`;
  const records = summarize(result.repetitions.map((r) => r.recordsPerSecond));
  writer.figure(name, 'records/s', records, {
    spec: { ...result.spec, acks: result.spec.acks === -1 ? 'all' : 1 },
    client: result.client,
    payloadMiBPerSecond: summarize(result.repetitions.map((r) => r.payloadMiBPerSecond)),
    brokerPeakRssBytes: result.brokerPeakRssBytes,
    repetitions: result.repetitions,
  });
  if (result.latency.count > 0)
    writer.latency(`${name}-latency`, result.latency.summary(), { from: 'send() issued' });
  const nullLimit = nullName === undefined ? undefined : limits.get(nullName);
  if (nullLimit)
    writer.write(`R_null-${name}`, { ...ratioOfSummaries(records, nullLimit.summary), limit: nullName });
}

function formatClients(
  results: readonly ClientCellResult[],
  limits: LimitSet,
  nullNames: Map<string, string>,
): string {
  const rows = results.map((result) => {
    const records = summarize(result.repetitions.map((r) => r.recordsPerSecond));
    const payload = summarize(result.repetitions.map((r) => r.payloadMiBPerSecond));
    const latency = result.latency.count > 0 ? result.latency.summary() : undefined;
    const ms = (us: number): string => formatFigure(us / 1000);
    const nullName = nullNames.get(`${result.spec.recordBytes}B-${result.spec.partitions}p`);
    const nullLimit = nullName === undefined ? undefined : limits.get(nullName);
    const loads = result.repetitions.map((r) => r.loadAverage1m);
    return [
      result.client,
      cellName(result.spec),
      formatSummaryRange(records),
      formatSummaryRange(payload),
      latency ? `${ms(latency.p50)}/${ms(latency.p99)}/${ms(latency.p999)}` : '-',
      formatFigure(result.brokerPeakRssBytes / 1048576),
      ratioText(nullLimit ? ratioOfSummaries(records, nullLimit.summary) : undefined),
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    ];
  });
  return formatTable(
    ['G2 client', 'cell', 'records/s', 'payload MiB/s', 'send p50/p99/p99.9 ms', 'RSS MiB', 'R_null', 'load'],
    rows,
  );
}

function formatBacklog(results: readonly CellResult[]): string {
  const rows = results
    .filter((r) => r.backlogMBPerSecond.length > 0)
    .map((r) => {
      const mb = summarize(r.backlogMBPerSecond);
      const records = summarize(r.backlogRecordsPerSecond);
      return [cellName(r.spec), formatSummaryRange(mb), formatSummaryRange(records)];
    });
  return rows.length === 0 ? '' : formatTable(['backlog read', 'MB/s', 'records/s'], rows);
}

function loadText(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}
