// Jepsen's Kafka queue checker, for the queue workload:
// - lost: a value acknowledged (send ok) that the final read of its partition does not contain;
// - duplicate: a value at two offsets, in the final read or in what the consumers polled;
// - reorder: two values one producer had acknowledged on one partition whose offsets in the final read are in
//   the opposite order of their sending (a producer numbers its values in send order);
// - inconsistent-offset: two different values at one offset of a partition, as any two readers saw it (the
//   acknowledgement's offset, each poll, the final read).
// Values sent without a definite answer (info) may or may not be in the log; they count as stats only.

import type { Anomaly, Checker, CheckResult } from './checker.js';
import { finalReads } from './checker.js';
import type { Op } from './history.js';

interface Sighting {
  value: string;
  opIndex: number;
  source: string;
}

export class QueueChecker implements Checker {
  readonly name = 'queue';

  constructor(private readonly partitions: number) {}

  check(history: readonly Op[]): CheckResult {
    const anomalies: Anomaly[] = [];
    const invokeOf = new Map<string, number>();
    const acked = new Map<
      string,
      { partition: number; offset: number; opIndex: number; invokeIndex: number }
    >();
    let attempted = 0;
    let indeterminate = 0;
    const indeterminateValues = new Set<string>();
    for (const op of history) {
      if (op.f !== 'send') continue;
      const v = op.value as { value: string; partition: number; offset?: number };
      if (op.type === 'invoke') {
        attempted++;
        invokeOf.set(v.value, op.index);
      } else if (op.type === 'ok') {
        acked.set(v.value, {
          partition: v.partition,
          offset: v.offset!,
          opIndex: op.index,
          invokeIndex: invokeOf.get(v.value) ?? op.index,
        });
      } else if (op.type === 'info') {
        indeterminate++;
        indeterminateValues.add(v.value);
      }
    }

    const reads = finalReads(history, this.partitions);
    const missing = [...reads].filter(([, r]) => r === null).map(([p]) => p);
    // Where each value is in the final read, and every reader's view of each offset.
    const finalAt = new Map<string, { partition: number; offset: number; opIndex: number }[]>();
    const byOffset = new Map<string, Sighting[]>();
    const see = (partition: number, offset: number, s: Sighting) => {
      const key = `${partition}:${offset}`;
      let list = byOffset.get(key);
      if (list === undefined) byOffset.set(key, (list = []));
      if (!list.some((x) => x.value === s.value)) list.push(s);
    };
    let finalRecords = 0;
    for (const [partition, read] of reads) {
      if (read === null) continue;
      for (const [, offset, value] of read.records) {
        finalRecords++;
        let at = finalAt.get(value);
        if (at === undefined) finalAt.set(value, (at = []));
        at.push({ partition, offset, opIndex: read.opIndex });
        see(partition, offset, { value, opIndex: read.opIndex, source: 'final read' });
      }
    }
    for (const [value, a] of acked) see(a.partition, a.offset, { value, opIndex: a.opIndex, source: 'ack' });
    // Polled positions by value, for duplicates among polls.
    const polledAt = new Map<string, Map<string, number>>();
    for (const op of history) {
      if (op.f !== 'poll' || op.type !== 'ok') continue;
      for (const [partition, offset, value] of op.value as [number, number, string][]) {
        see(partition, offset, { value, opIndex: op.index, source: `poll by ${op.process}` });
        let at = polledAt.get(value);
        if (at === undefined) polledAt.set(value, (at = new Map()));
        at.set(`${partition}:${offset}`, op.index);
      }
    }

    // lost
    if (missing.length === 0) {
      for (const [value, a] of acked) {
        if (finalAt.has(value)) continue;
        anomalies.push({
          kind: 'lost',
          description: `${value} acknowledged at ${a.partition}:${a.offset} is not in the final read of partition ${a.partition}`,
          opIndexes: [a.invokeIndex, a.opIndex, reads.get(a.partition)!.opIndex],
        });
      }
    }
    // duplicates
    for (const [value, at] of finalAt) {
      if (at.length < 2) continue;
      anomalies.push({
        kind: 'duplicate',
        description: `${value} is in the final read at ${at.map((x) => `${x.partition}:${x.offset}`).join(' and ')}`,
        opIndexes: [...new Set(at.map((x) => x.opIndex))],
      });
    }
    for (const [value, at] of polledAt) {
      if (at.size < 2 || (finalAt.get(value)?.length ?? 0) >= 2) continue;
      anomalies.push({
        kind: 'duplicate',
        description: `${value} was polled at ${[...at.keys()].join(' and ')}`,
        opIndexes: [...new Set(at.values())],
      });
    }
    // inconsistent offsets
    for (const [key, sightings] of byOffset) {
      if (sightings.length < 2) continue;
      anomalies.push({
        kind: 'inconsistent-offset',
        description: `offset ${key} holds ${sightings.map((s) => `${s.value} (${s.source})`).join(', ')}`,
        opIndexes: sightings.map((s) => s.opIndex),
      });
    }
    // reorder: per producer and partition, acknowledged values in send order must have rising final offsets.
    const sequences = new Map<string, { n: number; value: string; offset: number; opIndex: number }[]>();
    for (const [value, a] of acked) {
      const at = finalAt.get(value)?.[0];
      if (at === undefined) continue;
      const dash = value.lastIndexOf('-');
      const key = `${value.slice(0, dash)}@${at.partition}`;
      let list = sequences.get(key);
      if (list === undefined) sequences.set(key, (list = []));
      list.push({ n: Number(value.slice(dash + 1)), value, offset: at.offset, opIndex: a.opIndex });
    }
    for (const list of sequences.values()) {
      list.sort((x, y) => x.n - y.n);
      for (let i = 1; i < list.length; i++) {
        const [a, b] = [list[i - 1]!, list[i]!];
        if (b.offset > a.offset) continue;
        anomalies.push({
          kind: 'reorder',
          description: `${a.value} was sent before ${b.value} but is at offset ${a.offset}, after ${b.offset}`,
          opIndexes: [a.opIndex, b.opIndex],
        });
      }
    }

    let indeterminateWritten = 0;
    for (const v of indeterminateValues) if (finalAt.has(v)) indeterminateWritten++;
    let ackedUnpolled = 0;
    for (const v of acked.keys()) if (!polledAt.has(v)) ackedUnpolled++;
    const result: CheckResult = {
      checker: this.name,
      valid: anomalies.length > 0 ? false : missing.length > 0 ? null : true,
      stats: {
        attempted,
        acknowledged: acked.size,
        indeterminate,
        indeterminateInLog: indeterminateWritten,
        finalRecords,
        ackedNeverPolled: ackedUnpolled,
      },
      anomalies,
    };
    if (missing.length > 0) result.unknown = `final read failed for partition(s) ${missing.join(', ')}`;
    return result;
  }
}
