// KIP-848 consumer groups in the group coordinator, under a ManualClock: epochs, server-side assignment, the
// revoke-before-reassign handoff between members, leaving, fencing, session expiry, the range assignor, and
// offset commits checked against member epochs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { silentLogger } from '../../src/common/logger.js';
import {
  type ConsumerHeartbeatRequest,
  GroupCoordinator,
  type GroupCoordinatorConfig,
} from '../../src/coordinator/group/group-coordinator.js';
import type { GroupStorage, StoredRecord } from '../../src/coordinator/group/group-storage.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const E = ErrorCode;
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

const CONFIG: GroupCoordinatorConfig = {
  groupMinSessionTimeoutMs: 6_000,
  groupMaxSessionTimeoutMs: 1_800_000,
  groupMaxSize: 10,
  groupInitialRebalanceDelayMs: 0,
  offsetsRetentionMinutes: 10,
  offsetsRetentionCheckIntervalMs: 60_000,
  offsetMetadataMaxBytes: 4096,
  groupCoordinatorRebalanceProtocols: ['classic', 'consumer'],
  groupConsumerSessionTimeoutMs: 10_000,
  groupConsumerHeartbeatIntervalMs: 1_000,
  groupConsumerMaxSize: 3,
};

function setup(config: Partial<GroupCoordinatorConfig> = {}, partitionCount = 4, log: StoredRecord[] = []) {
  const clock = new ManualClock();
  const storage: GroupStorage = {
    append: async (_partition, records) => {
      log.push(...records);
      return 0;
    },
    readAll: () => [...log],
  };
  let n = 0;
  const coordinator = new GroupCoordinator({
    config: { ...CONFIG, ...config },
    clock,
    storage,
    logger: silentLogger,
    partitionCount: () => 1,
    newId: () => `m${++n}`,
    defer: (fn) => fn(),
    topics: (names) =>
      new Map(
        names.filter((x) => x === 'a').map((name) => [name, { name, topicId: TOPIC_ID, partitionCount }]),
      ),
  });
  coordinator.onLeadershipChange(0, true);
  return { clock, coordinator, log };
}

function hb(overrides: Partial<ConsumerHeartbeatRequest>): ConsumerHeartbeatRequest {
  return {
    groupId: 'cg',
    memberId: '',
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['a'],
    serverAssignor: null,
    topicPartitions: [],
    clientId: 'client',
    clientHost: '/127.0.0.1',
    ...overrides,
  };
}

const partitionsOf = (r: { assignment: { partitions: number[] }[] | null }) =>
  (r.assignment ?? []).flatMap((t) => t.partitions).sort();

