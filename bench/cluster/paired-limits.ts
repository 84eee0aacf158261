// The limits a cluster run's unthrottled produce cells are read against, measured between its repetitions: after
// each repetition of the cells, one L_sink repetition (what one broker must do with a produced byte: receive it,
// append it) and one L_replicate repetition (what three replicas must do: the leader receives, appends and sends
// it twice, each follower receives and appends it), each as long as a cell's window. A single-node cell's wire
// MB/s over the L_sink of its repetition is its paired R_sink, a replicated cell's over the L_replicate of its
// repetition its paired R_replicate; and L_replicate over L_sink, pair by pair, is the highest R_single (rf=3 over
// single-node) that any broker could reach on this machine in those minutes.
//
// An rf=3 acks=all cell is also read against L_replicate_acked with its generator's window (5 requests in flight
// of its request size), measured once per distinct window after each repetition: with one partition the window,
// not the cores, bounds the cell, and this is the most any broker could give that window here (paired
// R_replicate_acked). Its round trip's p50 and p99 are logged and recorded too.
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
import { type ProducerWindow, roundTripMs } from '../limits/acked-send.js';
import { measureSinkOnce } from '../limits/net-limit.js';
import { measureReplicateOnce } from '../limits/replicate-limit.js';
import { cellName, type ProduceCell, type ProduceRepetition, windowOf } from './produce.js';

/** L_replicate_acked with one window, after one repetition of the cells. */
export interface AckedLimit {
  window: ProducerWindow;
  mbPerSecond: number;
  /** The bare acks=all round trip under that load (write to acknowledgement), ms. */
  roundTripP50Ms: number;
  roundTripP99Ms: number;
}

/** The limits measured after one repetition of the cells. */
export interface PairedLimits {
  sinkMBPerSecond: number;
  replicateMBPerSecond: number;
  /** One per window of the run's rf=3 acks=all cells (ackedWindows). */
  replicateAcked: AckedLimit[];
  /** CPU seconds of the sink, and of the three replicas together, in their windows. */
  sinkCpuSeconds: number;
  replicasCpuSeconds: number;
  loadAverage1m: number;
}

/** "5x128KiB": a window as result names and tables show it. */
export function windowName(window: ProducerWindow): string {
  return `${window.requests}x${window.requestBytes / 1024}KiB`;
}

function sameWindow(a: ProducerWindow, b: ProducerWindow): boolean {
  return a.requestBytes === b.requestBytes && a.requests === b.requests;
}

/** The distinct windows of the rf=3 acks=all cells among `cells`: the L_replicate_acked each is read against. */
export function ackedWindows(cells: readonly ProduceCell[]): ProducerWindow[] {
  const windows: ProducerWindow[] = [];
  for (const cell of cells) {
    if (cell.replicationFactor !== 3 || cell.acks !== -1) continue;
    const window = windowOf(cell);
    if (!windows.some((w) => sameWindow(w, window))) windows.push(window);
  }
  return windows;
}

/**
 * One L_sink and one L_replicate repetition of `durationMs`, and one L_replicate_acked per window in `windows`,
 * each in a directory of `parentDir` removed after.
 */
export async function measurePairedLimits(
  parentDir: string,
  durationMs: number,
  log: (message: string) => void,
  repetition: number,
  windows: readonly ProducerWindow[],
): Promise<PairedLimits> {
  const sink = await withTempDir(parentDir, '.brook-bench-sink-', (workDir) =>
    measureSinkOnce({ durationMs, workDir, log }, { appendToFile: true, tls: false }),
  );
  const replicate = await withTempDir(parentDir, '.brook-bench-replicate-', (workDir) =>
    measureReplicateOnce({ durationMs, workDir, log }),
  );
  const replicateAcked: AckedLimit[] = [];
  for (const window of windows) {
    const acked = await withTempDir(parentDir, '.brook-bench-replicate-acked-', (workDir) =>
      measureReplicateOnce({ durationMs, workDir, log }, { window }),
    );
    const { p50Ms, p99Ms } = roundTripMs(acked.details);
    replicateAcked.push({ window, mbPerSecond: acked.value, roundTripP50Ms: p50Ms, roundTripP99Ms: p99Ms });
  }
  const limits: PairedLimits = {
    sinkMBPerSecond: sink.value,
    replicateMBPerSecond: replicate.value,
    replicateAcked,
    sinkCpuSeconds: sink.details.sinkCpuSeconds as number,
    replicasCpuSeconds: replicate.details.replicasCpuSeconds as number,
    loadAverage1m: os.loadavg()[0]!,
  };
  const acked = replicateAcked.map(
    (a) =>
      `, L_replicate_acked ${windowName(a.window)} ${a.mbPerSecond.toFixed(1)} MB/s ` +
      `(round trip p50/p99 ${a.roundTripP50Ms.toFixed(2)}/${a.roundTripP99Ms.toFixed(1)} ms)`,
  );
  log(
    `  paired limits #${repetition + 1}: L_sink ${limits.sinkMBPerSecond.toFixed(1)} MB/s, L_replicate ` +
      `${limits.replicateMBPerSecond.toFixed(1)} MB/s${acked.join('')} (load ${limits.loadAverage1m.toFixed(1)})`,
  );
  return limits;
}

