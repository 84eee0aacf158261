// Stopping a whole replicated cluster at once: every broker exits by itself, in time (see shutdown-all.ts).
// A few rounds here; shutdown.slow.ts runs many.

import { after, before, describe, it } from 'node:test';
import type { TestCluster } from '../helpers/test-cluster.js';
import { shutdownRound, startReplicatedCluster } from './shutdown-all.js';

/** Each round takes about 10 s (most of it starting the brokers again); the old code hung in the first. */
const ROUNDS = 3;

describe('a three-broker cluster stopped all at once', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startReplicatedCluster();
  });
  after(() => cluster?.stop());

  it('every broker exits with status 0 soon after SIGTERM, round after round', async () => {
    for (let round = 0; round < ROUNDS; round++) await shutdownRound(cluster!, round);
  });
});
