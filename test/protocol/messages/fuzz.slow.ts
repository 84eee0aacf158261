// A million mutated frames through every decoder. BROOK_FUZZ_SEED repeats a run; a failure names its seed.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzz, seedFrames } from './fuzz-frames.js';

const FRAMES = 1_000_000;

describe('decoders under a million mutated frames', () => {
  it('reject every malformed frame with a DecodeError only', () => {
    const seeds = seedFrames();
    const perSeed = Math.ceil(FRAMES / seeds.length);
    const seed = Number(process.env.BROOK_FUZZ_SEED ?? Date.now() % 2 ** 31);
    const result = fuzz(seeds, perSeed, seed);
    assert.ok(result.frames >= FRAMES, `${result.frames} frames`);
  });
});
