// Shared by shutdown.test.ts (a few rounds) and shutdown.slow.ts (many): a three-broker cluster with replicated
// topics is stopped all at once (SIGTERM to every broker in the same moment), as `brook cluster down` or an
// orchestrator does, and started again on its data. While the brokers stop, the controller's resignation makes
// another stopping broker run for election and send LeaderAndIsr: no broker may start fetchers or take over
// then, and every process must exit by itself, quickly, with status 0.

import assert from 'node:assert/strict';
import { agreedController } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';

const TOPICS = 20;
/**
 * How long a broker may take to exit after SIGTERM when every broker stops at once. A clean stop takes a second
 * or two (controlled shutdown retries with 200 ms backoff); a broker kept alive by a fetcher never exits, and the
 * helper SIGKILLs it after 15 s.
 */
export const EXIT_BOUND_MS = 10_000;

export interface RoundResult {
  readonly brokerId: number;
  readonly code: number | null;
  readonly elapsedMs: number;
}

export async function startReplicatedCluster(): Promise<TestCluster> {
  const cluster = await startCluster({
    overrides: { 'default.replication.factor': 3, 'offsets.topic.replication.factor': 3 },
  });
  try {
    for (let i = 0; i < TOPICS; i++) {
      await createTopicOn(cluster.brokers[i % 3]!, `shutdown-${i}`, {
        numPartitions: 1,
        replicationFactor: 3,
      });
    }
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

/** SIGTERMs every broker at the same moment; answers how each one ended. */
export async function stopAllAtOnce(cluster: TestCluster): Promise<RoundResult[]> {
  const started = Date.now();
  return Promise.all(
    cluster.brokers.map(async (b) => {
      const code = await b.stop();
      return { brokerId: b.brokerId, code, elapsedMs: Date.now() - started };
    }),
  );
}

/** One round: stop all at once, assert that every broker exited cleanly in time, start them all again. */
export async function shutdownRound(cluster: TestCluster, round: number): Promise<void> {
  const results = await stopAllAtOnce(cluster);
  for (const r of results) {
    const log = cluster.brokers[r.brokerId]!.log();
    assert.ok(
      r.code === 0 && r.elapsedMs < EXIT_BOUND_MS,
      `round ${round}: broker ${r.brokerId} exited with ${r.code} after ${r.elapsedMs} ms; its log:\n` +
        log.slice(-6000),
    );
  }
  await Promise.all(cluster.brokers.map((b) => cluster.start(b.brokerId)));
  await agreedController(cluster.brokers);
}
