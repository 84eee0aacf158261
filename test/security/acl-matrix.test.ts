// Authorization through the wire, API by API, as Kafka's KafkaApis checks it: each principal without the ACL gets
// Kafka's error, with it the request works; literal and prefixed patterns, DENY over ALLOW, a super user, the
// wildcard principal User:* and host matching; KIP-430 authorized operations from the ACLs; the authorization log.
// alice, bob and carol log in with SASL/PLAIN; the PLAINTEXT connection is the super user User:ANONYMOUS.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import {
  AclOperation as Op,
  PatternType,
  PermissionType,
  ResourceType as RT,
} from '../../src/security/authorizer/acl-types.js';
import { type AclBroker, addAcls, removeAcls, startAclBroker } from '../helpers/acl-broker.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { createTopic, fetchBody, type WireClient } from '../helpers/wire-client.js';

const CLUSTER = 'kafka-cluster';
let b: AclBroker;
let admin: WireClient;
const clients: WireClient[] = [];

async function as(user: 'alice' | 'bob' | 'carol'): Promise<WireClient> {
  const c = await b.as(user);
  clients.push(c);
  return c;
}

async function produce(
  client: WireClient,
  topic: string,
  transactionalId: string | null = null,
): Promise<number> {
  const response = await client.call(ApiKey.PRODUCE, 9, {
    transactionalId,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ value: 'v' }]) }] }],
  });
  return response.responses[0].partitionResponses[0].errorCode;
}

async function fetchError(client: WireClient, topic: string): Promise<number> {
  const response = await client.call(ApiKey.FETCH, 12, fetchBody(topic, 0, 0));
  return response.errorCode !== 0 ? response.errorCode : response.responses[0].partitions[0].errorCode;
}

async function metadata(client: WireClient, topics: string[] | null, autoCreate = false, ops = false) {
  // v10: the last version that carries cluster authorized operations (v11 moved them to DescribeCluster).
  return client.call(ApiKey.METADATA, 10, {
    topics: topics === null ? null : topics.map((name) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name })),
    allowAutoTopicCreation: autoCreate,
    includeClusterAuthorizedOperations: ops,
    includeTopicAuthorizedOperations: ops,
  });
}

const allow = (
  resourceType: number,
  resourceName: string,
  principal: string,
  operation: number,
  extra = {},
) => ({
  resourceType,
  resourceName,
  principal,
  operation,
  ...extra,
});

before(async () => {
  b = await startAclBroker();
  admin = await b.admin();
  for (const t of [
    'p-lit',
    'p-pre-1',
    'p-deny',
    'p-star',
    'p-host',
    'f-read',
    'md-a',
    'md-b',
    'lo-t',
    'g-t',
    'cfg-t',
    'adm-t',
    'del-t',
  ]) {
    await createTopic(admin, t);
  }
});

after(async () => {
  for (const c of clients) c.close();
  admin?.close();
  await b?.broker.stop();
});

