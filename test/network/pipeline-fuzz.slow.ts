import { describe, it } from 'node:test';
import { runPipelineFuzz } from './pipeline-fuzz.js';

// BROOK_FUZZ_SEED replays one seed; otherwise a fixed set runs, so a failure names the seed that found it.
const seeds =
  process.env.BROOK_FUZZ_SEED !== undefined ? [Number(process.env.BROOK_FUZZ_SEED)] : [1, 2, 3, 4, 5];

describe('pipelined requests under bounds, many seeds', () => {
  for (const seed of seeds) {
    it(`answers every request of many connections in order with its own bytes (seed ${seed})`, async () => {
      await runPipelineFuzz({ seed, connections: 40, requestsPerConnection: 300, bodyBytesMax: 70_000 });
    });
  }
});
