// Median and range of repeated figures, and the rule of at least three repetitions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relativeRange, repeat, summarize } from '../../bench/harness/repeat.js';

describe('repeat and summarize', () => {
  it('takes the middle value of an odd count and the mean of the two middle ones of an even count', () => {
    assert.deepEqual(summarize([30, 10, 20]), { median: 20, min: 10, max: 30, values: [30, 10, 20] });
    assert.equal(summarize([4, 1, 3, 2]).median, 2.5);
    assert.equal(summarize([7]).median, 7);
  });

  it('keeps the values in the order they ran and reports the range relative to the median', () => {
    const s = summarize([110, 90, 100]);
    assert.deepEqual(s.values, [110, 90, 100]);
    assert.equal(relativeRange(s), 0.2);
  });

  it('rejects no values and non-finite values', () => {
    assert.throws(() => summarize([]));
    assert.throws(() => summarize([1, Number.NaN, 2]));
  });

  it('runs a measurement the given number of times, one after the other', async () => {
    let running = 0;
    const seen: number[] = [];
    const results = await repeat(4, async (i) => {
      running++;
      assert.equal(running, 1, 'repetitions overlapped');
      await new Promise((resolve) => setTimeout(resolve, 2));
      seen.push(i);
      running--;
      return i * 10;
    });
    assert.deepEqual(seen, [0, 1, 2, 3]);
    assert.deepEqual(results, [0, 10, 20, 30]);
  });

  it('refuses fewer than three repetitions', async () => {
    await assert.rejects(repeat(2, async () => 1));
  });
});
