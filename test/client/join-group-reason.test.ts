// The reasons a classic group member gives the coordinator (KIP-800: JoinGroup v8+ and LeaveGroup v5+ carry one), as
// Kafka's AbstractCoordinator and ConsumerCoordinator send them: the first JoinGroup has none (''), the JoinGroup
// after MEMBER_ID_REQUIRED says it rejoins with the given member id, then each rejoin says why it happens (the user
// enforced it, the subscription changed, a heartbeat found the group rebalancing, a failed attempt named by Kafka's
// exception class), and a LeaveGroup says whether the consumer unsubscribed or is being closed. Against an
// in-process broker whose interceptor reads the requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { JoinGroupRequest, JoinGroupResponse } from '../../src/protocol/messages/11-join-group.js';
import type { LeaveGroupRequest } from '../../src/protocol/messages/13-leave-group.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC_A = 'join-reason-a';
const TOPIC_B = 'join-reason-b';
const GROUP = 'join-reason';

/** A JoinGroup answer carrying only an error. */
function joinError(errorCode: number): JoinGroupResponse {
  return {
    throttleTimeMs: 0,
    errorCode,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: '',
    skipAssignment: false,
    memberId: '',
    members: [],
  };
}

describe('JoinGroup and LeaveGroup reasons', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  /** Each JoinGroup's member id and reason, in arrival order. */
  const joins: { memberId: string; reason: string | null }[] = [];
  const leaves: (string | null)[] = [];
  /** JoinGroup requests with a member id still to be answered with this error, without reaching the group. */
  let failJoins: { code: number; count: number } | null = null;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([
      { topic: TOPIC_A, numPartitions: 2, replicationFactor: 1 },
      { topic: TOPIC_B, numPartitions: 1, replicationFactor: 1 },
    ]);
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.JOIN_GROUP) {
        const body = request.body as JoinGroupRequest;
        joins.push({ memberId: body.memberId, reason: body.reason });
        if (failJoins !== null && failJoins.count > 0 && body.memberId !== '') {
          failJoins.count--;
          return joinError(failJoins.code);
        }
      }
      if (request.apiKey === ApiKey.LEAVE_GROUP) {
        for (const m of (request.body as LeaveGroupRequest).members) leaves.push(m.reason);
      }
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  function consumer(): Consumer {
    return new Consumer({
      bootstrapServers,
      groupId: GROUP,
      enableAutoCommit: false,
      heartbeatIntervalMs: 100,
      partitionAssignmentStrategy: ['range'],
    });
  }

  /** Polls until the consumer applied a generation after `generation`. */
  async function pollPast(c: Consumer, generation: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (c.groupMetadata().generationId <= generation && Date.now() < deadline) await c.poll(50);
    assert.ok(c.groupMetadata().generationId > generation, `a generation after ${generation}`);
  }

  it("a JoinGroup after a failed attempt names Kafka's exception class", async () => {
    const c = new Consumer({ bootstrapServers, groupId: 'join-reason-failed', enableAutoCommit: false });
    try {
      failJoins = { code: ErrorCode.COORDINATOR_NOT_AVAILABLE, count: 1 };
      joins.length = 0;
      c.subscribe([TOPIC_B]);
      await pollPast(c, -1);
      assert.equal(failJoins.count, 0);
      const memberId = c.groupMetadata().memberId;
      assert.deepEqual(
        joins.map((j) => j.reason),
        [
          '',
          `need to re-join with the given member-id: ${memberId}`,
          'rebalance failed due to CoordinatorNotAvailableException',
        ],
      );
    } finally {
      failJoins = null;
      await c.close();
      joins.length = 0;
      leaves.length = 0;
    }
  });

  it('each JoinGroup and LeaveGroup carries Kafka reason', async () => {
    const first = consumer();
    const second = consumer();
    try {
      first.subscribe([TOPIC_A]);
      await pollPast(first, -1);
      const memberId = first.groupMetadata().memberId;
      assert.deepEqual(
        joins.map((j) => j.reason),
        ['', `need to re-join with the given member-id: ${memberId}`],
        'the first join and the one with the member id the coordinator gave',
      );

      joins.length = 0;
      first.enforceRebalance();
      await pollPast(first, first.groupMetadata().generationId);
      assert.deepEqual(
        joins.map((j) => j.reason),
        ['rebalance enforced by user'],
      );

      joins.length = 0;
      first.enforceRebalance('an assignor asked for a follow-up');
      await pollPast(first, first.groupMetadata().generationId);
      assert.deepEqual(
        joins.map((j) => j.reason),
        ['an assignor asked for a follow-up'],
      );

      joins.length = 0;
      first.subscribe([TOPIC_A, TOPIC_B]);
      await pollPast(first, first.groupMetadata().generationId);
      assert.deepEqual(
        joins.map((j) => j.reason),
        ['subscription has changed'],
      );

      joins.length = 0;
      const before = first.groupMetadata().generationId;
      second.subscribe([TOPIC_A]);
      const deadline = Date.now() + 10_000;
      while (
        (first.groupMetadata().generationId <= before || second.groupMetadata().generationId <= before) &&
        Date.now() < deadline
      ) {
        await Promise.all([first.poll(50), second.poll(50)]);
      }
      const firstRejoin = joins.find((j) => j.memberId === memberId);
      assert.equal(
        firstRejoin?.reason,
        'group is already rebalancing',
        'the heartbeat found the group rebalancing',
      );

      await second.unsubscribe();
      await first.close();
      assert.deepEqual(leaves, ['the consumer unsubscribed from all topics', 'the consumer is being closed']);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
