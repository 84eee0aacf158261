// L_null: generator G1 (bench/broker/g1-producer.ts) against a null broker (bench/broker/null-broker-server.ts)
// that answers ApiVersions, Metadata and Produce without validating or storing anything. The figure is the
// records/s G1 gets acknowledged: the ceiling of generator plus protocol on this machine, which R_null divides
// a real broker's records/s by. The null broker runs in its own process, as the broker under test does.
//
// The registry's L_null uses 1 KiB records on one partition with acks=1; benchmarks that compare a workload
// with its own ceiling build one with `nullBrokerLimit(workload)` and pass it to measureLimits.
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { checkApiVersions, waitForTopic } from '../broker/broker-setup.js';
import { runG1 } from '../broker/g1-producer.js';
import type { NullBrokerMessage } from '../broker/null-broker-server.js';
import { WireConnection } from '../broker/wire-connection.js';
import { watchProcess } from '../harness/process-usage.js';
import { mebibytesPerSecond, megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';

const serverModule = fileURLToPath(new URL('../broker/null-broker-server.js', import.meta.url));
const startTimeoutMs = 10_000;

/** What G1 sends to the null broker; the same fields as the broker run it is the ceiling of. */
export interface NullBrokerWorkload {
  recordBytes: number;
  partitions: number;
  acks: number;
  batchBytes: number;
  partitionsPerRequest: number;
  inFlight: number;
  connections: number;
}

export const defaultNullWorkload: NullBrokerWorkload = {
  recordBytes: 1024,
  partitions: 1,
  acks: 1,
  batchBytes: 128 * 1024,
  partitionsPerRequest: 1,
  inFlight: 5,
  connections: 1,
};

/** The warm-up before each measured window: a quarter of it, at most one second. */
export function warmupMsFor(durationMs: number): number {
  return Math.min(1000, Math.round(durationMs / 4));
}

/**
 * Forks a null broker whose Metadata reports `partitions` per topic; with `clients`, in the mode real clients can
 * produce to and consume from (null-broker-clients.ts).
 */
export async function startNullBroker(
  partitions: number,
  clients = false,
): Promise<{ child: ChildProcess; port: number }> {
  const args = clients ? [String(partitions), 'clients'] : [String(partitions)];
  const child = fork(serverModule, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('null broker did not start')), startTimeoutMs);
    child.once('message', (message: NullBrokerMessage) => {
      clearTimeout(timer);
      resolve(message.port);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`null broker exited (${code}) before listening`));
    });
  });
  return { child, port };
}

export async function stopNullBroker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
}

async function measureOnce(workload: NullBrokerWorkload, context: LimitContext): Promise<LimitSample> {
  const { child, port } = await startNullBroker(workload.partitions);
  try {
    assert(child.pid !== undefined, 'forked null broker has no pid');
    const topic = 'null-bench';
    const setup = await WireConnection.connect('127.0.0.1', port);
    try {
      await checkApiVersions(setup, ['apiVersions', 'metadata', 'produce']);
      await waitForTopic(setup, topic, workload.partitions);
    } finally {
      setup.close();
    }
    const usage = watchProcess(child.pid);
    let cpuAtStart = 0;
    let cpuAtEnd = 0;
    let generatorCpu = process.cpuUsage();
    const result = await runG1({
      ...workload,
      host: '127.0.0.1',
      port,
      topic,
      warmupMs: warmupMsFor(context.durationMs),
      durationMs: context.durationMs,
      onWindow: (edge) => {
        if (edge === 'start') {
          cpuAtStart = usage.current().cpuSeconds;
          generatorCpu = process.cpuUsage();
        } else {
          cpuAtEnd = usage.current().cpuSeconds;
          generatorCpu = process.cpuUsage(generatorCpu);
        }
      },
    });
    usage.stop();
    assert(result.recordsAcknowledged === result.recordsSent, 'the null broker left records unacknowledged');
    const latency = result.latency.summary();
    return {
      value: result.records / result.seconds,
      details: {
        ...workload,
        seconds: result.seconds,
        records: result.records,
        requests: result.requests,
        recordsPerBatch: result.recordsPerBatch,
        payloadMiBPerSecond: mebibytesPerSecond(result.payloadBytes, result.seconds),
        wireMBPerSecond: megabytesPerSecond(result.wireBytes, result.seconds),
        latencyUs: { p50: latency.p50, p99: latency.p99, p999: latency.p999, max: latency.max },
        serverCpuSeconds: cpuAtEnd - cpuAtStart,
        generatorCpuSeconds: (generatorCpu.user + generatorCpu.system) / 1e6,
      },
    };
  } finally {
    await stopNullBroker(child);
  }
}

/** An L_null for `workload` (named `name`, so a benchmark can measure several side by side). */
export function nullBrokerLimit(workload: NullBrokerWorkload, name = 'L_null'): LimitDefinition {
  return {
    name,
    unit: 'records/s',
    description: `G1 against a broker that only answers: ${workload.recordBytes} B records, ${workload.partitions} partition(s), acks=${workload.acks}`,
    measureOnce: (context) => measureOnce(workload, context),
    note(details) {
      const wire = details.map((d) => d.wireMBPerSecond as number);
      // CPU seconds come in 10 ms ticks; the floor keeps a tiny window from dividing by zero.
      const perCpu = details.map(
        (d) =>
          ((d.wireMBPerSecond as number) * (d.seconds as number)) /
          Math.max(d.serverCpuSeconds as number, 0.01),
      );
      return (
        `wire ${formatFigure(Math.min(...wire))}-${formatFigure(Math.max(...wire))} MB/s, ` +
        `null broker ${formatFigure(Math.min(...perCpu))}-${formatFigure(Math.max(...perCpu))} MB per CPU-second`
      );
    },
  };
}

export const nullLimit: LimitDefinition = nullBrokerLimit(defaultNullWorkload);
