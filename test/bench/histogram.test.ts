// Percentiles of the log-linear histogram on data whose percentiles are known.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram } from '../../bench/harness/histogram.js';

/** Largest relative error a reported value may have (one sub-bucket of 128 per power of two). */
const relativeErrorMax = 1 / 128;

function assertClose(actual: number, expected: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= expected * relativeErrorMax,
    `${what}: ${actual} is not within ${relativeErrorMax} of ${expected}`,
  );
}

describe('histogram', () => {
  it('reports p50, p99, p99.9 of 1..10000 within 1/128 and min, max, mean exactly', () => {
    const h = new Histogram('us');
    for (let v = 1; v <= 10_000; v++) h.record(v);
    const s = h.summary();
    assert.equal(s.count, 10_000);
    assert.equal(s.min, 1);
    assert.equal(s.max, 10_000);
    assert.equal(s.mean, 5000.5);
    assertClose(s.p50, 5000, 'p50');
    assertClose(s.p99, 9900, 'p99');
    assertClose(s.p999, 9990, 'p99.9');
    // Reported values are the top of their bucket: never below the true percentile.
    assert.ok(s.p50 >= 5000 && s.p99 >= 9900 && s.p999 >= 9990);
  });

  it('counts values below 256 exactly', () => {
    const h = new Histogram();
    for (const v of [5, 1, 3, 2, 4]) h.record(v);
    assert.equal(h.percentile(50), 3);
    assert.equal(h.percentile(0), 1);
    assert.equal(h.percentile(80), 4);
    assert.equal(h.percentile(100), 5);
  });

  it('finds a rare slow value at p99.9 but not at p99', () => {
    const h = new Histogram('us');
    h.record(100, 998);
    h.record(50_000, 2);
    assert.equal(h.percentile(99), 100);
    assertClose(h.percentile(99.9), 50_000, 'p99.9');
    assert.equal(h.max, 50_000);
  });

  it('keeps the relative error bound across magnitudes up to hours in microseconds', () => {
    for (const v of [257, 1000, 65_537, 1_234_567, 3_600_000_000, 2 ** 40 + 12345]) {
      const h = new Histogram();
      h.record(v);
      h.record(v * 4);
      assertClose(h.percentile(50), v, `p50 with ${v}`);
      assert.ok(h.percentile(50) >= v);
    }
  });

  it('rounds fractions, and rejects negative and non-finite values', () => {
    const h = new Histogram();
    h.record(2.6);
    assert.equal(h.max, 3);
    assert.throws(() => h.record(-1));
    assert.throws(() => h.record(Number.NaN));
    assert.throws(() => h.record(Number.POSITIVE_INFINITY));
    assert.throws(() => h.record(1, 0));
  });

  it('merges two histograms into the one that recorded everything', () => {
    const whole = new Histogram();
    const low = new Histogram();
    const high = new Histogram();
    for (let v = 1; v <= 2000; v++) {
      whole.record(v * 7);
      (v <= 1000 ? low : high).record(v * 7);
    }
    low.merge(high);
    assert.deepEqual(low.summary(), whole.summary());
    assert.throws(() => low.merge(new Histogram('ms')));
  });

  it('summarises an empty histogram as zeros and forgets everything on reset', () => {
    const h = new Histogram();
    assert.deepEqual(h.summary(), { unit: 'us', count: 0, min: 0, mean: 0, p50: 0, p99: 0, p999: 0, max: 0 });
    h.record(42);
    h.reset();
    assert.equal(h.count, 0);
    assert.equal(h.percentile(99), 0);
  });
});
