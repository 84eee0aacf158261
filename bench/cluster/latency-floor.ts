// The latency a cell of latency mode is read against: the bare round trip of the same writes at the cell's own rate
// and window (../limits/acked-send.ts), measured after each repetition of the cells for as long as a cell's
// window, on the same two cores as the brokers were. A replicated cell's floor is L_replicate_acked (a leader that
// appends and forwards, two followers that append and answer with their count): every hop of an acks=all write and
// nothing else; with acks=1 the consumer still waits for those hops (the high watermark), so the floor is the same.
// A single-node cell's floor is L_sink_acked (a sink that appends and answers). Neither has the consumer's own
// fetch, so the floor is under what any broker's end-to-end latency could be. A cell's end-to-end p99 is read
// beside the floor's p99 of the same repetition (`e2e-p99-over-floor-paired-<cell>`), since on these machines a
// p99 moves with the minute more than with any change (bench/README.md, "Where the end-to-end p99 goes on an idle
// machine").
import os from 'node:os';
import { assert } from '../../src/common/assert.js';
import { summarize } from '../harness/repeat.js';
import type { ResultWriter } from '../harness/results.js';
import { formatTable, formatValuesRange } from '../harness/table.js';
import { withTempDir } from '../harness/temp-dir.js';
import { roundTripMs } from '../limits/acked-send.js';
import { measureSinkOnce } from '../limits/net-limit.js';
import type { LimitContext, LimitSample } from '../limits/registry.js';
import { measureReplicateOnce } from '../limits/replicate-limit.js';
import { cellName, type ProduceCell, type ProduceRepetition, windowOf } from './produce.js';

/** The floor of one cell after one repetition. */
export interface LatencyFloor {
  limit: 'L_sink_acked' | 'L_replicate_acked';
  p50Ms: number;
  p99Ms: number;
  loadAverage1m: number;
}

/** The cells that get a floor: those at a fixed rate. */
export function hasLatencyFloor(cell: ProduceCell): boolean {
  return cell.requestsPerSecond !== undefined;
}

function floorLimitOf(cell: ProduceCell): LatencyFloor['limit'] {
  return cell.replicationFactor === 1 ? 'L_sink_acked' : 'L_replicate_acked';
}

/** The floor's limit of a cell, at the cell's rate and window, once. */
function measureFloorOnce(cell: ProduceCell, context: LimitContext): Promise<LimitSample> {
  const acked = { window: windowOf(cell), requestsPerSecond: cell.requestsPerSecond };
  return floorLimitOf(cell) === 'L_sink_acked'
    ? measureSinkOnce(context, { appendToFile: true, tls: false, acked })
    : measureReplicateOnce(context, acked);
}

/** One repetition of each cell's floor; keyed by cell name. */
export async function measureLatencyFloors(
  parentDir: string,
  durationMs: number,
  log: (message: string) => void,
  repetition: number,
  cells: readonly ProduceCell[],
): Promise<Map<string, LatencyFloor>> {
  const floors = new Map<string, LatencyFloor>();
  for (const cell of cells.filter(hasLatencyFloor)) {
    const sample = await withTempDir(parentDir, '.brook-bench-floor-', (workDir) =>
      measureFloorOnce(cell, { durationMs, workDir, log }),
    );
    const floor: LatencyFloor = {
      limit: floorLimitOf(cell),
      ...roundTripMs(sample.details),
      loadAverage1m: os.loadavg()[0]!,
    };
    floors.set(cellName(cell), floor);
    log(
      `  latency floor #${repetition + 1} ${cellName(cell)}: ${floor.limit} at its rate, round trip ` +
        `p50/p99 ${floor.p50Ms.toFixed(2)}/${floor.p99Ms.toFixed(2)} ms (load ${floor.loadAverage1m.toFixed(1)})`,
    );
  }
  return floors;
}

/** A cell's repetitions as the floors need them. */
export interface FlooredCell {
  cell: ProduceCell;
  repetitions: readonly ProduceRepetition[];
}

function floorsOf(cell: ProduceCell, floors: readonly Map<string, LatencyFloor>[]): LatencyFloor[] {
  return floors.map((byCell, i) => {
    const floor = byCell.get(cellName(cell));
    assert(floor !== undefined, `no latency floor for ${cellName(cell)} after repetition ${i + 1}`);
    return floor;
  });
}

function endToEndP99s(cell: FlooredCell): number[] {
  return cell.repetitions.map((r) => {
    assert(r.endToEndP99Ms !== undefined, `${cellName(cell.cell)} ran without a tail consumer`);
    return r.endToEndP99Ms;
  });
}

export function recordLatencyFloors(
  writer: ResultWriter,
  cells: readonly FlooredCell[],
  floors: readonly Map<string, LatencyFloor>[],
): void {
  for (const cell of cells.filter((c) => hasLatencyFloor(c.cell))) {
    const name = cellName(cell.cell);
    const own = floorsOf(cell.cell, floors);
    const e2e = endToEndP99s(cell);
    writer.write(`latency-floor-${name}`, {
      unit: 'ms',
      p99: summarize(own.map((f) => f.p99Ms)),
      p50: summarize(own.map((f) => f.p50Ms)),
      repetitions: own,
      limit: own[0]!.limit,
      meaning: "the bare round trip at the cell's rate and window, one repetition after each of the cell's",
    });
    writer.write(`e2e-p99-over-floor-paired-${name}`, {
      ...summarize(e2e.map((p99, i) => p99 / own[i]!.p99Ms)),
      meaning: "the cell's end-to-end p99 over the floor's round-trip p99 measured after its repetition",
    });
  }
}

export function formatLatencyFloors(
  cells: readonly FlooredCell[],
  floors: readonly Map<string, LatencyFloor>[],
): string {
  const rows = cells
    .filter((c) => hasLatencyFloor(c.cell))
    .map((cell) => {
      const own = floorsOf(cell.cell, floors);
      const e2e = endToEndP99s(cell);
      return [
        cellName(cell.cell),
        own[0]!.limit,
        formatValuesRange(cell.repetitions.map((r) => r.produceP99Ms)),
        formatValuesRange(e2e),
        formatValuesRange(own.map((f) => f.p50Ms)),
        formatValuesRange(own.map((f) => f.p99Ms)),
        formatValuesRange(e2e.map((p99, i) => p99 / own[i]!.p99Ms)),
      ];
    });
  return formatTable(
    [
      'cell',
      'floor',
      'produce p99 ms',
      'e2e p99 ms',
      'floor p50 ms',
      'floor p99 ms',
      'e2e p99 / floor p99, paired',
    ],
    rows,
  );
}
