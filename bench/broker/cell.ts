// One cell of the broker matrix: a fresh broker (fresh data directory) for one workload (record size,
// partitions, acks, durability), `repetitions` G1 produce runs on fresh topics with a tail consumer beside each,
// then, when asked, a backlog read of each repetition's topic. A fresh broker per cell makes its peak RSS and
// CPU the cell's own; fresh topics per repetition keep repetitions apart while the broker stays warm.
import os from 'node:os';
import { join } from 'node:path';
import { assert } from '../../src/common/assert.js';
import { type CompressionType, compressionName } from '../../src/protocol/compression/compression-type.js';
import { monitorEventLoop } from '../harness/event-loop-delay.js';
import { Histogram } from '../harness/histogram.js';
import { readProcessCpu, readProcessMemory, watchProcess } from '../harness/process-usage.js';
import { withTempDir } from '../harness/temp-dir.js';
import { warmupMsFor } from '../limits/null-broker.js';
import { type BrokerProcess, readWriteBytes, startBroker } from './broker-process.js';
import { checkApiVersions, createTopic, waitForTopic } from './broker-setup.js';
import { FetchConsumer } from './fetch-consumer.js';
import { runG1 } from './g1-producer.js';
import { type G2Client, runG2 } from './g2-clients.js';
import type { MockPeer } from './mock-peer.js';
import { catchUpTimeoutMs, consumerMaxWaitMs, TailConsumer } from './tail-latency.js';
import { WireConnection } from './wire-connection.js';

const rssSampleIntervalMs = 500;
/** The highest Produce version librdkafka's mock cluster serves. */
const mockPeerProduceVersion = 7;

export interface CellSpec {
  recordBytes: number;
  partitions: number;
  acks: 1 | -1;
  durability: 'D0' | 'D1';
  batchBytes: number;
  partitionsPerRequest: number;
  inFlight: number;
  connections: number;
  /** Fixed rate (requests/s over all connections); unthrottled when absent. */
  requestsPerSecond?: number;
  /** G1's codec id (CompressionType) for every batch; none when absent. G2's clients do not compress. */
  compression?: number;
}

export interface CellOptions {
  repetitions: number;
  durationMs: number;
  /** Run a tail consumer beside each produce run. */
  tail: boolean;
  /** Read each repetition's topic back from the start after the runs. */
  backlog: boolean;
  parentDir: string;
  cpuProfileDir?: string;
  /** `--gc-prof`: each broker's GC trace and promoted-allocation profile go to this folder. */
  gcProfileDir?: string;
  /** Broker settings for every broker of the run (--broker-override), before the cell's own (D1). */
  brokerOverrides?: Readonly<Record<string, string>>;
  log: (message: string) => void;
  /** Runs after each of Brook's repetitions (the C mock peer's, so that the two alternate). */
  afterRepetition?: (repetition: number) => Promise<void>;
  /**
   * `--compare-env`: a second broker of the same build, started with these environment variables beside the
   * first, runs the same repetitions alternated with the first's (A, B, A, B, ...): `CellResult.compared`.
   */
  compareEnv?: Readonly<Record<string, string>>;
}

/** What a cell's broker is started with: the run's --broker-override settings, then D1's group commit. */
function brokerOverrides(spec: CellSpec, options: CellOptions): Record<string, string | boolean> {
  return {
    ...options.brokerOverrides,
    ...(spec.durability === 'D1' ? { 'brook.log.flush.group.commit.enable': true } : {}),
  };
}

/** One produce repetition's figures (per second over the measured window). */
export interface ProduceRepetition {
  recordsPerSecond: number;
  payloadMiBPerSecond: number;
  wireMBPerSecond: number;
  batchMBPerSecond: number;
  tailFetchMBPerSecond: number;
  /** Bytes the broker caused to be written to storage, per second of the window (0 if /proc hides it). */
  diskWriteMBPerSecond: number;
  brokerCpuSeconds: number;
  /**
   * The part of brokerCpuSeconds spent in the kernel: socket reads, copies into the page cache, and on virtual
   * machines whose freed memory goes back to the host, faulting fresh pages in (bench/README.md, "Cold memory").
   */
  brokerSystemCpuSeconds: number;
  /** Produce wire MB per second of broker CPU (user + system) in the window. */
  wireMBPerBrokerCpuSecond: number;
  generatorCpuSeconds: number;
  generatorEventLoopDelayP99Ms: number;
  /** The broker's event-loop delay over the window (loop-probe.ts); -1 if the probe did not answer. */
  brokerEventLoopDelayP99Ms: number;
  brokerEventLoopDelayMaxMs: number;
  recordsPerBatch: number;
  recordsSent: number;
  recordsAcknowledged: number;
  offsetsContiguous: boolean | null;
  offsetsIncreasing: boolean;
  produceErrors: Record<string, number>;
  fetchErrors: Record<string, number>;
  brokerRssBytesAfter: number;
  loadAverage1m: number;
  /** This repetition's produce latency p99 (intended send to acknowledgement), so runs can be paired. */
  produceP99Ms: number;
  /** This repetition's end-to-end p99 (intended send to the tail consumer's receipt); -1 without one. */
  endToEndP99Ms: number;
}

