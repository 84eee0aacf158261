// A commit while the member is rejoining its group, as Kafka's ConsumerCoordinator answers it: with a JoinGroup or
// SyncGroup in flight (PREPARING_REBALANCE or COMPLETING_REBALANCE) the member has no stable generation, so the
// commit fails at once with RebalanceInProgressException (REBALANCE_IN_PROGRESS here) and nothing is sent; poll()
// completes the rebalance, after which the commit goes through. A subscribed consumer that has not joined yet (no
// poll since subscribe()) has no generation at all: its commit fails with ILLEGAL_GENERATION (Kafka's
// CommitFailedException, "not part of an active group") without being sent, where it would otherwise go out as a
// simple consumer's (generation -1) and be taken unchecked; a consumer with assign() commits as one, with generation
// -1, no member id and no group instance id. A commit the coordinator refuses as a stale member's (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID) or as made during a rebalance (REBALANCE_IN_PROGRESS) makes the member rejoin at its next poll,
// with Kafka's reason, as ConsumerCoordinator's OffsetCommitResponseHandler does; the first two lose the generation
// (its partitions are lost, not revoked). Against an in-process broker that holds the member's second JoinGroup, or
// answers a commit with an error.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { ErrorCode, errorName } from '../../src/protocol/errors.js';
import type {
  OffsetCommitRequest,
  OffsetCommitResponse,
} from '../../src/protocol/messages/08-offset-commit.js';
import type { JoinGroupRequest } from '../../src/protocol/messages/11-join-group.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'commit-during-rebalance';
const tp = { topic: TOPIC, partition: 0 };

