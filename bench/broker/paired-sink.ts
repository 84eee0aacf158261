// L_sink alternated with Brook's repetitions in a D0 cell: after each of Brook's produce repetitions (and the C
// peer's), one L_sink repetition of the same length, its file kept until the cell ends as Brook keeps each
// repetition's topic. The ratio of each pair (Brook's wire MB/s over the sink's) is the paired R_sink.
//
// Why beside the limit measured at the start of the run: on these virtual machines, memory the guest frees goes
// back to the host within seconds (free page reporting), and writing the page cache into such memory costs a
// host fault per page; a sink that truncates its one file before each repetition reuses warm pages and writes
// several times as fast as a writer whose data accumulates (bench/README.md, "Cold memory"). Brook's topics
// accumulate over a cell, so the run-start L_sink and Brook's repetitions were not facing the same memory. Here
// both accumulate in the same minutes, and the kernel's share of each one's CPU is reported beside the ratio.
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { assert } from '../../src/common/assert.js';
import { summarize } from '../harness/repeat.js';
import type { ResultWriter } from '../harness/results.js';
import { formatTable, formatValuesRange } from '../harness/table.js';
import { measureSinkOnce } from '../limits/net-limit.js';
import { type CellResult, type CellSpec, cellName } from './cell.js';

/** One L_sink repetition run beside a Brook repetition. */
export interface PairedSinkRepetition {
  mbPerSecond: number;
  sinkCpuSeconds: number;
  /** The kernel's part of sinkCpuSeconds. */
  sinkSystemCpuSeconds: number;
  /** Bytes the sink wrote to its file (all it received). */
  bytesWritten: number;
  loadAverage1m: number;
}

/** A D0 cell's Brook result and the sink repetitions alternated with its repetitions. */
export interface PairedSinkResult {
  brook: CellResult;
  sink: PairedSinkRepetition[];
}

/**
 * One L_sink repetition of `durationMs` into a fresh folder of `cellDir` (left in place: the caller removes
 * `cellDir` when the cell ends).
 */
export async function runPairedSink(
  spec: CellSpec,
  cellDir: string,
  durationMs: number,
  log: (message: string) => void,
  repetition: number,
): Promise<PairedSinkRepetition> {
  const workDir = join(cellDir, `sink-${repetition}`);
  mkdirSync(workDir);
  const sample = await measureSinkOnce({ durationMs, workDir, log }, { appendToFile: true, tls: false });
  const details = sample.details as {
    sinkCpuSeconds: number;
    sinkSystemCpuSeconds: number;
    bytesWritten: number;
  };
  const result: PairedSinkRepetition = {
    mbPerSecond: sample.value,
    sinkCpuSeconds: details.sinkCpuSeconds,
    sinkSystemCpuSeconds: details.sinkSystemCpuSeconds,
    bytesWritten: details.bytesWritten,
    loadAverage1m: os.loadavg()[0]!,
  };
  log(
    `  ${cellName(spec)} L_sink #${repetition + 1}: ${result.mbPerSecond.toFixed(1)} MB/s, ` +
      `${Math.round(kernelPercent(result.sinkSystemCpuSeconds, result.sinkCpuSeconds))} % of its CPU in the kernel ` +
      `(load ${result.loadAverage1m.toFixed(1)})`,
  );
  return result;
}

/** Brook's wire MB/s over the sink's, repetition by repetition. */
export function pairedRatios(result: PairedSinkResult): number[] {
  const brook = result.brook.repetitions;
  assert(brook.length === result.sink.length, 'every Brook repetition has its sink repetition');
  return brook.map((r, i) => r.wireMBPerSecond / result.sink[i]!.mbPerSecond);
}

export function recordPairedSink(writer: ResultWriter, result: PairedSinkResult): void {
  const name = cellName(result.brook.spec);
  writer.figure(`L_sink-paired-${name}`, 'MB/s', summarize(result.sink.map((r) => r.mbPerSecond)), {
    description:
      "L_sink, one repetition after each of Brook's, each repetition's file kept until the cell ends",
    repetitions: result.sink,
  });
  const ratios = summarize(pairedRatios(result));
  writer.write(`R_sink-paired-${name}`, {
    ...ratios,
    meaning: "Brook's wire MB/s over the L_sink repetition run right after it, per pair",
  });
}

export function formatPairedSinks(results: readonly PairedSinkResult[]): string {
  const rows = results.map((result) => {
    const { brook, sink } = result;
    const loads = [...brook.repetitions.map((r) => r.loadAverage1m), ...sink.map((r) => r.loadAverage1m)];
    return [
      cellName(brook.spec),
      formatValuesRange(brook.repetitions.map((r) => r.wireMBPerSecond)),
      formatValuesRange(sink.map((r) => r.mbPerSecond)),
      formatValuesRange(pairedRatios(result)),
      formatValuesRange(
        brook.repetitions.map((r) => kernelPercent(r.brokerSystemCpuSeconds, r.brokerCpuSeconds)),
      ),
      formatValuesRange(sink.map((r) => kernelPercent(r.sinkSystemCpuSeconds, r.sinkCpuSeconds))),
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    ];
  });
  return formatTable(
    [
      'cell (L_sink alternated)',
      'Brook wire MB/s',
      'L_sink MB/s',
      'Brook/L_sink paired',
      'Brook kernel CPU %',
      'sink kernel CPU %',
      'load',
    ],
    rows,
  );
}

/** The kernel's share of a process's CPU, in percent; CPU time comes in 10 ms ticks, hence the floor. */
function kernelPercent(systemSeconds: number, cpuSeconds: number): number {
  return (100 * systemSeconds) / Math.max(cpuSeconds, 0.01);
}
