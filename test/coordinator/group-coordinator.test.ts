// The classic group coordinator's state machine under a ManualClock and an in-memory __consumer_offsets: every
// state transition, the deadlines (initial delay, rebalance, session, pending sync, offset expiry), the error
// codes members see, and that what is written to the log loads back into the same groups and offsets.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { silentLogger } from '../../src/common/logger.js';
import type { SyncResult } from '../../src/coordinator/group/classic-group.js';
import {
  GroupCoordinator,
  type GroupCoordinatorConfig,
  type JoinRequest,
} from '../../src/coordinator/group/group-coordinator.js';
import { groupPartition, javaStringHashCode } from '../../src/coordinator/group/group-partitioner.js';
import { decodeGroupRecord } from '../../src/coordinator/group/group-records.js';
import { encodeSubscription } from '../../src/protocol/consumer-protocol/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { MemoryStorage } from './memory-storage.js';

const E = ErrorCode;

const CONFIG: GroupCoordinatorConfig = {
  groupMinSessionTimeoutMs: 6_000,
  groupMaxSessionTimeoutMs: 1_800_000,
  groupMaxSize: 10,
  groupInitialRebalanceDelayMs: 0,
  offsetsRetentionMinutes: 10,
  offsetsRetentionCheckIntervalMs: 60_000,
  offsetMetadataMaxBytes: 16,
};

function setup(config: Partial<GroupCoordinatorConfig> = {}, storage = new MemoryStorage()) {
  const clock = new ManualClock();
  let n = 0;
  const coordinator = new GroupCoordinator({
    config: { ...CONFIG, ...config },
    clock,
    storage,
    logger: silentLogger,
    partitionCount: () => 1,
    newId: () => `id${++n}`,
    defer: (fn) => fn(),
  });
  coordinator.onLeadershipChange(0, true);
  const advance = (ms: number) => {
    clock.advance(ms);
    coordinator.tick();
  };
  return { clock, coordinator, storage, advance };
}

function joinRequest(memberId: string, overrides: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId: 'g',
    memberId,
    groupInstanceId: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
    requireKnownMemberId: true,
    supportsSkippingAssignment: true,
    ...overrides,
  };
}

/** Settles promise callbacks queued by the coordinator. */
const flush = () => new Promise<void>((r) => setImmediate(r));

/** Tracks a promise so a test can see whether it has been answered yet. */
function track<T>(p: Promise<T>): { done: () => boolean; value: () => T } {
  let result: { v: T } | null = null;
  void p.then((v) => {
    result = { v };
  });
  return {
    done: () => result !== null,
    value: () => {
      assert.ok(result !== null, 'not answered yet');
      return result.v;
    },
  };
}

async function joinNew(coordinator: GroupCoordinator, overrides: Partial<JoinRequest> = {}) {
  const first = await coordinator.join(joinRequest('', overrides));
  assert.equal(first.errorCode, E.MEMBER_ID_REQUIRED);
  return track(coordinator.join(joinRequest(first.memberId, overrides)));
}

function sync(
  coordinator: GroupCoordinator,
  memberId: string,
  generationId: number,
  assignments: [string, string][] = [],
) {
  return track<SyncResult>(
    coordinator.sync({
      groupId: 'g',
      generationId,
      memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: assignments.map(([m, a]) => ({ memberId: m, assignment: Buffer.from(a) })),
    }),
  );
}

/** One member, joined and synced: the group is Stable at generation 1. */
async function stableGroupOfOne(coordinator: GroupCoordinator) {
  const join = await joinNew(coordinator);
  await flush();
  const a = join.value();
  const s = sync(coordinator, a.memberId, a.generationId, [[a.memberId, 'A']]);
  await flush();
  assert.equal(s.value().errorCode, E.NONE);
  return a;
}

describe('group partitioner', () => {
  it("matches Java's String.hashCode and Kafka's Utils.abs", () => {
    assert.equal(javaStringHashCode(''), 0);
    assert.equal(javaStringHashCode('hello'), 99162322);
    // The famous string whose hash is Integer.MIN_VALUE: Utils.abs maps it to 0, not to a negative partition.
    assert.equal(javaStringHashCode('polygenelubricants'), -2147483648);
    assert.equal(groupPartition('polygenelubricants', 50), 0);
    // UTF-16 code units: a character outside the BMP counts as its two surrogates.
    assert.equal(javaStringHashCode('😀'), 0xd83d * 31 + 0xde00);
    assert.equal(groupPartition('hello', 50), 99162322 % 50);
  });
});

