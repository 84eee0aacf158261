// `npm run bench -- broker-scale [options]`: one broker holding 10,000 partitions and 10,000 idle connections
// (issue 21's scale goal): what each costs in the broker's memory and descriptors, and whether produce keeps its
// speed beside them.
//
// Two brokers run side by side from the start, both fresh: the loaded one gets a topic of `--partitions`
// partitions (replication 1) and `--connections` idle client connections (each sends one ApiVersions request,
// reads the answer and then says nothing, as an idle consumer between polls does), the baseline gets neither.
// The broker's resident set and open descriptors are read from /proc before and after each step, so the
// per-partition and per-connection figures are differences on one process. Then G1 (1 KiB records, acks=1,
// 128 KiB batches, a tail-less produce like the broker matrix's D0 cells) writes to a 16-partition topic on each
// broker, repetitions alternated (loaded, baseline, loaded, ...): the goal is the loaded broker within 20 % of
// the baseline (a ratio of at least 0.8), and memory that grows linearly, not without bound.
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { assert } from '../../src/common/assert.js';
import { errorName } from '../../src/protocol/errors.js';
import type { CreateTopicsResponse } from '../../src/protocol/messages/19-create-topics.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { positiveInteger } from '../harness/options.js';
import { readProcessCpu, readProcessMemory } from '../harness/process-usage.js';
import { megabytesPerSecond, ratioOfSummaries } from '../harness/ratio.js';
import { summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { formatFigure, formatSummaryRange, formatTable } from '../harness/table.js';
import { withTempDir } from '../harness/temp-dir.js';
import { warmupMsFor } from '../limits/null-broker.js';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { benchVersions, checkApiVersions, createTopic, waitForTopic } from './broker-setup.js';
import { runG1 } from './g1-producer.js';
import { WireConnection } from './wire-connection.js';

const usage = `usage: npm run bench -- broker-scale [options]
  --partitions N     partitions of the loaded broker's big topic (default 10000)
  --connections N    idle connections to the loaded broker (default 10000)
  --seconds N        measured window of one produce repetition (default 4)
  --repetitions N    produce repetitions per broker, alternated, at least 3 (default 3)
  --quick            1,000 partitions, 1,000 connections, 1 s windows
  --create-only      only time creating the big topic, then the broker's clean shutdown: a fresh broker per
                     repetition, no connections or produce
  --cpu-prof DIR     run the loaded broker under node --cpu-prof, profiles written to DIR
  --dir DIR          parent of the brokers' data directories (default .)
  --results-dir DIR  where the result file goes (default bench/results)`;

const hotPartitions = 16;
const recordBytes = 1024;
const batchBytes = 128 * 1024;
/** Connections opened at once while building the idle set. */
const connectParallelism = 100;
const bigTopicReadyMs = 10 * 60_000;

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      partitions: { type: 'string' },
      connections: { type: 'string' },
      seconds: { type: 'string' },
      repetitions: { type: 'string', default: '3' },
      quick: { type: 'boolean', default: false },
      'create-only': { type: 'boolean', default: false },
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
  const partitions = positiveInteger('--partitions', values.partitions ?? (quick ? '1000' : '10000'));
  const connections = positiveInteger('--connections', values.connections ?? (quick ? '1000' : '10000'));
  const durationMs = positiveInteger('--seconds', values.seconds ?? (quick ? '1' : '4')) * 1000;
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  assert(repetitions >= 3, '--repetitions: at least 3');
  const writer = new ResultWriter({ bench: 'broker-scale', args, dir: values['results-dir'] });
  const cpuProfileDir = values['cpu-prof'];
  if (values['create-only']) {
    await runCreateOnly(writer, values.dir, partitions, repetitions, cpuProfileDir);
    return;
  }
  const idle: WireConnection[] = [];
  await withTempDir(values.dir, '.brook-bench-', async (dir) => {
    const loaded = await startBroker({ dataDir: join(dir, 'loaded'), cpuProfileDir });
    let baseline: BrokerProcess | undefined;
    try {
      baseline = await startBroker({ dataDir: join(dir, 'baseline') });
      for (const broker of [loaded, baseline]) await prepareHotTopic(broker);
      const before = await settledFootprint(loaded);
      await createBigTopic(loaded, partitions);
      const afterPartitions = await settledFootprint(loaded);
      console.log(`${partitions} partitions: ${describeStep(before, afterPartitions, partitions)}`);
      await openIdleConnections(loaded, connections, idle);
      const afterConnections = await settledFootprint(loaded);
      console.log(
        `${connections} idle connections: ${describeStep(afterPartitions, afterConnections, connections)}`,
      );
      const perPartition = perItem(before, afterPartitions, partitions);
      const perConnection = perItem(afterPartitions, afterConnections, connections);
      writer.write('footprint', {
        partitions,
        connections,
        before,
        afterPartitions,
        afterConnections,
        perPartition,
        perConnection,
      });

      const loadedMBps: number[] = [];
      const baselineMBps: number[] = [];
      const loadedCpu: number[] = [];
      const baselineCpu: number[] = [];
      for (let i = 0; i < repetitions; i++) {
        for (const [broker, out, cpu, label] of [
          [loaded, loadedMBps, loadedCpu, 'loaded'],
          [baseline, baselineMBps, baselineCpu, 'baseline'],
        ] as const) {
          const figures = await produce(broker, `hot`, durationMs);
          out.push(figures.mbPerSecond);
          cpu.push(figures.mbPerCpuSecond);
          console.log(
            `  #${i + 1} ${label}: ${formatFigure(figures.mbPerSecond)} MB/s, ${formatFigure(figures.mbPerCpuSecond)} MB per CPU-second (load ${os.loadavg()[0]!.toFixed(1)})`,
          );
        }
      }
      // The idle connections must still be there: the broker may not have shed them to keep up.
      const stillOpen = idle.filter((c) => c.failed === null).length;
      const loadedSummary = summarize(loadedMBps);
      const baselineSummary = summarize(baselineMBps);
      const ratio = ratioOfSummaries(loadedSummary, baselineSummary);
      const paired = summarize(loadedMBps.map((m, i) => m / baselineMBps[i]!));
      writer.figure('produce loaded', 'MB/s', loadedSummary, { mbPerCpuSecond: loadedCpu, stillOpen });
      writer.figure('produce baseline', 'MB/s', baselineSummary, { mbPerCpuSecond: baselineCpu });
      writer.write('produce loaded / baseline', { ...ratio, paired });
      const rows = [
        [
          'per partition',
          `${formatFigure(perPartition.rssBytes / 1024)} KiB RSS`,
          `${perPartition.fds.toFixed(2)} fds`,
        ],
        [
          'per idle connection',
          `${formatFigure(perConnection.rssBytes / 1024)} KiB RSS`,
          `${perConnection.fds.toFixed(2)} fds`,
        ],
        [
          `produce 1 KiB x ${hotPartitions}, loaded`,
          `${formatSummaryRange(loadedSummary)} MB/s`,
          `${stillOpen} of ${connections} idle connections still open`,
        ],
        [`produce 1 KiB x ${hotPartitions}, baseline`, `${formatSummaryRange(baselineSummary)} MB/s`, ''],
        ['loaded / baseline', formatSummaryRange(ratio), `paired ${formatSummaryRange(paired)}`],
      ];
      console.log(
        `\n${formatTable(['figure', 'value', ''], rows)}\n\nrun ${writer.runId} written to ${writer.path}`,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\nloaded broker log tail:\n${loaded.log().slice(-2000)}`);
    } finally {
      for (const connection of idle) connection.close();
      await baseline?.stop();
      await loaded.stop();
    }
  });
}

async function prepareHotTopic(broker: BrokerProcess): Promise<void> {
  const setup = await WireConnection.connect('127.0.0.1', broker.port);
  try {
    await checkApiVersions(setup, ['apiVersions', 'metadata', 'createTopics', 'produce']);
    await createTopic(setup, 'hot', hotPartitions);
    await waitForTopic(setup, 'hot', hotPartitions);
  } finally {
    setup.close();
  }
}

/**
 * `--create-only`: the time of one CreateTopics of `partitions` partitions on a fresh broker, repeated with a
 * fresh broker and data directory each time (so every repetition starts from the same empty state).
 */
/** How long --create-only lets a broker's clean shutdown take before it is killed (and the run fails). */
const shutdownBoundMs = 300_000;

async function runCreateOnly(
  writer: ResultWriter,
  parent: string,
  partitions: number,
  repetitions: number,
  cpuProfileDir: string | undefined,
): Promise<void> {
  const seconds: number[] = [];
  const shutdownSeconds: number[] = [];
  const settleSeconds: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    await withTempDir(parent, '.brook-bench-', async (dir) => {
      const broker = await startBroker({ dataDir: join(dir, 'broker'), cpuProfileDir });
      let stopped = false;
      try {
        const load = os.loadavg()[0]!;
        const elapsed = await createBigTopic(broker, partitions);
        seconds.push(elapsed);
        // The leader-epoch checkpoints of the new partitions are written in the background after the answer; a
        // shutdown before they land writes the rest itself, so it is timed once they are all there.
        const settle = await waitForEpochCheckpoints(join(dir, 'broker'), partitions);
        settleSeconds.push(settle);
        // The clean shutdown of a broker holding the partitions: SIGTERM until the process has exited (every
        // log closed, the checkpoints and the clean-shutdown marker written).
        const stopStarted = performance.now();
        // A bound well above the 20 s default: a broker closing thousands of logs on a loaded machine took more.
        const code = await broker.stop(shutdownBoundMs);
        stopped = true;
        assert(code === 0, `the broker exited with ${code} at its shutdown`);
        const shutdown = (performance.now() - stopStarted) / 1000;
        shutdownSeconds.push(shutdown);
        console.log(
          `  #${i + 1}: ${formatFigure(elapsed)} s, ${formatFigure((elapsed * 1000) / partitions)} ms per partition; checkpoints ${formatFigure(settle)} s later; shutdown ${formatFigure(shutdown)} s (load ${load.toFixed(1)})`,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}\nbroker log tail:\n${broker.log().slice(-2000)}`);
      } finally {
        if (!stopped) await broker.stop();
      }
    });
  }
  const summary = summarize(seconds);
  const shutdownSummary = summarize(shutdownSeconds);
  const settleSummary = summarize(settleSeconds);
  writer.figure('create seconds', 's', summary, { partitions, loadavg: os.loadavg()[0] });
  writer.figure('checkpoints settled seconds', 's', settleSummary, { partitions, loadavg: os.loadavg()[0] });
  writer.figure('shutdown seconds', 's', shutdownSummary, { partitions, loadavg: os.loadavg()[0] });
  console.log(
    `create ${partitions} partitions: ${formatSummaryRange(summary)} s; epoch checkpoints ${formatSummaryRange(settleSummary)} s later; clean shutdown: ${formatSummaryRange(shutdownSummary)} s\n\nrun ${writer.runId} written to ${writer.path}`,
  );
}

