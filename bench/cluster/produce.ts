// Replicated produce against single-node produce, with the same generator: G1 of the broker benchmark
// (../broker/g1-producer.ts, pre-encoded ~128 KiB batches, 5 requests in flight, latency from the intended send
// time). A replicated cell writes to a topic of replication factor 3 whose partitions are all led by broker 0
// of the cluster (followers 1 and 2, min.insync.replicas=2), so that one generator connection drives one leader
// as it does in the single-node cell; a single-node cell writes to a topic of replication factor 1 on a
// standalone broker (no ZooKeeper) with the same configs. Every record sent must be acknowledged at contiguous
// offsets (G1's own check), so a cell that loses or duplicates writes fails.
//
// Latency mode (`requestsPerSecond` with a tail consumer): G1 sends at a fixed rate (latency from each
// request's place in the schedule) and a tail consumer (../broker/tail-latency.ts) reads the topic from the
// cell's broker (the leader of a replicated topic, which serves only up to the high watermark), giving
// end-to-end latency from intended send time to fetch receipt; the consumer must read every record acknowledged.
import os from 'node:os';
import { assert } from '../../src/common/assert.js';
import { runG1 } from '../broker/g1-producer.js';
import { TailConsumer } from '../broker/tail-latency.js';
import type { Histogram } from '../harness/histogram.js';
import { readProcessCpu } from '../harness/process-usage.js';
import type { ProducerWindow } from '../limits/acked-send.js';
import { warmupMsFor } from '../limits/null-broker.js';

export const batchBytes = 128 * 1024;
export const inFlight = 5;

/** Partitions one produce request carries a batch for (G1's groups of consecutive partitions). */
export function partitionsPerRequest(partitions: number): number {
  return Math.min(partitions, 4);
}

export interface Workload {
  recordBytes: number;
  partitions: number;
}

export interface ProduceCell extends Workload {
  replicationFactor: 1 | 3;
  acks: 1 | -1;
  /** Fixed rate in produce requests per second; unthrottled when absent. */
  requestsPerSecond?: number;
}

/** What the generator keeps in flight for a cell: its requests' size and how many (L_replicate_acked's window). */
export function windowOf(w: Workload): ProducerWindow {
  return { requestBytes: partitionsPerRequest(w.partitions) * batchBytes, requests: inFlight };
}

export function workloadName(w: Workload): string {
  return `${w.recordBytes}B-${w.partitions}p`;
}

export function cellName(c: ProduceCell): string {
  const rate = c.requestsPerSecond === undefined ? '' : `-${c.requestsPerSecond}rps`;
  return `rf${c.replicationFactor}-${workloadName(c)}-acks${c.acks === -1 ? 'all' : '1'}${rate}`;
}

/** One repetition of one cell, per second of the measured window. */
export interface ProduceRepetition {
  wireMBPerSecond: number;
  payloadMiBPerSecond: number;
  recordsPerSecond: number;
  recordsPerBatch: number;
  /** CPU seconds of each broker process in the window, by broker (cluster: ids 0-2; single node: one). */
  brokerCpuSeconds: number[];
  /**
   * The kernel's part of each broker's CPU: socket copies, page-cache writes and, on virtual machines whose freed
   * memory goes back to the host, the host's faults on fresh pages (../README.md, "Cold memory").
   */
  brokerSystemCpuSeconds: number[];
  /** ZooKeeper's CPU seconds in the window (cluster cells). */
  zooKeeperCpuSeconds?: number;
  /** Wire MB per CPU-second of all the brokers together. */
  wireMBPerBrokerCpuSecond: number;
  generatorCpuSeconds: number;
  /** Batch MB/s the tail consumer received in the window (0 without one). */
  tailFetchMBPerSecond: number;
  fetchErrors: Record<string, number>;
  recordsSent: number;
  recordsAcknowledged: number;
  errors: Record<string, number>;
  loadAverage1m: number;
  /** This repetition's own produce p99 and, with a tail consumer, end-to-end p99 (ms): paired between settings. */
  produceP99Ms: number;
  endToEndP99Ms?: number;
}

export interface ProduceTarget {
  port: number;
  /** PIDs of the broker processes whose CPU is sampled at the window's edges, in broker id order. */
  brokerPids: number[];
  zooKeeperPid?: number;
}

/**
 * Where one repetition's latencies go (fresh histograms: their p99 is the repetition's own); `endToEnd` present
 * means a tail consumer runs beside G1.
 */
export interface LatencySinks {
  produce: Histogram;
  endToEnd?: Histogram;
}

