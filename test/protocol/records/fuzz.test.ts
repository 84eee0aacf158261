import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzzRecords } from './fuzz.js';

describe('records fuzzing (fast)', () => {
  it('answers damaged batches and message sets with a verdict or a typed error, for 2000 mutations', () => {
    const tally = fuzzRecords(1, 2000);
    // The mutations must reach every layer, or the test proves nothing.
    assert.ok(tally.answered > 1000 && tally.refused > 1000, JSON.stringify(tally));
    assert.ok(tally.readAfterValid > 50 && tally.deepFaults > 50, JSON.stringify(tally));
  });
});