/** Seconds until every partition of the big topic has its leader-epoch-checkpoint in `dataDir`. */
async function waitForEpochCheckpoints(dataDir: string, partitions: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  for (;;) {
    while (next < partitions && existsSync(join(dataDir, `big-${next}`, 'leader-epoch-checkpoint'))) next++;
    if (next === partitions) return (performance.now() - started) / 1000;
    assert(performance.now() - started < bigTopicReadyMs, `big-${next} has no leader-epoch-checkpoint`);
    await sleep(50);
  }
}

/** Creates the big topic; a broker that answers REQUEST_TIMED_OUT is still creating it, so wait either way. */
async function createBigTopic(broker: BrokerProcess, partitions: number): Promise<number> {
  const setup = await WireConnection.connect('127.0.0.1', broker.port);
  try {
    const started = performance.now();
    const response = await setup.call<CreateTopicsResponse>(
      ApiKey.CREATE_TOPICS,
      benchVersions.createTopics,
      {
        topics: [
          { name: 'big', numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] },
        ],
        timeoutMs: 60_000,
        validateOnly: false,
      },
      bigTopicReadyMs,
    );
    const code = response.topics[0]?.errorCode ?? -1;
    assert(code === 0 || errorName(code) === 'REQUEST_TIMED_OUT', `CreateTopics big: ${errorName(code)}`);
    await waitForTopic(setup, 'big', partitions, bigTopicReadyMs);
    const seconds = (performance.now() - started) / 1000;
    console.log(`created ${partitions} partitions in ${formatFigure(seconds)} s`);
    return seconds;
  } finally {
    setup.close();
  }
}

