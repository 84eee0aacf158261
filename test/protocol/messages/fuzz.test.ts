// Quick mutated-frame fuzzing of every decoder (see fuzz-frames.ts); fuzz.slow.ts runs a million frames.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzz, seedFrames } from './fuzz-frames.js';

describe('decoders under mutated frames (quick run; the slow suite runs a million frames)', () => {
  it('reject every malformed frame of every API and version with a DecodeError only', () => {
    const seeds = seedFrames();
    const result = fuzz(seeds, 40, 20261130);
    assert.equal(result.frames, seeds.length * 40);
    // Most mutations break a frame; if almost none were rejected the mutator would not be doing its job.
    assert.ok(result.rejected > result.frames / 4, `only ${result.rejected} of ${result.frames} rejected`);
  });
});
