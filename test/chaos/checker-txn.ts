// The exactly-once checker of the transactional read-process-write workload (workload-txn.ts). Output records
// are "<input value>@<transaction>"; the committed output is the final read_committed read of the output topic,
// and the group's committed input offsets are read at the end (after every transactional id was fenced, so no
// transaction is open). With C the committed offset of an input partition:
// - lost: an input record below C that is not in the committed output (its offset was committed, its output not);
// - duplicate: an input value more than once in the committed output;
// - uncommitted-output: an input record at or above C whose output is committed (it would be processed again);
// - aborted-read: a record of a transaction that was aborted (EndTxn abort answered, or failed before EndTxn
//   commit was sent) in the committed output;
// - lost-commit: a transaction whose EndTxn commit was answered without error, with records missing from the
//   committed output;
// - partial-txn: a transaction of unknown outcome with some but not all of its records committed;
// - phantom: a committed output record that no transaction wrote (unknown transaction or input value);
// - dirty-read: a record the downstream read_committed consumer polled that is not in the committed output at
//   that offset (it read a transaction that never committed, or a value that later moved);
// - offset-past-end: a committed offset beyond the end of the final input read.
// Inputs above C are counted as unprocessed (liveness), not as anomalies.

import type { Anomaly, Checker, CheckResult } from './checker.js';
import { finalReads } from './checker.js';
import type { Op } from './history.js';

type Seen = [number, number, string];

interface Txn {
  invokeIndex: number;
  completionIndex: number | null;
  inputs: Seen[];
  outcome: 'committed' | 'aborted' | 'unknown';
}

export class ExactlyOnceChecker implements Checker {
  readonly name = 'exactly-once';

  constructor(private readonly partitions: number) {}