async function openIdleConnections(
  broker: BrokerProcess,
  count: number,
  into: WireConnection[],
): Promise<void> {
  const started = performance.now();
  for (let opened = 0; opened < count; ) {
    const wave = Math.min(connectParallelism, count - opened);
    const connections = await Promise.all(
      Array.from({ length: wave }, async () => {
        const connection = await WireConnection.connect('127.0.0.1', broker.port);
        into.push(connection);
        await checkApiVersions(connection, ['apiVersions']);
        return connection;
      }),
    );
    opened += connections.length;
  }
  console.log(`opened ${count} idle connections in ${formatFigure((performance.now() - started) / 1000)} s`);
}

interface Footprint {
  rssBytes: number;
  fds: number;
}

function footprint(broker: BrokerProcess): Footprint {
  const memory = readProcessMemory(broker.pid);
  assert(memory !== undefined, 'the broker has no /proc status');
  return { rssBytes: memory.rssBytes, fds: readdirSync(`/proc/${broker.pid}/fd`).length };
}

/**
 * The footprint once descriptors stop changing: the broker closes index files lazily after a burst of opens
 * (at most 256 stay open between turns of its event loop), so a reading right after creating partitions would
 * count descriptors that are about to go.
 */
async function settledFootprint(broker: BrokerProcess): Promise<Footprint> {
  const deadline = performance.now() + 60_000;
  let last = footprint(broker);
  let steady = 0;
  while (steady < 4 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = footprint(broker);
    steady = now.fds === last.fds ? steady + 1 : 0;
    last = now;
  }
  return last;
}

