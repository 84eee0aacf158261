// `npm run bench -- fetch-backlog [options]`: a consumer catching up a stored backlog (1 GiB by default) against
// L_read, the rate at which a plain Node loop reads the very same segment files from the page cache, in the same
// run (issue 21's goal: at least 0.7 x L_read). Where L_read is above L_net (loopback TCP between two processes,
// no protocol), no consumer over TCP can reach it here, so L_net is measured beside it and R_net reported too.
// A consumer keeps one fetch in flight, so with few partitions each fetch is small (1 MiB per partition) and the
// catch-up is a chain of round trips: L_rtt (bench/limits/rtt-limit.ts, one request in flight answered from memory
// with the fetch's size) is measured beside it as well, the most any broker could give this consumer here. And
// where many partitions make the fetches large, the bound is what the two cores can copy: L_serve
// (bench/limits/serve-limit.ts) streams the same segment files from a bare Node server over loopback, no protocol.
//
// Per partition count, on a fresh broker: G1 fills one topic with 1 KiB records (acks=1, 128 KiB batches) until
// its segment files hold the target, then the repetitions alternate an L_read pass over those files, an L_net
// and an L_rtt repetition, an L_serve pass over the files and a fresh consumer reading the topic from offset 0 to
// its end (bench/broker/fetch-consumer.ts: one fetch in flight, Kafka's consumer defaults for sizes). The files
// were written moments before, so all read from the page cache; alternating keeps them under the same load. MB/s
// count record batch bytes (what the segments hold), the consumer's bytes per second of its whole catch-up; the
// broker's CPU time over each read gives MB per CPU-second. With --consumer-passes N, each repetition's consumer
// reads the backlog N times back to back and only the last read counts (the others are recorded): the first
// reads of a fresh broker are its slowest.
// With --behind N only the first N partitions hold the backlog and the consumer fetches all of them: a consumer
// subscribed to many partitions with a few behind, whose fetches each read the files of only those few.

