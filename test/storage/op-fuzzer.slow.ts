// The operation fuzzer, long: many seeds and steps. Set BROOK_FUZZ_SEEDS to change the number of seeds.

import { test } from 'node:test';
import { runOpFuzzer } from './op-fuzzer.js';

test('random operations on a log agree with an in-memory model (long run)', async () => {
  const seeds = Number(process.env.BROOK_FUZZ_SEEDS ?? 50);
  for (let seed = 1000; seed < 1000 + seeds; seed++) await runOpFuzzer(seed, 3000);
});

test('random operations with compaction agree with the model (long run)', async () => {
  const seeds = Number(process.env.BROOK_FUZZ_SEEDS ?? 50);
  for (let seed = 2000; seed < 2000 + seeds; seed++) await runOpFuzzer(seed, 3000, 'compact');
});