  check(history: readonly Op[]): CheckResult {
    const anomalies: Anomaly[] = [];
    const txns = new Map<string, Txn>();
    for (const op of history) {
      if (op.f !== 'txn') continue;
      const v = op.value as { txn: string; inputs?: Seen[]; outcome?: string };
      if (op.type === 'invoke') {
        txns.set(v.txn, {
          invokeIndex: op.index,
          completionIndex: null,
          inputs: v.inputs ?? [],
          outcome: 'unknown',
        });
        continue;
      }
      const t = txns.get(v.txn);
      if (t === undefined) continue;
      t.completionIndex = op.index;
      if (op.type === 'ok') t.outcome = v.outcome === 'committed' ? 'committed' : 'aborted';
      else if (op.type === 'fail') t.outcome = 'aborted';
    }
    const opsOf = (t: Txn) =>
      t.completionIndex === null ? [t.invokeIndex] : [t.invokeIndex, t.completionIndex];

    const inputReads = finalReads(history, this.partitions);
    const outputReads = new Map<number, { records: Seen[]; end: number; opIndex: number }>();
    let outputAll = 0;
    let offsets: { value: Record<string, number>; opIndex: number } | null = null;
    for (const op of history) {
      if (op.process !== 'final' || op.type !== 'ok') continue;
      if (op.f === 'read-output') {
        const v = op.value as { partition: number; end: number; records: Seen[] };
        outputReads.set(v.partition, { records: v.records, end: v.end, opIndex: op.index });
      } else if (op.f === 'read-output-uncommitted') {
        outputAll += (op.value as { records: Seen[] }).records.length;
      } else if (op.f === 'offsets') {
        offsets = { value: op.value as Record<string, number>, opIndex: op.index };
      }
    }
    // Which transactions read each input value, and which values have an output record at all (read_uncommitted):
    // a lost input read by no transaction was skipped by a processor; one read by some lost its output afterwards.
    const readers = new Map<string, string[]>();
    for (const [id, t] of txns)
      for (const [, , v] of t.inputs) readers.set(v, [...(readers.get(v) ?? []), id]);
    // An output partition whose read_committed end (its last stable offset) is below its log end at the final read
    // holds a transaction nobody ended: everything after it is missing from the committed output.
    const writtenAtAll = new Set<string>();
    const logEnds = new Map<number, number>();
    for (const op of history) {
      if (op.process !== 'final' || op.type !== 'ok' || op.f !== 'read-output-uncommitted') continue;
      const read = op.value as { partition: number; end: number; records: Seen[] };
      logEnds.set(read.partition, read.end);
      for (const [, , value] of read.records) {
        const at = value.lastIndexOf('@');
        writtenAtAll.add(at < 0 ? value : value.slice(0, at));
      }
    }
    const missingInput = [...inputReads].filter(([, r]) => r === null).map(([p]) => p);
    const missingOutput = Array.from({ length: this.partitions }, (_, p) => p).filter(
      (p) => !outputReads.has(p),
    );
    const stats: Record<string, number> = {
      transactions: txns.size,
      committed: [...txns.values()].filter((t) => t.outcome === 'committed').length,
      aborted: [...txns.values()].filter((t) => t.outcome === 'aborted').length,
      'unknown-outcome': [...txns.values()].filter((t) => t.outcome === 'unknown').length,
      'output-read-uncommitted': outputAll,
    };
    if (missingInput.length > 0 || missingOutput.length > 0 || offsets === null) {
      const what = [
        missingInput.length > 0 ? `input partitions ${missingInput.join(',')} not read` : '',
        missingOutput.length > 0 ? `output partitions ${missingOutput.join(',')} not read` : '',
        offsets === null ? 'committed offsets not read' : '',
      ].filter((x) => x !== '');
      return { checker: this.name, valid: null, stats, anomalies, unknown: what.join('; ') };
    }

    // The committed output: where each input value is, and how many records of each transaction are visible.
    const outputOf = new Map<string, { partition: number; offset: number; txn: string; opIndex: number }[]>();
    const visible = new Map<string, number>();
    const committedAt = new Map<string, string>();
    let outputRecords = 0;
    for (const [partition, read] of outputReads) {
      for (const [, offset, value] of read.records) {
        outputRecords++;
        committedAt.set(`${partition}:${offset}`, value);
        const at = value.lastIndexOf('@');
        const input = at < 0 ? value : value.slice(0, at);
        const txnId = at < 0 ? '' : value.slice(at + 1);
        const t = txns.get(txnId);
        if (t === undefined || !t.inputs.some(([p, , v]) => p === partition && v === input)) {
          anomalies.push({
            kind: 'phantom',
            description: `output ${partition}:${offset} "${value}" was written by no transaction that read that input on that partition`,
            opIndexes: [read.opIndex, ...(t === undefined ? [] : opsOf(t))],
          });
        }
        visible.set(txnId, (visible.get(txnId) ?? 0) + 1);
        outputOf.set(input, [
          ...(outputOf.get(input) ?? []),
          { partition, offset, txn: txnId, opIndex: read.opIndex },
        ]);
      }
    }
    stats['output-committed'] = outputRecords;

    for (const [id, t] of txns) {
      const n = visible.get(id) ?? 0;
      const expected = t.inputs.length;
      if (t.outcome === 'aborted' && n > 0) {
        anomalies.push({
          kind: 'aborted-read',
          description: `transaction ${id} was aborted, yet ${n} of its ${expected} records are in the committed output`,
          opIndexes: opsOf(t),
        });
      } else if (t.outcome === 'committed' && n < expected) {
        anomalies.push({
          kind: 'lost-commit',
          description: `transaction ${id} committed (EndTxn answered), but ${n} of its ${expected} records are in the committed output`,
          opIndexes: opsOf(t),
        });
      } else if (t.outcome === 'unknown' && n > 0 && n < expected) {
        anomalies.push({
          kind: 'partial-txn',
          description: `transaction ${id} (outcome unknown): ${n} of its ${expected} records are in the committed output`,
          opIndexes: opsOf(t),
        });
      }
    }

    const stuck = [...outputReads]
      .filter(([p, r]) => r.end < (logEnds.get(p) ?? r.end))
      .map(([p, r]) => `; output ${p} stable only to ${r.end} of ${logEnds.get(p)}`)
      .join('');
    // Exactly once, measured against the committed input offsets.
    let processed = 0;
    let unprocessed = 0;
    for (const [partition, read] of inputReads) {
      const committed = offsets.value[String(partition)] ?? 0;
      if (committed > read!.end) {
        anomalies.push({
          kind: 'offset-past-end',
          description: `the group committed input ${partition}:${committed}, past the end of the final read (${read!.end})`,
          opIndexes: [offsets.opIndex, read!.opIndex],
        });
      }
      for (const [, offset, value] of read!.records) {
        const out = outputOf.get(value) ?? [];
        const txnOps = out.flatMap((o) => {
          const t = txns.get(o.txn);
          return t === undefined ? [] : opsOf(t);
        });
        if (offset < committed) {
          processed++;
          if (out.length === 0) {
            const by = readers.get(value) ?? [];
            const readBy =
              by.length === 0
                ? 'read by no transaction'
                : `read by ${by.map((id) => `${id} (${txns.get(id)!.outcome})`).join(', ')}`;
            const written = writtenAtAll.has(value)
              ? 'an output record in the log'
              : 'no output record in the log';
            anomalies.push({
              kind: 'lost',
              description: `input ${partition}:${offset} "${value}" is below the committed offset ${committed} but not in the committed output (${readBy}; ${written}${stuck})`,
              opIndexes: [
                read!.opIndex,
                offsets.opIndex,
                ...by.slice(-4).flatMap((id) => opsOf(txns.get(id)!)),
              ],
            });
          }
        } else {
          unprocessed++;
          if (out.length > 0) {
            anomalies.push({
              kind: 'uncommitted-output',
              description: `input ${partition}:${offset} "${value}" is at or above the committed offset ${committed}, yet its output is committed (transaction ${out[0]!.txn})`,
              opIndexes: [read!.opIndex, offsets.opIndex, ...txnOps],
            });
          }
        }
        if (out.length > 1) {
          anomalies.push({
            kind: 'duplicate',
            description: `input ${partition}:${offset} "${value}" is ${out.length} times in the committed output: ${out.map((o) => `${o.partition}:${o.offset} (${o.txn})`).join(', ')}`,
            opIndexes: [read!.opIndex, ...txnOps],
          });
        }
      }
    }
    stats.processed = processed;
    stats.unprocessed = unprocessed;

    // Dirty reads: what the downstream read_committed consumer saw must be the committed output.
    let downstream = 0;
    for (const op of history) {
      if (op.f !== 'poll-output' || op.type !== 'ok') continue;
      for (const [partition, offset, value] of op.value as Seen[]) {
        downstream++;
        const final = committedAt.get(`${partition}:${offset}`);
        if (final === value) continue;
        const at = value.lastIndexOf('@');
        const t = txns.get(at < 0 ? '' : value.slice(at + 1));
        anomalies.push({
          kind: 'dirty-read',
          description:
            final === undefined
              ? `${op.process} polled ${partition}:${offset} "${value}" with read_committed; the committed output has nothing there`
              : `${op.process} polled ${partition}:${offset} "${value}" with read_committed; the committed output has "${final}" there`,
          opIndexes: [op.index, outputReads.get(partition)!.opIndex, ...(t === undefined ? [] : opsOf(t))],
        });
      }
    }
    stats['downstream-polled'] = downstream;
    return { checker: this.name, valid: anomalies.length === 0, stats, anomalies };
  }
}
