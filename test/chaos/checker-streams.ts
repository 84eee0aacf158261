// The exactly-once checker of the Kafka Streams workload (workload-streams.ts): the application counts the input
// records per key and writes every new count "<key>=<count>" to the output topic, under exactly_once_v2 with no
// record cache, so each input record it consumed makes exactly one output record. With n the number of input
// records of a key below the application's final committed offsets (the inputs it consumed for good), that key's
// counts in the read_committed output, in offset order, must be exactly 1, 2, ..., n:
// - **duplicate**: a count not above the one before (an input processed twice, or a count restored short of
//   what the output already had);
// - **skipped**: a count more than one above the one before (an update lost: state restored ahead of the
//   output, or an output record lost);
// - **lost-input**: the last count below n (inputs consumed, offsets committed, never counted);
// - **uncommitted-output**: the last count above n (output committed for inputs whose offsets were not);
// - **misplaced**: one key's counts in two output partitions; **phantom**: an output record not of the form
//   "<key>=<count>" or of a key no producer sent; **offset-past-end**: a committed offset past the input's end.
// A key's input is on one partition (the producers keep it there), so one task counts it.

import { type Anomaly, type Checker, type CheckResult, finalReads } from './checker.js';
import type { Seen } from './final-read.js';
import type { Op } from './history.js';

interface KeyState {
  partition: number;
  last: number;
  /** Offset of the record holding the last count. */
  lastOffset: number;
}

export class StreamsCountChecker implements Checker {
  readonly name = 'streams-exactly-once';

  constructor(private readonly partitions: number) {}

  check(history: readonly Op[]): CheckResult {
    const anomalies: Anomaly[] = [];
    // The key of every value a producer sent.
    const keyOf = new Map<string, string>();
    for (const op of history) {
      if (op.f !== 'send' || op.type !== 'invoke') continue;
      const v = op.value as { value: string; key?: string };
      if (v.key !== undefined) keyOf.set(v.value, v.key);
    }

    const inputReads = finalReads(history, this.partitions);
    const outputReads = new Map<number, { records: Seen[]; opIndex: number }>();
    let offsets: { value: Record<string, number>; opIndex: number } | null = null;
    for (const op of history) {
      if (op.process !== 'final' || op.type !== 'ok') continue;
      if (op.f === 'read-output') {
        const v = op.value as { partition: number; records: Seen[] };
        outputReads.set(v.partition, { records: v.records, opIndex: op.index });
      } else if (op.f === 'offsets') {
        offsets = { value: op.value as Record<string, number>, opIndex: op.index };
      }
    }
    const stats: Record<string, number> = {};
    const missingInput = [...inputReads].filter(([, r]) => r === null).map(([p]) => p);
    const missingOutput = Array.from({ length: this.partitions }, (_, p) => p).filter(
      (p) => !outputReads.has(p),
    );
    if (missingInput.length > 0 || missingOutput.length > 0 || offsets === null) {
      const what = [
        missingInput.length > 0 ? `input partitions ${missingInput.join(',')} not read` : '',
        missingOutput.length > 0 ? `output partitions ${missingOutput.join(',')} not read` : '',
        offsets === null ? 'committed offsets not read' : '',
      ].filter((x) => x !== '');
      return { checker: this.name, valid: null, stats, anomalies, unknown: what.join('; ') };
    }

    // n per key: the input records below the committed offset of their partition.
    const consumed = new Map<string, { n: number; partition: number; readIndex: number }>();
    let consumedRecords = 0;
    let unconsumedRecords = 0;
    for (const [partition, read] of inputReads) {
      const committed = offsets.value[String(partition)] ?? 0;
      if (committed > read!.end) {
        anomalies.push({
          kind: 'offset-past-end',
          description: `the application committed input ${partition}:${committed}, past the end of the final read (${read!.end})`,
          opIndexes: [offsets.opIndex, read!.opIndex],
        });
      }
      for (const [, offset, value] of read!.records) {
        const key = keyOf.get(value);
        if (key === undefined) continue;
        const c = consumed.get(key) ?? { n: 0, partition, readIndex: read!.opIndex };
        consumed.set(key, c);
        if (offset < committed) {
          c.n++;
          consumedRecords++;
        } else unconsumedRecords++;
      }
    }
    stats.keys = consumed.size;
    stats.consumed = consumedRecords;
    stats.unconsumed = unconsumedRecords;

    // Each key's counts in the committed output, in offset order.
    const keys = new Map<string, KeyState>();
    let outputRecords = 0;
    for (const [partition, read] of [...outputReads].sort(([a], [b]) => a - b)) {
      for (const [, offset, value] of read.records) {
        outputRecords++;
        const at = value.lastIndexOf('=');
        const key = value.slice(0, at);
        const count = Number(value.slice(at + 1));
        if (at < 0 || !Number.isSafeInteger(count) || !consumed.has(key)) {
          anomalies.push({
            kind: 'phantom',
            description: `output ${partition}:${offset} "${value}" is not a count of a key the producers sent`,
            opIndexes: [read.opIndex],
          });
          continue;
        }
        const k = keys.get(key) ?? { partition, last: 0, lastOffset: -1 };
        keys.set(key, k);
        if (k.partition !== partition) {
          anomalies.push({
            kind: 'misplaced',
            description: `key ${key} has counts in output partitions ${k.partition} and ${partition} (${partition}:${offset} "${value}")`,
            opIndexes: [read.opIndex, outputReads.get(k.partition)!.opIndex],
          });
          continue;
        }
        if (count <= k.last) {
          anomalies.push({
            kind: 'duplicate',
            description: `key ${key}: count ${count} at output ${partition}:${offset} after count ${k.last} at ${partition}:${k.lastOffset} (an input counted twice, or the count restored short)`,
            opIndexes: [read.opIndex],
          });
        } else if (count > k.last + 1) {
          anomalies.push({
            kind: 'skipped',
            description: `key ${key}: count ${count} at output ${partition}:${offset} after count ${k.last} at ${partition}:${k.lastOffset} (counts ${k.last + 1}..${count - 1} never went out)`,
            opIndexes: [read.opIndex],
          });
        }
        if (count > k.last) {
          k.last = count;
          k.lastOffset = offset;
        }
      }
    }

    stats['output-committed'] = outputRecords;

    for (const [key, c] of [...consumed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const k = keys.get(key);
      const last = k?.last ?? 0;
      const outputOp = k === undefined ? [] : [outputReads.get(k.partition)!.opIndex];
      if (last < c.n) {
        anomalies.push({
          kind: 'lost-input',
          description: `key ${key}: ${c.n} inputs on partition ${c.partition} below the committed offset, but the last count in the output is ${last}`,
          opIndexes: [c.readIndex, offsets.opIndex, ...outputOp],
        });
      } else if (last > c.n) {
        anomalies.push({
          kind: 'uncommitted-output',
          description: `key ${key}: the output counts to ${last}, but only ${c.n} inputs on partition ${c.partition} are below the committed offset`,
          opIndexes: [c.readIndex, offsets.opIndex, ...outputOp],
        });
      }
    }
    return { checker: this.name, valid: anomalies.length === 0, stats, anomalies };
  }
}