import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assert } from '../../src/common/assert.js';
import { parseOverrides, positiveInteger } from '../harness/options.js';
import { readProcessCpu } from '../harness/process-usage.js';
import { megabytesPerSecond, ratioOfSummaries } from '../harness/ratio.js';
import { summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { formatFigure, formatSummaryRange, formatTable } from '../harness/table.js';
import { withTempDir } from '../harness/temp-dir.js';
import { netLimit } from '../limits/net-limit.js';
import { readFilesOnce } from '../limits/read-limit.js';
import { measureRoundTripsOnce } from '../limits/rtt-limit.js';
import { serveFilesOnce } from '../limits/serve-limit.js';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { checkApiVersions, createTopic, waitForTopic } from './broker-setup.js';
import { FetchConsumer, fetchResponseBytesMax } from './fetch-consumer.js';
import { runG1 } from './g1-producer.js';
import { WireConnection } from './wire-connection.js';

const usage = `usage: npm run bench -- fetch-backlog [options]
  --mib N            backlog size in MiB of segment files (default 1024; --quick 64)
  --partitions LIST  partition counts (default 1,16; --quick 1)
  --repetitions N    alternated L_read / consumer pairs, at least 3 (default 3)
  --behind N         only the first N partitions of each topic hold the backlog (default: all of them); the
                     consumer still fetches every partition, as one subscribed to all of them with a few behind
  --consumer-passes N  reads of the whole backlog by the consumer in each repetition, each by a fresh
                     consumer, back to back; the last one counts (default 1). The first reads of a fresh broker
                     are the slowest (its copies out of the page cache ran at a third of the later speed here),
                     so N > 1 reads the broker as it runs once warm
  --quick            a small backlog: about half a minute
  --broker-override K=V  a broker setting (repeatable), to compare settings in one sitting
  --cpu-prof DIR     run the broker under node --cpu-prof, profiles written to DIR (the fill is in them too)
  --dir DIR          parent of the broker's data directory, on the disk under test (default .)
  --results-dir DIR  where the result file goes (default bench/results)`;

const recordBytes = 1024;
const batchBytes = 128 * 1024;
/** Each G1 fill round: long enough to amortise its connection, short enough not to overshoot much. */
const fillRoundMs = 1000;
/** fetch.max.wait.ms of the reader; a backlog fetch never waits, so this only matters at the very end. */
const consumerMaxWaitMs = 100;
const readTimeoutMs = 15 * 60_000;
/** One L_net (and L_rtt) repetition's time bound. */
const netLimitMs = 2000;

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      mib: { type: 'string' },
      partitions: { type: 'string' },
      repetitions: { type: 'string', default: '3' },
      'consumer-passes': { type: 'string', default: '1' },
      behind: { type: 'string' },
      quick: { type: 'boolean', default: false },
      dir: { type: 'string', default: '.' },
      'broker-override': { type: 'string', multiple: true, default: [] },
      'cpu-prof': { type: 'string' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const targetBytes = positiveInteger('--mib', values.mib ?? (values.quick ? '64' : '1024')) * 1024 * 1024;
  const partitionCounts = (values.partitions ?? (values.quick ? '1' : '1,16'))
    .split(',')
    .map((p) => positiveInteger('--partitions', p));
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  const consumerPasses = positiveInteger('--consumer-passes', values['consumer-passes']);
  const overrides = parseOverrides(values['broker-override']);
  const behind = values.behind === undefined ? undefined : positiveInteger('--behind', values.behind);
  assert(repetitions >= 3, '--repetitions: at least 3');
  const writer = new ResultWriter({ bench: 'fetch-backlog', args, dir: values['results-dir'] });
  const rows: string[][] = [];
  for (const partitions of partitionCounts) {
    const behindCount = Math.min(behind ?? partitions, partitions);
    const cell = await runCell(
      { partitions, behind: behindCount },
      targetBytes,
      repetitions,
      consumerPasses,
      values.dir,
      overrides,
      values['cpu-prof'],
    );
    const name = `backlog ${recordBytes} B x ${partitions}${behindCount < partitions ? ` (${behindCount} behind)` : ''}`;
    const consumer = summarize(cell.consumerMBPerSecond);
    const perCpu = summarize(cell.consumerMBPerCpuSecond);
    const read = againstLimit(cell.consumerMBPerSecond, cell.readMBPerSecond);
    const net = againstLimit(cell.consumerMBPerSecond, cell.netMBPerSecond);
    const rtt = againstLimit(cell.consumerMBPerSecond, cell.rttMBPerSecond);
    const serve = againstLimit(cell.consumerMBPerSecond, cell.serveMBPerSecond);
    writer.figure(`${name} L_read`, 'MB/s', read.limit, { bytes: cell.bytes, files: cell.files });
    writer.figure(`${name} consumer`, 'MB/s', consumer, {
      records: cell.records,
      loads: cell.loads,
      brokerCores: cell.brokerCores,
      readerCores: cell.readerCores,
      consumerPasses,
      uncountedPassesMBPerSecond: cell.uncountedPassesMBPerSecond,
    });
    writer.figure(`${name} consumer per broker CPU-second`, 'MB', perCpu);
    writer.write(`${name} R_read`, { ...read.ratio, paired: read.paired });
    writer.figure(`${name} L_net`, 'MB/s', net.limit);
    writer.write(`${name} R_net`, { ...net.ratio });
    writer.figure(`${name} L_rtt`, 'MB/s', rtt.limit, { responseBytes: fetchResponseBytesMax(behindCount) });
    writer.write(`${name} R_rtt`, { ...rtt.ratio, paired: rtt.paired });
    writer.figure(`${name} L_serve`, 'MB/s', serve.limit);
    writer.write(`${name} R_serve`, { ...serve.ratio, paired: serve.paired });
    rows.push([
      name,
      formatFigure(cell.bytes / 1e6),
      formatSummaryRange(read.limit),
      formatSummaryRange(consumer),
      formatSummaryRange(perCpu),
      formatSummaryRange(read.ratio),
      formatSummaryRange(read.paired),
      formatSummaryRange(net.limit),
      formatSummaryRange(net.ratio),
      formatSummaryRange(rtt.limit),
      formatSummaryRange(rtt.paired),
      formatSummaryRange(serve.limit),
      formatSummaryRange(serve.paired),
    ]);
  }
  const header = [
    'cell',
    'MB',
    'L_read MB/s',
    'consumer MB/s',
    'MB/broker CPU-s',
    'R_read',
    'paired',
    'L_net MB/s',
    'R_net',
    'L_rtt MB/s',
    'R_rtt paired',
    'L_serve MB/s',
    'R_serve paired',
  ];
  console.log(`\n${formatTable(header, rows)}\n\nrun ${writer.runId} written to ${writer.path}`);
}

/**
 * One limit of a cell and the consumer read against it: the limit's summary, the ratio of the two summaries, and
 * the ratios of the repetitions, paired (each consumer read over the limit measured just before it).
 */
function againstLimit(consumer: readonly number[], limit: readonly number[]) {
  const summary = summarize(limit);
  return {
    limit: summary,
    ratio: ratioOfSummaries(summarize(consumer), summary),
    paired: summarize(consumer.map((c, i) => c / limit[i]!)),
  };
}

interface CellFigures {
  bytes: number;
  files: number;
  records: number;
  readMBPerSecond: number[];
  netMBPerSecond: number[];
  /** L_rtt with responses of the consumer's fetch size (its partitions' max.partition.fetch.bytes). */
  rttMBPerSecond: number[];
  /** L_serve over the very segment files the consumer reads. */
  serveMBPerSecond: number[];
  consumerMBPerSecond: number[];
  /** Per repetition, the consumer's passes before the one counted (--consumer-passes). */
  uncountedPassesMBPerSecond: number[][];
  consumerMBPerCpuSecond: number[];
  brokerCores: number[];
  readerCores: number[];
  loads: number[];
}

async function runCell(
  /** The topic's partitions, and how many of them (the first ones) hold the backlog. */
  { partitions, behind }: { partitions: number; behind: number },
  targetBytes: number,
  repetitions: number,
  consumerPasses: number,
  parentDir: string,
  overrides: Record<string, string>,
  cpuProfileDir: string | undefined,
): Promise<CellFigures> {
  return withTempDir(parentDir, '.brook-bench-', async (dataDir) => {
    const broker = await startBroker({ dataDir, overrides, cpuProfileDir });
    try {
      const topic = 'backlog';
      const endOffsets = await fill(broker, topic, partitions, behind, dataDir, targetBytes);
      const files = segmentFiles(dataDir, topic, behind);
      const bytes = files.reduce((sum, f) => sum + statSync(f).size, 0);
      console.log(
        `${partitions} partition(s), ${behind} behind: ${formatFigure(bytes / 1e6)} MB in ${files.length} segment files`,
      );
      const figures: CellFigures = {
        bytes,
        files: files.length,
        records: endOffsets.reduce((a, b) => a + b, 0),
        readMBPerSecond: [],
        netMBPerSecond: [],
        rttMBPerSecond: [],
        serveMBPerSecond: [],
        consumerMBPerSecond: [],
        uncountedPassesMBPerSecond: [],
        consumerMBPerCpuSecond: [],
        brokerCores: [],
        readerCores: [],
        loads: [],
      };
      for (let i = 0; i < repetitions; i++) {
        const read = await readFilesOnce(files);
        assert(read.bytes === bytes, `L_read read ${read.bytes} of ${bytes} bytes`);
        figures.readMBPerSecond.push(megabytesPerSecond(read.bytes, read.seconds));
        const net = await withTempDir(parentDir, '.brook-bench-', (workDir) =>
          netLimit.measureOnce({ durationMs: netLimitMs, workDir, log: () => {} }, i),
        );
        figures.netMBPerSecond.push(net.value);
        const rtt = await withTempDir(parentDir, '.brook-bench-', (workDir) =>
          measureRoundTripsOnce(
            { durationMs: netLimitMs, workDir, log: () => {} },
            fetchResponseBytesMax(behind),
          ),
        );
        figures.rttMBPerSecond.push(rtt.value);
        const served = await serveFilesOnce(files);
        assert(served.details.bytes === bytes, `L_serve sent ${served.details.bytes} of ${bytes} bytes`);
        figures.serveMBPerSecond.push(served.value);
        const uncounted: number[] = [];
        for (let pass = 1; pass < consumerPasses; pass++) {
          uncounted.push((await readBacklog(broker, topic, endOffsets, bytes)).mbPerSecond);
        }
        figures.uncountedPassesMBPerSecond.push(uncounted);
        const consumed = await readBacklog(broker, topic, endOffsets, bytes);
        figures.consumerMBPerSecond.push(consumed.mbPerSecond);
        figures.consumerMBPerCpuSecond.push(consumed.mbPerCpuSecond);
        figures.brokerCores.push(consumed.brokerCores);
        figures.readerCores.push(consumed.readerCores);
        figures.loads.push(os.loadavg()[0]!);
        console.log(
          `  #${i + 1}: L_read ${formatFigure(figures.readMBPerSecond[i]!)} MB/s, L_net ${formatFigure(net.value)} MB/s, L_rtt ${formatFigure(rtt.value)} MB/s, L_serve ${formatFigure(served.value)} MB/s, consumer ${uncounted.map((v) => `(${formatFigure(v)}) `).join('')}${formatFigure(consumed.mbPerSecond)} MB/s, cores busy: broker ${consumed.brokerCores.toFixed(2)}, reader ${consumed.readerCores.toFixed(2)} (load ${os.loadavg()[0]!.toFixed(1)})`,
        );
      }
      return figures;
    } catch (error) {
      throw new Error(`${(error as Error).message}\nbroker log tail:\n${broker.log().slice(-2000)}`);
    } finally {
      await broker.stop();
    }
  });
}

/**
 * Creates the topic and produces to its first `behind` partitions until their segment files hold `targetBytes`;
 * answers the end offset of each partition (0 for the others).
 */
async function fill(
  broker: BrokerProcess,
  topic: string,
  partitions: number,
  behind: number,
  dataDir: string,
  targetBytes: number,
): Promise<number[]> {
  const setup = await WireConnection.connect('127.0.0.1', broker.port);
  try {
    await checkApiVersions(setup, ['apiVersions', 'metadata', 'createTopics', 'produce', 'fetch']);
    await createTopic(setup, topic, partitions);
    await waitForTopic(setup, topic, partitions);
  } finally {
    setup.close();
  }
  let endOffsets: number[] = new Array(behind).fill(0);
  const stored = () => segmentFiles(dataDir, topic, behind).reduce((sum, f) => sum + statSync(f).size, 0);
  while (stored() < targetBytes) {
    const round = await runG1({
      host: '127.0.0.1',
      port: broker.port,
      topic,
      partitions: behind,
      recordBytes,
      batchBytes,
      partitionsPerRequest: Math.min(behind, 4),
      acks: 1,
      inFlight: 5,
      connections: 1,
      warmupMs: 0,
      durationMs: fillRoundMs,
    });
    const errors = Object.keys(round.errors);
    assert(errors.length === 0, `filling the backlog: ${errors.join(', ')}`);
    endOffsets = round.endOffsets;
  }
  return [...endOffsets, ...new Array<number>(partitions - behind).fill(0)];
}

/** The topic's segment files, partition by partition, oldest first (as a consumer reads them). */
function segmentFiles(dataDir: string, topic: string, partitions: number): string[] {
  const files: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const dir = join(dataDir, `${topic}-${p}`);
    const logs = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort();
    files.push(...logs.map((f) => join(dir, f)));
  }
  return files;
}

