import { describe, it } from 'node:test';
import { runPipelineFuzz } from './pipeline-fuzz.js';

describe('pipelined requests under bounds', () => {
  it('answers every request of many connections in order with its own bytes (one seed, small)', async () => {
    await runPipelineFuzz({ seed: 7, connections: 8, requestsPerConnection: 60, bodyBytesMax: 5000 });
  });
});
