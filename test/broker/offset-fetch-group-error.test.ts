// OffsetFetch v8+ answers a group that fails (here a KIP-848 group asked by a member it does not know, v9) with the
// group's error and no topics, as Kafka's KafkaApis.handleOffsetFetchRequestFromCoordinator (the coordinator's
// failure becomes the group's error code, nothing else); the other groups of the request are answered as usual.
// Against an in-process broker over a raw connection.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { OffsetFetchResponse } from '../../src/protocol/messages/09-offset-fetch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'offset-fetch-group-error';
const GROUP = 'offset-fetch-group-error';
const OTHER = 'offset-fetch-group-error-other';

describe('OffsetFetch v8+ group errors', () => {
  let broker: InProcessBroker;
  let admin: Admin;
  let consumer: Consumer;
  let wire: WireClient;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    const bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    await admin.alterConsumerGroupOffsets(OTHER, [{ topic: TOPIC, partition: 0, offset: 5 }]);
    consumer = new Consumer({ bootstrapServers, groupId: GROUP, groupProtocol: 'consumer' });
    consumer.subscribe([TOPIC]);
    const deadline = Date.now() + 10_000;
    while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
    wire = await WireClient.connect('127.0.0.1', broker.port);
  });
  after(async () => {
    wire?.close();
    await consumer?.close();
    await admin?.close();
    await broker?.stop();
  });

  it('a group that fails answers its error and no topics', async () => {
    assert.equal(consumer.assignment().length, 1, 'the group has a member');
    const res = await wire.call<OffsetFetchResponse>(ApiKey.OFFSET_FETCH, 9, {
      groupId: '',
      topics: [],
      groups: [
        {
          groupId: GROUP,
          memberId: 'nobody',
          memberEpoch: 1,
          topics: [{ name: TOPIC, partitionIndexes: [0] }],
        },
        { groupId: OTHER, memberId: null, memberEpoch: -1, topics: [{ name: TOPIC, partitionIndexes: [0] }] },
      ],
      requireStable: false,
    });
    const failed = res.groups.find((g) => g.groupId === GROUP);
    assert.equal(failed?.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.deepEqual(failed?.topics, [], 'no topics with the group error');
    const other = res.groups.find((g) => g.groupId === OTHER);
    assert.equal(other?.errorCode, 0);
    assert.equal(other?.topics[0]?.partitions[0]?.committedOffset, 5n);
  });
});