describe('group coordinator: joining and syncing', () => {
  it('answers NOT_COORDINATOR for partitions it does not lead and LOAD_IN_PROGRESS while loading', async () => {
    const clock = new ManualClock();
    const deferred: (() => void)[] = [];
    const coordinator = new GroupCoordinator({
      config: CONFIG,
      clock,
      storage: new MemoryStorage(),
      logger: silentLogger,
      partitionCount: () => 1,
      defer: (fn) => deferred.push(fn),
    });
    assert.equal((await coordinator.join(joinRequest(''))).errorCode, E.NOT_COORDINATOR);
    coordinator.onLeadershipChange(0, true);
    assert.equal((await coordinator.join(joinRequest(''))).errorCode, E.COORDINATOR_LOAD_IN_PROGRESS);
    // As Kafka: a heartbeat is answered NONE while loading (test/coordinator/group-loading.test.ts).
    assert.equal(coordinator.heartbeat('g', 1, 'm', null), E.NONE);
    deferred.shift()!();
    assert.equal((await coordinator.join(joinRequest(''))).errorCode, E.MEMBER_ID_REQUIRED);
    coordinator.onLeadershipChange(0, false);
    assert.equal(coordinator.fetchOffsets('g', null, false).errorCode, E.NOT_COORDINATOR);
  });

  it('issues member ids with MEMBER_ID_REQUIRED, makes the first joiner leader and stores the assignment', async () => {
    const { coordinator, storage } = setup();
    const join = await joinNew(coordinator);
    await flush();
    const a = join.value();
    assert.equal(a.errorCode, E.NONE);
    assert.equal(a.memberId, 'client-id1');
    assert.equal(a.generationId, 1);
    assert.equal(a.leader, a.memberId);
    assert.equal(a.protocolName, 'range');
    assert.deepEqual(
      a.members.map((m) => [m.memberId, m.metadata.toString()]),
      [[a.memberId, 'sub']],
    );
    assert.equal(coordinator.groupState('g'), 'CompletingRebalance');
    const s = sync(coordinator, a.memberId, 1, [[a.memberId, 'assigned']]);
    await flush();
    assert.equal(s.value().assignment.toString(), 'assigned');
    assert.equal(coordinator.groupState('g'), 'Stable');
    assert.equal(coordinator.heartbeat('g', 1, a.memberId, null), E.NONE);
    const stored = storage.logs.get(0)!.map((r) => decodeGroupRecord(r.key!, r.value));
    const last = stored.at(-1)!;
    assert.equal(last.kind, 'group');
    assert.equal(last.kind === 'group' && last.value?.members[0]?.assignment.toString(), 'assigned');
  });

  it('a second member triggers a rebalance; followers wait in SyncGroup for the leader', async () => {
    const { coordinator } = setup();
    const a = await stableGroupOfOne(coordinator);
    const bJoin = await joinNew(coordinator, { clientId: 'b' });
    assert.equal(coordinator.groupState('g'), 'PreparingRebalance');
    assert.equal(coordinator.heartbeat('g', 1, a.memberId, null), E.REBALANCE_IN_PROGRESS);
    await flush();
    assert.equal(bJoin.done(), false, 'the join waits for the existing member to rejoin');
    const aJoin = track(coordinator.join(joinRequest(a.memberId)));
    await flush();
    const a2 = aJoin.value();
    const b2 = bJoin.value();
    assert.equal(a2.generationId, 2);
    assert.equal(b2.generationId, 2);
    assert.equal(a2.leader, a.memberId, 'the leader stays the leader');
    assert.equal(a2.members.length, 2);
    assert.equal(b2.members.length, 0, 'only the leader sees the members');
    const bSync = sync(coordinator, b2.memberId, 2);
    await flush();
    assert.equal(bSync.done(), false, 'a follower waits for the leader');
    assert.equal(coordinator.heartbeat('g', 2, b2.memberId, null), E.NONE);
    sync(coordinator, a.memberId, 2, [
      [a.memberId, 'p0'],
      [b2.memberId, 'p1'],
    ]);
    await flush();
    assert.equal(bSync.value().assignment.toString(), 'p1');
    assert.equal(coordinator.groupState('g'), 'Stable');
  });

  it('rebalances when a member rejoins with a changed subscription, not when it rejoins unchanged', async () => {
    const { coordinator } = setup();
    const bJoin = await joinNew(coordinator, { clientId: 'b' });
    await flush();
    const b = bJoin.value();
    sync(coordinator, b.memberId, 1, [[b.memberId, 'x']]);
    await flush();
    // b is the leader; a second member that rejoins unchanged keeps the generation.
    const cJoin = await joinNew(coordinator, { clientId: 'c' });
    void coordinator.join(joinRequest(b.memberId));
    await flush();
    const c = cJoin.value();
    sync(coordinator, b.memberId, 2, []);
    sync(coordinator, c.memberId, 2);
    await flush();
    assert.equal(coordinator.groupState('g'), 'Stable');
    const same = await coordinator.join(joinRequest(c.memberId));
    assert.equal(same.generationId, 2);
    assert.equal(coordinator.groupState('g'), 'Stable');
    // A new topic matched or a partition count noticed: the metadata changes and the group rebalances.
    const changed = track(
      coordinator.join(
        joinRequest(c.memberId, { protocols: [{ name: 'range', metadata: Buffer.from('sub2') }] }),
      ),
    );
    assert.equal(coordinator.groupState('g'), 'PreparingRebalance');
    void coordinator.join(joinRequest(b.memberId));
    await flush();
    assert.equal(changed.value().generationId, 3);
  });

  it('drops members that do not rejoin within the rebalance timeout', async () => {
    const { coordinator, advance } = setup();
    const a = await stableGroupOfOne(coordinator);
    const bJoin = await joinNew(coordinator, { clientId: 'b', rebalanceTimeoutMs: 20_000 });
    // a keeps its session alive with heartbeats but never rejoins; the phase lasts a's 30 s rebalance timeout.
    for (let t = 0; t < 27_000; t += 3_000) {
      advance(3_000);
      coordinator.heartbeat('g', 1, a.memberId, null);
    }
    await flush();
    assert.equal(bJoin.done(), false);
    advance(4_000);
    await flush();
    const b = bJoin.value();
    assert.equal(b.generationId, 2);
    assert.equal(b.leader, b.memberId, 'a member that rejoined leads');
    assert.deepEqual(
      b.members.map((m) => m.memberId),
      [b.memberId],
    );
    assert.equal(coordinator.heartbeat('g', 1, a.memberId, null), E.UNKNOWN_MEMBER_ID);
  });

  it('expires a member whose session lapses and rebalances the others', async () => {
    const { coordinator, advance } = setup();
    const a = await stableGroupOfOne(coordinator);
    const bJoin = await joinNew(coordinator, { clientId: 'b' });
    void coordinator.join(joinRequest(a.memberId));
    await flush();
    const b = bJoin.value();
    sync(coordinator, a.memberId, 2, []);
    sync(coordinator, b.memberId, 2);
    await flush();
    assert.equal(coordinator.groupState('g'), 'Stable');
    advance(6_000);
    assert.equal(coordinator.heartbeat('g', 2, a.memberId, null), E.NONE);
    advance(5_000); // b's 10 s session has lapsed; a heartbeated 5 s ago.
    assert.equal(coordinator.groupState('g'), 'PreparingRebalance');
    assert.equal(coordinator.heartbeat('g', 2, a.memberId, null), E.REBALANCE_IN_PROGRESS);
    assert.equal(coordinator.heartbeat('g', 2, b.memberId, null), E.UNKNOWN_MEMBER_ID);
    const rejoin = track(coordinator.join(joinRequest(a.memberId)));
    await flush();
    assert.equal(rejoin.value().generationId, 3);
    assert.equal(rejoin.value().members.length, 1);
  });

  it('removes members that do not send SyncGroup within the rebalance timeout', async () => {
    const { coordinator, advance } = setup();
    const join = await joinNew(coordinator, { rebalanceTimeoutMs: 8_000 });
    await flush();
    const a = join.value();
    assert.equal(coordinator.groupState('g'), 'CompletingRebalance');
    advance(5_000);
    assert.equal(coordinator.heartbeat('g', a.generationId, a.memberId, null), E.NONE);
    advance(4_000);
    assert.equal(coordinator.groupState('g'), 'Empty', 'the only member left the group by not syncing');
    assert.equal(coordinator.heartbeat('g', a.generationId, a.memberId, null), E.UNKNOWN_MEMBER_ID);
  });

  it('waits group.initial.rebalance.delay.ms for more members of an empty group', async () => {
    const { coordinator, advance } = setup({ groupInitialRebalanceDelayMs: 3_000 });
    const aJoin = await joinNew(coordinator);
    advance(2_000);
    const bJoin = await joinNew(coordinator, { clientId: 'b' });
    advance(2_000); // first delay over, but b arrived during it: the delay is extended once more.
    await flush();
    assert.equal(aJoin.done(), false);
    advance(3_000);
    await flush();
    assert.equal(aJoin.value().generationId, 1);
    assert.equal(bJoin.value().generationId, 1);
    assert.equal(aJoin.value().members.length, 2);
  });

  it('answers the classic error codes', async () => {
    const { coordinator } = setup({ groupMaxSize: 2 });
    assert.equal((await coordinator.join(joinRequest('', { groupId: '' }))).errorCode, E.INVALID_GROUP_ID);
    assert.equal(
      (await coordinator.join(joinRequest('', { sessionTimeoutMs: 1_000 }))).errorCode,
      E.INVALID_SESSION_TIMEOUT,
    );
    assert.equal((await coordinator.join(joinRequest('nobody'))).errorCode, E.UNKNOWN_MEMBER_ID);
    assert.equal(coordinator.heartbeat('g', 0, 'nobody', null), E.UNKNOWN_MEMBER_ID);
    const a = await stableGroupOfOne(coordinator);
    assert.equal(
      (await coordinator.join(joinRequest('', { protocolType: 'connect' }))).errorCode,
      E.INCONSISTENT_GROUP_PROTOCOL,
    );
    assert.equal(
      (await coordinator.join(joinRequest('', { protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] })))
        .errorCode,
      E.INCONSISTENT_GROUP_PROTOCOL,
    );
    assert.equal(coordinator.heartbeat('g', 7, a.memberId, null), E.ILLEGAL_GENERATION);
    const badGeneration = sync(coordinator, a.memberId, 7);
    const unknown = sync(coordinator, 'nobody', 1);
    await flush();
    assert.equal(badGeneration.value().errorCode, E.ILLEGAL_GENERATION);
    assert.equal(unknown.value().errorCode, E.UNKNOWN_MEMBER_ID);
    // One member plus one pending member fill a group of at most 2.
    assert.equal((await coordinator.join(joinRequest(''))).errorCode, E.MEMBER_ID_REQUIRED);
    assert.equal((await coordinator.join(joinRequest(''))).errorCode, E.GROUP_MAX_SIZE_REACHED);
  });

  it('lets a static member come back under a new id without a rebalance, fencing the old id', async () => {
    const { coordinator } = setup();
    const staticJoin = { groupInstanceId: 'instance-1' };
    const join = track(coordinator.join(joinRequest('', staticJoin)));
    await flush();
    const a = join.value();
    assert.equal(a.errorCode, E.NONE, 'static members skip MEMBER_ID_REQUIRED');
    const s = track(
      coordinator.sync({
        groupId: 'g',
        generationId: 1,
        memberId: a.memberId,
        groupInstanceId: 'instance-1',
        protocolType: null,
        protocolName: null,
        assignments: [{ memberId: a.memberId, assignment: Buffer.from('mine') }],
      }),
    );
    await flush();
    assert.equal(s.value().errorCode, E.NONE);
    const again = track(coordinator.join(joinRequest('', staticJoin)));
    await flush();
    const b = again.value();
    assert.equal(b.errorCode, E.NONE);
    assert.notEqual(b.memberId, a.memberId);
    assert.equal(b.generationId, 1, 'no new generation');
    assert.equal(b.skipAssignment, true, 'the rejoining leader keeps the assignment');
    assert.equal(coordinator.groupState('g'), 'Stable');
    assert.equal(coordinator.heartbeat('g', 1, a.memberId, 'instance-1'), E.FENCED_INSTANCE_ID);
    assert.equal(coordinator.heartbeat('g', 1, b.memberId, 'instance-1'), E.NONE);
    const resync = sync(coordinator, b.memberId, 1);
    await flush();
    assert.equal(resync.value().assignment.toString(), 'mine');
  });

  it('keeps the old member id of a static member whose takeover could not be stored', async () => {
    const { coordinator, storage, advance } = setup();
    const staticJoin = { groupInstanceId: 'instance-1', sessionTimeoutMs: 10_000 };
    const join = track(coordinator.join(joinRequest('', staticJoin)));
    await flush();
    const a = join.value();
    const s = track(
      coordinator.sync({
        groupId: 'g',
        generationId: 1,
        memberId: a.memberId,
        groupInstanceId: 'instance-1',
        protocolType: null,
        protocolName: null,
        assignments: [{ memberId: a.memberId, assignment: Buffer.from('mine') }],
      }),
    );
    await flush();
    assert.equal(s.value().errorCode, E.NONE);
    storage.failWith = E.NOT_ENOUGH_REPLICAS;
    const failed = track(coordinator.join(joinRequest('', { ...staticJoin, sessionTimeoutMs: 60_000 })));
    await flush();
    assert.equal(failed.value().errorCode, E.COORDINATOR_NOT_AVAILABLE);
    assert.equal(
      failed.value().memberId,
      '',
      'no member id is handed out for a takeover that was not stored',
    );
    // As Kafka, the takeover is reverted: the old member id holds the instance id again and keeps working.
    assert.equal(coordinator.heartbeat('g', 1, a.memberId, 'instance-1'), E.NONE);
    assert.deepEqual(
      coordinator.describe('g').members.map((m) => m.memberId),
      [a.memberId],
    );
    storage.failWith = 0;
    const resync = sync(coordinator, a.memberId, 1);
    await flush();
    assert.equal(resync.value().errorCode, E.NONE);
    assert.equal(resync.value().assignment.toString(), 'mine');
    // The session timeout of the failed JoinGroup (60 s) is reverted too: the member's own 10 s still apply.
    advance(11_000);
    assert.deepEqual(coordinator.describe('g').members, []);
  });

  it('lets members leave one by one or in a batch, by member id or group.instance.id', async () => {
    const { coordinator } = setup();
    const a = await stableGroupOfOne(coordinator);
    const staticJoin = track(coordinator.join(joinRequest('', { groupInstanceId: 'i2', clientId: 'b' })));
    void coordinator.join(joinRequest(a.memberId));
    await flush();
    const b = staticJoin.value();
    assert.equal(b.generationId, 2);
    const left = coordinator.leave('g', [
      { memberId: '', groupInstanceId: 'i2' },
      { memberId: 'nobody', groupInstanceId: null },
      { memberId: 'x', groupInstanceId: 'unknown-instance' },
    ]);
    assert.deepEqual(
      left.members.map((m) => m.errorCode),
      [E.NONE, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID],
    );
    assert.equal(coordinator.groupState('g'), 'PreparingRebalance');
    const rejoin = track(coordinator.join(joinRequest(a.memberId)));
    await flush();
    assert.equal(rejoin.value().members.length, 1);
    assert.equal(
      coordinator.leave('g', [{ memberId: a.memberId, groupInstanceId: null }]).members[0]!.errorCode,
      0,
    );
    assert.equal(coordinator.groupState('g'), 'Empty');
    assert.equal(coordinator.generationOf('g'), 4, 'the group empties with a new generation');
  });

  it('answers waiting requests with NOT_COORDINATOR when the partition moves away', async () => {
    const { coordinator } = setup();
    const a = await stableGroupOfOne(coordinator);
    const b = await joinNew(coordinator, { clientId: 'b' });
    coordinator.onLeadershipChange(0, false);
    await flush();
    assert.equal(b.value().errorCode, E.NOT_COORDINATOR);
    assert.equal(coordinator.heartbeat('g', 1, a.memberId, null), E.NOT_COORDINATOR);
  });
});

