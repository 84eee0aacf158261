// Version probing (KIP-268) without a broker: the older user data layouts Brook now writes (SubscriptionInfo 10,
// 9 and 7, AssignmentInfo 9) built field by field from Kafka's schemas; and the protocol between assignors of
// different latest versions, generation by generation: a leader that reads only version 10 answers a version-11
// subscription with version-10 assignments, the newer member drops to 10 and rejoins, the next generation is
// stable; when the older member leaves, the newer one rises back to 11 and the group settles there. A
// subscription of a version newer than any Brook knows (12) joins the "future" client and gets tasks.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GroupSubscription, Subscription } from '../../src/client/assignors.js';
import { Consumed, Produced, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import {
  decodeAssignmentInfoBytes,
  encodeAssignmentInfo,
} from '../../src/streams/runtime/assignment-info.js';
import {
  type AssignmentInfo,
  decodeSubscriptionInfo,
  FUTURE_PROCESS_ID,
  StreamsPartitionAssignor,
} from '../../src/streams/runtime/streams-assignor.js';
import {
  decodeSubscriptionInfoBytes,
  encodeSubscriptionInfo,
  subscriptionVersions,
} from '../../src/streams/runtime/subscription-info.js';

const PID_A = '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
const PID_B = '1b1c2d3e-4f50-6172-8394-a5b6c7d8e9f1';

const i8 = (n: number) => Buffer.from([n & 0xff]);
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const i64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};
const bytes = (s: string) => Buffer.concat([i32(Buffer.byteLength(s)), Buffer.from(s)]);
const uuid = (pid: string) => Buffer.from(pid.replaceAll('-', ''), 'hex');
const utf = (s: string) => Buffer.concat([Buffer.from([0, s.length]), Buffer.from(s, 'latin1')]);

const SUB = {
  version: 11,
  processId: PID_A,
  userEndpoint: 'h:1',
  prevTasks: ['1_0'],
  standbyTasks: ['0_2'],
  taskOffsetSums: { '0_2': 40, '0_5': 7 },
  errorCode: 2,
  clientTags: { zone: 'z1' },
};

describe('version probing: the older layouts', () => {
  it('SubscriptionInfo 10 (a downgraded member: latest 11), 9 and 7, field by field', () => {
    const flat = (g: number, p: number, sum: number) => Buffer.concat([i32(g), i32(p), i64(sum), i16(-1)]);
    const v10 = Buffer.concat([
      i32(10),
      i32(11),
      uuid(PID_A),
      bytes('h:1'),
      i32(3),
      flat(0, 2, 40),
      flat(0, 5, 7),
      flat(1, 0, -2),
      i8(4), // uniqueField
      i32(2), // errorCode; no client tags before 11
    ]);
    assert.equal(encodeSubscriptionInfo(SUB, 4, 10, 11).toString('hex'), v10.toString('hex'));
    // 7-9: the sums per topic group, each with its (partition, sum) pairs.
    const nested = Buffer.concat([
      i32(2),
      i32(0),
      i32(2),
      i32(2),
      i64(40),
      i32(5),
      i64(7),
      i32(1),
      i32(1),
      i32(0),
      i64(-2),
    ]);
    const v9 = Buffer.concat([i32(9), i32(9), uuid(PID_A), bytes('h:1'), nested, i8(4), i32(2)]);
    assert.equal(encodeSubscriptionInfo(SUB, 4, 9, 9).toString('hex'), v9.toString('hex'));
    const v7 = Buffer.concat([i32(7), i32(7), uuid(PID_A), bytes('h:1'), nested]);
    assert.equal(encodeSubscriptionInfo(SUB, 4, 7, 7).toString('hex'), v7.toString('hex'));
    for (const [b, version, errorCode] of [
      [v10, 10, 2],
      [v9, 9, 2],
      [v7, 7, 0],
    ] as const) {
      const s = decodeSubscriptionInfo(b)!;
      assert.deepEqual(
        [s.version, s.prevTasks, s.standbyTasks, s.taskOffsetSums, s.errorCode],
        [version, ['1_0'], ['0_2', '0_5'], { '0_2': 40, '0_5': 7 }, errorCode],
      );
    }
    assert.throws(() => encodeSubscriptionInfo(SUB, 0, 12, 11), /not written/);
  });

  it('a newer subscription is read for its two versions only; an older reader refuses 11', () => {
    const v11 = encodeSubscriptionInfo(SUB, 1);
    assert.deepEqual(subscriptionVersions(v11), { version: 11, latestSupportedVersion: 11 });
    const v12 = Buffer.concat([i32(12), i32(12), Buffer.from('anything a newer Kafka writes')]);
    assert.deepEqual(subscriptionVersions(v12), { version: 12, latestSupportedVersion: 12 });
    assert.equal(decodeSubscriptionInfoBytes(v12), null);
    assert.equal(decodeSubscriptionInfoBytes(v11, 10), null);
    assert.notEqual(decodeSubscriptionInfoBytes(v11, 11), null);
    assert.equal(subscriptionVersions(Buffer.from('{"version":1}')), null);
  });

  it('AssignmentInfo 9 with commonly supported 10: task ids without the named topology', () => {
    const got = encodeAssignmentInfo(
      {
        version: 9,
        commonlySupportedVersion: 10,
        activeTasks: ['0_1'],
        standbyTasks: ['0_2'],
        partitionsByHost: { 'h:1': [['in', 1]] },
        standbyPartitionsByHost: {},
        errCode: 0,
      },
      (t) => [{ topic: 'in', partition: Number(t.split('_')[1]) }],
    );
    const expected = Buffer.concat([
      i32(9),
      i32(10),
      i32(1),
      i32(0),
      i32(1),
      i32(1),
      i32(0),
      i32(2),
      i32(1),
      utf('in'),
      i32(2),
      i32(1),
      i32(0),
      utf('in'),
      i32(1),
      utf('h'),
      i32(1),
      i32(1),
      i32(0),
      i32(1),
      i32(0),
      i32(0),
      i64(Number.MAX_SAFE_INTEGER), // replaced below: Long.MAX_VALUE
    ]);
    expected.writeBigInt64BE(9223372036854775807n, expected.length - 8);
    assert.equal(got.toString('hex'), expected.toString('hex'));
    const back = decodeAssignmentInfoBytes(got)!;
    assert.deepEqual([back.version, back.commonlySupportedVersion, back.activeTasks], [9, 10, ['0_1']]);
    assert.equal(decodeAssignmentInfoBytes(got, 8), null, 'an instance reading only up to 8 refuses 9');
  });
});

