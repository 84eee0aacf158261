// The streams workload's checker on small made-up histories: a clean one passes (each key's counts 1..n, n its
// inputs below the committed offset), and each anomaly it names (duplicate, skipped, lost-input,
// uncommitted-output, misplaced, phantom, offset-past-end) is found in a history that has it; a history without
// its final reads is undecided. The key of each input comes from the producers' send ops, as in a run.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamsCountChecker } from './checker-streams.js';
import type { Seen } from './final-read.js';
import type { Op, OpType } from './history.js';
import { recordKey } from './workload-queue.js';

class Builder {
  readonly ops: Op[] = [];
  add(type: OpType, process: string, f: string, value?: unknown): this {
    this.ops.push({ index: this.ops.length, time: this.ops.length, type, process, f, value });
    return this;
  }
  /** Sends of values to partition 0 with their keys. */
  sends(keyed: [string, string][]): this {
    for (const [value, key] of keyed) this.add('invoke', 'p0', 'send', { value, partition: 0, key });
    return this;
  }
  /** Final reads of input and output partition 0, and the committed input offset. */
  final(input: Seen[], output: Seen[], committed: number): this {
    this.add('ok', 'final', 'read', { partition: 0, end: input.length, records: input });
    this.add('ok', 'final', 'read-output', { partition: 0, end: output.length, records: output });
    return this.add('ok', 'final', 'offsets', { 0: committed });
  }
}

/** Three inputs: two of key a, one of key b. */
function inputs(): Builder {
  return new Builder().sends([
    ['p0-0', 'a'],
    ['p0-1', 'b'],
    ['p0-2', 'a'],
  ]);
}
const INPUT: Seen[] = [
  [0, 0, 'p0-0'],
  [0, 1, 'p0-1'],
  [0, 2, 'p0-2'],
];

function output(...values: string[]): Seen[] {
  return values.map((v, i) => [0, i, v]);
}

function kinds(ops: Op[], partitions = 1): string[] {
  const result = new StreamsCountChecker(partitions).check(ops);
  return [...new Set(result.anomalies.map((a) => a.kind))].sort();
}

describe('the streams exactly-once checker', () => {
  it('passes a history where each key counts 1..n, n its inputs below the committed offset', () => {
    const h = inputs().final(INPUT, output('a=1', 'b=1', 'a=2'), 3);
    const result = new StreamsCountChecker(1).check(h.ops);
    assert.equal(result.valid, true, JSON.stringify(result.anomalies));
    assert.deepEqual(result.stats, { keys: 2, consumed: 3, unconsumed: 0, 'output-committed': 3 });
    // Inputs above the committed offset need no count yet.
    const partial = new StreamsCountChecker(1).check(inputs().final(INPUT, output('a=1', 'b=1'), 2).ops);
    assert.equal(partial.valid, true, JSON.stringify(partial.anomalies));
    assert.equal(partial.stats.unconsumed, 1);
  });

  it('finds a count repeated (an input counted twice)', () => {
    const h = inputs().final(INPUT, output('a=1', 'b=1', 'a=1', 'a=2'), 3);
    assert.deepEqual(kinds(h.ops), ['duplicate']);
  });

  it('finds a count skipped (an update lost)', () => {
    const h = inputs().final(INPUT, output('b=1', 'a=2'), 3);
    assert.deepEqual(kinds(h.ops), ['skipped']);
  });

  it('finds inputs consumed but never counted, and counts past the committed offsets', () => {
    assert.deepEqual(kinds(inputs().final(INPUT, output('a=1', 'b=1'), 3).ops), ['lost-input']);
    assert.deepEqual(kinds(inputs().final(INPUT, output('a=1', 'b=1', 'a=2'), 1).ops), [
      'uncommitted-output',
    ]);
  });

  it('finds a key counted in two output partitions, records of no key, and offsets past the end', () => {
    const h = inputs()
      .add('ok', 'final', 'read', { partition: 0, end: 3, records: INPUT })
      .add('ok', 'final', 'read', { partition: 1, end: 0, records: [] })
      .add('ok', 'final', 'read-output', { partition: 0, end: 3, records: output('a=1', 'b=1', 'x=1') })
      .add('ok', 'final', 'read-output', { partition: 1, end: 1, records: [[1, 0, 'a=2']] })
      .add('ok', 'final', 'offsets', { 0: 3, 1: 5 });
    assert.deepEqual(kinds(h.ops, 2), ['lost-input', 'misplaced', 'offset-past-end', 'phantom']);
  });

  it('does not decide without the final reads', () => {
    const h = inputs().add('ok', 'final', 'read', { partition: 0, end: 3, records: INPUT });
    const result = new StreamsCountChecker(1).check(h.ops);
    assert.equal(result.valid, null);
    assert.match(result.unknown ?? '', /output partitions 0 not read; committed offsets not read/);
  });

  it('keeps each key of the producers on one partition', () => {
    const partitionsOf = new Map<string, Set<number>>();
    for (let n = 0; n < 200; n++) {
      const key = recordKey(n, 4, 5)!;
      partitionsOf.set(key, (partitionsOf.get(key) ?? new Set()).add(n % 4));
    }
    assert.equal(partitionsOf.size, 20);
    for (const [key, ps] of partitionsOf) assert.equal(ps.size, 1, `key ${key} on partitions ${[...ps]}`);
    assert.equal(recordKey(7, 4, undefined), undefined);
  });
});
