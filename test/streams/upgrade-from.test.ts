// upgrade.from without a broker. The older user data layouts it needs, built field by field here from Kafka's
// SubscriptionInfoData schema (versions 1, 2 and 6: previous and standby task lists, no latest supported version
// before 3, no endpoint in 1) and AssignmentInfo.encode (versions 1, 2, 4, 5 and 6: no commonly supported version
// before 3, partitionsByHost by topic name in 2-4, the active-only topic dictionary in 5, active and standby hosts
// in 6, errCode from 4), compared with Brook's encoders and read back. The config's values and refusals, as
// Kafka's ValidString and AssignorConfiguration. And a rolling upgrade generation by generation: an instance
// upgrading from 1.1 subscribes with version 2 and offers only the eager protocol; the group's assignments are
// version 2 whoever leads, and the newer member does not probe; without upgrade.from the group is on 11 again.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GroupSubscription, Subscription } from '../../src/client/assignors.js';
import { resolveConfig, type StreamsProperties } from '../../src/streams/config.js';
import { Consumed, Produced, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import {
  decodeAssignmentInfoBytes,
  encodeAssignmentInfo,
} from '../../src/streams/runtime/assignment-info.js';
import { type AssignmentInfo, StreamsPartitionAssignor } from '../../src/streams/runtime/streams-assignor.js';
import {
  decodeSubscriptionInfoBytes,
  encodeSubscriptionInfo,
  subscriptionVersions,
} from '../../src/streams/runtime/subscription-info.js';
import {
  configuredMetadataVersion,
  rebalanceProtocol,
  UPGRADE_FROM_VALUES,
  type UpgradeFrom,
} from '../../src/streams/runtime/upgrade-from.js';

const PID_A = '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
const PID_B = '1b1c2d3e-4f50-6172-8394-a5b6c7d8e9f1';

const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const bytes = (s: string) => Buffer.concat([i32(Buffer.byteLength(s)), Buffer.from(s)]);
const uuid = (pid: string) => Buffer.from(pid.replaceAll('-', ''), 'hex');
/** Java's writeUTF for ASCII: uint16 length, then the bytes. */
const utf = (s: string) => Buffer.concat([Buffer.from([0, s.length]), Buffer.from(s, 'latin1')]);
const taskId = (group: number, partition: number) => Buffer.concat([i32(group), i32(partition)]);

describe('SubscriptionInfo versions 1, 2 and 6 (upgrade.from 0.10.0, 0.10.1-1.1, and version probing from 2.4)', () => {
  // One previous active task (1_0) and two tasks with local state (0_2 with a known sum, 0_5 without).
  const SUB = {
    version: 11,
    processId: PID_A,
    userEndpoint: 'h:1',
    prevTasks: ['1_0'],
    standbyTasks: ['0_5'],
    taskOffsetSums: { '0_2': 40 },
    errorCode: 0,
  };
  // Kafka's SubscriptionInfo before 7: prevTasks are the LATEST_OFFSET tasks, standbyTasks all the others.
  const prev = Buffer.concat([i32(1), taskId(1, 0)]);
  const standby = Buffer.concat([i32(2), taskId(0, 2), taskId(0, 5)]);

  it('version 1: version, process id, previous tasks, standby tasks', () => {
    const expected = Buffer.concat([i32(1), uuid(PID_A), prev, standby]);
    assert.equal(encodeSubscriptionInfo(SUB, 3, 1, 11).toString('hex'), expected.toString('hex'));
    const back = decodeSubscriptionInfoBytes(expected)!;
    assert.deepEqual(
      [
        back.version,
        back.latestSupportedVersion,
        back.processId,
        back.userEndpoint,
        back.prevTasks,
        back.standbyTasks,
      ],
      [1, 1, PID_A, '', ['1_0'], ['0_2', '0_5']],
    );
    assert.deepEqual(subscriptionVersions(expected), { version: 1, latestSupportedVersion: 1 });
  });

  it('version 2: the user endpoint after the task lists', () => {
    const expected = Buffer.concat([i32(2), uuid(PID_A), prev, standby, bytes('h:1')]);
    assert.equal(encodeSubscriptionInfo(SUB, 3, 2, 11).toString('hex'), expected.toString('hex'));
    const back = decodeSubscriptionInfoBytes(expected)!;
    assert.deepEqual([back.version, back.userEndpoint, back.prevTasks], [2, 'h:1', ['1_0']]);
  });

  it('version 6: the latest supported version after the version', () => {
    const expected = Buffer.concat([i32(6), i32(11), uuid(PID_A), prev, standby, bytes('h:1')]);
    assert.equal(encodeSubscriptionInfo(SUB, 3, 6, 11).toString('hex'), expected.toString('hex'));
    assert.deepEqual(subscriptionVersions(expected), { version: 6, latestSupportedVersion: 11 });
    const back = decodeSubscriptionInfoBytes(expected)!;
    assert.deepEqual(
      [back.version, back.latestSupportedVersion, back.standbyTasks, back.taskOffsetSums],
      [6, 11, ['0_2', '0_5'], {}],
    );
  });
});

describe('AssignmentInfo versions 1 to 6', () => {
  const partitions: Record<string, { topic: string; partition: number }[]> = {
    '0_1': [
      { topic: 'b-in', partition: 1 },
      { topic: 'a-in', partition: 1 },
    ],
    '1_0': [{ topic: 'app-rep-repartition', partition: 0 }],
    '0_2': [
      { topic: 'a-in', partition: 2 },
      { topic: 'b-in', partition: 2 },
    ],
  };
  const info = (version: number): AssignmentInfo => ({
    version,
    commonlySupportedVersion: 11,
    activeTasks: ['0_1', '1_0'],
    standbyTasks: ['0_2'],
    partitionsByHost: {
      'h1:9': [
        ['a-in', 1],
        ['b-in', 1],
      ],
    },
    standbyPartitionsByHost: { 'h2:8': [['a-in', 2]] },
    errCode: 0,
  });
  // One task id per assigned partition, sorted by topic then partition: a-in-1, app-rep-repartition-0, b-in-1;
  // task ids without the named topology field (before 10).
  const actives = Buffer.concat([i32(3), taskId(0, 1), taskId(1, 0), taskId(0, 1)]);
  const standbys = Buffer.concat([i32(1), taskId(0, 2), i32(2), utf('a-in'), i32(2), utf('b-in'), i32(2)]);
  const hostsByName = Buffer.concat([
    i32(1),
    utf('h1'),
    i32(9),
    i32(2),
    utf('a-in'),
    i32(1),
    utf('b-in'),
    i32(1),
  ]);
  const activeHostsByIndex = Buffer.concat([
    i32(1),
    utf('h1'),
    i32(9),
    i32(2),
    i32(0),
    i32(1),
    i32(1),
    i32(1),
  ]);
  const standbyHostsByIndex = Buffer.concat([i32(1), utf('h2'), i32(8), i32(1), i32(0), i32(2)]);
  const dictionary = Buffer.concat([i32(2), i32(0), utf('a-in'), i32(1), utf('b-in')]);
  const errCode = i32(0);

  const cases: [number, Buffer][] = [
    [1, Buffer.concat([i32(1), actives, standbys])],
    [2, Buffer.concat([i32(2), actives, standbys, hostsByName])],
    [3, Buffer.concat([i32(3), i32(11), actives, standbys, hostsByName])],
    [4, Buffer.concat([i32(4), i32(11), actives, standbys, hostsByName, errCode])],
    [5, Buffer.concat([i32(5), i32(11), actives, standbys, dictionary, activeHostsByIndex, errCode])],
    [
      6,
      Buffer.concat([
        i32(6),
        i32(11),
        actives,
        standbys,
        dictionary,
        activeHostsByIndex,
        standbyHostsByIndex,
        errCode,
      ]),
    ],
  ];
  for (const [version, expected] of cases)
    it(`version ${version}: the encoder writes Kafka's layout, and reads it back`, () => {
      const got = encodeAssignmentInfo(info(version), (t) => partitions[t]!);
      assert.equal(got.toString('hex'), expected.toString('hex'));
      const back = decodeAssignmentInfoBytes(expected)!;
      assert.deepEqual(
        {
          version: back.version,
          common: back.commonlySupportedVersion,
          active: back.activeTasks,
          standby: back.standbyTasks,
          hosts: back.partitionsByHost,
          standbyHosts: back.standbyPartitionsByHost,
          next: back.nextRebalanceMs,
        },
        {
          version,
          common: version >= 3 ? 11 : version,
          active: ['0_1', '1_0'],
          standby: ['0_2'],
          hosts: version >= 2 ? info(version).partitionsByHost : {},
          standbyHosts: version >= 6 ? info(version).standbyPartitionsByHost : {},
          next: 0,
        },
      );
      assert.equal(decodeAssignmentInfoBytes(Buffer.concat([expected, Buffer.from([0])])), null);
    });

  it('version 4 carries the error code (SHUTDOWN_REQUESTED); versions 0 and 12 are refused', () => {
    const shutdown = encodeAssignmentInfo({ ...info(4), errCode: 2 }, (t) => partitions[t]!);
    assert.equal(shutdown.readInt32BE(shutdown.length - 4), 2);
    assert.equal(decodeAssignmentInfoBytes(shutdown)!.errCode, 2);
    assert.throws(() => encodeAssignmentInfo(info(0), (t) => partitions[t]!), /not written/);
    assert.throws(() => encodeAssignmentInfo(info(12), (t) => partitions[t]!), /not written/);
  });
});

describe('upgrade.from: values as Kafka 3.9 takes them', () => {
  const props = (v: unknown) =>
    ({ 'application.id': 'a', 'bootstrap.servers': 'h:1', 'upgrade.from': v }) as StreamsProperties;

  it('an unknown value is refused with ValidString text; null and absent mean none', () => {
    const list =
      'null, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8';
    for (const bad of ['2.9', '3.9', '0.10', '2.3.1', '', 'latest', 2.3])
      assert.throws(
        () => resolveConfig(props(bad), true),
        (e: Error) =>
          e.name === 'ConfigException' &&
          e.message ===
            `Invalid value ${String(bad)} for configuration upgrade.from: String must be one of: ${list}`,
        `upgrade.from ${String(bad)}`,
      );
    assert.equal(resolveConfig(props(null), true).upgradeFrom, null);
    assert.equal(
      resolveConfig({ 'application.id': 'a', 'bootstrap.servers': 'h:1' }, true).upgradeFrom,
      null,
    );
    for (const v of UPGRADE_FROM_VALUES) assert.equal(resolveConfig(props(v), true).upgradeFrom, v);
  });

  it('versions 1 and 2 only before 2.0; eager only before 2.4', () => {
    const versions = Object.fromEntries(UPGRADE_FROM_VALUES.map((v) => [v, configuredMetadataVersion(v)]));
    const protocols = Object.fromEntries(UPGRADE_FROM_VALUES.map((v) => [v, rebalanceProtocol(v)]));
    for (const v of UPGRADE_FROM_VALUES) {
      const before20 = UPGRADE_FROM_VALUES.indexOf(v) < UPGRADE_FROM_VALUES.indexOf('2.0');
      const before24 = UPGRADE_FROM_VALUES.indexOf(v) < UPGRADE_FROM_VALUES.indexOf('2.4');
      assert.equal(versions[v], v === '0.10.0' ? 1 : before20 ? 2 : 11, v);
      assert.equal(protocols[v], before24 ? 'eager' : 'cooperative', v);
    }
    assert.equal(configuredMetadataVersion(null), 11);
    assert.equal(rebalanceProtocol(null), 'cooperative');
  });
});

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
  info: AssignmentInfo | null;
  owned: { topic: string; partition: number }[];
  logs: string[];
}