export interface CellResult {
  spec: CellSpec;
  repetitions: ProduceRepetition[];
  produceLatency: Histogram;
  endToEndLatency: Histogram;
  backlogMBPerSecond: number[];
  backlogRecordsPerSecond: number[];
  brokerPeakRssBytes: number;
  /** Broker RSS every half second over the whole cell, in MiB: flat under sustained load, or not. */
  rssSeriesMiB: number[];
  /** With `compareEnv`: the second broker's repetitions, alternated with these (no backlog reads). */
  compared?: CellResult;
}

export function cellName(spec: CellSpec): string {
  const rate = spec.requestsPerSecond === undefined ? '' : `-${spec.requestsPerSecond}rps`;
  const codec = spec.compression ? `-${compressionName(spec.compression as CompressionType)}` : '';
  const acks = spec.acks === -1 ? 'all' : '1';
  return `${spec.recordBytes}B-${spec.partitions}p-acks${acks}-${spec.durability}${rate}${codec}`;
}

/** A broker of the cell with what its repetitions accumulate. */
interface CellBroker {
  broker: BrokerProcess;
  setup: WireConnection;
  result: CellResult;
  usage: ReturnType<typeof watchProcess>;
  label: string;
}

function emptyResult(spec: CellSpec, rssSeriesMiB: number[]): CellResult {
  return {
    spec,
    repetitions: [],
    produceLatency: new Histogram('us'),
    endToEndLatency: new Histogram('us'),
    backlogMBPerSecond: [],
    backlogRecordsPerSecond: [],
    brokerPeakRssBytes: 0,
    rssSeriesMiB,
  };
}

/** One repetition on `cell`'s broker: a fresh topic, G1 with the tail consumer; its end offsets. */
async function repetitionOn(
  cell: CellBroker,
  spec: CellSpec,
  options: CellOptions,
  repetition: number,
): Promise<{ topic: string; endOffsets: number[] }> {
  const topic = `bench-${cellName(spec).toLowerCase()}-${repetition}`;
  await createTopic(cell.setup, topic, spec.partitions);
  await waitForTopic(cell.setup, topic, spec.partitions);
  const run = await produceOnce(spec, options, cell.broker, topic, cell.result);
  cell.result.repetitions.push(run.figures);
  options.log(
    `  ${cellName(spec)}${cell.label} #${repetition + 1}: ${Math.round(run.figures.recordsPerSecond)} records/s, ` +
      `${run.figures.wireMBPerSecond.toFixed(1)} MB/s wire, tail ${run.figures.tailFetchMBPerSecond.toFixed(1)} MB/s, ` +
      `${run.figures.wireMBPerBrokerCpuSecond.toFixed(0)} MB per CPU-second, produce/e2e p99 ` +
      `${p99Text(run.figures.produceP99Ms)}/${p99Text(run.figures.endToEndP99Ms)} ms (load ${run.figures.loadAverage1m.toFixed(1)})`,
  );
  return { topic, endOffsets: run.endOffsets };
}

/** A repetition's p99 in ms, or '-' when it has none (-1: no tail consumer). */
function p99Text(ms: number): string {
  return ms < 0 ? '-' : ms.toFixed(2);
}

