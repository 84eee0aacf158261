// Committed-offset safety (the third workload of issue 13, checked on the queue workload's history): a group's
// committed offset c for a partition must never point past a record the group was not delivered, that is,
// every record of the final read below c was returned by some member's poll before the commit was sent, with
// the same value at the same offset. A commit past the end of the final log is reported too (the records it
// covered are gone).

import type { Anomaly, Checker, CheckResult } from './checker.js';
import { finalReads } from './checker.js';
import type { Op } from './history.js';

export class CommittedOffsetsChecker implements Checker {
  readonly name = 'committed-offsets';

  constructor(private readonly partitions: number) {}

  check(history: readonly Op[]): CheckResult {
    const reads = finalReads(history, this.partitions);
    const anomalies: Anomaly[] = [];
    if ([...reads.values()].some((r) => r === null))
      return { checker: this.name, valid: null, stats: {}, anomalies, unknown: 'a final read failed' };
    // Per partition: the final records in offset order and how far the delivered prefix reaches.
    const delivered = new Map<number, Map<number, string>>();
    const cursor = new Map<number, number>();
    for (let p = 0; p < this.partitions; p++) {
      delivered.set(p, new Map());
      cursor.set(p, 0);
    }
    const firstUndelivered = (p: number): number => {
      const read = reads.get(p)!;
      const seen = delivered.get(p)!;
      let i = cursor.get(p)!;
      while (i < read.records.length) {
        const [, offset, value] = read.records[i]!;
        if (seen.get(offset) !== value) break;
        i++;
      }
      cursor.set(p, i);
      return i < read.records.length ? read.records[i]![1] : read.end;
    };
    // What each process's pending commit could rely on when it was sent.
    const pending = new Map<string, { index: number; bounds: Map<number, number> }>();
    let commits = 0;
    for (const op of history) {
      if (op.f === 'poll' && op.type === 'ok') {
        for (const [p, offset, value] of op.value as [number, number, string][]) {
          const seen = delivered.get(p);
          if (seen !== undefined && !seen.has(offset)) seen.set(offset, value);
        }
      } else if (op.f === 'commit' && op.type === 'invoke') {
        const bounds = new Map<number, number>();
        for (const p of Object.keys(op.value as object)) bounds.set(Number(p), firstUndelivered(Number(p)));
        pending.set(op.process, { index: op.index, bounds });
      } else if (op.f === 'commit' && op.type === 'ok') {
        commits++;
        const sent = pending.get(op.process);
        if (sent === undefined) continue;
        for (const [p, committed] of Object.entries(op.value as Record<string, number>)) {
          const partition = Number(p);
          const bound = sent.bounds.get(partition)!;
          const end = reads.get(partition)!.end;
          if (committed > end) {
            anomalies.push({
              kind: 'committed-past-end',
              description: `${op.process} committed ${partition}:${committed}, past the final log end ${end}`,
              opIndexes: [sent.index, op.index],
            });
          } else if (committed > bound) {
            anomalies.push({
              kind: 'committed-undelivered',
              description: `${op.process} committed ${partition}:${committed} but the record at ${partition}:${bound} of the final read had not been delivered to the group`,
              opIndexes: [sent.index, op.index, reads.get(partition)!.opIndex],
            });
          }
        }
      }
    }
    return { checker: this.name, valid: anomalies.length === 0, stats: { commits }, anomalies };
  }
}
