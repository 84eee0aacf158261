// A one-partition topic with a few records on an in-process broker, and the partition's leader epoch: the setup of
// the client tests of leader epochs (the epoch a consumer commits, sends in its requests, and validates with).

import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from './in-process-broker.js';

export interface EpochTopic {
  readonly broker: InProcessBroker;
  readonly bootstrapServers: string;
  readonly admin: Admin;
  /** The partition's leader epoch, which the broker stamps on every batch it appends. */
  readonly leaderEpoch: number;
  /** Closes the admin client and stops the broker. */
  stop(): Promise<void>;
}

/** Starts a broker, creates `topic` with one partition and produces `records` records to it. */
export async function startEpochTopic(topic: string, records: number): Promise<EpochTopic> {
  const broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
  const bootstrapServers = `127.0.0.1:${broker.port}`;
  const admin = new Admin({ bootstrapServers });
  const stop = async () => {
    await admin.close();
    await broker.stop();
  };
  try {
    await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    try {
      await producer.sendBatch(
        Array.from({ length: records }, (_, i) => ({ topic, partition: 0, value: Buffer.from(`${i}`) })),
      );
    } finally {
      await producer.close();
    }
    const snapshot = await admin.cluster.fetchMetadata([topic]);
    const leaderEpoch = snapshot.topics.get(topic)!.partitions[0]!.leaderEpoch;
    assert.ok(leaderEpoch >= 0, `the partition has a leader epoch (${leaderEpoch})`);
    return { broker, bootstrapServers, admin, leaderEpoch, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
