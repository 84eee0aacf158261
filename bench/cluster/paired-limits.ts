// The limits a cluster run's unthrottled produce cells are read against, measured between its repetitions: after
// each repetition of the cells, one L_sink repetition (what one broker must do with a produced byte: receive it,
// append it) and one L_replicate repetition (what three replicas must do: the leader receives, appends and sends
// it twice, each follower receives and appends it), each as long as a cell's window. A single-node cell's wire
// MB/s over the L_sink of its repetition is its paired R_sink, a replicated cell's over the L_replicate of its
// repetition its paired R_replicate; and L_replicate over L_sink, pair by pair, is the highest R_single (rf=3 over
// single-node) that any broker could reach on this machine in those minutes.
//
// Why paired rather than measured once at the start: on these virtual machines the page cache's write rate moves
// with the memory's state over minutes (bench/README.md, "Cold memory"), and every replicated byte is written to
// the page cache three times, so a ceiling from another minute can be off by a factor of two either way.
import os from 'node:os';
import { assert } from '../../src/common/assert.js';
import { summarize } from '../harness/repeat.js';
import type { ResultWriter } from '../harness/results.js';
import { formatTable, formatValuesRange } from '../harness/table.js';
import { withTempDir } from '../harness/temp-dir.js';
import { measureSinkOnce } from '../limits/net-limit.js';
import { measureReplicateOnce } from '../limits/replicate-limit.js';
import { cellName, type ProduceCell, type ProduceRepetition } from './produce.js';

/** The two limits measured after one repetition of the cells. */
export interface PairedLimits {
  sinkMBPerSecond: number;
  replicateMBPerSecond: number;
  /** CPU seconds of the sink, and of the three replicas together, in their windows. */
  sinkCpuSeconds: number;
  replicasCpuSeconds: number;
  loadAverage1m: number;
}

/** One L_sink and one L_replicate repetition of `durationMs`, each in a directory of `parentDir` removed after. */
export async function measurePairedLimits(
  parentDir: string,
  durationMs: number,
  log: (message: string) => void,
  repetition: number,
): Promise<PairedLimits> {
  const sink = await withTempDir(parentDir, '.brook-bench-sink-', (workDir) =>
    measureSinkOnce({ durationMs, workDir, log }, { appendToFile: true, tls: false }),
  );
  const replicate = await withTempDir(parentDir, '.brook-bench-replicate-', (workDir) =>
    measureReplicateOnce({ durationMs, workDir, log }),
  );
  const limits: PairedLimits = {
    sinkMBPerSecond: sink.value,
    replicateMBPerSecond: replicate.value,
    sinkCpuSeconds: sink.details.sinkCpuSeconds as number,
    replicasCpuSeconds: replicate.details.replicasCpuSeconds as number,
    loadAverage1m: os.loadavg()[0]!,
  };
  log(
    `  paired limits #${repetition + 1}: L_sink ${limits.sinkMBPerSecond.toFixed(1)} MB/s, L_replicate ` +
      `${limits.replicateMBPerSecond.toFixed(1)} MB/s (load ${limits.loadAverage1m.toFixed(1)})`,
  );
  return limits;
}

/** A cell's results as paired limits need them. */
export interface PairedCell {
  cell: ProduceCell;
  repetitions: readonly ProduceRepetition[];
}

/** The limit a cell is read against: L_replicate for a replicated cell, L_sink for a single node. */
interface CellLimit {
  name: 'L_sink' | 'L_replicate';
  ratio: 'R_sink' | 'R_replicate';
  mbPerSecond: (limits: PairedLimits) => number;
}

const sinkLimit: CellLimit = { name: 'L_sink', ratio: 'R_sink', mbPerSecond: (l) => l.sinkMBPerSecond };
const replicateLimit: CellLimit = {
  name: 'L_replicate',
  ratio: 'R_replicate',
  mbPerSecond: (l) => l.replicateMBPerSecond,
};

function limitOf(cell: ProduceCell): CellLimit {
  return cell.replicationFactor === 3 ? replicateLimit : sinkLimit;
}

/** A cell's wire MB/s over its limit, repetition by repetition. */
export function pairedRatios(result: PairedCell, limits: readonly PairedLimits[]): number[] {
  assert(result.repetitions.length === limits.length, 'every repetition of the cells has its paired limits');
  const { mbPerSecond } = limitOf(result.cell);
  return result.repetitions.map((r, i) => r.wireMBPerSecond / mbPerSecond(limits[i]!));
}

/** L_replicate over L_sink, pair by pair: the most R_single any broker could reach in those minutes. */
export function replicationBound(limits: readonly PairedLimits[]): number[] {
  return limits.map((l) => l.replicateMBPerSecond / l.sinkMBPerSecond);
}

export function recordPairedLimits(
  writer: ResultWriter,
  cells: readonly PairedCell[],
  limits: readonly PairedLimits[],
): void {
  writer.figure('L_sink-paired', 'MB/s', summarize(limits.map((l) => l.sinkMBPerSecond)), {
    description: 'L_sink, one repetition after each repetition of the produce cells',
    repetitions: limits,
  });
  writer.figure('L_replicate-paired', 'MB/s', summarize(limits.map((l) => l.replicateMBPerSecond)), {
    description: 'L_replicate, one repetition after each repetition of the produce cells',
  });
  writer.write('L_replicate-over-L_sink-paired', {
    ...summarize(replicationBound(limits)),
    meaning:
      'the highest rf=3 over single-node produce any broker could reach in those minutes, pair by pair',
  });
  for (const cell of cells) {
    const { name, ratio } = limitOf(cell.cell);
    writer.write(`${ratio}-paired-${cellName(cell.cell)}`, {
      ...summarize(pairedRatios(cell, limits)),
      meaning: `the cell's wire MB/s over the ${name} repetition measured after its repetition, pair by pair`,
    });
  }
}

export function formatPairedLimits(cells: readonly PairedCell[], limits: readonly PairedLimits[]): string {
  const rows = cells.map((cell) => {
    const { name, mbPerSecond } = limitOf(cell.cell);
    return [
      cellName(cell.cell),
      formatValuesRange(cell.repetitions.map((r) => r.wireMBPerSecond)),
      name,
      formatValuesRange(limits.map(mbPerSecond)),
      formatValuesRange(pairedRatios(cell, limits)),
    ];
  });
  rows.push(['L_replicate / L_sink', '-', '-', '-', formatValuesRange(replicationBound(limits))]);
  return formatTable(['cell', 'wire MB/s', 'paired limit', 'limit MB/s', 'cell / limit, paired'], rows);
}