const PARTITIONS = 4;

function topology() {
  const b = new StreamsBuilder();
  b.stream('in', Consumed.with(Serdes.String(), Serdes.String())).to(
    'out',
    Produced.with(Serdes.String(), Serdes.String()),
  );
  return b.build();
}

interface Member {
  id: string;
  assignor: StreamsPartitionAssignor;
  /** The last assignment's info as the thread saw it. */
  info: AssignmentInfo | null;
  owned: { topic: string; partition: number }[];
  logs: string[];
}

function member(id: string, processId: string, latest: number): Member {
  const m: Member = { id, info: null, owned: [], logs: [], assignor: undefined as never };
  const t = topology();
  m.assignor = new StreamsPartitionAssignor({
    processId,
    applicationServer: null,
    applicationId: 'vp',
    numStandbyReplicas: 0,
    acceptableRecoveryLag: 10_000,
    maxWarmupReplicas: 2,
    probingRebalanceIntervalMs: 600_000,
    rackAwareAssignmentTags: [],
    clientTags: {},
    latestSupportedVersion: latest,
    topology: t,
    endOffsets: async () => new Map(),
    realTopic: (topic) => topic,
    previousTasks: () => ({ active: m.info?.activeTasks ?? [], standby: [] }),
    taskOffsetSums: () => new Map(),
    errorCode: () => 0,
    onAssignment: (info, partitions) => {
      m.info = info;
      m.owned = partitions;
    },
    log: (line) => m.logs.push(line),
  });
  return m;
}

const cluster = { partitionCountForTopic: (topic: string) => (topic === 'in' ? PARTITIONS : null) };

/**
 * One generation: every member subscribes, the leader assigns, every member takes its assignment. Returns the
 * members that asked for an immediate rebalance (version probing).
 */
async function generation(leader: Member, members: Member[], extra = new Map<string, Subscription>()) {
  const subscriptions = new Map<string, Subscription>(extra);
  for (const m of members)
    subscriptions.set(m.id, {
      topics: ['in'],
      userData: m.assignor.subscriptionUserData(),
      ownedPartitions: m.owned,
      generationId: 1,
      groupInstanceId: null,
      rackId: null,
    });
  const group: GroupSubscription = { subscriptions };
  const result = await leader.assignor.assign(cluster, group);
  const rejoin: string[] = [];
  const before = Date.now();
  for (const m of members) {
    m.assignor.onAssignment(result.assignments.get(m.id)!, { generationId: 1 });
    if ((m.info?.nextRebalanceMs ?? 0) >= before) rejoin.push(m.id);
  }
  return { rejoin, result, subscriptions };
}