/** A cell's results as paired limits need them. */
export interface PairedCell {
  cell: ProduceCell;
  repetitions: readonly ProduceRepetition[];
}

/** A limit a cell is read against. */
interface CellLimit {
  /** L_sink, L_replicate, or L_replicate_acked-<window>. */
  name: string;
  /** The ratio's name in result lines: R_sink, R_replicate, R_replicate_acked. */
  ratio: string;
  mbPerSecond: (limits: PairedLimits) => number;
}

const sinkLimit: CellLimit = { name: 'L_sink', ratio: 'R_sink', mbPerSecond: (l) => l.sinkMBPerSecond };
const replicateLimit: CellLimit = {
  name: 'L_replicate',
  ratio: 'R_replicate',
  mbPerSecond: (l) => l.replicateMBPerSecond,
};

function ackedLimit(window: ProducerWindow): CellLimit {
  return {
    name: `L_replicate_acked-${windowName(window)}`,
    ratio: 'R_replicate_acked',
    mbPerSecond: (l) => {
      const acked = l.replicateAcked.find((a) => sameWindow(a.window, window));
      assert(acked !== undefined, `no L_replicate_acked was measured with the window ${windowName(window)}`);
      return acked.mbPerSecond;
    },
  };
}

/**
 * What a cell is read against: L_sink for a single node; L_replicate for a replicated cell, and for acks=all also
 * L_replicate_acked with the generator's window for the cell (which bounds it when the window, not the cores, does).
 */
function limitsOf(cell: ProduceCell): CellLimit[] {
  if (cell.replicationFactor === 1) return [sinkLimit];
  return cell.acks === -1 ? [replicateLimit, ackedLimit(windowOf(cell))] : [replicateLimit];
}

/** A cell's wire MB/s over one of its limits, repetition by repetition. */
function pairedRatios(result: PairedCell, limit: CellLimit, limits: readonly PairedLimits[]): number[] {
  assert(result.repetitions.length === limits.length, 'every repetition of the cells has its paired limits');
  return result.repetitions.map((r, i) => r.wireMBPerSecond / limit.mbPerSecond(limits[i]!));
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
  for (const { window } of limits[0]?.replicateAcked ?? []) {
    const limit = ackedLimit(window);
    writer.figure(`${limit.name}-paired`, 'MB/s', summarize(limits.map(limit.mbPerSecond)), {
      description: `L_replicate_acked with ${window.requests} requests of ${window.requestBytes} bytes in flight, one repetition after each repetition of the produce cells`,
    });
  }
  writer.write('L_replicate-over-L_sink-paired', {
    ...summarize(replicationBound(limits)),
    meaning:
      'the highest rf=3 over single-node produce any broker could reach in those minutes, pair by pair',
  });
  for (const cell of cells) {
    for (const limit of limitsOf(cell.cell)) {
      writer.write(`${limit.ratio}-paired-${cellName(cell.cell)}`, {
        ...summarize(pairedRatios(cell, limit, limits)),
        meaning: `the cell's wire MB/s over the ${limit.name} repetition measured after its repetition, pair by pair`,
      });
    }
  }
}

export function formatPairedLimits(cells: readonly PairedCell[], limits: readonly PairedLimits[]): string {
  const rows = cells.flatMap((cell) =>
    limitsOf(cell.cell).map((limit) => [
      cellName(cell.cell),
      formatValuesRange(cell.repetitions.map((r) => r.wireMBPerSecond)),
      limit.name,
      formatValuesRange(limits.map(limit.mbPerSecond)),
      formatValuesRange(pairedRatios(cell, limit, limits)),
    ]),
  );
  rows.push(['L_replicate / L_sink', '-', '-', '-', formatValuesRange(replicationBound(limits))]);
  return formatTable(['cell', 'wire MB/s', 'paired limit', 'limit MB/s', 'cell / limit, paired'], rows);
}