async function readBacklog(
  broker: BrokerProcess,
  topic: string,
  endOffsets: readonly number[],
  storedBytes: number,
): Promise<{ mbPerSecond: number; mbPerCpuSecond: number; brokerCores: number; readerCores: number }> {
  const consumer = await FetchConsumer.connect({
    host: '127.0.0.1',
    port: broker.port,
    topic,
    partitions: endOffsets.length,
    maxWaitMs: consumerMaxWaitMs,
  });
  try {
    const cpuBefore = brokerCpuSeconds(broker);
    const readerCpuBefore = process.cpuUsage();
    const start = performance.now();
    await consumer.readUntil(endOffsets, readTimeoutMs);
    const seconds = (performance.now() - start) / 1000;
    const cpu = brokerCpuSeconds(broker) - cpuBefore;
    const readerCpu = process.cpuUsage(readerCpuBefore);
    assert(Object.keys(consumer.errors).length === 0, `fetch errors: ${JSON.stringify(consumer.errors)}`);
    // The consumer got exactly what the segments hold: the two sides of the ratio read the same bytes.
    assert(
      consumer.batchBytes === storedBytes,
      `consumer read ${consumer.batchBytes} of ${storedBytes} bytes`,
    );
    return {
      mbPerSecond: megabytesPerSecond(consumer.batchBytes, seconds),
      mbPerCpuSecond: cpu > 0 ? consumer.batchBytes / 1e6 / cpu : Number.NaN,
      // Cores each side kept busy: which of the two bounds the read (a side near 1.0 is saturated).
      brokerCores: cpu / seconds,
      readerCores: (readerCpu.user + readerCpu.system) / 1e6 / seconds,
    };
  } finally {
    consumer.close();
  }
}

function brokerCpuSeconds(broker: BrokerProcess): number {
  const cpu = readProcessCpu(broker.pid);
  return cpu === undefined ? 0 : cpu.userSeconds + cpu.systemSeconds;
}
