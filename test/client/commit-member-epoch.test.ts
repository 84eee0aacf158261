// The member epoch and member id a KIP-848 consumer (groupProtocol 'consumer') commits offsets with, as Kafka's
// CommitRequestManager sends them: a member that has an epoch from the coordinator (above 0) sends it with its member
// id; one without (not joined yet, rejoining at epoch 0, or left) sends -1 and no member id, which a group without
// members takes as a commit from outside group management (ConsumerGroup.validateOffsetCommit), instead of epoch 0
// that no member holds. Against an in-process broker whose interceptor reads the OffsetCommit requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import type { OffsetCommitRequest } from '../../src/protocol/messages/08-offset-commit.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'commit-member-epoch';
const tp = { topic: TOPIC, partition: 0 };

describe('KIP-848 offset commits carry the member epoch', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  const sent: { epoch: number; memberId: string }[] = [];

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.OFFSET_COMMIT) return undefined;
      const body = request.body as OffsetCommitRequest;
      sent.push({ epoch: body.generationIdOrMemberEpoch, memberId: body.memberId });
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('without an epoch from the coordinator: -1 and no member id, taken by a group without members', async () => {
    const groupId = 'member-epoch-before-join';
    const consumer = new Consumer({
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer',
      enableAutoCommit: false,
    });
    try {
      consumer.subscribe([TOPIC]);
      sent.length = 0;
      await consumer.commit([{ ...tp, offset: 4 }]);
      assert.deepEqual(sent, [{ epoch: -1, memberId: '' }]);
      const [stored] = await admin.listConsumerGroupOffsets(groupId, [tp]);
      assert.equal(stored?.offset, 4);
    } finally {
      await consumer.close();
    }
  });

  it('a member with an epoch commits with it and its member id', async () => {
    const groupId = 'member-epoch-joined';
    const consumer = new Consumer({
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer',
      enableAutoCommit: false,
      autoOffsetReset: 'earliest',
    });
    try {
      consumer.subscribe([TOPIC]);
      const deadline = Date.now() + 10_000;
      while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
      assert.deepEqual(consumer.assignment(), [tp]);
      const { generationId, memberId } = consumer.groupMetadata();
      assert.ok(generationId > 0 && memberId !== '', 'the member has an epoch and an id');
      sent.length = 0;
      await consumer.commit([{ ...tp, offset: 1 }]);
      assert.deepEqual(sent, [{ epoch: generationId, memberId }]);
    } finally {
      await consumer.close();
    }
  });
});
