// The exactly-once checker of the transactional chaos workload on small made-up histories: a clean one passes,
// and each anomaly it names (lost, duplicate, uncommitted-output, aborted-read, lost-commit, partial-txn,
// phantom, dirty-read) is found in a history that has it; a history without its final reads is undecided.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExactlyOnceChecker } from './checker-txn.js';
import type { Op, OpType } from './history.js';

type Seen = [number, number, string];

class Builder {
  readonly ops: Op[] = [];
  add(type: OpType, process: string, f: string, value?: unknown): this {
    this.ops.push({ index: this.ops.length, time: this.ops.length, type, process, f, value });
    return this;
  }
  txn(id: string, inputs: Seen[], outcome: 'committed' | 'aborted' | 'fail' | 'info'): this {
    this.add('invoke', 't0', 'txn', { txn: id, inputs });
    if (outcome === 'fail' || outcome === 'info') return this.add(outcome, 't0', 'txn', { txn: id });
    return this.add('ok', 't0', 'txn', { txn: id, outcome });
  }
  /** Final reads of one input and one output partition, and the committed input offset. */
  final(input: Seen[], output: Seen[], committed: number): this {
    this.add('ok', 'final', 'read', { partition: 0, end: input.length, records: input });
    this.add('ok', 'final', 'read-output', { partition: 0, end: output.length, records: output });
    this.add('ok', 'final', 'read-output-uncommitted', { partition: 0, end: output.length, records: output });
    return this.add('ok', 'final', 'offsets', { 0: committed });
  }
}

const INPUT: Seen[] = [
  [0, 0, 'p0-0'],
  [0, 1, 'p0-1'],
];

function kinds(ops: Op[]): string[] {
  const result = new ExactlyOnceChecker(1).check(ops);
  return [...new Set(result.anomalies.map((a) => a.kind))].sort();
}

describe('the exactly-once checker', () => {
  it('passes a history where every input is in the committed output once', () => {
    const h = new Builder()
      .txn('t0.1.0', INPUT, 'aborted')
      .txn('t0.1.1', INPUT, 'committed')
      .final(
        INPUT,
        [
          [0, 3, 'p0-0@t0.1.1'],
          [0, 4, 'p0-1@t0.1.1'],
        ],
        2,
      )
      .add('ok', 'd0', 'poll-output', [[0, 3, 'p0-0@t0.1.1']]);
    const result = new ExactlyOnceChecker(1).check(h.ops);
    assert.equal(result.valid, true, JSON.stringify(result.anomalies));
    assert.equal(result.stats.processed, 2);
    assert.equal(result.stats.aborted, 1);
  });

  it('finds an input committed twice', () => {
    const h = new Builder()
      .txn('t0.1.0', INPUT, 'committed')
      .txn('t0.2.0', [INPUT[1]!], 'committed')
      .final(
        INPUT,
        [
          [0, 0, 'p0-0@t0.1.0'],
          [0, 1, 'p0-1@t0.1.0'],
          [0, 3, 'p0-1@t0.2.0'],
        ],
        2,
      );
    assert.deepEqual(kinds(h.ops), ['duplicate']);
  });

  it('finds a committed offset whose output is missing, and the commit that lost it', () => {
    const h = new Builder().txn('t0.1.0', INPUT, 'committed').final(INPUT, [[0, 0, 'p0-0@t0.1.0']], 2);
    assert.deepEqual(kinds(h.ops), ['lost', 'lost-commit']);
  });

  it('says of a lost input which transactions read it and whether its output reached the log', () => {
    const skipped = new Builder().final(INPUT, [], 2);
    const lostSkipped = new ExactlyOnceChecker(1)
      .check(skipped.ops)
      .anomalies.filter((a) => a.kind === 'lost');
    assert.equal(lostSkipped.length, 2);
    assert.match(lostSkipped[0]!.description, /read by no transaction; no output record in the log/);
    const aborted = new Builder().txn('t0.1.0', [INPUT[0]!], 'info').final(INPUT, [], 2);
    aborted.ops.find((op) => op.f === 'read-output-uncommitted')!.value = {
      partition: 0,
      end: 1,
      records: [[0, 0, 'p0-0@t0.1.0']],
    };
    const lost = new ExactlyOnceChecker(1).check(aborted.ops).anomalies.filter((a) => a.kind === 'lost');
    assert.match(lost[0]!.description, /read by t0\.1\.0 \(unknown\); an output record in the log/);
    assert.ok(lost[0]!.opIndexes.includes(0), 'the reading transaction is among the proof ops');
  });

  it('finds output committed without its input offset, and a transaction half visible', () => {
    const h = new Builder().txn('t0.1.0', INPUT, 'info').final(INPUT, [[0, 0, 'p0-0@t0.1.0']], 0);
    assert.deepEqual(kinds(h.ops), ['partial-txn', 'uncommitted-output']);
  });

  it('finds records of an aborted transaction and of no transaction in the committed output', () => {
    const h = new Builder()
      .txn('t0.1.0', INPUT, 'fail')
      .txn('t0.2.0', INPUT, 'committed')
      .final(
        INPUT,
        [
          [0, 0, 'p0-0@t0.1.0'],
          [0, 3, 'p0-0@t0.2.0'],
          [0, 4, 'p0-1@t0.2.0'],
          [0, 5, 'p0-9@t0.2.0'],
        ],
        2,
      );
    assert.deepEqual(kinds(h.ops), ['aborted-read', 'duplicate', 'phantom']);
  });

  it('finds a read_committed poll of a record the committed output does not have there', () => {
    const output: Seen[] = [
      [0, 3, 'p0-0@t0.2.0'],
      [0, 4, 'p0-1@t0.2.0'],
    ];
    const h = new Builder()
      .txn('t0.1.0', INPUT, 'aborted')
      .txn('t0.2.0', INPUT, 'committed')
      .add('ok', 'd0', 'poll-output', [[0, 0, 'p0-0@t0.1.0']])
      .final(INPUT, output, 2);
    assert.deepEqual(kinds(h.ops), ['dirty-read']);
  });

  it('does not decide without the final reads', () => {
    const h = new Builder().txn('t0.1.0', INPUT, 'committed');
    const result = new ExactlyOnceChecker(1).check(h.ops);
    assert.equal(result.valid, null);
    assert.match(result.unknown ?? '', /not read/);
  });
});
