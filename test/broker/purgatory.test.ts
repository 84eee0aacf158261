import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DelayedOperation, Purgatory } from '../../src/broker/purgatory.js';
import { ManualClock } from '../../src/common/clock.js';

function operation(ready: () => boolean): DelayedOperation & { results: boolean[] } {
  const results: boolean[] = [];
  return { results, tryComplete: ready, onComplete: (satisfied) => results.push(satisfied) };
}

describe('purgatory', () => {
  it('completes at once when the condition already holds', () => {
    const p = new Purgatory('test', 10);
    const op = operation(() => true);
    assert.equal(p.tryCompleteElseWatch(op, ['t-0'], 1000), true);
    assert.deepEqual(op.results, [true]);
    assert.equal(p.size, 0);
  });

  it('completes a parked operation exactly once when a watched key is triggered', () => {
    const p = new Purgatory('test', 10);
    let ready = false;
    const op = operation(() => ready);
    assert.equal(p.tryCompleteElseWatch(op, ['t-0', 't-1'], 10_000), false);
    assert.equal(p.checkAndComplete('t-0'), 0);
    ready = true;
    assert.equal(p.checkAndComplete('t-1'), 1);
    assert.equal(p.checkAndComplete('t-0'), 0);
    assert.deepEqual(op.results, [true]);
    assert.equal(p.size, 0);
  });

  it('times out with a last check, and never completes twice', async () => {
    const p = new Purgatory('test', 10);
    const op = operation(() => false);
    p.tryCompleteElseWatch(op, ['t-0'], 20);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(op.results, [false]);
    assert.equal(p.checkAndComplete('t-0'), 0);
    assert.equal(p.size, 0);
  });

  it('completes new operations at once when full, so parked work stays bounded', () => {
    const p = new Purgatory('test', 2);
    const ops = [0, 1, 2].map(() => operation(() => false));
    assert.equal(p.tryCompleteElseWatch(ops[0]!, ['k'], 10_000), false);
    assert.equal(p.tryCompleteElseWatch(ops[1]!, ['k'], 10_000), false);
    assert.equal(p.tryCompleteElseWatch(ops[2]!, ['k'], 10_000), true);
    assert.deepEqual(ops[2]!.results, [false]);
    assert.equal(p.size, 2);
    p.completeAll();
    assert.deepEqual(ops[0]!.results, [false]);
    assert.deepEqual(ops[1]!.results, [false]);
    assert.equal(p.size, 0);
  });

  it('an operation completing may check the same key again and park another there; each completes once', () => {
    const p = new Purgatory('test', 10);
    let ready = false;
    const late = operation(() => ready);
    const first = operation(() => ready);
    const second: DelayedOperation & { results: boolean[] } = {
      results: [],
      tryComplete: () => ready,
      onComplete(satisfied) {
        this.results.push(satisfied);
        // As a completed produce wakes fetches of the same partition, and a fetch answered parks the next one.
        p.checkAndComplete('k');
        ready = false;
        p.tryCompleteElseWatch(late, ['k'], 10_000);
      },
    };
    p.tryCompleteElseWatch(first, ['k'], 10_000);
    p.tryCompleteElseWatch(second, ['k'], 10_000);
    ready = true;
    assert.equal(p.checkAndComplete('k') >= 1, true);
    assert.deepEqual(first.results, [true]);
    assert.deepEqual(second.results, [true]);
    assert.deepEqual(late.results, [], 'parked during the check, not completed by it');
    assert.equal(p.size, 1);
    ready = true;
    assert.equal(p.checkAndComplete('k'), 1);
    assert.deepEqual(late.results, [true]);
    assert.equal(p.size, 0);
    assert.equal(p.staleEntries, 0);
  });

  it('operations that time out on keys nobody checks are swept, so finished entries stay bounded', () => {
    const clock = new ManualClock();
    const p = new Purgatory('test', 100_000, clock);
    const ops = Array.from({ length: 5000 }, () => operation(() => false));
    for (const [i, op] of ops.entries()) p.tryCompleteElseWatch(op, [`t-${i}`, 'shared'], 10 + (i % 7));
    assert.equal(p.size, 5000);
    clock.advance(100);
    assert.ok(ops.every((op) => op.results.length === 1 && op.results[0] === false));
    assert.equal(p.size, 0);
    assert.ok(p.staleEntries <= 1000 + 2, `finished entries kept: ${p.staleEntries}`);
    // A check of the shared key drops what is left there.
    assert.equal(p.checkAndComplete('shared'), 0);
  });
});