export async function runCell(spec: CellSpec, options: CellOptions): Promise<CellResult> {
  return withTempDir(options.parentDir, '.brook-bench-broker-', async (dataDir) => {
    // The broker's log.dirs is a folder of the temporary directory, so the probe's file stays out of it.
    const broker = await startBroker({
      dataDir: join(dataDir, 'logs'),
      overrides: brokerOverrides(spec, options),
      cpuProfileDir: options.cpuProfileDir,
      gcProfileDir: options.gcProfileDir,
      loopProbeFile: join(dataDir, 'loop-probe.json'),
    });
    const usage = watchProcess(broker.pid);
    const rssSeriesMiB: number[] = [];
    const rssTimer = setInterval(() => {
      const memory = readProcessMemory(broker.pid);
      if (memory) rssSeriesMiB.push(Math.round((memory.rssBytes / 1048576) * 10) / 10);
    }, rssSampleIntervalMs);
    let second: CellBroker | undefined;
    try {
      const setup = await WireConnection.connect('127.0.0.1', broker.port);
      const topics: string[] = [];
      const endOffsets: number[][] = [];
      const result = emptyResult(spec, rssSeriesMiB);
      const first: CellBroker = { broker, setup, result, usage, label: '' };
      try {
        await checkApiVersions(setup, ['apiVersions', 'metadata', 'createTopics', 'produce', 'fetch']);
        if (options.compareEnv !== undefined) second = await startSecond(spec, options, dataDir);
        for (let repetition = 0; repetition < options.repetitions; repetition++) {
          const run = await repetitionOn(first, spec, options, repetition);
          topics.push(run.topic);
          endOffsets.push(run.endOffsets);
          if (second) await repetitionOn(second, spec, options, repetition);
          await options.afterRepetition?.(repetition);
        }
        if (second) {
          second.result.brokerPeakRssBytes = second.usage.stop().peakRssBytes;
          result.compared = second.result;
        }
      } finally {
        setup.close();
        second?.setup.close();
      }
      if (options.backlog) {
        for (let i = 0; i < topics.length; i++) {
          const read = await readBacklog(spec, broker.port, topics[i]!, endOffsets[i]!);
          result.backlogMBPerSecond.push(read.mbPerSecond);
          result.backlogRecordsPerSecond.push(read.recordsPerSecond);
          options.log(`  ${cellName(spec)} backlog #${i + 1}: ${read.mbPerSecond.toFixed(1)} MB/s`);
        }
      }
      result.brokerPeakRssBytes = usage.stop().peakRssBytes;
      return result;
    } catch (error) {
      throw new Error(
        `${cellName(spec)}: ${(error as Error).message}\nbroker log tail:\n${broker.log().slice(-2000)}`,
      );
    } finally {
      clearInterval(rssTimer);
      usage.stop();
      second?.usage.stop();
      await second?.broker.stop();
      await broker.stop();
    }
  });
}

/** The `--compare-env` broker: same build and settings, the given environment, data in its own folder. */
async function startSecond(spec: CellSpec, options: CellOptions, dataDir: string): Promise<CellBroker> {
  const env = options.compareEnv!;
  const broker = await startBroker({
    dataDir: join(dataDir, 'logs-compared'),
    overrides: brokerOverrides(spec, options),
    loopProbeFile: join(dataDir, 'loop-probe-compared.json'),
    gcProfileDir: options.gcProfileDir,
    env,
  });
  try {
    const setup = await WireConnection.connect('127.0.0.1', broker.port);
    const label = ` [${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}]`;
    return { broker, setup, result: emptyResult(spec, []), usage: watchProcess(broker.pid), label };
  } catch (error) {
    await broker.stop();
    throw error;
  }
}