function member(id: string, processId: string, upgradeFrom: UpgradeFrom | null): Member {
  const m: Member = { id, info: null, owned: [], logs: [], assignor: undefined as never };
  m.assignor = new StreamsPartitionAssignor({
    processId,
    applicationServer: `${id}:1`,
    applicationId: 'up',
    numStandbyReplicas: 0,
    acceptableRecoveryLag: 10_000,
    maxWarmupReplicas: 2,
    probingRebalanceIntervalMs: 600_000,
    rackAwareAssignmentTags: [],
    clientTags: {},
    upgradeFrom,
    topology: topology(),
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

const cluster = { partitionCountForTopic: (topic: string) => (topic === 'in' ? 4 : null) };

/** One generation; returns the subscriptions' versions and the members that asked to rejoin at once. */
async function generation(leader: Member, members: Member[]) {
  const subscriptions = new Map<string, Subscription>();
  for (const m of members)
    subscriptions.set(m.id, {
      topics: ['in'],
      userData: m.assignor.subscriptionUserData(),
      // Eager members give everything up before joining (Brook's consumer sends no owned partitions then).
      ownedPartitions: m.assignor.protocol === 'eager' ? [] : m.owned,
      generationId: 1,
      groupInstanceId: null,
      rackId: null,
    });
  const group: GroupSubscription = { subscriptions };
  const result = await leader.assignor.assign(cluster, group);
  const before = Date.now();
  const rejoin: string[] = [];
  for (const m of members) {
    m.assignor.onAssignment(result.assignments.get(m.id)!, { generationId: 1 });
    if ((m.info?.nextRebalanceMs ?? 0) >= before) rejoin.push(m.id);
  }
  const sent = [...subscriptions.values()].map((s) => subscriptionVersions(s.userData!)!.version);
  return { sent, rejoin };
}

describe('a rolling upgrade from 1.1, generation by generation', () => {
  for (const leads of ['the upgrading member', 'the newer member'])
    it(`version 2 while a member has upgrade.from 1.1 (${leads} leads), 11 after its second bounce`, async () => {
      const old = member('a', PID_A, '1.1');
      const fresh = member('b', PID_B, null);
      assert.equal(old.assignor.protocol, 'eager');
      assert.equal(fresh.assignor.protocol, 'cooperative');
      assert.ok(
        old.logs.includes('Downgrading metadata.version from 11 to 2 for upgrade from 1.1.x.'),
        old.logs.join('\n'),
      );
      const leader = leads === 'the upgrading member' ? old : fresh;
      for (let g = 0; g < 3; g++) {
        const { sent, rejoin } = await generation(leader, [old, fresh]);
        assert.deepEqual(sent, [2, 11], `generation ${g}`);
        assert.deepEqual(rejoin, [], 'no version probing below version 3');
        assert.deepEqual([old.info!.version, fresh.info!.version], [2, 2]);
        assert.deepEqual([...old.info!.activeTasks, ...fresh.info!.activeTasks].sort(), [
          '0_0',
          '0_1',
          '0_2',
          '0_3',
        ]);
        assert.ok(old.info!.activeTasks.length === 2 && fresh.info!.activeTasks.length === 2);
        // Version 2 carries partitionsByHost: each member knows where the other's tasks are.
        assert.deepEqual(Object.keys(old.info!.partitionsByHost).sort(), ['a:1', 'b:1']);
      }
      // The second bounce: the same process without upgrade.from.
      const restarted = member('a2', PID_A, null);
      restarted.info = old.info;
      const { sent, rejoin } = await generation(fresh, [restarted, fresh]);
      assert.deepEqual(sent, [11, 11]);
      assert.deepEqual(rejoin, []);
      assert.deepEqual([restarted.info!.version, fresh.info!.version], [11, 11]);
      assert.equal(restarted.info!.commonlySupportedVersion, 11);
    });

  it('upgrade.from 0.10.0 subscribes with version 1 and gets version 1 assignments (no hosts)', async () => {
    const old = member('a', PID_A, '0.10.0');
    const fresh = member('b', PID_B, null);
    const { sent } = await generation(fresh, [old, fresh]);
    assert.deepEqual(sent, [1, 11]);
    assert.deepEqual([old.info!.version, fresh.info!.version], [1, 1]);
    assert.deepEqual(old.info!.partitionsByHost, {});
    assert.equal(old.info!.activeTasks.length + fresh.info!.activeTasks.length, 4);
  });

  it('upgrade.from 2.3 keeps version 11 but offers only the eager protocol', async () => {
    const old = member('a', PID_A, '2.3');
    const fresh = member('b', PID_B, null);
    assert.equal(old.assignor.protocol, 'eager');
    assert.ok(
      old.logs.includes('Eager rebalancing protocol is enabled now for upgrade from 2.3.x'),
      old.logs.join('\n'),
    );
    const { sent } = await generation(fresh, [old, fresh]);
    assert.deepEqual(sent, [11, 11]);
    assert.deepEqual([old.info!.version, fresh.info!.version], [11, 11]);
  });
});
