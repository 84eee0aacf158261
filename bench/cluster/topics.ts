// Topics of the cluster benchmarks: created with an explicit replica assignment (the first replica of a
// partition is its preferred leader, so the benchmark decides which broker leads), waited for until every
// partition has its leader and a full ISR, and deleted after use so that the cluster's state stays the same
// from one measurement to the next.
import { assert } from '../../src/common/assert.js';
import { errorName } from '../../src/protocol/errors.js';
import type { CreateTopicsResponse } from '../../src/protocol/messages/19-create-topics.js';
import type { DeleteTopicsResponse } from '../../src/protocol/messages/20-delete-topics.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { benchVersions } from '../broker/broker-setup.js';
import { WireConnection } from '../broker/wire-connection.js';
import { type LocalCluster, pollUntil } from './local-cluster.js';

const deleteTopicsVersion = 4;

export interface PartitionState {
  leaderId: number;
  leaderEpoch: number;
  isr: number[];
}

/** Creates `topic` with one partition per entry of `replicas` (broker ids, preferred leader first). */
export async function createAssignedTopic(
  port: number,
  topic: string,
  replicas: readonly (readonly number[])[],
  configs: Record<string, string>,
): Promise<void> {
  const connection = await WireConnection.connect('127.0.0.1', port);
  try {
    const response = await connection.call<CreateTopicsResponse>(
      ApiKey.CREATE_TOPICS,
      benchVersions.createTopics,
      {
        topics: [
          {
            name: topic,
            numPartitions: -1,
            replicationFactor: -1,
            assignments: replicas.map((brokerIds, partitionIndex) => ({
              partitionIndex,
              brokerIds: [...brokerIds],
            })),
            configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
          },
        ],
        timeoutMs: 15_000,
        validateOnly: false,
      },
    );
    const result = response.topics[0];
    assert(
      result !== undefined && result.errorCode === 0,
      `CreateTopics ${topic}: ${result === undefined ? 'no answer' : `${errorName(result.errorCode)} ${result.errorMessage ?? ''}`}`,
    );
  } finally {
    connection.close();
  }
}

/** Deletes `topic`; failures are ignored (the directory is removed at the end anyway). */
export async function deleteTopic(port: number, topic: string): Promise<void> {
  try {
    const connection = await WireConnection.connect('127.0.0.1', port);
    try {
      await connection.call<DeleteTopicsResponse>(ApiKey.DELETE_TOPICS, deleteTopicsVersion, {
        topics: [],
        topicNames: [topic],
        timeoutMs: 15_000,
      });
    } finally {
      connection.close();
    }
  } catch {
    // Best effort.
  }
}

/** The partitions of `topic` as broker `via` sees them, or undefined if it does not know the topic. */
export async function partitionStates(
  cluster: LocalCluster,
  via: number,
  topic: string,
): Promise<PartitionState[] | undefined> {
  const response = await cluster.metadata(via, [topic]);
  const found = response.topics.find((t) => t.name === topic);
  if (found === undefined || found.errorCode !== 0) return undefined;
  return [...found.partitions]
    .sort((a, b) => a.partitionIndex - b.partitionIndex)
    .map((p) => ({ leaderId: p.leaderId, leaderEpoch: p.leaderEpoch, isr: [...p.isrNodes].sort() }));
}

/**
 * Waits until every live broker sees `partitions` partitions of `topic`, each led by its preferred leader
 * (`leaders[i]`, or any leader when absent) with `isrSize` replicas in sync.
 */
export async function waitForTopicState(
  cluster: LocalCluster,
  topic: string,
  partitions: number,
  isrSize: number,
  timeoutMs: number,
  leaders?: readonly number[],
): Promise<void> {
  await pollUntil(
    `${topic}: ${partitions} partitions with leaders and ${isrSize} in sync`,
    timeoutMs,
    async () => {
      for (const broker of cluster.live()) {
        const states = await partitionStates(cluster, broker.id, topic);
        if (states === undefined || states.length !== partitions) return false;
        for (let i = 0; i < partitions; i++) {
          const state = states[i]!;
          if (state.leaderId < 0 || state.isr.length < isrSize) return false;
          if (leaders !== undefined && state.leaderId !== leaders[i]) return false;
        }
      }
      return true;
    },
  );
}
