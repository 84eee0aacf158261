// The group APIs of a real broker process, spoken to with Brook's own codecs at old and new versions: what each
// version carries (FindCoordinator batched from v4, JoinGroup without MEMBER_ID_REQUIRED before v4, LeaveGroup's
// top-level error before v3, OffsetFetch's per-partition errors before v2 and several groups from v8, ListGroups'
// state filter from v4), and __consumer_offsets created on first use with the settings Kafka gives it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;

function joinBody(groupId: string, memberId: string) {
  return {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]) }],
    reason: null,
  };
}

function commitBody(groupId: string, generationId: number, memberId: string, offset: bigint) {
  return {
    groupId,
    generationIdOrMemberEpoch: generationId,
    memberId,
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      {
        name: 't',
        partitions: [
          {
            partitionIndex: 0,
            committedOffset: offset,
            committedLeaderEpoch: -1,
            commitTimestamp: -1n,
            committedMetadata: 'hello',
          },
        ],
      },
    ],
  };
}

describe('group APIs over the wire', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  before(async () => {
    broker = await startBroker({ overrides: { 'offsets.topic.num.partitions': 5 } });
    client = await WireClient.connect(broker.host, broker.port);
    // Offsets are committed only for partitions that exist (UNKNOWN_TOPIC_OR_PARTITION otherwise).
    await createTopic(client, 't', { numPartitions: 2, replicationFactor: 1 });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  async function groupState(groupId: string): Promise<string> {
    const r = await client.call(ApiKey.DESCRIBE_GROUPS, 0, {
      groups: [groupId],
      includeAuthorizedOperations: false,
    });
    return r.groups[0].groupState;
  }

  /** Retries while the coordinator is being created or loaded, as clients do. */
  // biome-ignore lint/suspicious/noExplicitAny: responses are read field by field, as WireClient.call returns them.
  async function callReady(apiKey: number, version: number, body: unknown, errorOf: (r: any) => number) {
    for (let i = 0; ; i++) {
      const r = await client.call(apiKey, version, body);
      const code = errorOf(r);
      if (
        i < 150 &&
        (code === E.COORDINATOR_NOT_AVAILABLE ||
          code === E.COORDINATOR_LOAD_IN_PROGRESS ||
          code === E.NOT_COORDINATOR)
      ) {
        await new Promise((res) => setTimeout(res, 100));
        continue;
      }
      return r;
    }
  }

  it('FindCoordinator creates __consumer_offsets and answers single and batched keys', async () => {
    const v0 = await callReady(
      ApiKey.FIND_COORDINATOR,
      0,
      { key: 'g-old', keyType: 0, coordinatorKeys: [] },
      (r) => r.errorCode,
    );
    assert.equal(v0.errorCode, E.NONE);
    assert.equal(v0.nodeId, 0);
    assert.equal(v0.port, broker.port);
    const v4 = await client.call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 0,
      coordinatorKeys: ['a', 'b'],
    });
    assert.deepEqual(
      v4.coordinators.map((c: { key: string; errorCode: number; port: number }) => [
        c.key,
        c.errorCode,
        c.port,
      ]),
      [
        ['a', 0, broker.port],
        ['b', 0, broker.port],
      ],
    );
    // Transaction coordinators: __transaction_state is created on first use, then its leader answers.
    let txn = { errorCode: -1, port: -1 };
    for (let i = 0; i < 100 && txn.errorCode !== 0; i++) {
      const r = await client.call(ApiKey.FIND_COORDINATOR, 4, {
        key: '',
        keyType: 1,
        coordinatorKeys: ['tx'],
      });
      txn = r.coordinators[0];
      if (txn.errorCode !== 0) {
        assert.equal(txn.errorCode, E.COORDINATOR_NOT_AVAILABLE);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.deepEqual([txn.errorCode, txn.port], [0, broker.port]);
    const md = await client.call(ApiKey.METADATA, 9, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: '__consumer_offsets' }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(md.topics[0].partitions.length, 5, 'offsets.topic.num.partitions');
    assert.equal(md.topics[0].isInternal, true);
    const configs = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [
        { resourceType: 2, resourceName: '__consumer_offsets', configurationKeys: ['cleanup.policy'] },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(configs.results[0].configs[0].value, 'compact');
  });

  it('JoinGroup v0 admits a member without MEMBER_ID_REQUIRED; LeaveGroup v0 answers at the top level', async () => {
    const join = await callReady(ApiKey.JOIN_GROUP, 0, joinBody('g-old', ''), (r) => r.errorCode);
    assert.equal(join.errorCode, E.NONE);
    assert.equal(join.generationId, 1);
    assert.equal(join.leader, join.memberId);
    assert.equal(join.protocolName, 'range');
    const sync = await client.call(ApiKey.SYNC_GROUP, 0, {
      groupId: 'g-old',
      generationId: 1,
      memberId: join.memberId,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [{ memberId: join.memberId, assignment: Buffer.from('abc') }],
    });
    assert.equal(sync.errorCode, E.NONE);
    assert.equal(sync.assignment.toString(), 'abc');
    const hb = await client.call(ApiKey.HEARTBEAT, 0, {
      groupId: 'g-old',
      generationId: 1,
      memberId: join.memberId,
      groupInstanceId: null,
    });
    assert.equal(hb.errorCode, E.NONE);
    const described = await client.call(ApiKey.DESCRIBE_GROUPS, 0, {
      groups: ['g-old'],
      includeAuthorizedOperations: false,
    });
    assert.equal(described.groups[0].groupState, 'Stable');
    assert.equal(described.groups[0].members[0].memberAssignment.toString(), 'abc');
    const unknown = await client.call(ApiKey.LEAVE_GROUP, 0, {
      groupId: 'g-old',
      memberId: 'nobody',
      members: [],
    });
    assert.equal(unknown.errorCode, E.UNKNOWN_MEMBER_ID);
    const left = await client.call(ApiKey.LEAVE_GROUP, 0, {
      groupId: 'g-old',
      memberId: join.memberId,
      members: [],
    });
    assert.equal(left.errorCode, E.NONE);
  });

  it('JoinGroup v4+ requires a member id first; batch LeaveGroup v3 answers per member', async () => {
    const first = await callReady(ApiKey.JOIN_GROUP, 7, joinBody('g-new', ''), (r) =>
      r.errorCode === E.MEMBER_ID_REQUIRED ? 0 : r.errorCode,
    );
    assert.equal(first.errorCode, E.MEMBER_ID_REQUIRED);
    assert.ok(first.memberId.startsWith('wire-test-'));
    const join = await client.call(ApiKey.JOIN_GROUP, 7, joinBody('g-new', first.memberId));
    assert.equal(join.errorCode, E.NONE);
    assert.equal(join.protocolType, 'consumer');
    const leave = await client.call(ApiKey.LEAVE_GROUP, 3, {
      groupId: 'g-new',
      memberId: '',
      members: [
        { memberId: join.memberId, groupInstanceId: null, reason: null },
        { memberId: 'nobody', groupInstanceId: null, reason: null },
      ],
    });
    assert.equal(leave.errorCode, E.NONE);
    assert.deepEqual(
      leave.members.map((m: { errorCode: number }) => m.errorCode),
      [E.NONE, E.UNKNOWN_MEMBER_ID],
    );
  });

  it('OffsetCommit and OffsetFetch at old and new versions, several groups at once from v8', async () => {
    const c2 = await callReady(
      ApiKey.OFFSET_COMMIT,
      2,
      commitBody('offsets-a', -1, '', 11n),
      (r) => r.topics[0].partitions[0].errorCode,
    );
    assert.equal(c2.topics[0].partitions[0].errorCode, E.NONE);
    const c8 = await callReady(
      ApiKey.OFFSET_COMMIT,
      8,
      commitBody('offsets-b', -1, '', 22n),
      (r) => r.topics[0].partitions[0].errorCode,
    );
    assert.equal(c8.topics[0].partitions[0].errorCode, E.NONE);
    const f1 = await client.call(ApiKey.OFFSET_FETCH, 1, {
      groupId: 'offsets-a',
      topics: [{ name: 't', partitionIndexes: [0, 1] }],
      groups: [],
      requireStable: false,
    });
    assert.deepEqual(
      f1.topics[0].partitions.map((p: { committedOffset: bigint; metadata: string }) => [
        p.committedOffset,
        p.metadata,
      ]),
      [
        [11n, 'hello'],
        [-1n, ''],
      ],
    );
    const f8 = await client.call(ApiKey.OFFSET_FETCH, 8, {
      groupId: '',
      topics: [],
      groups: [
        { groupId: 'offsets-a', memberId: null, memberEpoch: -1, topics: null },
        {
          groupId: 'offsets-b',
          memberId: null,
          memberEpoch: -1,
          topics: [{ name: 't', partitionIndexes: [0] }],
        },
      ],
      requireStable: true,
    });
    assert.deepEqual(
      f8.groups.map((g: { groupId: string; topics: { partitions: { committedOffset: bigint }[] }[] }) => [
        g.groupId,
        g.topics[0]!.partitions[0]!.committedOffset,
      ]),
      [
        ['offsets-a', 11n],
        ['offsets-b', 22n],
      ],
    );
    const notEmpty = await client.call(ApiKey.OFFSET_COMMIT, 8, commitBody('offsets-a', 5, 'someone', 1n));
    assert.equal(notEmpty.topics[0].partitions[0].errorCode, E.UNKNOWN_MEMBER_ID);
  });

  it('OffsetCommit during CompletingRebalance checks the member and generation before REBALANCE_IN_PROGRESS', async () => {
    // Kafka's validateOffsetCommit runs before the state is looked at: a commit from outside the group is
    // UNKNOWN_MEMBER_ID and one from an older generation ILLEGAL_GENERATION, so that a member dropped from the
    // group learns it lost its partitions; only a current member of the current generation hears
    // REBALANCE_IN_PROGRESS.
    const join = await callReady(ApiKey.JOIN_GROUP, 3, joinBody('commit-completing', ''), (r) => r.errorCode);
    assert.equal(join.errorCode, E.NONE);
    assert.equal(join.generationId, 1);
    // The leader has not sent SyncGroup: the group stays in CompletingRebalance.
    const described = await client.call(ApiKey.DESCRIBE_GROUPS, 0, {
      groups: ['commit-completing'],
      includeAuthorizedOperations: false,
    });
    assert.equal(described.groups[0].groupState, 'CompletingRebalance');
    const commitError = async (generationId: number, memberId: string) => {
      const r = await client.call(
        ApiKey.OFFSET_COMMIT,
        8,
        commitBody('commit-completing', generationId, memberId, 1n),
      );
      return r.topics[0].partitions[0].errorCode;
    };
    assert.equal(await commitError(1, 'nobody'), E.UNKNOWN_MEMBER_ID, 'a member outside the group');
    assert.equal(await commitError(-1, ''), E.UNKNOWN_MEMBER_ID, 'no member, in a group with members');
    assert.equal(await commitError(0, join.memberId), E.ILLEGAL_GENERATION, 'an older generation');
    assert.equal(await commitError(1, join.memberId), E.REBALANCE_IN_PROGRESS, 'the current generation');
  });

  it('a static member back under a new member id with changed metadata gets its assignment without a rebalance', async () => {
    // Kafka (updateStaticMemberAndRebalance): in a Stable group, a static member that rejoins without its member
    // id takes over under a new id, and the group rebalances only if the protocol it would select changes. A
    // restarted Java consumer's subscription differs from the one it joined with (no owned partitions, no
    // generation), so comparing the metadata would rebalance the group on every restart.
    const group = 'static-rejoin';
    const a = client;
    const b = await WireClient.connect(broker.host, broker.port);
    try {
      const staticJoin = (memberId: string, instanceId: string, metadata: Buffer) => ({
        ...joinBody(group, memberId),
        groupInstanceId: instanceId,
        protocols: [{ name: 'range', metadata }],
      });
      const metadataA = Buffer.from('subscription of a');
      const first = await callReady(
        ApiKey.JOIN_GROUP,
        7,
        staticJoin('', 'instance-a', metadataA),
        (r) => r.errorCode,
      );
      assert.equal(first.errorCode, E.NONE);
      const memberA = first.memberId;
      const sync1 = await a.call(ApiKey.SYNC_GROUP, 5, {
        groupId: group,
        generationId: first.generationId,
        memberId: memberA,
        groupInstanceId: 'instance-a',
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId: memberA, assignment: Buffer.from('a0') }],
      });
      assert.equal(sync1.errorCode, E.NONE);
      // b joins (parked until a rejoins); a, the leader, rejoins and assigns both.
      b.send(ApiKey.JOIN_GROUP, 7, staticJoin('', 'instance-b', Buffer.from('subscription of b, first run')));
      for (let i = 0; i < 50 && (await groupState(group)) !== 'PreparingRebalance'; i++) await sleep(100);
      const rejoin = await a.call(ApiKey.JOIN_GROUP, 7, staticJoin(memberA, 'instance-a', metadataA));
      const joinB = await b.receive();
      assert.equal(rejoin.errorCode, E.NONE);
      assert.equal(joinB.errorCode, E.NONE);
      const generation = rejoin.generationId;
      assert.equal(joinB.generationId, generation);
      assert.equal(rejoin.leader, memberA);
      const syncBody = (memberId: string, instanceId: string, gen: number, assignments: unknown[]) => ({
        groupId: group,
        generationId: gen,
        memberId,
        groupInstanceId: instanceId,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments,
      });
      b.send(ApiKey.SYNC_GROUP, 5, syncBody(joinB.memberId, 'instance-b', generation, []));
      const syncA = await a.call(
        ApiKey.SYNC_GROUP,
        5,
        syncBody(memberA, 'instance-a', generation, [
          { memberId: memberA, assignment: Buffer.from('a1') },
          { memberId: joinB.memberId, assignment: Buffer.from('b1') },
        ]),
      );
      const syncB = await b.receive();
      assert.equal(syncA.errorCode, E.NONE);
      assert.equal(syncB.assignment.toString(), 'b1');

      // b restarts: no member id, the same instance id, another subscription under the same protocol.
      const metadataB2 = Buffer.from('subscription of b, after a restart');
      // Before, the group rebalanced and the answer waited for a to rejoin, or for the rebalance timeout.
      const again = await b.call(ApiKey.JOIN_GROUP, 7, staticJoin('', 'instance-b', metadataB2), 5000);
      const hb = await a.call(ApiKey.HEARTBEAT, 3, {
        groupId: group,
        generationId: generation,
        memberId: memberA,
        groupInstanceId: 'instance-a',
      });
      assert.equal(hb.errorCode, E.NONE, 'the other member is not told to rebalance');
      assert.equal(again.errorCode, E.NONE);
      assert.equal(again.generationId, generation, 'the same generation');
      assert.notEqual(again.memberId, joinB.memberId, 'a new member id');
      assert.equal(again.leader, memberA);
      assert.deepEqual(again.members, [], 'a follower gets no member list');
      const syncAgain = await b.call(
        ApiKey.SYNC_GROUP,
        5,
        syncBody(again.memberId, 'instance-b', generation, []),
      );
      assert.equal(syncAgain.errorCode, E.NONE);
      assert.equal(syncAgain.assignment.toString(), 'b1', 'the assignment it had');
      const old = await a.call(ApiKey.HEARTBEAT, 3, {
        groupId: group,
        generationId: generation,
        memberId: joinB.memberId,
        groupInstanceId: 'instance-b',
      });
      assert.equal(old.errorCode, E.FENCED_INSTANCE_ID, 'the old member id is fenced');
      const described = await a.call(ApiKey.DESCRIBE_GROUPS, 0, {
        groups: [group],
        includeAuthorizedOperations: false,
      });
      const d = described.groups[0];
      assert.equal(d.groupState, 'Stable');
      assert.equal(d.members.length, 2);
      const memberB = d.members.find((m: { memberId: string }) => m.memberId === again.memberId);
      assert.equal(memberB.memberMetadata.toString(), metadataB2.toString(), 'the new subscription is kept');
      // Both removed by instance id, as an admin client does, so that the group is not Stable for the next test.
      const left = await a.call(ApiKey.LEAVE_GROUP, 3, {
        groupId: group,
        memberId: '',
        members: ['instance-a', 'instance-b'].map((id) => ({
          memberId: '',
          groupInstanceId: id,
          reason: null,
        })),
      });
      assert.deepEqual(
        left.members.map((m: { errorCode: number }) => m.errorCode),
        [E.NONE, E.NONE],
      );
    } finally {
      b.close();
    }
  });

  it('a static leader back under a new member id below JoinGroup v9 is not told it leads; from v9 it is, with SkipAssignment', async () => {
    // Kafka (updateStaticMemberAndRebalance): a Stable group answers a static member that rejoins without its member
    // id with the current generation. Before v9 the request has no way to skip the assignment, so the answer names
    // the leader as it was before the takeover (the rejoining leader's old member id) and lists no members: a client
    // that believed it led would run its assignor for an assignment the Stable group then ignores. From v9 the
    // leader is told it leads, with the members, and SkipAssignment.
    const group = 'static-leader-rejoin';
    const staticJoin = (memberId: string) => ({
      ...joinBody(group, memberId),
      groupInstanceId: 'instance-leader',
      protocols: [{ name: 'range', metadata: Buffer.from('subscription') }],
    });
    const first = await callReady(ApiKey.JOIN_GROUP, 7, staticJoin(''), (r) => r.errorCode);
    assert.equal(first.errorCode, E.NONE);
    assert.equal(first.leader, first.memberId);
    const synced = await client.call(ApiKey.SYNC_GROUP, 5, {
      groupId: group,
      generationId: first.generationId,
      memberId: first.memberId,
      groupInstanceId: 'instance-leader',
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId: first.memberId, assignment: Buffer.from('assigned') }],
    });
    assert.equal(synced.errorCode, E.NONE);

    // The leader's process restarts and joins with JoinGroup v7 (librdkafka, Java clients before 3.3).
    const v7 = await client.call(ApiKey.JOIN_GROUP, 7, staticJoin(''));
    assert.equal(v7.errorCode, E.NONE);
    assert.equal(v7.generationId, first.generationId, 'no rebalance');
    assert.notEqual(v7.memberId, first.memberId, 'a new member id');
    assert.equal(v7.leader, first.memberId, 'the leader before the takeover, not the new member id');
    assert.deepEqual(v7.members, [], 'no member list to assign');
    const resync = await client.call(ApiKey.SYNC_GROUP, 5, {
      groupId: group,
      generationId: v7.generationId,
      memberId: v7.memberId,
      groupInstanceId: 'instance-leader',
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [],
    });
    assert.equal(resync.errorCode, E.NONE);
    assert.equal(resync.assignment.toString(), 'assigned', 'the assignment it had');

    // Again with JoinGroup v9: the leader (now under v7's member id) is told it leads and skips the assignment.
    const v9 = await client.call(ApiKey.JOIN_GROUP, 9, staticJoin(''));
    assert.equal(v9.errorCode, E.NONE);
    assert.equal(v9.generationId, first.generationId);
    assert.equal(v9.leader, v9.memberId);
    assert.equal(v9.skipAssignment, true);
    assert.deepEqual(
      v9.members.map((m: { memberId: string; groupInstanceId: string }) => [m.memberId, m.groupInstanceId]),
      [[v9.memberId, 'instance-leader']],
    );

    // Removed by instance id, so that no group is Stable for the ListGroups test.
    const left = await client.call(ApiKey.LEAVE_GROUP, 3, {
      groupId: group,
      memberId: '',
      members: [{ memberId: '', groupInstanceId: 'instance-leader', reason: null }],
    });
    assert.equal(left.members[0].errorCode, E.NONE);
  });

  it('a group.instance.id that no member holds is UNKNOWN_MEMBER_ID, even with the id of a live member', async () => {
    // Kafka's validateCurrentMember, which JoinGroup, SyncGroup, Heartbeat, LeaveGroup and OffsetCommit all run: a
    // request naming an instance id must come from the member that holds it (FENCED_INSTANCE_ID when another
    // member holds it, UNKNOWN_MEMBER_ID when none does), whatever its member id. Before, an instance id that no
    // member held was not checked, and a live member's id with it was accepted.
    const group = 'unheld-instance';
    const join = await callReady(ApiKey.JOIN_GROUP, 3, joinBody(group, ''), (r) => r.errorCode);
    assert.equal(join.errorCode, E.NONE);
    const { memberId, generationId } = join;
    const synced = await client.call(ApiKey.SYNC_GROUP, 3, {
      groupId: group,
      generationId,
      memberId,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [{ memberId, assignment: Buffer.alloc(0) }],
    });
    assert.equal(synced.errorCode, E.NONE);
    const unheld = 'instance-nobody-holds';

    const commit = await client.call(ApiKey.OFFSET_COMMIT, 8, {
      ...commitBody(group, generationId, memberId, 3n),
      groupInstanceId: unheld,
    });
    assert.equal(commit.topics[0].partitions[0].errorCode, E.UNKNOWN_MEMBER_ID, 'OffsetCommit');
    const fetched = await client.call(ApiKey.OFFSET_FETCH, 7, {
      groupId: group,
      topics: [{ name: 't', partitionIndexes: [0] }],
      groups: [],
      requireStable: false,
    });
    assert.equal(fetched.topics[0].partitions[0].committedOffset, -1n, 'nothing was committed');
    const hb = await client.call(ApiKey.HEARTBEAT, 4, {
      groupId: group,
      generationId,
      memberId,
      groupInstanceId: unheld,
    });
    assert.equal(hb.errorCode, E.UNKNOWN_MEMBER_ID, 'Heartbeat');
    const sync = await client.call(ApiKey.SYNC_GROUP, 5, {
      groupId: group,
      generationId,
      memberId,
      groupInstanceId: unheld,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [],
    });
    assert.equal(sync.errorCode, E.UNKNOWN_MEMBER_ID, 'SyncGroup');
    const rejoin = await client.call(ApiKey.JOIN_GROUP, 7, {
      ...joinBody(group, memberId),
      groupInstanceId: unheld,
    });
    assert.equal(rejoin.errorCode, E.UNKNOWN_MEMBER_ID, 'JoinGroup');

    // The member itself, without the instance id, is still in the group and in its generation.
    const own = await client.call(ApiKey.HEARTBEAT, 4, {
      groupId: group,
      generationId,
      memberId,
      groupInstanceId: null,
    });
    assert.equal(own.errorCode, E.NONE);
    const left = await client.call(ApiKey.LEAVE_GROUP, 0, { groupId: group, memberId, members: [] });
    assert.equal(left.errorCode, E.NONE);
  });

  it('ListGroups filters by state from v4; DeleteGroups and OffsetDelete remove what they name', async () => {
    const all = await client.call(ApiKey.LIST_GROUPS, 3, { statesFilter: [], typesFilter: [] });
    const ids = all.groups.map((g: { groupId: string }) => g.groupId).sort();
    assert.ok(
      ['g-old', 'offsets-a', 'offsets-b'].every((g) => ids.includes(g)),
      JSON.stringify(ids),
    );
    const stable = await client.call(ApiKey.LIST_GROUPS, 4, { statesFilter: ['Stable'], typesFilter: [] });
    assert.equal(stable.groups.length, 0);
    const empty = await client.call(ApiKey.LIST_GROUPS, 4, { statesFilter: ['Empty'], typesFilter: [] });
    assert.ok(
      empty.groups.some(
        (g: { groupId: string; groupState: string }) => g.groupId === 'offsets-a' && g.groupState === 'Empty',
      ),
    );
    const deletedOffsets = await client.call(ApiKey.OFFSET_DELETE, 0, {
      groupId: 'offsets-b',
      topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }],
    });
    assert.equal(deletedOffsets.errorCode, E.NONE);
    const deleted = await client.call(ApiKey.DELETE_GROUPS, 2, { groupsNames: ['offsets-a', 'never-was'] });
    assert.deepEqual(
      deleted.results.map((r: { groupId: string; errorCode: number }) => [r.groupId, r.errorCode]),
      [
        ['offsets-a', E.NONE],
        ['never-was', E.GROUP_ID_NOT_FOUND],
      ],
    );
    const f = await client.call(ApiKey.OFFSET_FETCH, 7, {
      groupId: 'offsets-b',
      topics: null,
      groups: [],
      requireStable: false,
    });
    assert.deepEqual(f.topics, []);
  });
  it('OffsetDelete of the empty group id answers INVALID_GROUP_ID and keeps its offsets, as Kafka', async () => {
    // Kafka's coordinators (GroupCoordinator.isValidGroupId, GroupCoordinatorService.deleteOffsets) take the empty
    // group id for OffsetCommit and OffsetFetch only; OffsetDelete refuses it before looking the group up.
    const commit = await callReady(ApiKey.OFFSET_COMMIT, 7, commitBody('', -1, '', 9n), (r) => r.errorCode);
    assert.equal(commit.topics[0].partitions[0].errorCode, E.NONE);
    const deleted = await client.call(ApiKey.OFFSET_DELETE, 0, {
      groupId: '',
      topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }],
    });
    assert.equal(deleted.errorCode, E.INVALID_GROUP_ID);
    assert.deepEqual(deleted.topics, []);
    const fetched = await client.call(ApiKey.OFFSET_FETCH, 7, {
      groupId: '',
      topics: [{ name: 't', partitionIndexes: [0] }],
      groups: [],
      requireStable: false,
    });
    assert.equal(fetched.topics[0].partitions[0].committedOffset, 9n);
  });
  it('OffsetDelete on a live group: NON_EMPTY_GROUP unless a consumer group; unreadable subscriptions keep every topic', async () => {
    /** A one-member Stable group with an offset committed for t-0; answers the member id. */
    async function liveGroup(groupId: string, protocolType: string, metadata: Buffer): Promise<string> {
      const body = { ...joinBody(groupId, ''), protocolType, protocols: [{ name: 'range', metadata }] };
      const join = await callReady(ApiKey.JOIN_GROUP, 0, body, (r) => r.errorCode);
      assert.equal(join.errorCode, E.NONE);
      const sync = await client.call(ApiKey.SYNC_GROUP, 0, {
        groupId,
        generationId: join.generationId,
        memberId: join.memberId,
        groupInstanceId: null,
        protocolType: null,
        protocolName: null,
        assignments: [{ memberId: join.memberId, assignment: Buffer.alloc(0) }],
      });
      assert.equal(sync.errorCode, E.NONE);
      const commit = await client.call(
        ApiKey.OFFSET_COMMIT,
        7,
        commitBody(groupId, join.generationId, join.memberId, 5n),
      );
      assert.equal(commit.topics[0].partitions[0].errorCode, E.NONE);
      return join.memberId;
    }
    const deleteT0 = (groupId: string) =>
      client.call(ApiKey.OFFSET_DELETE, 0, {
        groupId,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }],
      });
    const committed = async (groupId: string) =>
      (
        await client.call(ApiKey.OFFSET_FETCH, 7, {
          groupId,
          topics: [{ name: 't', partitionIndexes: [0] }],
          groups: [],
          requireStable: false,
        })
      ).topics[0].partitions[0].committedOffset;

    // Kafka deletes offsets of a live group only for a consumer group, whose subscriptions it can read.
    const connectMember = await liveGroup('od-connect', 'connect', Buffer.from('worker'));
    const refused = await deleteT0('od-connect');
    assert.equal(refused.errorCode, E.NON_EMPTY_GROUP);
    assert.equal(await committed('od-connect'), 5n);

    // A consumer group whose member metadata is not a subscription Brook can read: every topic counts as subscribed.
    const opaqueMember = await liveGroup('od-opaque', 'consumer', Buffer.from([0xff]));
    const kept = await deleteT0('od-opaque');
    assert.equal(kept.errorCode, E.NONE);
    assert.equal(kept.topics[0].partitions[0].errorCode, E.GROUP_SUBSCRIBED_TO_TOPIC);
    assert.equal(await committed('od-opaque'), 5n);

    // Once empty, both groups' offsets can go.
    for (const [groupId, memberId] of [
      ['od-connect', connectMember],
      ['od-opaque', opaqueMember],
    ] as const) {
      const left = await client.call(ApiKey.LEAVE_GROUP, 0, { groupId, memberId, members: [] });
      assert.equal(left.errorCode, E.NONE);
      const deleted = await deleteT0(groupId);
      assert.equal(deleted.errorCode, E.NONE);
      assert.equal(deleted.topics[0].partitions[0].errorCode, E.NONE);
      assert.equal(await committed(groupId), -1n);
    }
  });
});
