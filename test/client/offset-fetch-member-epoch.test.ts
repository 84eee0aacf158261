// The OffsetFetch of a KIP-848 consumer (groupProtocol 'consumer') names the member and its epoch, as Kafka's
// CommitRequestManager.OffsetFetchRequestState sends them (OffsetFetch v9) while the member has an epoch from the
// coordinator, so that the coordinator can refuse a fetch from a member it has fenced (STALE_MEMBER_EPOCH,
// UNKNOWN_MEMBER_ID). A broker without v9 is asked with v7, as before. Against an in-process broker whose
// interceptor reads the OffsetFetch requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { tpKey } from '../../src/client/requests.js';
import type { OffsetFetchRequest } from '../../src/protocol/messages/09-offset-fetch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'offset-fetch-member-epoch';
const tp = { topic: TOPIC, partition: 0 };

describe('KIP-848 OffsetFetch carries the member id and epoch', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  const fetches: { version: number; groups: { memberId: string | null; memberEpoch: number }[] }[] = [];

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.OFFSET_FETCH) return undefined;
      const body = request.body as OffsetFetchRequest;
      fetches.push({
        version: request.apiVersion,
        groups: body.groups.map((g) => ({ memberId: g.memberId, memberEpoch: g.memberEpoch })),
      });
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('a member with an epoch fetches its committed offsets with v9, naming itself and its epoch', async () => {
    const groupId = 'offset-fetch-member';
    await admin.alterConsumerGroupOffsets(groupId, [{ ...tp, offset: 0 }]);
    const consumer = new Consumer({
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer',
      enableAutoCommit: false,
    });
    try {
      consumer.subscribe([TOPIC]);
      fetches.length = 0;
      const deadline = Date.now() + 10_000;
      while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
      assert.deepEqual(consumer.assignment(), [tp]);
      assert.equal(await consumer.position(tp), 0, 'the position comes from the committed offset');
      const { generationId, memberId } = consumer.groupMetadata();
      assert.ok(generationId > 0 && memberId !== '', 'the member has an epoch and an id');
      assert.deepEqual(fetches, [{ version: 9, groups: [{ memberId, memberEpoch: generationId }] }]);
      // The coordinator answers the member by name: committed() goes through as well.
      fetches.length = 0;
      assert.equal((await consumer.committed([tp])).get(tpKey(TOPIC, 0)), 0);
      assert.deepEqual(fetches, [{ version: 9, groups: [{ memberId, memberEpoch: generationId }] }]);
    } finally {
      await consumer.close();
    }
  });

  it('a consumer with assign() fetches without a member, as before', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'offset-fetch-assign',
      groupProtocol: 'consumer',
    });
    try {
      consumer.assign([tp]);
      fetches.length = 0;
      assert.equal((await consumer.committed([tp])).get(tpKey(TOPIC, 0)), null);
      assert.equal(fetches.length, 1);
      assert.ok(fetches.every((f) => f.groups.every((g) => g.memberId === null && g.memberEpoch === -1)));
    } finally {
      await consumer.close();
    }
  });
});
