// Kafka's committed(partitions) returns OffsetAndMetadata: the offset with the leader epoch and the metadata string
// committed with it (commitSync(Map<TopicPartition, OffsetAndMetadata>)), and null for a partition without a
// committed offset. Brook's committedWithMetadata() returns the same through OffsetFetch. Against an in-process
// broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { tpKey } from '../../src/client/requests.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'committed-metadata';

describe('committed offsets with their metadata and leader epoch', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 2, replicationFactor: 1 }]);
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  it('reads back the metadata and epoch a commit carried, and null where nothing is committed', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'committed-metadata',
      enableAutoCommit: false,
    });
    try {
      const tps = [
        { topic: TOPIC, partition: 0 },
        { topic: TOPIC, partition: 1 },
      ];
      consumer.assign(tps);
      await consumer.commit([
        { topic: TOPIC, partition: 0, offset: 2, metadata: 'checkpoint-a', leaderEpoch: 0 },
      ]);
      const committed = await consumer.committedWithMetadata(tps);
      assert.deepEqual(committed.get(tpKey(TOPIC, 0)), {
        offset: 2,
        leaderEpoch: 0,
        metadata: 'checkpoint-a',
      });
      assert.equal(committed.get(tpKey(TOPIC, 1)), null);
      // The offsets-only form stays as it was.
      assert.equal((await consumer.committed(tps)).get(tpKey(TOPIC, 0)), 2);
    } finally {
      await consumer.close();
    }
  });
});