describe('commit during a rebalance', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('a commit while the JoinGroup is in flight fails with REBALANCE_IN_PROGRESS and sends nothing', async () => {
    const groupId = 'commit-during-rebalance';
    const consumer = new Consumer({
      bootstrapServers,
      groupId,
      enableAutoCommit: false,
      autoOffsetReset: 'earliest',
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let commitsSent = 0;
    try {
      consumer.subscribe([TOPIC]);
      const deadline = Date.now() + 5000;
      while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
      assert.deepEqual(consumer.assignment(), [tp], 'the member joined');
      let joinHeld = false;
      broker.interception.set((request) => {
        if (request.apiKey === ApiKey.OFFSET_COMMIT) commitsSent++;
        if (request.apiKey !== ApiKey.JOIN_GROUP) return undefined;
        joinHeld = true;
        return held.then(() => request.handle());
      });
      consumer.enforceRebalance();
      while (!joinHeld && Date.now() < deadline) await consumer.poll(50);
      assert.ok(joinHeld, 'the rejoin is in flight');
      const err = await consumer.commit([{ ...tp, offset: 0 }]).then(
        () => assert.fail('the commit went through during the rebalance'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof KafkaProtocolError, `a KafkaProtocolError, not ${String(err)}`);
      assert.equal(err.code, ErrorCode.REBALANCE_IN_PROGRESS);
      assert.equal(err.retriable, false);
      assert.equal(commitsSent, 0, 'no OffsetCommit was sent');
      release();
      while (!(await stable(consumer)) && Date.now() < deadline) await consumer.poll(50);
      await consumer.commit([{ ...tp, offset: 0 }]);
      assert.equal(commitsSent, 1, 'the commit after the rebalance was sent');
    } finally {
      release();
      await consumer.close();
    }
  });

  it('a commit before the first join fails with ILLEGAL_GENERATION and sends nothing', async () => {
    const groupId = 'commit-before-join';
    const consumer = new Consumer({ bootstrapServers, groupId, enableAutoCommit: false });
    let commitsSent = 0;
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.OFFSET_COMMIT) commitsSent++;
      return undefined;
    });
    try {
      consumer.subscribe([TOPIC]);
      const err = await consumer.commit([{ ...tp, offset: 3 }]).then(
        () => assert.fail('the commit went out without a generation'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof KafkaProtocolError, `a KafkaProtocolError, not ${String(err)}`);
      assert.equal(err.code, ErrorCode.ILLEGAL_GENERATION);
      assert.match(err.message, /not part of an active group/);
      assert.equal(commitsSent, 0, 'no OffsetCommit was sent');
      const [stored] = await admin.listConsumerGroupOffsets(groupId, [tp]);
      assert.equal(stored?.offset ?? -1, -1, 'the group has no offset');
    } finally {
      broker.interception.clear();
      await consumer.close();
    }
  });

  it('a consumer with assign() commits with generation -1, no member id and no instance id', async () => {
    const groupId = 'commit-assigned';
    const consumer = new Consumer({
      bootstrapServers,
      groupId,
      groupInstanceId: 'assigned-instance',
      enableAutoCommit: false,
    });
    const sent: OffsetCommitRequest[] = [];
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.OFFSET_COMMIT) sent.push(request.body as OffsetCommitRequest);
      return undefined;
    });
    try {
      consumer.assign([tp]);
      await consumer.commit([{ ...tp, offset: 2 }]);
      assert.equal(sent.length, 1);
      assert.deepEqual(
        {
          generation: sent[0]!.generationIdOrMemberEpoch,
          memberId: sent[0]!.memberId,
          instanceId: sent[0]!.groupInstanceId,
        },
        { generation: -1, memberId: '', instanceId: null },
      );
      const [stored] = await admin.listConsumerGroupOffsets(groupId, [tp]);
      assert.equal(stored?.offset, 2);
    } finally {
      broker.interception.clear();
      await consumer.close();
    }
  });

  for (const [error, reason, generationLost] of [
    [ErrorCode.ILLEGAL_GENERATION, 'encountered ILLEGAL_GENERATION from OFFSET_COMMIT response', true],
    [ErrorCode.UNKNOWN_MEMBER_ID, 'encountered UNKNOWN_MEMBER_ID from OFFSET_COMMIT response', true],
    [ErrorCode.REBALANCE_IN_PROGRESS, 'offset commit failed since group is already rebalancing', false],
  ] as const) {
    it(`a commit answered ${errorName(error)}: the member rejoins`, async () => {
      const groupId = `commit-refused-${error}`;
      const lost: string[] = [];
      const revoked: string[] = [];
      const consumer = new Consumer({ bootstrapServers, groupId, enableAutoCommit: false });
      const joins: { memberId: string; reason: string | null }[] = [];
      try {
        consumer.subscribe([TOPIC], {
          onPartitionsLost: (tps) => {
            lost.push(...tps.map((t) => `${t.topic}-${t.partition}`));
          },
          onPartitionsRevoked: (tps) => {
            revoked.push(...tps.map((t) => `${t.topic}-${t.partition}`));
          },
        });
        const deadline = Date.now() + 5000;
        while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
        const before = consumer.groupMetadata();
        assert.ok(before.generationId >= 0, 'the member joined');
        broker.interception.set((request) => {
          if (request.apiKey === ApiKey.JOIN_GROUP) {
            const body = request.body as JoinGroupRequest;
            joins.push({ memberId: body.memberId, reason: body.reason });
            return undefined;
          }
          if (request.apiKey !== ApiKey.OFFSET_COMMIT) return undefined;
          const body = request.body as OffsetCommitRequest;
          const answer: OffsetCommitResponse = {
            throttleTimeMs: 0,
            topics: body.topics.map((t) => ({
              name: t.name,
              partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: error })),
            })),
          };
          return answer;
        });
        const err = await consumer.commit([{ ...tp, offset: 1 }]).then(
          () => assert.fail('the commit went through'),
          (e: unknown) => e,
        );
        assert.ok(
          err instanceof KafkaProtocolError && err.code === error,
          `error ${error}, not ${String(err)}`,
        );
        // The JoinGroup itself may be held while the coordinator waits for the old member id (UNKNOWN_MEMBER_ID).
        while (joins.length === 0 && Date.now() < deadline + 5000) await consumer.poll(100);
        assert.ok(joins.length > 0, 'the member sent a JoinGroup');
        assert.equal(joins[0]?.reason, reason);
        assert.equal(
          joins[0]?.memberId,
          error === ErrorCode.UNKNOWN_MEMBER_ID ? '' : before.memberId,
          'the member id is kept unless the coordinator did not know it',
        );
        assert.deepEqual(lost, generationLost ? [`${TOPIC}-0`] : []);
        assert.deepEqual(revoked, generationLost ? [] : [`${TOPIC}-0`]);
      } finally {
        broker.interception.clear();
        await consumer.close();
      }
    });
  }
});

/** Whether a commit goes through now (the rebalance finished and its assignment was applied). */
async function stable(consumer: Consumer): Promise<boolean> {
  return consumer.groupMetadata().generationId >= 2 && consumer.assignment().length > 0;
}
