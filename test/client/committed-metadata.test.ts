// Kafka's committed(partitions) returns OffsetAndMetadata: the offset with the leader epoch and the metadata string
// committed with it (commitSync(Map<TopicPartition, OffsetAndMetadata>)), and null for a partition without a
// committed offset (ConsumerCoordinator's OffsetFetchResponseHandler puts the partition in the map with a null
// value). Brook's committedWithMetadata() returns the same through OffsetFetch, and committed() the offsets alone,
// null likewise where there is none (not -1). Against an in-process broker.

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
      assert.ok(committed.has(tpKey(TOPIC, 1)), 'the partition without an offset is in the map');
      // The offsets-only form: the offset, and null (with the key) where nothing is committed, as Kafka's map.
      const offsets = await consumer.committed(tps);
      assert.equal(offsets.get(tpKey(TOPIC, 0)), 2);
      assert.ok(offsets.has(tpKey(TOPIC, 1)), 'the partition without an offset is in the offsets-only map');
      assert.equal(offsets.get(tpKey(TOPIC, 1)), null);
    } finally {
      await consumer.close();
    }
  });
});