function perItem(before: Footprint, after: Footprint, items: number): Footprint {
  return { rssBytes: (after.rssBytes - before.rssBytes) / items, fds: (after.fds - before.fds) / items };
}

function describeStep(before: Footprint, after: Footprint, items: number): string {
  const each = perItem(before, after, items);
  return `RSS ${formatFigure(before.rssBytes / 2 ** 20)} -> ${formatFigure(after.rssBytes / 2 ** 20)} MiB (${formatFigure(each.rssBytes / 1024)} KiB each), descriptors ${before.fds} -> ${after.fds}`;
}

async function produce(
  broker: BrokerProcess,
  topic: string,
  durationMs: number,
): Promise<{ mbPerSecond: number; mbPerCpuSecond: number }> {
  const cpu: number[] = [0, 0];
  const result = await runG1({
    host: '127.0.0.1',
    port: broker.port,
    topic,
    partitions: hotPartitions,
    recordBytes,
    batchBytes,
    partitionsPerRequest: 4,
    acks: 1,
    inFlight: 5,
    connections: 1,
    warmupMs: warmupMsFor(durationMs),
    durationMs,
    onWindow: (edge) => {
      const usage = readProcessCpu(broker.pid);
      cpu[edge === 'start' ? 0 : 1] = usage === undefined ? 0 : usage.userSeconds + usage.systemSeconds;
    },
  });
  const errors = Object.keys(result.errors);
  assert(errors.length === 0, `produce errors: ${errors.join(', ')}`);
  const cpuSeconds = cpu[1]! - cpu[0]!;
  return {
    mbPerSecond: megabytesPerSecond(result.wireBytes, result.seconds),
    mbPerCpuSecond: cpuSeconds > 0 ? result.wireBytes / 1e6 / cpuSeconds : Number.NaN,
  };
}