async function produceOnce(
  spec: CellSpec,
  options: CellOptions,
  broker: BrokerProcess,
  topic: string,
  cell: CellResult,
): Promise<{ figures: ProduceRepetition; endOffsets: number[] }> {
  const { port, pid } = broker;
  // Per repetition, merged into the cell's after it: repetitions of two servers alternated can then be paired.
  const endToEnd = new Histogram('us');
  const consumer = options.tail
    ? await TailConsumer.connect({
        host: '127.0.0.1',
        port,
        topic,
        partitions: spec.partitions,
        latency: endToEnd,
        endToEnd: spec.connections === 1,
      })
    : undefined;
  const edges = {
    cpu: [0, 0],
    systemCpu: [0, 0],
    writeBytes: [0, 0],
    fetched: [0, 0],
    generatorCpu: process.cpuUsage(),
  };
  const loop = monitorEventLoop();
  try {
    consumer?.start();
    const run = await runG1({
      ...spec,
      host: '127.0.0.1',
      port,
      topic,
      warmupMs: warmupMsFor(options.durationMs),
      durationMs: options.durationMs,
      onBatchSent: consumer?.onBatchSent,
      onWindow: (edge) => {
        broker.probeLoop();
        const i = edge === 'start' ? 0 : 1;
        consumer?.window(edge, performance.now());
        edges.generatorCpu = edge === 'start' ? process.cpuUsage() : process.cpuUsage(edges.generatorCpu);
        const cpu = readProcessCpu(pid);
        edges.cpu[i] = cpu === undefined ? 0 : cpu.userSeconds + cpu.systemSeconds;
        edges.systemCpu[i] = cpu?.systemSeconds ?? 0;
        edges.writeBytes[i] = readWriteBytes(pid) ?? 0;
        edges.fetched[i] = consumer?.batchBytes ?? 0;
      },
    });
    const eventLoop = loop.stop();
    const brokerLoop = await broker.readLoopProbe();
    await consumer?.finish(run.endOffsets, run.recordsAcknowledged);
    cell.produceLatency.merge(run.latency);
    cell.endToEndLatency.merge(endToEnd);
    const seconds = run.seconds;
    const figures: ProduceRepetition = {
      recordsPerSecond: run.records / seconds,
      payloadMiBPerSecond: run.payloadBytes / 1024 / 1024 / seconds,
      wireMBPerSecond: run.wireBytes / 1e6 / seconds,
      batchMBPerSecond: run.batchBytes / 1e6 / seconds,
      tailFetchMBPerSecond: (edges.fetched[1]! - edges.fetched[0]!) / 1e6 / seconds,
      diskWriteMBPerSecond: (edges.writeBytes[1]! - edges.writeBytes[0]!) / 1e6 / seconds,
      brokerCpuSeconds: edges.cpu[1]! - edges.cpu[0]!,
      brokerSystemCpuSeconds: edges.systemCpu[1]! - edges.systemCpu[0]!,
      // CPU time comes in 10 ms ticks; the floor keeps a tiny window from dividing by zero.
      wireMBPerBrokerCpuSecond: run.wireBytes / 1e6 / Math.max(edges.cpu[1]! - edges.cpu[0]!, 0.01),
      generatorCpuSeconds: (edges.generatorCpu.user + edges.generatorCpu.system) / 1e6,
      generatorEventLoopDelayP99Ms: eventLoop.p99,
      brokerEventLoopDelayP99Ms: brokerLoop?.p99Ms ?? -1,
      brokerEventLoopDelayMaxMs: brokerLoop?.maxMs ?? -1,
      recordsPerBatch: run.recordsPerBatch,
      recordsSent: run.recordsSent,
      recordsAcknowledged: run.recordsAcknowledged,
      offsetsContiguous: run.offsetsContiguous,
      offsetsIncreasing: run.offsetsIncreasing,
      produceErrors: run.errors,
      fetchErrors: consumer?.errors ?? {},
      brokerRssBytesAfter: readProcessMemory(pid)?.rssBytes ?? 0,
      loadAverage1m: os.loadavg()[0]!,
      produceP99Ms: run.latency.count > 0 ? run.latency.summary().p99 / 1000 : -1,
      endToEndP99Ms: endToEnd.count > 0 ? endToEnd.summary().p99 / 1000 : -1,
    };
    return { figures, endOffsets: run.endOffsets };
  } finally {
    consumer?.close();
  }
}

async function readBacklog(
  spec: CellSpec,
  port: number,
  topic: string,
  endOffsets: number[],
): Promise<{ mbPerSecond: number; recordsPerSecond: number }> {
  const consumer = await FetchConsumer.connect({
    host: '127.0.0.1',
    port,
    topic,
    partitions: spec.partitions,
    maxWaitMs: consumerMaxWaitMs,
  });
  try {
    const start = performance.now();
    await consumer.readUntil(endOffsets, catchUpTimeoutMs);
    const seconds = (performance.now() - start) / 1000;
    assert(seconds > 0 && consumer.records > 0, `nothing to read back in ${topic}`);
    return { mbPerSecond: consumer.batchBytes / 1e6 / seconds, recordsPerSecond: consumer.records / seconds };
  } finally {
    consumer.close();
  }
}

/** One G2 repetition's figures. */
export interface ClientRepetition {
  recordsPerSecond: number;
  payloadMiBPerSecond: number;
  brokerCpuSeconds: number;
  errors: number;
  loadAverage1m: number;
}

export interface ClientCellResult {
  spec: CellSpec;
  client: G2Client;
  repetitions: ClientRepetition[];
  latency: Histogram;
  brokerPeakRssBytes: number;
}

