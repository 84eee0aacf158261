// The benchmarks' flag checks: a bad value stops the run with a message naming the flag, never NaN or 0 cells.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { numberOption, positiveInteger, positiveNumber } from '../../bench/harness/options.js';

describe('bench options', () => {
  it('positiveInteger takes counts and refuses zero, fractions and words, naming the flag', () => {
    assert.equal(positiveInteger('--partitions', '16'), 16);
    for (const bad of ['0', '-2', '1.5', 'x', ''])
      assert.throws(() => positiveInteger('--partitions', bad), {
        name: 'RangeError',
        message: `--partitions needs a positive integer, got '${bad}'`,
      });
  });

  it('positiveNumber takes rates with fractions and refuses zero, negatives, infinity and words', () => {
    assert.equal(positiveNumber('--rate', '2.5'), 2.5);
    for (const bad of ['0', '-1', 'Infinity', 'fast'])
      assert.throws(() => positiveNumber('--rate', bad), {
        message: `--rate needs a positive number, got '${bad}'`,
      });
  });

  it('numberOption reads the value after a flag, or the fallback', () => {
    assert.equal(numberOption(['--records', '300'], '--records', 5), 300);
    assert.equal(numberOption(['--records'], '--records', 5), 5);
    assert.equal(numberOption([], '--records', 5), 5);
  });
});
