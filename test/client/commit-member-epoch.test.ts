// The member epoch and member id a KIP-848 consumer (groupProtocol 'consumer') commits offsets with, as Kafka's
// CommitRequestManager sends them: a member that has an epoch from the coordinator (above 0) sends it with its member
// id; one without (not joined yet, rejoining at epoch 0, or left) sends -1 and no member id, which a group without
// members takes as a commit from outside group management (ConsumerGroup.validateOffsetCommit), instead of epoch 0
// that no member holds. The auto-commit before a revocation during reconciliation is retried with the member's
// latest epoch when answered STALE_MEMBER_EPOCH (CommitRequestManager.maybeAutoCommitSyncBeforeRevocation), so the
// revoked partitions' positions reach the group. Against an in-process broker whose interceptor reads the
// OffsetCommit requests (and refuses one).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  OffsetCommitRequest,
  OffsetCommitResponse,
} from '../../src/protocol/messages/08-offset-commit.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'commit-member-epoch';
const tp = { topic: TOPIC, partition: 0 };
const TWO_PARTITIONS = 'commit-member-epoch-two';

describe('KIP-848 offset commits carry the member epoch', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  const sent: { epoch: number; memberId: string }[] = [];
  /** When above 0, that many OffsetCommit requests are answered STALE_MEMBER_EPOCH without being handled. */
  let refuseStale = 0;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([
      { topic: TOPIC, numPartitions: 1, replicationFactor: 1 },
      { topic: TWO_PARTITIONS, numPartitions: 2, replicationFactor: 1 },
    ]);
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.OFFSET_COMMIT) return undefined;
      const body = request.body as OffsetCommitRequest;
      sent.push({ epoch: body.generationIdOrMemberEpoch, memberId: body.memberId });
      if (refuseStale <= 0) return undefined;
      refuseStale--;
      const answer: OffsetCommitResponse = {
        throttleTimeMs: 0,
        topics: body.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: ErrorCode.STALE_MEMBER_EPOCH,
          })),
        })),
      };
      return answer;
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

  it('the auto-commit before a revocation is retried after STALE_MEMBER_EPOCH', async () => {
    const groupId = 'member-epoch-revocation';
    const options = {
      bootstrapServers,
      groupId,
      groupProtocol: 'consumer' as const,
      autoOffsetReset: 'earliest' as const,
      autoCommitIntervalMs: 600_000,
    };
    const first = new Consumer(options);
    const second = new Consumer(options);
    try {
      first.subscribe([TWO_PARTITIONS]);
      const deadline = Date.now() + 20_000;
      while (first.assignment().length < 2 && Date.now() < deadline) await first.poll(100);
      assert.equal(first.assignment().length, 2, 'the first member owns both partitions');
      const positions = new Map<number, number>();
      for (const p of first.assignment()) positions.set(p.partition, await first.position(p));
      refuseStale = 1;
      second.subscribe([TWO_PARTITIONS]);
      while ((first.assignment().length !== 1 || second.assignment().length !== 1) && Date.now() < deadline)
        await Promise.all([first.poll(100), second.poll(100)]);
      assert.equal(first.assignment().length, 1, 'the first member gave a partition up');
      assert.equal(refuseStale, 0, 'a commit was refused with STALE_MEMBER_EPOCH');
      const [moved] = second.assignment();
      const [stored] = await admin.listConsumerGroupOffsets(groupId, [moved!]);
      assert.equal(stored?.offset, positions.get(moved!.partition), 'the revoked position was committed');
    } finally {
      refuseStale = 0;
      await second.close();
      await first.close();
    }
  });
});