describe('group coordinator: offsets', () => {
  const commit = (
    coordinator: GroupCoordinator,
    offset: number,
    options: { generationId?: number; memberId?: string; metadata?: string; groupId?: string } = {},
  ) =>
    coordinator.commitOffsets({
      groupId: options.groupId ?? 'g',
      generationId: options.generationId ?? -1,
      memberId: options.memberId ?? '',
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics: [
        {
          name: 't',
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: offset,
              committedLeaderEpoch: 3,
              commitTimestampMs: -1,
              committedMetadata: options.metadata ?? 'meta',
            },
          ],
        },
      ],
    });

  it('stores and fetches offsets of a simple group and of a member of a generation', async () => {
    const { coordinator } = setup();
    assert.equal((await commit(coordinator, 42))[0]!.partitions[0]!.errorCode, E.NONE);
    const fetched = coordinator.fetchOffsets('g', [{ name: 't', partitionIndexes: [0, 1] }], false);
    assert.deepEqual(fetched.topics[0]!.partitions, [
      { partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: 3, metadata: 'meta', errorCode: 0 },
      { partitionIndex: 1, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
    ]);
    assert.equal(coordinator.fetchOffsets('g', null, false).topics[0]!.partitions.length, 1);
    const tooLarge = await commit(coordinator, 43, { metadata: 'x'.repeat(17) });
    assert.equal(tooLarge[0]!.partitions[0]!.errorCode, E.OFFSET_METADATA_TOO_LARGE);
    assert.equal(
      (await commit(coordinator, 1, { groupId: 'h', generationId: 3 }))[0]!.partitions[0]!.errorCode,
      E.ILLEGAL_GENERATION,
    );
  });

  it('checks generation and member of commits from a live group', async () => {
    const { coordinator } = setup();
    const join = await joinNew(coordinator);
    await flush();
    const a = join.value();
    const during = await commit(coordinator, 5, { generationId: 1, memberId: a.memberId });
    assert.equal(during[0]!.partitions[0]!.errorCode, E.REBALANCE_IN_PROGRESS);
    sync(coordinator, a.memberId, 1);
    await flush();
    assert.equal(
      (await commit(coordinator, 5, { generationId: 1, memberId: a.memberId }))[0]!.partitions[0]!.errorCode,
      0,
    );
    assert.equal(
      (await commit(coordinator, 5, { generationId: 0, memberId: a.memberId }))[0]!.partitions[0]!.errorCode,
      E.ILLEGAL_GENERATION,
    );
    assert.equal(
      (await commit(coordinator, 5, { generationId: 1, memberId: 'x' }))[0]!.partitions[0]!.errorCode,
      E.UNKNOWN_MEMBER_ID,
    );
  });

  it('answers UNSTABLE_OFFSET_COMMIT to require_stable while a commit is being written', async () => {
    const { coordinator, storage } = setup();
    await commit(coordinator, 1);
    storage.hold = true;
    const pending = track(commit(coordinator, 2));
    const topics = [{ name: 't', partitionIndexes: [0] }];
    assert.equal(
      coordinator.fetchOffsets('g', topics, true).topics[0]!.partitions[0]!.errorCode,
      E.UNSTABLE_OFFSET_COMMIT,
    );
    assert.equal(
      coordinator.fetchOffsets('g', topics, false).topics[0]!.partitions[0]!.committedOffset,
      1,
      'not acknowledged yet',
    );
    storage.release();
    await flush();
    assert.equal(pending.value()[0]!.partitions[0]!.errorCode, E.NONE);
    assert.equal(coordinator.fetchOffsets('g', topics, true).topics[0]!.partitions[0]!.committedOffset, 2);
  });

  // Kafka's GroupMetadata.removeOffsets drops pending offset commits too: the commit in flight when its topic is
  // deleted does not come back once acknowledged, and the tombstone follows its record in the log.
  it('a commit being written when its topic is deleted stays removed once acknowledged', async () => {
    const { coordinator, storage } = setup();
    await commit(coordinator, 1);
    storage.hold = true;
    const pending = track(commit(coordinator, 2));
    coordinator.removeOffsetsOfDeletedPartitions([{ topic: 't', partition: 0 }]);
    storage.release();
    await flush();
    assert.equal(pending.value()[0]!.partitions[0]!.errorCode, E.NONE);
    const topics = [{ name: 't', partitionIndexes: [0] }];
    // Before: 2, the commit in flight applied after the deletion.
    assert.equal(coordinator.fetchOffsets('g', topics, true).topics[0]!.partitions[0]!.committedOffset, -1);
    const last = [...storage.readAll(0)].at(-1)!;
    const record = decodeGroupRecord(last.key!, last.value);
    assert.ok(record.kind === 'offset' && record.value === null, 'a tombstone last');
  });

  it('does not acknowledge a commit whose write failed, and maps the error', async () => {
    const { coordinator, storage } = setup();
    storage.failWith = E.NOT_ENOUGH_REPLICAS;
    assert.equal((await commit(coordinator, 9))[0]!.partitions[0]!.errorCode, E.COORDINATOR_NOT_AVAILABLE);
    storage.failWith = E.NOT_LEADER_OR_FOLLOWER;
    assert.equal((await commit(coordinator, 9))[0]!.partitions[0]!.errorCode, E.NOT_COORDINATOR);
    assert.equal(
      coordinator.fetchOffsets('g', [{ name: 't', partitionIndexes: [0] }], false).topics[0]!.partitions[0]!
        .committedOffset,
      -1,
    );
  });

  it('loads groups and offsets back from the log', async () => {
    const first = setup();
    const a = await stableGroupOfOne(first.coordinator);
    await commit(first.coordinator, 77, { generationId: 1, memberId: a.memberId });
    await commit(first.coordinator, 5, { groupId: 'gone' });
    await first.coordinator.deleteGroup('gone');
    const second = setup({}, first.storage);
    assert.equal(second.coordinator.groupState('g'), 'Stable');
    assert.equal(second.coordinator.groupState('gone'), undefined);
    assert.equal(second.coordinator.heartbeat('g', 1, a.memberId, null), E.NONE);
    const fetched = second.coordinator.fetchOffsets('g', [{ name: 't', partitionIndexes: [0] }], false);
    assert.equal(fetched.topics[0]!.partitions[0]!.committedOffset, 77);
    const resync = sync(second.coordinator, a.memberId, 1);
    await flush();
    assert.equal(resync.value().assignment.toString(), 'A');
    // Loaded members that never heartbeat again expire and the group empties.
    second.advance(11_000);
    assert.equal(second.coordinator.groupState('g'), 'Empty');
  });

  it('expires offsets of an empty group after offsets.retention.minutes and then the group', async () => {
    const { coordinator, storage, advance } = setup();
    await commit(coordinator, 1);
    advance(9 * 60_000);
    assert.equal(coordinator.fetchOffsets('g', null, false).topics.length, 1);
    advance(2 * 60_000);
    assert.equal(coordinator.fetchOffsets('g', null, false).topics.length, 0);
    assert.equal(coordinator.groupState('g'), undefined);
    await flush();
    const tail = storage.logs
      .get(0)!
      .slice(-2)
      .map((r) => decodeGroupRecord(r.key!, r.value));
    assert.deepEqual(
      tail.map((r) => [r.kind, r.kind === 'other' ? null : r.value]),
      [
        ['offset', null],
        ['group', null],
      ],
    );
  });

  it('expires offsets of topics a Stable consumer group no longer subscribes to (KIP-211)', async () => {
    const { coordinator, advance } = setup();
    // The member's subscription (consumer protocol v0) names topic 's' only.
    const subscription = encodeSubscription(0, {
      topics: ['s'],
      userData: null,
      ownedPartitions: [],
      generationId: -1,
      rackId: null,
    });
    const join = await joinNew(coordinator, { protocols: [{ name: 'range', metadata: subscription }] });
    await flush();
    const a = join.value();
    sync(coordinator, a.memberId, 1);
    await flush();
    const commitTo = (topic: string) =>
      coordinator.commitOffsets({
        groupId: 'g',
        generationId: 1,
        memberId: a.memberId,
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [
          {
            name: topic,
            partitions: [
              {
                partitionIndex: 0,
                committedOffset: 3,
                committedLeaderEpoch: -1,
                commitTimestampMs: -1,
                committedMetadata: null,
              },
            ],
          },
        ],
      });
    await commitTo('s');
    await commitTo('old');
    // Eleven minutes of heartbeats every five seconds: the member stays, the retention of ten minutes passes.
    for (let t = 0; t < 132; t++) {
      advance(5_000);
      assert.equal(coordinator.heartbeat('g', 1, a.memberId, null), E.NONE);
    }
    assert.equal(coordinator.groupState('g'), 'Stable');
    assert.deepEqual(
      coordinator.fetchOffsets('g', null, false).topics.map((t) => t.name),
      ['s'],
    );
  });

  it('deletes offsets not subscribed to, and describes, lists and deletes groups', async () => {
    const { coordinator } = setup();
    await commit(coordinator, 1, { groupId: 'simple' });
    const a = await stableGroupOfOne(coordinator);
    assert.equal(coordinator.describe('g').groupState, 'Stable');
    assert.equal(coordinator.describe('g').members[0]!.memberAssignment.toString(), 'A');
    assert.equal(coordinator.describe('unknown').groupState, 'Dead');
    assert.deepEqual(
      coordinator.list(['stable'], []).groups.map((g) => g.groupId),
      ['g'],
    );
    assert.deepEqual(
      coordinator
        .list([], [])
        .groups.map((g) => g.groupId)
        .sort(),
      ['g', 'simple'],
    );
    assert.equal(coordinator.list([], ['consumer']).groups.length, 0);
    assert.equal(await coordinator.deleteGroup('g'), E.NON_EMPTY_GROUP);
    assert.equal(await coordinator.deleteGroup('nope'), E.GROUP_ID_NOT_FOUND);
    const deleted = await coordinator.deleteOffsets('simple', [
      { name: 't', partitions: [{ partitionIndex: 0 }] },
    ]);
    assert.equal(deleted.errorCode, E.NONE);
    assert.equal(coordinator.fetchOffsets('simple', null, false).topics.length, 0);
    assert.equal(await coordinator.deleteGroup('simple'), E.NONE);
    assert.equal(coordinator.groupState('simple'), undefined);
    coordinator.leave('g', [{ memberId: a.memberId, groupInstanceId: null }]);
    assert.equal(await coordinator.deleteGroup('g'), E.NONE);
  });
});

