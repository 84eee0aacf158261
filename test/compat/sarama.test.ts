// Go clients against a Brook broker: Sarama 1.22 and segmentio/kafka-go 0.2.1, as Debian packages them. The
// programs in test/compat/go do the work and print a JSON summary; this file builds them (once per source
// change), runs them, and judges the summaries: sarama-check and kafka-go-check round trips, sarama-admin the
// ClusterAdmin and the answers Kafka gives to refused requests, sarama-acl the ACL calls on an authorizer broker,
// sarama-groups two-member consumer groups, kafka-go-extra what kafka-go-check leaves out.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACL_USERS, startAclBroker } from '../helpers/acl-broker.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { buildGoPrograms, type GoPrograms } from './go/build.js';

const CODECS_KAFKA_READS_BACK = ['none', 'gzip', 'snappy', 'lz4'];

interface SaramaSummary {
  version: string;
  brokers: string[];
  controller: number;
  createdTopics: Record<string, number>;
  headers: boolean;
  codecs: Record<
    string,
    { produced: number; consumed: number; partitions?: Record<string, number>; errorCode?: number }
  >;
  offsetsForTimes: Record<string, number>;
  group: {
    consumed: number;
    committed: Record<string, number>;
    highWater: Record<string, number>;
    listed: boolean;
    state: string;
  };
  idempotent?: {
    produced: number;
    consumed: number;
    producerId: number;
    producerEpoch: number;
    firstSequences: number[];
    records: number[];
  };
  deletedTopicGone: boolean;
}

interface KafkaGoSummary {
  partitions: Record<string, number>;
  codecs: Record<string, number>;
  offsetsForTimes: Record<string, number>;
  group: { consumed: number; resumedAt: number };
}

interface Outcome {
  code: number;
  message?: string;
}

interface ConfigEntry {
  value: string;
  readOnly: boolean;
  default: boolean;
  source: number;
  sensitive: boolean;
}

type DeleteRecordsAnswer = Record<string, { code: number; lowWatermark: number }>;

/** What sarama-admin prints: each call's outcome by name (see its main.go). */
interface AdminSummary {
  [call: string]: unknown;
  createValidateOnly: Outcome;
  validatedExists: number;
  listedValidated: boolean;
  createAssigned: Outcome;
  assignedPartitions: number;
  listedAssigned: number;
  listedReplicationFactor: number;
  createConfigured: Outcome;
  listedConfigs: Record<string, string>;
  createExisting: Outcome;
  createBadConfigValue: Outcome;
  createUnknownConfig: Outcome;
  createTooManyReplicas: Outcome;
  createZeroPartitions: Outcome;
  createBadName: Outcome;
  createAssignedUnknownBroker: Outcome;
  describeMissing: number;
  describeEmptyName: number;
  metadataV1EmptyName: number;
  deleteTopicsEmptyName: number;
  fetchEmptyName: number;
  createAssignedWithCount: Outcome;
  createAssignedGap: Outcome;
  createAssignedDuplicate: Outcome;
  createAssignedEmpty: Outcome;
  createZeroReplicas: Outcome;
  createLongName: Outcome;
  createDotDot: Outcome;
  listedOffsetsTopicConfigs: Record<string, string>;
  partitionsTo4: Outcome;
  partitionsTo4Again: Outcome;
  partitionsTo2: Outcome;
  partitionsAssigned: Outcome;
  partitionsBadAssignment: Outcome;
  partitionsMissing: Outcome;
  partitionsUnknownBroker: Outcome;
  partitionsShortAssignment: Outcome;
  partitionsDuplicate: Outcome;
  partitionsAfter: number;
  deleteRecords: Outcome;
  oldestAfterDelete: number;
  deleteRecordsRaw: DeleteRecordsAnswer;
  deleteRecordsBeyondEnd: DeleteRecordsAnswer;
  deleteRecordsToEnd: DeleteRecordsAnswer;
  deleteRecordsBackwards: DeleteRecordsAnswer;
  deleteRecordsMissingPartition: DeleteRecordsAnswer;
  deleteRecordsNegative: DeleteRecordsAnswer;
  deleteRecordsCompacted: DeleteRecordsAnswer;
  deleteRecordsInternal: DeleteRecordsAnswer;
  describeTopicOutcome: Outcome;
  describedTopicConfigs: Record<string, ConfigEntry>;
  describeMissingTopic: Outcome;
  describeBroker: Outcome;
  alterTopic: Outcome;
  alteredRetention: ConfigEntry;
  alteredCleanupPolicy: ConfigEntry;
  alterValidateOnly: Outcome;
  retentionAfterValidateOnly: string;
  alterBadValue: Outcome;
  alterUnknownName: Outcome;
  alterMissingTopic: Outcome;
  createAcl: number;
  listAcls: { code: number; resources: number };
  deleteAcls: { code: number; matching: number };
  listedGroupProtocol: string;
  describedGroups: Record<
    string,
    { code: number; members: number; protocol: string; protocolType: string; state: string }
  >;
  groupOffset: { code: number; metadata: string; offset: number };
  unknownGroupOffset: { code: number; offset: number };
  deleteGroups: Record<string, number>;
  deletedGroupListed: boolean;
  cluster: { brokers: string[]; controller: number };
  deleteTopic: Outcome;
  deleteMissingTopic: Outcome;
}

