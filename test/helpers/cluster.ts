// Helpers for tests of several broker processes: what a broker's metadata says about a partition and the
// controller, and polling until a condition holds.

import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from './broker-process.js';
import { WireClient } from './wire-client.js';

export interface PartitionView {
  leaderId: number;
  leaderEpoch: number;
  replicaNodes: number[];
  isrNodes: number[];
  offlineReplicas: number[];
}

async function metadata(broker: BrokerProcess, topics: string[]) {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return await client.call(ApiKey.METADATA, 9, {
      topics: topics.map((name) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
  } finally {
    client.close();
  }
}

/** Partition 0 of `topic` as `broker`'s metadata cache sees it. */
export async function partitionView(
  broker: BrokerProcess,
  topic: string,
): Promise<PartitionView | undefined> {
  return (await metadata(broker, [topic])).topics[0]?.partitions[0];
}

/** Ids of the brokers `broker` knows to be alive. */
export async function liveBrokers(broker: BrokerProcess): Promise<number[]> {
  return (await metadata(broker, [])).brokers.map((b: { nodeId: number }) => b.nodeId).sort();
}

export async function controllerOf(broker: BrokerProcess): Promise<number> {
  return (await metadata(broker, [])).controllerId;
}

/** Waits until every broker names the same controller and knows all the others alive; answers its id. */
export function agreedController(brokers: readonly BrokerProcess[]): Promise<number> {
  return waitFor('every broker to know the controller and its peers', async () => {
    const ids = await Promise.all(brokers.map((b) => controllerOf(b)));
    const peers = await Promise.all(brokers.map((b) => liveBrokers(b)));
    const agreed = ids[0]! >= 0 && ids.every((id) => id === ids[0]);
    return agreed && peers.every((p) => p.length === brokers.length) ? ids[0] : undefined;
  });
}

/** Polls `probe` until it answers something other than undefined (errors count as undefined). */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Produces each value as its own acks=all batch to partition 0, one at a time; answers each error code. */
export async function produceValues(
  broker: BrokerProcess,
  topic: string,
  values: readonly string[],
): Promise<number[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const codes: number[] = [];
    for (const value of values) {
      const response = await client.call(
        ApiKey.PRODUCE,
        9,
        {
          transactionalId: null,
          acks: -1,
          timeoutMs: 15_000,
          topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ value }]) }] }],
        },
        20_000,
      );
      codes.push(response.responses[0].partitionResponses[0].errorCode);
    }
    return codes;
  } finally {
    client.close();
  }
}
