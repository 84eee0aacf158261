// The JBOD cluster tests' shared pieces: whether a tmpfs can be mounted (root), and one topic's partition views,
// acks=all writes and reads through the wire, with a wait for every broker to agree on a partition's leader.

import { spawnSync } from 'node:child_process';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from './broker-process.js';
import { waitFor } from './cluster.js';
import { readPartition, WireClient } from './wire-client.js';

/** Root with fallocate: the tests mount a small tmpfs as the failing log directory. */
export function canMount(): boolean {
  return process.getuid?.() === 0 && spawnSync('fallocate', ['--version']).status === 0;
}

export interface View {
  leaderId: number;
  leaderEpoch: number;
  isrNodes: number[];
  offlineReplicas: number[];
}

/** Metadata views, acks=all writes and reads of the partitions of `TOPIC`. */
export function topicOps(TOPIC: string) {
  async function partitionViewOf(broker: BrokerProcess, partition: number): Promise<View | undefined> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const res = await client.call(ApiKey.METADATA, 9, {
        topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: TOPIC }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      return res.topics[0]?.partitions.find(
        (p: { partitionIndex: number }) => p.partitionIndex === partition,
      );
    } finally {
      client.close();
    }
  }

  /** Waits until every broker's metadata names the same leader of `partition`, one that `accept`s the view. */
  function agreed(
    brokers: readonly BrokerProcess[],
    partition: number,
    accept: (v: View) => boolean,
  ): Promise<View> {
    return waitFor(
      `the brokers to agree on the leader of ${TOPIC}-${partition}`,
      async () => {
        const views = await Promise.all(brokers.map((b) => partitionViewOf(b, partition)));
        const first = views[0];
        if (first === undefined || first.leaderId < 0 || !accept(first)) return undefined;
        return views.every((v) => v?.leaderId === first.leaderId && v.leaderEpoch === first.leaderEpoch)
          ? first
          : undefined;
      },
      30_000,
    );
  }

  async function produce(broker: BrokerProcess, partition: number, value: string): Promise<number> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const res = await client.call(
        ApiKey.PRODUCE,
        9,
        {
          transactionalId: null,
          acks: -1,
          timeoutMs: 15_000,
          topicData: [
            { name: TOPIC, partitionData: [{ index: partition, records: buildBatch([{ value }]) }] },
          ],
        },
        20_000,
      );
      return res.responses[0].partitionResponses[0].errorCode;
    } finally {
      client.close();
    }
  }

  async function valuesOf(broker: BrokerProcess, partition: number): Promise<string[]> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      return (await readPartition(client, TOPIC, partition)).map((r) => r.value?.toString() ?? '');
    } finally {
      client.close();
    }
  }
  return { partitionViewOf, agreed, produce, valuesOf };
}