interface GroupDescription {
  code: number;
  state: string;
  protocolType: string;
  protocol: string;
  members: {
    memberId: string;
    clientId: string;
    clientHost: string;
    topics: string[];
    assignment: Record<string, number[]>;
  }[];
}

interface TwoMembersRun {
  alone: Record<string, number[]>;
  shared: Record<string, number[]>[];
  described: GroupDescription;
  afterLeave: Record<string, number[]>;
  describedAfterLeave: GroupDescription;
  errors: string[] | null;
  deleteWithMembers: number;
}

/** What sarama-groups prints (see its main.go). */
interface GroupsSummary {
  range: TwoMembersRun;
  roundRobin: TwoMembersRun;
  newestConsumed: number;
  consumeBeyondEnd: number;
  consumeBelowStart: number;
  consumeAtStart: number;
}

/** What kafka-go-extra prints (see its main.go). */
interface KafkaGoExtraSummary {
  createExisting: number;
  writeAutoCreated: number;
  autoPartitions: number;
  group: { consumed: number; errors: string[] | null; partitions: number[][] };
  lag: { lag: number; first: number; last: number };
  seekBeyondEnd: number;
  deleteMissing: number;
}

/** What sarama-acl prints (see its main.go). */
interface AclSummary {
  listed: string[];
  deleted: string[];
  userDescribeTopics: Record<string, number>;
  userListTopics: string[];
  userCreateTopic: number;
  userDeleteTopic: number;
  userAlterConfig: number;
  userDeleteRecords: number;
  userListAcls: number;
  userCreateAcl: number;
  userDeleteAcls: number;
  userListGroups: { code: number; groups: number };
  userDescribeOtherGroup: number;
}