/** A cell driven by a real client (G2): fresh broker, `repetitions` runs on fresh topics, no consumer. */
export async function runClientCell(
  spec: CellSpec,
  client: G2Client,
  options: CellOptions,
): Promise<ClientCellResult> {
  return withTempDir(options.parentDir, '.brook-bench-broker-', async (dataDir) => {
    const broker = await startBroker({
      dataDir,
      overrides: brokerOverrides(spec, options),
      cpuProfileDir: options.cpuProfileDir,
      gcProfileDir: options.gcProfileDir,
    });
    const usage = watchProcess(broker.pid);
    const result: ClientCellResult = {
      spec,
      client,
      repetitions: [],
      latency: new Histogram('us'),
      brokerPeakRssBytes: 0,
    };
    try {
      const setup = await WireConnection.connect('127.0.0.1', broker.port);
      try {
        for (let repetition = 0; repetition < options.repetitions; repetition++) {
          const topic = `g2-${client}-${cellName(spec).toLowerCase()}-${repetition}`;
          await createTopic(setup, topic, spec.partitions);
          await waitForTopic(setup, topic, spec.partitions);
          const cpuBefore = usage.current().cpuSeconds;
          const run = await runG2({
            client,
            host: '127.0.0.1',
            port: broker.port,
            topic,
            partitions: spec.partitions,
            recordBytes: spec.recordBytes,
            batchBytes: spec.batchBytes,
            sendsInFlight: spec.inFlight,
            acks: spec.acks,
            warmupMs: warmupMsFor(options.durationMs),
            durationMs: options.durationMs,
          });
          result.latency.merge(run.latency);
          const figures: ClientRepetition = {
            recordsPerSecond: run.records / run.seconds,
            payloadMiBPerSecond: run.payloadBytes / 1048576 / run.seconds,
            // With a warm-up the broker's CPU covers it too; a rough figure, for comparison between clients.
            brokerCpuSeconds: usage.current().cpuSeconds - cpuBefore,
            errors: run.errors,
            loadAverage1m: os.loadavg()[0]!,
          };
          result.repetitions.push(figures);
          options.log(
            `  ${client} ${cellName(spec)} #${repetition + 1}: ${Math.round(figures.recordsPerSecond)} records/s ` +
              `(load ${figures.loadAverage1m.toFixed(1)})`,
          );
        }
      } finally {
        setup.close();
      }
      result.brokerPeakRssBytes = usage.stop().peakRssBytes;
      return result;
    } catch (error) {
      throw new Error(
        `${client} ${cellName(spec)}: ${(error as Error).message}\nbroker log tail:\n${broker.log().slice(-2000)}`,
      );
    } finally {
      usage.stop();
      await broker.stop();
    }
  });
}

/** One repetition of G1 against the C mock peer: produce only, its CPU from /proc. */
export interface PeerRepetition {
  recordsPerSecond: number;
  wireMBPerSecond: number;
  peerCpuSeconds: number;
  wireMBPerPeerCpuSecond: number;
  latencyP99Ms: number;
  loadAverage1m: number;
}

/** The same G1 load as Brook's repetition, on a fresh topic of the peer, with Produce v7 and no tail consumer. */
export async function runPeerRepetition(
  spec: CellSpec,
  options: Pick<CellOptions, 'durationMs' | 'log'>,
  peer: MockPeer,
  repetition: number,
): Promise<PeerRepetition> {
  const topic = `peer-${cellName(spec).toLowerCase()}-${repetition}`;
  await peer.createTopic(topic, spec.partitions);
  const cpu = [0, 0];
  const run = await runG1({
    ...spec,
    host: '127.0.0.1',
    port: peer.port,
    topic,
    produceVersion: mockPeerProduceVersion,
    warmupMs: warmupMsFor(options.durationMs),
    durationMs: options.durationMs,
    onWindow: (edge) => {
      const usage = readProcessCpu(peer.pid);
      cpu[edge === 'start' ? 0 : 1] = usage === undefined ? 0 : usage.userSeconds + usage.systemSeconds;
    },
  });
  assert(
    run.recordsAcknowledged === run.recordsSent && Object.keys(run.errors).length === 0,
    `the mock peer acknowledged ${run.recordsAcknowledged} of ${run.recordsSent} records (${JSON.stringify(run.errors)})`,
  );
  const peerCpuSeconds = cpu[1]! - cpu[0]!;
  const figures: PeerRepetition = {
    recordsPerSecond: run.records / run.seconds,
    wireMBPerSecond: run.wireBytes / 1e6 / run.seconds,
    peerCpuSeconds,
    wireMBPerPeerCpuSecond: run.wireBytes / 1e6 / Math.max(peerCpuSeconds, 0.01),
    latencyP99Ms: run.latency.summary().p99 / 1000,
    loadAverage1m: os.loadavg()[0]!,
  };
  options.log(
    `  ${cellName(spec)} C mock peer #${repetition + 1}: ${figures.wireMBPerSecond.toFixed(1)} MB/s wire, ` +
      `${figures.wireMBPerPeerCpuSecond.toFixed(0)} MB per CPU-second (load ${figures.loadAverage1m.toFixed(1)})`,
  );
  return figures;
}