// First in the file: no group or transaction exists yet, so neither internal topic does.
describe('FindCoordinator refused', () => {
  it('creates neither __consumer_offsets nor __transaction_state', async () => {
    const carol = await as('carol');
    const groups = await carol.call(ApiKey.FIND_COORDINATOR, 4, { keyType: 0, coordinatorKeys: ['fc-g'] });
    assert.equal(groups.coordinators[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const txns = await carol.call(ApiKey.FIND_COORDINATOR, 4, { keyType: 1, coordinatorKeys: ['fc-tx'] });
    assert.equal(txns.coordinators[0].errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const internal = await metadata(admin, ['__consumer_offsets', '__transaction_state']);
    assert.deepEqual(
      internal.topics.map((t: { errorCode: number }) => t.errorCode),
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    );
  });
});

describe('Produce and Fetch', () => {
  it('a literal WRITE ACL lets alice produce; without it TOPIC_AUTHORIZATION_FAILED', async () => {
    const alice = await as('alice');
    assert.equal(await produce(alice, 'p-lit'), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [allow(RT.TOPIC, 'p-lit', 'User:alice', Op.WRITE)]);
    assert.equal(await produce(alice, 'p-lit'), ErrorCode.NONE);
    const bob = await as('bob');
    assert.equal(
      await produce(bob, 'p-lit'),
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      'the ACL is alice’s only',
    );
  });

  it('a prefixed ACL covers topics that start with it', async () => {
    const bob = await as('bob');
    assert.equal(await produce(bob, 'p-pre-1'), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [
      allow(RT.TOPIC, 'p-pre-', 'User:bob', Op.WRITE, { patternType: PatternType.PREFIXED }),
    ]);
    assert.equal(await produce(bob, 'p-pre-1'), ErrorCode.NONE);
    assert.equal(await produce(bob, 'p-lit'), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });

  it('DENY wins over ALLOW, also over ALL on the wildcard resource', async () => {
    const carol = await as('carol');
    await addAcls(admin, [
      allow(RT.TOPIC, '*', 'User:carol', Op.ALL),
      allow(RT.TOPIC, 'p-deny', 'User:carol', Op.WRITE, { permissionType: PermissionType.DENY }),
    ]);
    assert.equal(await produce(carol, 'p-star'), ErrorCode.NONE);
    assert.equal(await produce(carol, 'p-deny'), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    // The DENY is for WRITE only: reading p-deny is still allowed by ALL on *.
    assert.equal(await fetchError(carol, 'p-deny'), ErrorCode.NONE);
    await removeAcls(admin, RT.TOPIC, '*', PatternType.LITERAL);
  });

  it('the wildcard principal User:* applies to everyone; hosts must match', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    await addAcls(admin, [allow(RT.TOPIC, 'p-star', 'User:*', Op.WRITE)]);
    assert.equal(await produce(alice, 'p-star'), ErrorCode.NONE);
    assert.equal(await produce(bob, 'p-star'), ErrorCode.NONE);
    await addAcls(admin, [allow(RT.TOPIC, 'p-host', 'User:alice', Op.WRITE, { host: '10.11.12.13' })]);
    assert.equal(
      await produce(alice, 'p-host'),
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      'an ACL for another host',
    );
    await addAcls(admin, [allow(RT.TOPIC, 'p-host', 'User:alice', Op.WRITE, { host: '127.0.0.1' })]);
    assert.equal(await produce(alice, 'p-host'), ErrorCode.NONE);
  });

  it('the super user needs no ACL', async () => {
    assert.equal(await produce(admin, 'p-deny'), ErrorCode.NONE);
    assert.equal(await fetchError(admin, 'p-lit'), ErrorCode.NONE);
  });

  it('Fetch needs READ: WRITE is not enough', async () => {
    const alice = await as('alice');
    await addAcls(admin, [allow(RT.TOPIC, 'f-read', 'User:alice', Op.WRITE)]);
    assert.equal(await fetchError(alice, 'f-read'), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [allow(RT.TOPIC, 'f-read', 'User:alice', Op.READ)]);
    assert.equal(await fetchError(alice, 'f-read'), ErrorCode.NONE);
  });

  it('a transactional produce needs WRITE on the transactional id', async () => {
    const alice = await as('alice');
    assert.equal(await produce(alice, 'p-lit', 'tx-a'), ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  });

  it('a follower fetch and controller requests need CLUSTER_ACTION', async () => {
    const alice = await as('alice');
    const follower = {
      ...fetchBody('p-lit', 0, 0),
      replicaId: 7,
      replicaState: { replicaId: 7, replicaEpoch: -1n },
    };
    const fetched = await alice.call(ApiKey.FETCH, 12, follower);
    assert.equal(fetched.responses[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const updated = await alice.call(ApiKey.UPDATE_METADATA, 7, {
      controllerId: 0,
      isKRaftController: false,
      controllerEpoch: 99,
      brokerEpoch: -1n,
      ungroupedPartitionStates: [],
      topicStates: [],
      liveBrokers: [],
    });
    assert.equal(updated.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const shutdown = await alice.call(ApiKey.CONTROLLED_SHUTDOWN, 3, { brokerId: 0, brokerEpoch: -1n });
    assert.equal(shutdown.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});

describe('Metadata and ListOffsets', () => {
  it('leaves out topics the principal may not describe; names them TOPIC_AUTHORIZATION_FAILED when asked', async () => {
    const bob = await as('bob');
    await addAcls(admin, [allow(RT.TOPIC, 'md-a', 'User:bob', Op.READ)]);
    const all = await metadata(bob, null);
    const names = all.topics.map((t: { name: string }) => t.name);
    assert.ok(names.includes('md-a'), 'READ implies DESCRIBE');
    assert.ok(!names.includes('md-b'));
    const asked = await metadata(bob, ['md-a', 'md-b']);
    assert.deepEqual(
      asked.topics.map((t: { name: string; errorCode: number }) => [t.name, t.errorCode]),
      [
        ['md-a', ErrorCode.NONE],
        ['md-b', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ],
    );
  });

  it('auto-creation needs CREATE on the topic or the cluster', async () => {
    const carol = await as('carol');
    await addAcls(admin, [
      allow(RT.TOPIC, 'auto-', 'User:carol', Op.DESCRIBE, { patternType: PatternType.PREFIXED }),
    ]);
    const refused = await metadata(carol, ['auto-1'], true);
    assert.equal(refused.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [
      allow(RT.TOPIC, 'auto-', 'User:carol', Op.CREATE, { patternType: PatternType.PREFIXED }),
    ]);
    const created = await metadata(carol, ['auto-1'], true);
    assert.notEqual(created.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const deadline = Date.now() + 10_000;
    while ((await metadata(admin, ['auto-1'])).topics[0].errorCode !== ErrorCode.NONE) {
      assert.ok(Date.now() < deadline, 'auto-1 was not created');
      await sleep(100);
    }
  });

  it('answers KIP-430 authorized operations from the ACLs', async () => {
    const alice = await as('alice');
    await addAcls(admin, [allow(RT.CLUSTER, CLUSTER, 'User:alice', Op.ALTER)]);
    await addAcls(admin, [
      allow(RT.TOPIC, 'md-b', 'User:alice', Op.ALTER_CONFIGS),
      allow(RT.TOPIC, 'md-b', 'User:alice', Op.READ),
    ]);
    const answer = await metadata(alice, ['md-b'], false, true);
    const bits = (ops: number[]) => ops.reduce((n, op) => n | (1 << op), 0);
    assert.equal(answer.clusterAuthorizedOperations, bits([Op.ALTER, Op.DESCRIBE]));
    assert.equal(
      answer.topics[0].topicAuthorizedOperations,
      bits([Op.READ, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS]),
    );
    const admins = await metadata(admin, ['md-b'], false, true);
    assert.equal(admins.clusterAuthorizedOperations & (1 << Op.CLUSTER_ACTION), 1 << Op.CLUSTER_ACTION);
  });

  it('ListOffsets needs DESCRIBE on the topic', async () => {
    const bob = await as('bob');
    const list = () =>
      bob.call(ApiKey.LIST_OFFSETS, 7, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [
          { name: 'lo-t', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
        ],
      });
    assert.equal((await list()).topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [allow(RT.TOPIC, 'lo-t', 'User:bob', Op.DESCRIBE)]);
    assert.equal((await list()).topics[0].partitions[0].errorCode, ErrorCode.NONE);
  });
});

describe('groups', () => {
  it('FindCoordinator, JoinGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups', async () => {
    const alice = await as('alice');
    const find = () => alice.call(ApiKey.FIND_COORDINATOR, 3, { key: 'grp', keyType: 0 });
    assert.equal((await find()).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const commit = () =>
      alice.call(ApiKey.OFFSET_COMMIT, 8, {
        groupId: 'grp',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [
          {
            name: 'g-t',
            partitions: [
              {
                partitionIndex: 0,
                committedOffset: 0n,
                committedLeaderEpoch: -1,
                commitTimestamp: -1n,
                committedMetadata: null,
              },
            ],
          },
        ],
      });
    assert.equal((await commit()).topics[0].partitions[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const join = await alice.call(ApiKey.JOIN_GROUP, 5, {
      groupId: 'grp',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    assert.equal(join.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const fetchOffsets = await alice.call(ApiKey.OFFSET_FETCH, 7, {
      groupId: 'grp',
      topics: null,
      requireStable: false,
    });
    assert.equal(fetchOffsets.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const described = await alice.call(ApiKey.DESCRIBE_GROUPS, 5, {
      groups: ['grp'],
      includeAuthorizedOperations: true,
    });
    assert.equal(described.groups[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    // READ on the group: the coordinator answers, the topic without READ is refused by itself.
    await addAcls(admin, [allow(RT.GROUP, 'grp', 'User:alice', Op.READ)]);
    assert.equal((await find()).errorCode, ErrorCode.NONE);
    assert.equal((await commit()).topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [allow(RT.TOPIC, 'g-t', 'User:alice', Op.READ)]);
    assert.equal((await commit()).topics[0].partitions[0].errorCode, ErrorCode.NONE);
    const listed = await alice.call(ApiKey.LIST_GROUPS, 4, { statesFilter: [] });
    assert.deepEqual(
      listed.groups.map((g: { groupId: string }) => g.groupId),
      ['grp'],
    );
    const bobList = await (await as('bob')).call(ApiKey.LIST_GROUPS, 4, { statesFilter: [] });
    assert.deepEqual(bobList.groups, [], 'bob may describe no group');
    const deleted = await alice.call(ApiKey.DELETE_GROUPS, 2, { groupsNames: ['grp'] });
    assert.equal(deleted.results[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    // KIP-848 heartbeats: READ on the group, DESCRIBE on every subscribed topic.
    const heartbeat = (topics: string[]) =>
      alice.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
        groupId: 'grp',
        memberId: '',
        memberEpoch: 0,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: 10_000,
        subscribedTopicNames: topics,
        serverAssignor: null,
        topicPartitions: [],
      });
    assert.equal((await heartbeat(['g-t', 'cfg-t'])).errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const joined = await heartbeat(['g-t']);
    assert.ok(
      joined.errorCode !== ErrorCode.TOPIC_AUTHORIZATION_FAILED &&
        joined.errorCode !== ErrorCode.GROUP_AUTHORIZATION_FAILED,
      `error ${joined.errorCode}`,
    );
  });
});

describe('transactions and idempotence', () => {
  it('InitProducerId: WRITE on the transactional id; idempotent needs IDEMPOTENT_WRITE or WRITE on a topic', async () => {
    const bob = await as('bob');
    const carol = await as('carol');
    const init = (c: WireClient, transactionalId: string | null) =>
      c.call(ApiKey.INIT_PRODUCER_ID, 4, {
        transactionalId,
        transactionTimeoutMs: 60_000,
        producerId: -1n,
        producerEpoch: -1,
      });
    assert.equal((await init(bob, 'tx-b')).errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    // bob may WRITE p-pre-* (prefixed ACL above): enough for an idempotent producer, as in Kafka 3.x.
    assert.equal((await init(bob, null)).errorCode, ErrorCode.NONE);
    const alice = await as('alice');
    assert.equal((await init(alice, null)).errorCode, ErrorCode.NONE);
    await removeAcls(admin, RT.TOPIC, 'p-star', PatternType.LITERAL);
    assert.equal((await init(carol, null)).errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    await addAcls(admin, [allow(RT.CLUSTER, CLUSTER, 'User:carol', Op.IDEMPOTENT_WRITE)]);
    assert.equal((await init(carol, null)).errorCode, ErrorCode.NONE);
    const find = await bob.call(ApiKey.FIND_COORDINATOR, 3, { key: 'tx-b', keyType: 1 });
    assert.equal(find.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const describedTx = await bob.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, { transactionalIds: ['tx-b'] });
    assert.equal(describedTx.transactionStates[0].errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    await addAcls(admin, [
      allow(RT.TRANSACTIONAL_ID, 'tx-', 'User:bob', Op.WRITE, { patternType: PatternType.PREFIXED }),
    ]);
    // As a client does: FindCoordinator, allowed now (WRITE implies DESCRIBE), creates the transaction state
    // topic (the refused one above did not); InitProducerId then waits for its coordinator to be ready.
    const found = await bob.call(ApiKey.FIND_COORDINATOR, 3, { key: 'tx-b', keyType: 1 });
    assert.notEqual(found.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const pending: number[] = [
      ErrorCode.COORDINATOR_NOT_AVAILABLE,
      ErrorCode.NOT_COORDINATOR,
      ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ];
    let initialized = await init(bob, 'tx-b');
    for (const deadline = Date.now() + 30_000; pending.includes(initialized.errorCode); ) {
      assert.ok(Date.now() < deadline, 'the transaction coordinator became ready');
      await sleep(100);
      initialized = await init(bob, 'tx-b');
    }
    assert.equal(initialized.errorCode, ErrorCode.NONE);
    const end = await bob.call(ApiKey.END_TXN, 3, {
      transactionalId: 'tx-other',
      producerId: 1n,
      producerEpoch: 0,
      committed: true,
    });
    assert.notEqual(
      end.errorCode,
      ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      'tx-other matches the prefix',
    );
    const endRefused = await bob.call(ApiKey.END_TXN, 3, {
      transactionalId: 'other',
      producerId: 1n,
      producerEpoch: 0,
      committed: true,
    });
    assert.equal(endRefused.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  });
});

describe('admin APIs', () => {
  it('topics, partitions, records, configs, log dirs, elections and reassignments', async () => {
    const bob = await as('bob');
    const created = await bob.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [{ name: 'new-t', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(created.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const deletedTopics = await bob.call(ApiKey.DELETE_TOPICS, 4, { topicNames: ['adm-t'], timeoutMs: 5000 });
    assert.equal(deletedTopics.responses[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const partitions = await bob.call(ApiKey.CREATE_PARTITIONS, 2, {
      topics: [{ name: 'adm-t', count: 3, assignments: null }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(partitions.results[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const records = await bob.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [{ name: 'adm-t', partitions: [{ partitionIndex: 0, offset: 0n }] }],
      timeoutMs: 5000,
    });
    assert.equal(records.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const describeConfigs = await bob.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [
        { resourceType: 2, resourceName: 'cfg-t', configurationKeys: null },
        { resourceType: 4, resourceName: '0', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      describeConfigs.results.map((r: { errorCode: number }) => r.errorCode),
      [ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
    );
    const alter = () =>
      bob.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        resources: [
          {
            resourceType: 2,
            resourceName: 'cfg-t',
            configs: [{ name: 'retention.ms', configOperation: 0, value: '60000' }],
          },
        ],
        validateOnly: false,
      });
    assert.equal((await alter()).responses[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [
      allow(RT.TOPIC, 'cfg-t', 'User:bob', Op.ALTER_CONFIGS),
      allow(RT.TOPIC, 'adm-t', 'User:bob', Op.ALTER),
      allow(RT.TOPIC, 'new-t', 'User:bob', Op.CREATE),
    ]);
    assert.equal((await alter()).responses[0].errorCode, ErrorCode.NONE);
    const described = await bob.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 2, resourceName: 'cfg-t', configurationKeys: ['retention.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(described.results[0].errorCode, ErrorCode.NONE, 'ALTER_CONFIGS implies DESCRIBE_CONFIGS');
    const grown = await bob.call(ApiKey.CREATE_PARTITIONS, 2, {
      topics: [{ name: 'adm-t', count: 2, assignments: null }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(grown.results[0].errorCode, ErrorCode.NONE);
    const createdNow = await bob.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [{ name: 'new-t', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(createdNow.topics[0].errorCode, ErrorCode.NONE);
    assert.equal(
      createdNow.topics[0].topicConfigErrorCode,
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      'no DESCRIBE_CONFIGS',
    );
    // Without DESCRIBE_CONFIGS Kafka leaves the topic's details at the response's defaults.
    const { numPartitions, replicationFactor, configs } = createdNow.topics[0];
    assert.deepEqual([numPartitions, replicationFactor, configs], [-1, -1, []]);
    const logDirs = await bob.call(ApiKey.DESCRIBE_LOG_DIRS, 4, { topics: null });
    assert.equal(logDirs.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const elect = await bob.call(ApiKey.ELECT_LEADERS, 2, {
      electionType: 0,
      topicPartitions: [{ topic: 'adm-t', partitions: [0] }],
      timeoutMs: 5000,
    });
    assert.equal(elect.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const reassign = await bob.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {
      timeoutMs: 5000,
      topics: null,
    });
    assert.equal(reassign.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const producers = await bob.call(ApiKey.DESCRIBE_PRODUCERS, 0, {
      topics: [{ name: 'cfg-t', partitionIndexes: [0] }],
    });
    assert.equal(producers.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const scram = await bob.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, { users: null });
    assert.equal(scram.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});

describe('CreateTopics refused', () => {
  it('refused CREATE: TOPIC_AUTHORIZATION_FAILED for the configs too, unless DESCRIBE_CONFIGS is granted', async () => {
    // As Kafka's KafkaApis: topicConfigErrorCode follows DESCRIBE_CONFIGS on the topic whether or not CREATE was
    // granted; only a creation that failed past the authorization resets it to NONE.
    const carol = await as('carol');
    await addAcls(admin, [allow(RT.TOPIC, 'nocreate-described', 'User:carol', Op.DESCRIBE_CONFIGS)]);
    const refused = await carol.call(ApiKey.CREATE_TOPICS, 7, {
      topics: ['nocreate-hidden', 'nocreate-described'].map((name) => ({
        name,
        numPartitions: 1,
        replicationFactor: 1,
        assignments: [],
        configs: [],
      })),
      timeoutMs: 5000,
      validateOnly: false,
    });
    const codes = refused.topics.map(
      (t: { name: string; errorCode: number; topicConfigErrorCode: number }) => [
        t.name,
        t.errorCode,
        t.topicConfigErrorCode,
      ],
    );
    assert.deepEqual(codes, [
      ['nocreate-hidden', ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ['nocreate-described', ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.NONE],
    ]);
  });
});

describe('what a refused request does not reveal', () => {
  it('DeleteTopics refuses a topic alike whether it exists; by id, without its name unless describable', async () => {
    const bob = await as('bob');
    const zero = 'AAAAAAAAAAAAAAAAAAAAAA';
    const answer = (response: { responses: { name: string | null; topicId: string; errorCode: number }[] }) =>
      response.responses.map((r) => [r.name, r.topicId, r.errorCode]);
    const byName = await bob.call(ApiKey.DELETE_TOPICS, 6, {
      topics: [
        { name: 'del-t', topicId: zero },
        { name: 'del-none', topicId: zero },
      ],
      timeoutMs: 5000,
    });
    const refused = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    assert.deepEqual(answer(byName), [
      ['del-t', zero, refused],
      ['del-none', zero, refused],
    ]);
    const id = (await metadata(admin, ['del-t'])).topics[0].topicId as string;
    assert.notEqual(id, zero);
    const byId = () =>
      bob.call(ApiKey.DELETE_TOPICS, 6, { topics: [{ name: null, topicId: id }], timeoutMs: 5000 });
    assert.deepEqual(answer(await byId()), [[null, id, refused]], 'no DESCRIBE: the name stays unknown');
    await addAcls(admin, [allow(RT.TOPIC, 'del-t', 'User:bob', Op.DESCRIBE)]);
    assert.deepEqual(answer(await byId()), [['del-t', id, refused]], 'DESCRIBE without DELETE');
  });
});

describe('the authorization log', () => {
  it('names principal, host, operation and resource of a denial at INFO', async () => {
    const alice = await as('alice');
    await produce(alice, 'lo-t');
    await waitUntil(
      () =>
        b.broker
          .log()
          .includes(
            'Principal = User:alice is Denied Operation = Write from host = 127.0.0.1 on resource = Topic:LITERAL:lo-t for request = Produce',
          ),
      5000,
      () => b.broker.log(),
    );
    // Under Kafka's logger name, as kafka.authorizer.logger lines are grepped in a Kafka broker's log.
    assert.match(
      b.broker.log(),
      / INFO kafka\.authorizer\.logger: Principal = User:alice is Denied Operation = Write/,
    );
    assert.doesNotMatch(b.broker.log(), /is Allowed/, 'allowed checks are DEBUG lines');
  });
});
