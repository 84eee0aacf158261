import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzzRecords } from './fuzz.js';

describe('records fuzzing (slow)', () => {
  for (let seed = 100; seed < 110; seed++) {
    it(`answers damaged batches and message sets with a verdict or a typed error (seed ${seed})`, () => {
      const tally = fuzzRecords(seed, 20_000);
      assert.ok(tally.deepFaults > 0 && tally.readAfterValid > 0, JSON.stringify(tally));
    });
  }
});
