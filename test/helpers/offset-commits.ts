// OffsetCommit traffic over one connection, for the offset-commit-rate test and the coordinator benchmark:
// commits of one offset for partitions 0..3 of topic `t` (created by waitForCoordinator), one group, sent `window`
// at a time.

import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { WireClient } from './wire-client.js';

/**
 * An OffsetCommit v8 body for partitions 0..3 of topic `t`, outside any generation: `offset` for each, or what
 * `offset` answers for each partition.
 */
export function offsetCommitBody(groupId: string, offset: number | ((partition: number) => number)) {
  const offsetOf = typeof offset === 'number' ? () => offset : offset;
  return {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      {
        name: 't',
        partitions: [0, 1, 2, 3].map((partitionIndex) => ({
          partitionIndex,
          committedOffset: BigInt(offsetOf(partitionIndex)),
          committedLeaderEpoch: -1,
          commitTimestamp: -1n,
          committedMetadata: '',
        })),
      },
    ],
  };
}

/** Creates topic `t` with partitions 0..3 unless it exists: offsets of partitions that do not exist are refused. */
export async function createCommitTopic(client: WireClient): Promise<void> {
  const response = await client.call(ApiKey.CREATE_TOPICS, 5, {
    topics: [{ name: 't', numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  const code = response.topics[0].errorCode;
  if (code !== 0 && code !== ErrorCode.TOPIC_ALREADY_EXISTS)
    throw new Error(`creating t failed: error ${code}`);
}

function commitError(response: { topics: { partitions: { errorCode: number }[] }[] }): number {
  return response.topics[0]!.partitions[0]!.errorCode;
}

/**
 * FindCoordinator for the group, as clients do first (it creates __consumer_offsets), then commits offset 0 until
 * the coordinator has loaded its partition and accepts; throws after 100 tries, 100 ms apart.
 */
export async function waitForCoordinator(client: WireClient, groupId: string): Promise<void> {
  await createCommitTopic(client);
  await client.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: [groupId] });
  for (let i = 0; ; i++) {
    const code = commitError(await client.call(ApiKey.OFFSET_COMMIT, 8, offsetCommitBody(groupId, 0)));
    if (code === 0) return;
    if (i >= 100) throw new Error(`coordinator of ${groupId} never ready: error ${code}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Commits offsets first, first+1, ... (count of them) for the group, `window` requests in flight at a time;
 * throws at the first commit answered with an error. Answers the elapsed milliseconds.
 */
export async function commitOffsets(
  client: WireClient,
  groupId: string,
  first: number,
  count: number,
  window: number,
): Promise<number> {
  const started = performance.now();
  for (let sent = 0; sent < count; ) {
    const batch = Math.min(window, count - sent);
    for (let i = 0; i < batch; i++)
      client.send(ApiKey.OFFSET_COMMIT, 8, offsetCommitBody(groupId, first + sent + i));
    for (let i = 0; i < batch; i++) {
      const code = commitError(await client.receive());
      if (code !== 0) throw new Error(`a commit for ${groupId} answered error ${code}`);
    }
    sent += batch;
  }
  return performance.now() - started;
}
