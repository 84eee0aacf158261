// A short run of the operation fuzzer on every test run; op-fuzzer.slow.ts runs it long.

import { test } from 'node:test';
import { runOpFuzzer } from './op-fuzzer.js';

test('random operations on a log agree with an in-memory model (10 seeds x 400 steps)', async () => {
  for (let seed = 1; seed <= 10; seed++) await runOpFuzzer(seed, 400);
});

test('random operations with compaction on a compacted log agree with the model (10 seeds x 400 steps)', async () => {
  for (let seed = 1; seed <= 10; seed++) await runOpFuzzer(seed, 400, 'compact');
});