describe('Go clients (Sarama, kafka-go) against a Brook broker', () => {
  let programs: GoPrograms;
  let broker: BrokerProcess;
  before(
    async () => {
      programs = await buildGoPrograms();
      if (programs.built) console.log(`built the Go programs in ${programs.buildMs} ms`);
      broker = await startBroker();
    },
    { timeout: 360_000 },
  );
  after(async () => {
    await broker?.stop();
  });

  async function runProgram(name: string, args: string[]): Promise<unknown> {
    const r = await run(programs.binaries[name]!, [broker.bootstrap, ...args], { timeoutMs: 150_000 });
    assert.equal(r.code, 0, `${name} failed:\n${r.stderr}\n--- broker log ---\n${broker.log()}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  }

  /** What both Sarama runs must show, whichever Kafka version Sarama was told to speak. */
  function assertSaramaRoundTrips(out: SaramaSummary, prefix: string): void {
    assert.deepEqual(out.brokers, [`0@${broker.bootstrap}`]);
    assert.equal(out.controller, 0);
    for (const codec of [...CODECS_KAFKA_READS_BACK, 'zstd']) {
      assert.equal(out.createdTopics[`${prefix}-${codec}`], 2, `${codec}: CreateTopics made two partitions`);
    }
    for (const codec of CODECS_KAFKA_READS_BACK) {
      const c = out.codecs[codec]!;
      assert.equal(c.produced, 30, codec);
      assert.equal(
        c.consumed,
        30,
        `${codec}: every record read back with its key, value, timestamp, headers`,
      );
      const perPartition = Object.values(c.partitions!);
      assert.equal(perPartition.length, 2, `${codec}: keys spread over both partitions`);
    }
    // Sarama 1.22 sends zstd in Produce v3 (magic 2) or v2 (magic 1); Kafka takes zstd only from Produce v7, and
    // answers UNSUPPORTED_COMPRESSION_TYPE, since such an old client could not read the records back.
    assert.equal(out.codecs.zstd!.errorCode, 76);
    assert.equal(out.codecs.zstd!.produced, 0);
    // Records at base+0s, +1s (batches of their own), +2s, +3s (one batch): ListOffsets v1 by time.
    assert.deepEqual(out.offsetsForTimes, {
      earliest: 0,
      latest: 4,
      first: 0,
      between0and1: 1,
      between2and3: 3,
      last: 3,
      afterAll: -1,
    });
    assert.equal(out.group.consumed, 60);
    assert.equal(Object.keys(out.group.highWater).length, 4);
    assert.deepEqual(
      out.group.committed,
      out.group.highWater,
      'the group committed every partition to its end',
    );
    assert.equal(out.group.listed, true);
    assert.equal(out.group.state, 'Empty', 'the only member left');
    assert.equal(out.deletedTopicGone, true);
  }

  it('Sarama as a Kafka 2.1 client: admin, every codec with headers, offsets by time, a consumer group, an idempotent producer', async () => {
    const out = (await runProgram('sarama-check', ['sarama-new', '2.1.0'])) as SaramaSummary;
    assert.equal(out.version, '2.1.0');
    assert.equal(out.headers, true);
    assertSaramaRoundTrips(out, 'sarama-new');
    const idem = out.idempotent!;
    assert.equal(out.createdTopics['sarama-new-idempotent'], 1);
    assert.equal(idem.produced, 30);
    assert.equal(idem.consumed, 30);
    assert.ok(idem.producerId >= 0, 'the stored batches carry the producer id InitProducerId gave');
    assert.equal(idem.producerEpoch, 0);
    // Sequences continue from batch to batch with no gap: each batch starts where the previous one ended.
    assert.equal(
      idem.records.reduce((a, b) => a + b, 0),
      30,
    );
    assert.deepEqual(
      idem.firstSequences,
      idem.records.map((_, i) => idem.records.slice(0, i).reduce((a, b) => a + b, 0)),
    );
  });

  it('Sarama as a Kafka 0.10.2 client: the same with old request versions and magic 1 message sets', async () => {
    const out = (await runProgram('sarama-check', ['sarama-old', '0.10.2.0'])) as SaramaSummary;
    assert.equal(out.version, '0.10.2.0');
    assert.equal(out.headers, false);
    assertSaramaRoundTrips(out, 'sarama-old');
    assert.equal(out.idempotent, undefined, 'idempotence needs Kafka 0.11');
  });

  it('Sarama ClusterAdmin: topics with assignments and configs, partitions, records, configs, ACLs', async () => {
    const out = (await runProgram('sarama-admin', ['sarama-admin'])) as AdminSummary;
    const ok = { code: 0 };
    // CreateTopics: validateOnly makes nothing; an explicit assignment gives its partition count.
    assert.deepEqual(out.createValidateOnly, ok);
    assert.equal(out.validatedExists, 3, 'a validated topic does not exist');
    assert.equal(out.listedValidated, false);
    assert.deepEqual(out.createAssigned, ok);
    assert.equal(out.assignedPartitions, 3);
    assert.equal(out.listedAssigned, 3);
    assert.equal(out.listedReplicationFactor, 1);
    assert.deepEqual(out.createConfigured, ok);
    // ListTopics keeps the entries DescribeConfigs v0 does not mark default: the two set at creation.
    assert.deepEqual(out.listedConfigs, { 'cleanup.policy': 'compact', 'retention.ms': '123456' });
    // The refusals Sarama hands back as TopicErrors.
    assert.equal(out.createExisting.code, 36);
    assert.equal(out.createBadConfigValue.code, 40);
    assert.equal(out.createUnknownConfig.code, 40);
    assert.equal(out.createTooManyReplicas.code, 38);
    assert.equal(out.createZeroPartitions.code, 37);
    assert.equal(out.createBadName.code, 17);
    assert.equal(out.createAssignedUnknownBroker.code, 39);
    assert.equal(out.describeMissing, 3);
    assert.equal(
      out.describeEmptyName,
      17,
      'Metadata v5: an empty name is INVALID_TOPIC_EXCEPTION, not a lost connection',
    );
    assert.equal(out.metadataV1EmptyName, 17, 'Metadata v1 with auto-creation: INVALID_TOPIC_EXCEPTION');
    // Before topic ids (DeleteTopics v6, Fetch v13) an empty name is a topic no broker has.
    assert.equal(
      out.deleteTopicsEmptyName,
      3,
      'DeleteTopics v1: UNKNOWN_TOPIC_OR_PARTITION, not a lost connection',
    );
    assert.equal(out.fetchEmptyName, 3, 'Fetch v4: UNKNOWN_TOPIC_OR_PARTITION, not UNKNOWN_TOPIC_ID');
    // A manual assignment: alone (INVALID_REQUEST beside a count), consecutive from 0, no duplicate, not empty.
    assert.equal(out.createAssignedWithCount.code, 42);
    assert.equal(out.createAssignedGap.code, 39);
    assert.equal(out.createAssignedDuplicate.code, 39);
    assert.equal(out.createAssignedEmpty.code, 39);
    assert.equal(out.createZeroReplicas.code, 38);
    assert.equal(out.createLongName.code, 17);
    assert.equal(out.createDotDot.code, 17);
    // The offsets topic carries Kafka's overrides, which ListTopics shows as set.
    assert.deepEqual(out.listedOffsetsTopicConfigs, {
      'cleanup.policy': 'compact',
      'compression.type': 'producer',
      'segment.bytes': '104857600',
    });
    // CreatePartitions (Sarama 1.22 does not send its validateOnly flag: that call grows the topic to 6).
    assert.deepEqual(out.partitionsTo4, ok);
    assert.equal(out.partitionsTo4Again.code, 37);
    assert.equal(out.partitionsTo2.code, 37);
    assert.equal(out.partitionsAssigned.code, 37);
    assert.deepEqual(out.partitionsBadAssignment, ok);
    assert.equal(out.partitionsMissing.code, 3);
    assert.equal(out.partitionsUnknownBroker.code, 39);
    assert.equal(out.partitionsShortAssignment.code, 39);
    assert.equal(out.partitionsDuplicate.code, 39);
    assert.equal(out.partitionsAfter, 7);
    // DeleteRecords: each partition's answer as Kafka's ReplicaManager gives it; a refused partition's low
    // watermark is -1.
    assert.deepEqual(out.deleteRecords, ok);
    assert.equal(out.oldestAfterDelete, 4);
    assert.deepEqual(out.deleteRecordsRaw, { 0: { code: 0, lowWatermark: 6 } });
    assert.deepEqual(out.deleteRecordsBeyondEnd, { 0: { code: 1, lowWatermark: -1 } });
    assert.deepEqual(out.deleteRecordsToEnd, { 0: { code: 0, lowWatermark: 10 } });
    assert.deepEqual(out.deleteRecordsBackwards, { 0: { code: 0, lowWatermark: 10 } });
    assert.deepEqual(out.deleteRecordsMissingPartition, { 5: { code: 3, lowWatermark: -1 } });
    assert.deepEqual(out.deleteRecordsNegative, { 0: { code: 1, lowWatermark: -1 } });
    assert.deepEqual(out.deleteRecordsCompacted, { 0: { code: 44, lowWatermark: -1 } }, 'POLICY_VIOLATION');
    assert.deepEqual(
      out.deleteRecordsInternal,
      { 0: { code: 17, lowWatermark: -1 } },
      'INVALID_TOPIC_EXCEPTION',
    );
    // DescribeConfigs v0 and AlterConfigs.
    assert.deepEqual(out.describeTopicOutcome, ok);
    assert.equal(out.describedTopicConfigs['retention.ms']!.value, '123456');
    assert.equal(out.describedTopicConfigs['retention.ms']!.default, false);
    assert.equal(out.describedTopicConfigs['segment.bytes']!.value, '1073741824');
    assert.equal(out.describedTopicConfigs['segment.bytes']!.default, true);
    assert.equal(
      out.describeBroker.code,
      -1,
      'Sarama reports the refusal of its resource type 5 by its message',
    );
    // Kafka answers an unknown topic UNKNOWN_TOPIC_OR_PARTITION with no message, which Sarama does not report.
    assert.deepEqual(out.describeMissingTopic, ok);
    assert.deepEqual(out.alterTopic, ok);
    assert.equal(out.alteredRetention.value, '654321');
    assert.deepEqual(
      [out.alteredCleanupPolicy.value, out.alteredCleanupPolicy.default],
      ['delete', true],
      'AlterConfigs replaces the whole set',
    );
    assert.deepEqual(out.alterValidateOnly, ok);
    assert.equal(out.retentionAfterValidateOnly, '654321');
    for (const refused of [out.alterBadValue, out.alterUnknownName, out.alterMissingTopic]) {
      assert.equal(refused.code, -1, 'Sarama reports a resource error by its message');
      assert.ok(refused.message);
    }
    // No authorizer: Kafka answers every ACL request SECURITY_DISABLED.
    assert.equal(out.createAcl, 54);
    assert.deepEqual(out.listAcls, { code: 54, resources: 0 });
    assert.deepEqual(out.deleteAcls, { code: 54, matching: 0 });
    // A group that only committed: Empty, no protocol type; an unknown one Dead; DeleteGroups.
    assert.equal(out.listedGroupProtocol, '');
    assert.deepEqual(out.describedGroups['sarama-admin-group'], {
      code: 0,
      members: 0,
      protocol: '',
      protocolType: '',
      state: 'Empty',
    });
    assert.equal(out.describedGroups['sarama-admin-no-group']!.state, 'Dead');
    assert.deepEqual(out.groupOffset, { code: 0, metadata: 'meta', offset: 3 });
    assert.deepEqual(out.unknownGroupOffset, { code: 0, offset: -1 });
    assert.deepEqual(out.deleteGroups, { 'sarama-admin-group': 0, 'sarama-admin-no-group': 69 });
    assert.equal(out.deletedGroupListed, false);
    // Sarama's DescribeCluster sends Metadata v0, which has no controller: Sarama fills in -1.
    assert.deepEqual(out.cluster, { brokers: [`0@${broker.bootstrap}`], controller: -1 });
    assert.deepEqual(out.deleteTopic, ok);
    assert.equal(out.deleteMissingTopic.code, 3);
  });

  it('Sarama ACLs on an authorizer broker: the super user grants, lists, deletes; a SASL user bound', async () => {
    const acl = await startAclBroker();
    try {
      const r = await run(
        programs.binaries['sarama-acl']!,
        [`127.0.0.1:${acl.plainPort}`, `127.0.0.1:${acl.saslPort}`, 'alice', ACL_USERS.alice, 'sarama-acl'],
        { timeoutMs: 150_000 },
      );
      assert.equal(r.code, 0, `sarama-acl failed:\n${r.stderr}\n--- broker log ---\n${acl.broker.log()}`);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as AclSummary;
      // Sarama's v0 requests carry no pattern type: it reads back as 0.
      const granted = ['2:sarama-acl-readable:0 User:alice@* 3 3', '3:sarama-acl-group:0 User:alice@* 3 3'];
      assert.deepEqual(out.listed, granted);
      assert.deepEqual(out.userDescribeTopics, { 'sarama-acl-readable': 0, 'sarama-acl-secret': 29 });
      assert.deepEqual(
        out.userListTopics,
        ['sarama-acl-readable'],
        'topics the user may not describe are left out',
      );
      assert.equal(out.userCreateTopic, 29);
      assert.equal(out.userDeleteTopic, 29);
      assert.equal(out.userAlterConfig, 29);
      assert.equal(out.userDeleteRecords, 29);
      // The ACL requests need the cluster: CLUSTER_AUTHORIZATION_FAILED.
      assert.equal(out.userListAcls, 31);
      assert.equal(out.userCreateAcl, 31);
      assert.equal(out.userDeleteAcls, 31);
      assert.deepEqual(out.userListGroups, { code: 0, groups: 0 });
      assert.equal(out.userDescribeOtherGroup, 30);
      assert.deepEqual(
        out.deleted,
        granted.map((g) => `0 ${g}`),
      );
    } finally {
      await acl.broker.stop();
    }
  });

  it('Sarama consumer groups: range and round-robin, two members, one leaving, newest, out of range', async () => {
    const out = (await runProgram('sarama-groups', ['sarama-groups'])) as GroupsSummary;
    const partitionsOf = (claims: Record<string, number[]>) =>
      Object.entries(claims).flatMap(([t, ps]) => ps.map((p) => `${t}/${p}`));
    for (const [name, topics, protocol] of [
      ['range', ['sarama-groups-four'], 'range'],
      ['roundRobin', ['sarama-groups-x', 'sarama-groups-y'], 'roundrobin'],
    ] as const) {
      const run = out[name];
      assert.deepEqual(run.errors, null, `${name}: no errors`);
      const all = partitionsOf(run.alone).sort();
      assert.equal(all.length, 4);
      // Two members split the partitions, two each; the coordinator describes what the leader assigned.
      assert.deepEqual(
        run.shared.map((c) => partitionsOf(c).length),
        [2, 2],
      );
      assert.deepEqual(run.shared.flatMap(partitionsOf).sort(), all);
      assert.equal(run.described.state, 'Stable');
      assert.equal(run.described.protocolType, 'consumer');
      assert.equal(run.described.protocol, protocol);
      assert.deepEqual(
        run.described.members.map((m) => m.assignment),
        run.shared,
      );
      for (const m of run.described.members) {
        assert.deepEqual(m.topics, topics);
        // Kafka's member ids are the client id, a dash and a UUID; the host is Java's InetAddress text.
        assert.match(
          m.memberId,
          /^sarama-groups-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
        );
        assert.equal(m.clientId, 'sarama-groups');
        assert.equal(m.clientHost, '/127.0.0.1');
      }
      assert.equal(run.deleteWithMembers, 68, 'NON_EMPTY_GROUP');
      // The member left (LeaveGroup): the other one takes every partition in the next generation.
      assert.deepEqual(partitionsOf(run.afterLeave).sort(), all);
      assert.equal(run.describedAfterLeave.members.length, 1);
    }
    // Range over one topic: the first half to the member whose id sorts first.
    assert.deepEqual(out.range.shared, [{ 'sarama-groups-four': [0, 1] }, { 'sarama-groups-four': [2, 3] }]);
    assert.equal(out.newestConsumed, 4, 'offsets.initial newest: only the records produced after joining');
    assert.equal(out.consumeBeyondEnd, 1, 'OFFSET_OUT_OF_RANGE');
    assert.equal(out.consumeBelowStart, 1, 'OFFSET_OUT_OF_RANGE below the start DeleteRecords moved');
    assert.equal(out.consumeAtStart, 0);
  });

  it('kafka-go 0.2.1: CreateTopics v0, Produce and Fetch v2 with every codec it has, offsets by time, a group that resumes at its commit', async () => {
    const out = (await runProgram('kafka-go-check', ['kafka-go'])) as KafkaGoSummary;
    for (const t of ['times', 'group', ...CODECS_KAFKA_READS_BACK]) {
      assert.equal(out.partitions[`kafka-go-${t}`], 2, t);
    }
    for (const codec of CODECS_KAFKA_READS_BACK) {
      assert.equal(out.codecs[codec], 30, `${codec}: every record read back at its offset with key and time`);
    }
    assert.deepEqual(out.offsetsForTimes, {
      earliest: 0,
      latest: 4,
      first: 0,
      between0and1: 1,
      between2and3: 3,
      afterAll: -1,
    });
    assert.equal(out.group.consumed, 20);
    assert.ok(out.group.resumedAt > 0, 'the second member started after the records the first one committed');
  });

  it('kafka-go 0.2.1: an auto-created topic, two Readers sharing a group, lag, seek checks, deletion', async () => {
    const out = (await runProgram('kafka-go-extra', ['kafka-go-extra'])) as KafkaGoExtraSummary;
    // kafka-go's CreateTopics takes TOPIC_ALREADY_EXISTS as success (idempotent by design).
    assert.equal(out.createExisting, 0);
    assert.equal(out.writeAutoCreated, 0);
    assert.equal(out.autoPartitions, 1, 'Metadata v1 created the topic with num.partitions');
    assert.equal(out.group.consumed, 40);
    assert.equal(out.group.errors, null);
    // kafka-go's range balancer: two partitions each.
    assert.deepEqual(out.group.partitions.flat().sort(), [0, 1, 2, 3]);
    assert.deepEqual(
      out.group.partitions.map((ps) => ps.length),
      [2, 2],
    );
    assert.equal(out.lag.first, 0);
    assert.ok(out.lag.last > 0);
    assert.equal(out.lag.lag, out.lag.last, 'a Reader at the first offset lags by the whole partition');
    assert.equal(out.seekBeyondEnd, 1, 'OFFSET_OUT_OF_RANGE, judged by ListOffsets');
    assert.equal(out.deleteMissing, 3);
  });
});