describe('KIP-848 consumer groups', async () => {
  it('a single member gets every partition and reaches the group epoch', async () => {
    const { coordinator } = setup();
    const r = await coordinator.consumerGroupHeartbeat(hb({}));
    assert.equal(r.errorCode, E.NONE);
    assert.equal(r.memberId, 'm1');
    assert.equal(r.memberEpoch, 2, 'joining and the first metadata each move the group epoch');
    assert.equal(r.heartbeatIntervalMs, 1_000);
    assert.deepEqual(partitionsOf(r), [0, 1, 2, 3]);
    assert.equal(coordinator.describeConsumerGroup('cg').group?.state, 'Stable');
  });

  it('a second member gets partitions only after the first has revoked them', async () => {
    const { coordinator } = setup();
    const a = await coordinator.consumerGroupHeartbeat(hb({}));
    const owned = [{ topicId: TOPIC_ID, partitions: [0, 1, 2, 3] }];
    const b = await coordinator.consumerGroupHeartbeat(hb({}));
    assert.equal(b.memberId, 'm2');
    assert.deepEqual(partitionsOf(b), [], 'everything is still held by the first member');
    assert.equal(coordinator.describeConsumerGroup('cg').group?.state, 'Reconciling');
    const aRevoke = await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm1', memberEpoch: a.memberEpoch, topicPartitions: owned }),
    );
    assert.equal(aRevoke.memberEpoch, a.memberEpoch, 'the epoch waits until the revocation is done');
    assert.equal(partitionsOf(aRevoke).length, 2);
    const kept = partitionsOf(aRevoke);
    const aDone = await coordinator.consumerGroupHeartbeat(
      hb({
        memberId: 'm1',
        memberEpoch: a.memberEpoch,
        topicPartitions: [{ topicId: TOPIC_ID, partitions: kept }],
      }),
    );
    assert.ok(aDone.memberEpoch > a.memberEpoch);
    const bAgain = await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm2', memberEpoch: b.memberEpoch, topicPartitions: [] }),
    );
    assert.deepEqual(
      [...partitionsOf(bAgain), ...kept].sort(),
      [0, 1, 2, 3],
      'the two members split the partitions without overlap',
    );
    assert.equal(bAgain.memberEpoch, aDone.memberEpoch);
  });

  it('leaving, fencing, unknown members, size limit, and the protocol switch', async () => {
    const { coordinator, clock } = setup();
    const a = await coordinator.consumerGroupHeartbeat(hb({}));
    assert.equal(
      (await coordinator.consumerGroupHeartbeat(hb({ memberId: 'm1', memberEpoch: a.memberEpoch + 5 })))
        .errorCode,
      E.FENCED_MEMBER_EPOCH,
    );
    assert.equal(
      (await coordinator.consumerGroupHeartbeat(hb({ memberId: 'zz', memberEpoch: 3 }))).errorCode,
      E.UNKNOWN_MEMBER_ID,
    );
    await coordinator.consumerGroupHeartbeat(hb({}));
    await coordinator.consumerGroupHeartbeat(hb({}));
    assert.equal((await coordinator.consumerGroupHeartbeat(hb({}))).errorCode, E.GROUP_MAX_SIZE_REACHED);
    const left = await coordinator.consumerGroupHeartbeat(hb({ memberId: 'm1', memberEpoch: -1 }));
    assert.equal(left.memberEpoch, -1);
    assert.equal(coordinator.describeConsumerGroup('cg').group?.members.size, 2);
    clock.advance(11_000);
    coordinator.tick();
    assert.equal(coordinator.describeConsumerGroup('cg').group?.state, 'Empty', 'sessions expired');
    const off = setup({ groupCoordinatorRebalanceProtocols: ['classic'] });
    assert.equal((await off.coordinator.consumerGroupHeartbeat(hb({}))).errorCode, E.UNSUPPORTED_VERSION);
  });

  it('the range assignor gives contiguous ranges', async () => {
    const { coordinator } = setup({}, 5);
    await coordinator.consumerGroupHeartbeat(hb({ serverAssignor: 'range' }));
    await coordinator.consumerGroupHeartbeat(hb({ serverAssignor: 'range' }));
    const group = coordinator.describeConsumerGroup('cg').group!;
    assert.equal(group.assignorName, 'range');
    assert.deepEqual(group.target.get('m1')?.get(TOPIC_ID), [0, 1, 2]);
    assert.deepEqual(group.target.get('m2')?.get(TOPIC_ID), [3, 4]);
    assert.equal(
      (await coordinator.consumerGroupHeartbeat(hb({ serverAssignor: 'sticky' }))).errorCode,
      E.UNSUPPORTED_ASSIGNOR,
    );
  });

  it('offset commits name a live member and its epoch; classic joins are refused', async () => {
    const { coordinator } = setup();
    const a = await coordinator.consumerGroupHeartbeat(hb({}));
    const commit = (memberId: string, epoch: number) =>
      coordinator.commitOffsets({
        groupId: 'cg',
        generationId: epoch,
        memberId,
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [
          {
            name: 'a',
            partitions: [
              {
                partitionIndex: 0,
                committedOffset: 5,
                committedLeaderEpoch: -1,
                commitTimestampMs: -1,
                committedMetadata: null,
              },
            ],
          },
        ],
      });
    assert.equal((await commit('m1', a.memberEpoch))[0]!.partitions[0]!.errorCode, E.NONE);
    assert.equal((await commit('m1', a.memberEpoch + 1))[0]!.partitions[0]!.errorCode, E.STALE_MEMBER_EPOCH);
    assert.equal((await commit('nobody', a.memberEpoch))[0]!.partitions[0]!.errorCode, E.UNKNOWN_MEMBER_ID);
    assert.equal(
      coordinator.fetchOffsets('cg', [{ name: 'a', partitionIndexes: [0] }], false).topics[0]!.partitions[0]!
        .committedOffset,
      5,
    );
    const asMember = (epoch: number) =>
      coordinator.fetchOffsets('cg', null, false, { memberId: 'm1', memberEpoch: epoch }).errorCode;
    assert.equal(asMember(a.memberEpoch), E.NONE);
    assert.equal(asMember(a.memberEpoch + 3), E.STALE_MEMBER_EPOCH);
    const classic = await coordinator.join({
      groupId: 'cg',
      memberId: '',
      groupInstanceId: null,
      clientId: 'c',
      clientHost: '/h',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      requireKnownMemberId: false,
      supportsSkippingAssignment: true,
    });
    assert.equal(classic.errorCode, E.INCONSISTENT_GROUP_PROTOCOL);
    assert.deepEqual(
      coordinator.list([], ['consumer']).groups.map((g) => [g.groupId, g.groupType]),
      [['cg', 'consumer']],
    );
    // Once empty, the id can be used by a classic group, which keeps the offsets.
    await coordinator.consumerGroupHeartbeat(hb({ memberId: 'm1', memberEpoch: -1 }));
    const converted = await coordinator.join({
      groupId: 'cg',
      memberId: '',
      groupInstanceId: null,
      clientId: 'c',
      clientHost: '/h',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      requireKnownMemberId: false,
      supportsSkippingAssignment: true,
    });
    assert.equal(converted.errorCode, E.NONE);
    assert.deepEqual(
      coordinator.list([], []).groups.map((g) => [g.groupId, g.groupType]),
      [['cg', 'classic']],
    );
    assert.equal(coordinator.fetchOffsets('cg', null, false).topics[0]!.partitions[0]!.committedOffset, 5);
  });
  it('removes a member that does not revoke within its rebalance timeout, freeing its partitions', async () => {
    const { coordinator, clock } = setup();
    const a = await coordinator.consumerGroupHeartbeat(hb({ rebalanceTimeoutMs: 5_000 }));
    const owned = [{ topicId: TOPIC_ID, partitions: [0, 1, 2, 3] }];
    const b = await coordinator.consumerGroupHeartbeat(hb({}));
    await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm1', memberEpoch: a.memberEpoch, topicPartitions: owned, rebalanceTimeoutMs: 5_000 }),
    );
    clock.advance(4_000);
    // m1 keeps heartbeating but never gives anything up.
    await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm1', memberEpoch: a.memberEpoch, topicPartitions: owned, rebalanceTimeoutMs: 5_000 }),
    );
    coordinator.tick();
    assert.equal(coordinator.describeConsumerGroup('cg').group?.members.size, 2);
    clock.advance(2_000);
    coordinator.tick();
    assert.equal(coordinator.describeConsumerGroup('cg').group?.members.size, 1);
    const bAgain = await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm2', memberEpoch: b.memberEpoch, topicPartitions: [] }),
    );
    assert.deepEqual(partitionsOf(bAgain), [0, 1, 2, 3]);
    assert.equal(
      (await coordinator.consumerGroupHeartbeat(hb({ memberId: 'm1', memberEpoch: a.memberEpoch })))
        .errorCode,
      E.UNKNOWN_MEMBER_ID,
    );
  });
  it('is written to the log and loaded back: members keep their epochs and assignments', async () => {
    const first = setup();
    const a = await first.coordinator.consumerGroupHeartbeat(hb({}));
    const b = await first.coordinator.consumerGroupHeartbeat(hb({}));
    const owned = [{ topicId: TOPIC_ID, partitions: [0, 1, 2, 3] }];
    const revoking = await first.coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm1', memberEpoch: a.memberEpoch, topicPartitions: owned }),
    );
    const kept = [{ topicId: TOPIC_ID, partitions: partitionsOf(revoking) }];
    const aDone = await first.coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm1', memberEpoch: a.memberEpoch, topicPartitions: kept }),
    );
    const bDone = await first.coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm2', memberEpoch: b.memberEpoch, topicPartitions: [] }),
    );
    const second = setup({}, 4, first.log);
    const loaded = second.coordinator.describeConsumerGroup('cg').group!;
    assert.equal(loaded.state, 'Stable');
    assert.equal(loaded.groupEpoch, first.coordinator.describeConsumerGroup('cg').group!.groupEpoch);
    assert.equal(loaded.members.get('m1')!.memberEpoch, aDone.memberEpoch);
    const again = await second.coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm2', memberEpoch: bDone.memberEpoch, topicPartitions: bDone.assignment }),
    );
    assert.equal(again.errorCode, E.NONE);
    assert.deepEqual(partitionsOf(again), partitionsOf(bDone));
    // A member that leaves is gone after the next load too.
    await second.coordinator.consumerGroupHeartbeat(hb({ memberId: 'm1', memberEpoch: -1 }));
    const third = setup({}, 4, first.log);
    assert.deepEqual([...third.coordinator.describeConsumerGroup('cg').group!.members.keys()], ['m2']);
  });
  it('a static member that leaves with epoch -2 comes back under its instance id with its epoch and partitions', async () => {
    const { coordinator } = setup();
    const a = await coordinator.consumerGroupHeartbeat(hb({ instanceId: 'i1' }));
    const b = await coordinator.consumerGroupHeartbeat(hb({ instanceId: 'i2' }));
    await coordinator.consumerGroupHeartbeat(
      hb({
        memberId: 'm1',
        memberEpoch: a.memberEpoch,
        topicPartitions: [{ topicId: TOPIC_ID, partitions: [0, 1, 2, 3] }],
      }),
    );
    const aKept = await coordinator.consumerGroupHeartbeat(
      hb({
        memberId: 'm1',
        memberEpoch: a.memberEpoch,
        topicPartitions: [{ topicId: TOPIC_ID, partitions: [0, 1] }],
      }),
    );
    const bGot = await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm2', memberEpoch: b.memberEpoch, topicPartitions: [] }),
    );
    const epoch = coordinator.describeConsumerGroup('cg').group!.groupEpoch;
    assert.equal(
      (await coordinator.consumerGroupHeartbeat(hb({ instanceId: 'i1' }))).errorCode,
      E.UNRELEASED_INSTANCE_ID,
      'the instance id is still in use',
    );
    const left = await coordinator.consumerGroupHeartbeat(
      hb({ memberId: 'm1', memberEpoch: -2, instanceId: 'i1' }),
    );
    assert.equal(left.memberEpoch, -2);
    const back = await coordinator.consumerGroupHeartbeat(hb({ instanceId: 'i1' }));
    assert.equal(back.errorCode, E.NONE);
    assert.notEqual(back.memberId, 'm1');
    assert.equal(back.memberEpoch, aKept.memberEpoch);
    assert.deepEqual(partitionsOf(back), partitionsOf(aKept));
    assert.equal(coordinator.describeConsumerGroup('cg').group!.groupEpoch, epoch, 'no rebalance');
    assert.deepEqual([...partitionsOf(back), ...partitionsOf(bGot)].sort(), [0, 1, 2, 3]);
  });
});
