// What every checker of a chaos run answers. A checker reads the whole history (after the run) and reports the
// anomalies it found, each with the indexes of the ops that prove it, so that the report can print the window
// of history around it. Workloads add their own checkers (the transactional read-process-write workload will
// add one for read_committed); the run calls every checker of its workload and joins the results.

import type { Op } from './history.js';

export interface Anomaly {
  /** A short name: lost, duplicate, reorder, inconsistent-offset, committed-undelivered, ... */
  kind: string;
  description: string;
  /** The ops that show it (invoke and completion indexes). */
  opIndexes: number[];
}

export interface CheckResult {
  checker: string;
  /** false when an anomaly was found; null when the history was not complete enough to decide. */
  valid: boolean | null;
  /** Counts of what was checked (acknowledged, read, ...), for the report. */
  stats: Record<string, number>;
  anomalies: Anomaly[];
  /** Why the checker could not decide, when valid is null. */
  unknown?: string;
}

export interface Checker {
  readonly name: string;
  check(history: readonly Op[]): CheckResult;
}

/** Counts of anomalies by kind across results. */
export function anomalyCounts(results: readonly CheckResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) for (const a of r.anomalies) counts[a.kind] = (counts[a.kind] ?? 0) + 1;
  return counts;
}

/** The final reads of a history by partition (null if a partition's read did not complete). */
export function finalReads(
  history: readonly Op[],
  partitions: number,
): Map<number, { end: number; records: [number, number, string][]; opIndex: number } | null> {
  const out = new Map<number, { end: number; records: [number, number, string][]; opIndex: number } | null>();
  for (let p = 0; p < partitions; p++) out.set(p, null);
  for (const op of history) {
    if (op.process !== 'final' || op.f !== 'read' || op.type !== 'ok') continue;
    const v = op.value as { partition: number; end: number; records: [number, number, string][] };
    out.set(v.partition, { end: v.end, records: v.records, opIndex: op.index });
  }
  return out;
}