/** Runs G1 once on `topic` (created and ready), with a tail consumer when asked, and checks what it got back. */
export async function produceOnce(
  cell: ProduceCell,
  target: ProduceTarget,
  topic: string,
  durationMs: number,
  latency: LatencySinks,
): Promise<ProduceRepetition> {
  const tail =
    latency.endToEnd === undefined
      ? undefined
      : await TailConsumer.connect({
          host: '127.0.0.1',
          port: target.port,
          topic,
          partitions: cell.partitions,
          latency: latency.endToEnd,
          endToEnd: true,
        });
  try {
    const repetition = await produceWith(cell, target, topic, durationMs, latency.produce, tail);
    return {
      ...repetition,
      produceP99Ms: latency.produce.percentile(99) / 1000,
      endToEndP99Ms: latency.endToEnd === undefined ? undefined : latency.endToEnd.percentile(99) / 1000,
    };
  } finally {
    tail?.close();
  }
}

async function produceWith(
  cell: ProduceCell,
  target: ProduceTarget,
  topic: string,
  durationMs: number,
  latency: Histogram,
  tail: TailConsumer | undefined,
): Promise<Omit<ProduceRepetition, 'produceP99Ms' | 'endToEndP99Ms'>> {
  // One /proc read per process and edge gives both figures, so the kernel's part is of the same instant.
  const cpuOf = (pid: number): { total: number; system: number } => {
    const cpu = readProcessCpu(pid);
    return cpu === undefined
      ? { total: 0, system: 0 }
      : { total: cpu.userSeconds + cpu.systemSeconds, system: cpu.systemSeconds };
  };
  const edges = {
    brokers: [[] as { total: number; system: number }[], [] as { total: number; system: number }[]],
    zk: [0, 0],
    fetched: [0, 0],
    generator: process.cpuUsage(),
  };
  tail?.start();
  const run = await runG1({
    host: '127.0.0.1',
    port: target.port,
    topic,
    partitions: cell.partitions,
    recordBytes: cell.recordBytes,
    batchBytes,
    partitionsPerRequest: partitionsPerRequest(cell.partitions),
    acks: cell.acks,
    inFlight,
    connections: 1,
    warmupMs: warmupMsFor(durationMs),
    durationMs,
    requestsPerSecond: cell.requestsPerSecond,
    onBatchSent: tail?.onBatchSent,
    onWindow: (edge) => {
      const i = edge === 'start' ? 0 : 1;
      tail?.window(edge, performance.now());
      edges.fetched[i] = tail?.batchBytes ?? 0;
      edges.brokers[i] = target.brokerPids.map(cpuOf);
      if (target.zooKeeperPid !== undefined) edges.zk[i] = cpuOf(target.zooKeeperPid).total;
      edges.generator = edge === 'start' ? process.cpuUsage() : process.cpuUsage(edges.generator);
    },
  });
  assert(
    Object.keys(run.errors).length === 0,
    `${cellName(cell)}: produce errors ${JSON.stringify(run.errors)}`,
  );
  assert(
    run.recordsAcknowledged === run.recordsSent && run.offsetsContiguous !== false && run.offsetsIncreasing,
    `${cellName(cell)}: ${run.recordsAcknowledged} of ${run.recordsSent} records acknowledged, ` +
      `offsets contiguous ${run.offsetsContiguous}, increasing ${run.offsetsIncreasing}`,
  );
  assert(run.records > 0, `${cellName(cell)}: nothing acknowledged in the window`);
  await tail?.finish(run.endOffsets, run.recordsAcknowledged);
  latency.merge(run.latency);
  const brokerCpuSeconds = target.brokerPids.map(
    (_, i) => edges.brokers[1]![i]!.total - edges.brokers[0]![i]!.total,
  );
  const allBrokersCpu = brokerCpuSeconds.reduce((a, b) => a + b, 0);
  return {
    wireMBPerSecond: run.wireBytes / 1e6 / run.seconds,
    payloadMiBPerSecond: run.payloadBytes / 1048576 / run.seconds,
    recordsPerSecond: run.records / run.seconds,
    recordsPerBatch: run.recordsPerBatch,
    brokerCpuSeconds,
    brokerSystemCpuSeconds: target.brokerPids.map(
      (_, i) => edges.brokers[1]![i]!.system - edges.brokers[0]![i]!.system,
    ),
    zooKeeperCpuSeconds: target.zooKeeperPid === undefined ? undefined : edges.zk[1]! - edges.zk[0]!,
    // CPU time comes in 10 ms ticks; the floor keeps a tiny window from dividing by zero.
    wireMBPerBrokerCpuSecond: run.wireBytes / 1e6 / Math.max(allBrokersCpu, 0.01),
    generatorCpuSeconds: (edges.generator.user + edges.generator.system) / 1e6,
    tailFetchMBPerSecond: (edges.fetched[1]! - edges.fetched[0]!) / 1e6 / run.seconds,
    fetchErrors: tail?.errors ?? {},
    recordsSent: run.recordsSent,
    recordsAcknowledged: run.recordsAcknowledged,
    errors: run.errors,
    loadAverage1m: os.loadavg()[0]!,
  };
}