describe('version probing: the protocol', () => {
  it('a version-10 leader and a version-11 member settle on 10, then on 11 once the older one leaves', async () => {
    const a = member('a', PID_A, 11);
    const b = member('b', PID_B, 10);
    // Generation 1: b leads; a's subscription (11) is a future one to b.
    const g1 = await generation(b, [b, a]);
    assert.ok(b.logs.some((l) => l.includes('future (version probing) subscription (version: 11)')));
    assert.deepEqual([a.info!.version, a.info!.commonlySupportedVersion], [10, 10]);
    assert.deepEqual(g1.rejoin, ['a'], 'the newer member drops to 10 and rejoins; the older one is content');
    assert.equal(a.assignor.usedVersion, 10);
    // Generation 2: everyone speaks 10; both hold tasks (a as the future client in generation 1 had some too).
    const g2 = await generation(b, [b, a]);
    assert.deepEqual(g2.rejoin, [], 'stable');
    assert.equal(subscriptionVersions(g2.subscriptions.get('a')!.userData!)!.version, 10);
    assert.equal(decodeSubscriptionInfo(g2.subscriptions.get('a')!.userData!, 10)!.processId, PID_A);
    const tasks = [...a.info!.activeTasks, ...b.info!.activeTasks].sort();
    assert.deepEqual(tasks, ['0_0', '0_1', '0_2', '0_3']);
    assert.ok(a.info!.activeTasks.length > 0 && b.info!.activeTasks.length > 0);
    // The same with a leading: it writes 10 for the group (the lowest used version).
    const g3 = await generation(a, [a, b]);
    assert.deepEqual(g3.rejoin, []);
    assert.deepEqual([b.info!.version, b.info!.commonlySupportedVersion], [10, 10]);
    // b leaves: a, alone, is told the commonly supported version is 11, rises and rejoins; then stable at 11.
    const g4 = await generation(a, [a]);
    assert.deepEqual([a.info!.version, a.info!.commonlySupportedVersion], [10, 11]);
    assert.deepEqual(g4.rejoin, ['a']);
    assert.equal(a.assignor.usedVersion, 11);
    const g5 = await generation(a, [a]);
    assert.deepEqual(g5.rejoin, []);
    assert.deepEqual([a.info!.version, a.info!.commonlySupportedVersion], [11, 11]);
    assert.deepEqual(a.info!.activeTasks, ['0_0', '0_1', '0_2', '0_3']);
  });

  it('a version-11 leader and a version-10 member: the leader itself drops to 10 and rejoins', async () => {
    const a = member('a', PID_A, 11);
    const b = member('b', PID_B, 10);
    const g1 = await generation(a, [a, b]);
    assert.deepEqual([a.info!.version, a.info!.commonlySupportedVersion], [10, 10]);
    assert.deepEqual(g1.rejoin, ['a']);
    assert.deepEqual((await generation(a, [a, b])).rejoin, []);
    assert.deepEqual((await generation(b, [a, b])).rejoin, [], 'whoever leads');
  });

  it('a subscription newer than Brook knows (12) joins the future client and gets its share', async () => {
    const a = member('a', PID_A, 11);
    const future = new Map<string, Subscription>([
      [
        'z',
        {
          topics: ['in'],
          userData: Buffer.concat([i32(12), i32(12), Buffer.from('fields of a later Kafka')]),
          ownedPartitions: [],
          generationId: -1,
          groupInstanceId: null,
          rackId: null,
        },
      ],
    ]);
    const g = await generation(a, [a], future);
    const z = decodeAssignmentInfoBytes(g.result.assignments.get('z')!.userData!)!;
    assert.deepEqual([z.version, z.commonlySupportedVersion], [11, 11]);
    assert.equal(z.activeTasks.length + a.info!.activeTasks.length, PARTITIONS);
    assert.ok(z.activeTasks.length > 0);
    assert.deepEqual(g.rejoin, []);
    assert.ok(a.logs.some((l) => l.includes('version: 12')));
    assert.equal(FUTURE_PROCESS_ID, '00000000-0000-0000-0000-000000000000');
  });
});