describe('group coordinator: transactional offsets', () => {
  const PID = 1000;
  const txnCommit = (coordinator: GroupCoordinator, offset: number, producerId = PID, partitionIndex = 0) =>
    coordinator.commitTransactionalOffsets({
      groupId: 'g',
      producerId,
      producerEpoch: 0,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 't',
          partitions: [
            {
              partitionIndex,
              committedOffset: offset,
              committedLeaderEpoch: -1,
              commitTimestampMs: -1,
              committedMetadata: 'txn',
            },
          ],
        },
      ],
    });
  const plainCommit = (coordinator: GroupCoordinator, offset: number) =>
    coordinator.commitOffsets({
      groupId: 'g',
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics: [
        {
          name: 't',
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: offset,
              committedLeaderEpoch: -1,
              commitTimestampMs: -1,
              committedMetadata: '',
            },
          ],
        },
      ],
    });
  /** [error code, offset] of partitions 0 and 1 of t. */
  const fetched = (coordinator: GroupCoordinator, requireStable: boolean) =>
    coordinator
      .fetchOffsets('g', [{ name: 't', partitionIndexes: [0, 1] }], requireStable)
      .topics[0]!.partitions.map((p) => [p.errorCode, p.committedOffset]);
  /** What a coordinator loading the same log holds: the same answers as the live one. */
  const reloaded = (storage: MemoryStorage) => setup({}, storage).coordinator;

  it('writes the offsets as the producer\u2019s transactional records, pending until the marker', async () => {
    const { coordinator, storage } = setup();
    await plainCommit(coordinator, 5);
    assert.equal((await txnCommit(coordinator, 10))[0]!.partitions[0]!.errorCode, E.NONE);
    const written = storage.logs.get(0)!.at(-1)!;
    assert.equal(written.producerId, PID);
    assert.deepEqual(fetched(coordinator, true), [
      [E.UNSTABLE_OFFSET_COMMIT, -1],
      [E.NONE, -1],
    ]);
    assert.deepEqual(fetched(coordinator, false), [
      [E.NONE, 5],
      [E.NONE, -1],
    ]);
    assert.deepEqual(fetched(reloaded(storage), true), fetched(coordinator, true), 'pending after loading');

    storage.writeMarker(0, PID, true);
    coordinator.replayEndTransactionMarker(0, PID, true);
    assert.deepEqual(fetched(coordinator, true), [
      [E.NONE, 10],
      [E.NONE, -1],
    ]);
    assert.deepEqual(fetched(reloaded(storage), true), fetched(coordinator, true), 'committed after loading');
  });

  it('drops the offsets of an aborted transaction, also when loading', async () => {
    const { coordinator, storage } = setup();
    await plainCommit(coordinator, 5);
    await txnCommit(coordinator, 10);
    await txnCommit(coordinator, 11, PID, 1);
    storage.writeMarker(0, PID, false);
    coordinator.replayEndTransactionMarker(0, PID, false);
    const expected = [
      [E.NONE, 5],
      [E.NONE, -1],
    ];
    assert.deepEqual(fetched(coordinator, true), expected);
    assert.deepEqual(fetched(reloaded(storage), true), expected);
  });

  it('keeps a plain commit written after the transactional one when the transaction commits', async () => {
    const { coordinator, storage } = setup();
    await txnCommit(coordinator, 10);
    await plainCommit(coordinator, 20);
    // Another producer's transaction, still open, is not touched by the first one's marker.
    await txnCommit(coordinator, 30, PID + 1, 1);
    storage.writeMarker(0, PID, true);
    coordinator.replayEndTransactionMarker(0, PID, true);
    const expected = [
      [E.NONE, 20],
      [E.UNSTABLE_OFFSET_COMMIT, -1],
    ];
    assert.deepEqual(fetched(coordinator, true), expected);
    assert.deepEqual(fetched(reloaded(storage), true), expected);
  });

  it('is pending from the leader append on, before the write is acknowledged', async () => {
    const { coordinator, storage } = setup();
    storage.hold = true;
    const answer = track(txnCommit(coordinator, 10));
    assert.deepEqual(fetched(coordinator, true)[0], [E.UNSTABLE_OFFSET_COMMIT, -1]);
    storage.release();
    await flush();
    assert.equal(answer.value()[0]!.partitions[0]!.errorCode, E.NONE);
  });

  it('answers a failed write with the error, and a fenced producer with INVALID_PRODUCER_EPOCH', async () => {
    const { coordinator, storage } = setup();
    storage.failWith = E.NOT_ENOUGH_REPLICAS;
    assert.equal(
      (await txnCommit(coordinator, 10))[0]!.partitions[0]!.errorCode,
      E.COORDINATOR_NOT_AVAILABLE,
    );
    storage.failWith = E.INVALID_PRODUCER_EPOCH;
    assert.equal((await txnCommit(coordinator, 10))[0]!.partitions[0]!.errorCode, E.INVALID_PRODUCER_EPOCH);
    storage.failWith = 0;
    assert.deepEqual(fetched(coordinator, true)[0], [E.NONE, -1]);
  });

  it('deletes pending offsets with OffsetDelete and DeleteGroups', async () => {
    const { coordinator, storage } = setup();
    await txnCommit(coordinator, 10);
    const deleted = await coordinator.deleteOffsets('g', [
      { name: 't', partitions: [{ partitionIndex: 0 }] },
    ]);
    assert.equal(deleted.errorCode, E.NONE);
    assert.deepEqual(fetched(coordinator, true)[0], [E.NONE, -1]);
    await txnCommit(coordinator, 11, PID, 1);
    assert.equal(await coordinator.deleteGroup('g'), E.NONE);
    storage.writeMarker(0, PID, true);
    coordinator.replayEndTransactionMarker(0, PID, true);
    const gone = [
      [E.NONE, -1],
      [E.NONE, -1],
    ];
    assert.deepEqual(fetched(coordinator, true), gone);
    assert.deepEqual(fetched(reloaded(storage), true), gone);
  });

  it('does not expire a group or an offset while a transaction may still commit it', async () => {
    const { coordinator, storage, advance } = setup({ offsetsRetentionMinutes: 1 });
    await plainCommit(coordinator, 5);
    await txnCommit(coordinator, 10);
    advance(120_000);
    assert.deepEqual(fetched(coordinator, false)[0], [E.NONE, 5]);
    storage.writeMarker(0, PID, true);
    coordinator.replayEndTransactionMarker(0, PID, true);
    assert.deepEqual(fetched(coordinator, false)[0], [E.NONE, 10]);
  });
});
