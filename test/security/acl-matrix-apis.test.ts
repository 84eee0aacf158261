// The rest of the authorization matrix through the wire (acl-matrix.test.ts has Produce, Fetch, Metadata, the
// group and admin APIs most clients use): group members' requests, the transactional producer's requests after
// InitProducerId, the cluster-level APIs that change things (reassignments, log dirs, SCRAM credentials, broker
// configs, client quotas), OffsetForLeaderEpoch, Kafka's operation implications, and
// allow.everyone.if.no.acl.found. Each principal without the ACL gets Kafka's error; with it, the authorizer lets
// the request through (the answer then is whatever the request itself deserves, never the authorization error).
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
import { type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { createTopic, type WireClient } from '../helpers/wire-client.js';

const CLUSTER = 'kafka-cluster';
const CONFIG_BROKER = 4;
const CONFIG_BROKER_LOGGER = 8;
let b: AclBroker;
let admin: WireClient;
const clients: WireClient[] = [];

async function as(broker: AclBroker, user: 'alice' | 'bob' | 'carol'): Promise<WireClient> {
  const c = await broker.as(user);
  clients.push(c);
  return c;
}

const acl = (
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

const COORDINATOR_PENDING: readonly number[] = [
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
];

/** Repeats `call` while the coordinator is still being set up (its offsets or transaction log loading). */
async function whenCoordinatorReady<T>(call: () => Promise<T>, errorOf: (r: T) => number): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await call();
    if (!COORDINATOR_PENDING.includes(errorOf(response)) || Date.now() > deadline) return response;
    await sleep(200);
  }
}

before(async () => {
  b = await startAclBroker();
  admin = await b.admin();
  for (const t of [
    'gm-t',
    'tx-t',
    'tx-t2',
    'tx-open',
    'dt-a',
    'dt-b',
    'ofl-t',
    'ofl-r',
    'imp-read',
    'imp-write',
    'imp-delete',
    'imp-alter',
    'imp-none',
  ]) {
    await createTopic(admin, t);
  }
  // As a client does: FindCoordinator creates the offsets and transaction state topics, then answers.
  for (const [key, keyType] of [
    ['gm', 0],
    ['txa', 1],
  ] as const) {
    const found = await whenCoordinatorReady(
      () => admin.call(ApiKey.FIND_COORDINATOR, 3, { key, keyType }),
      (r) => r.errorCode,
    );
    assert.equal(found.errorCode, ErrorCode.NONE);
  }
});

after(async () => {
  for (const c of clients) c.close();
  admin?.close();
  await b?.broker.stop();
});

describe('group members', () => {
  it('Heartbeat, SyncGroup, LeaveGroup need READ on the group; OffsetDelete DELETE; ConsumerGroupDescribe DESCRIBE', async () => {
    const alice = await as(b, 'alice');
    const heartbeat = () =>
      alice.call(ApiKey.HEARTBEAT, 4, {
        groupId: 'gm',
        generationId: 1,
        memberId: 'm',
        groupInstanceId: null,
      });
    const sync = () =>
      alice.call(ApiKey.SYNC_GROUP, 5, {
        groupId: 'gm',
        generationId: 1,
        memberId: 'm',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [],
      });
    const leave = () =>
      alice.call(ApiKey.LEAVE_GROUP, 5, {
        groupId: 'gm',
        memberId: '',
        members: [{ memberId: 'm', groupInstanceId: null, reason: null }],
      });
    const offsetDelete = () =>
      alice.call(ApiKey.OFFSET_DELETE, 0, {
        groupId: 'gm',
        topics: [{ name: 'gm-t', partitions: [{ partitionIndex: 0 }] }],
      });
    const describeGroup = () =>
      alice.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, { groupIds: ['gm'], includeAuthorizedOperations: true });
    const denied = ErrorCode.GROUP_AUTHORIZATION_FAILED;
    assert.equal((await heartbeat()).errorCode, denied);
    assert.equal((await sync()).errorCode, denied);
    assert.equal((await leave()).errorCode, denied);
    assert.equal((await offsetDelete()).errorCode, denied);
    assert.equal((await describeGroup()).groups[0].errorCode, denied);

    await addAcls(admin, [acl(RT.GROUP, 'gm', 'User:alice', Op.READ)]);
    // Through the authorizer to the coordinator, which knows no member m of an empty group.
    for (const [name, code] of [
      ['Heartbeat', (await heartbeat()).errorCode],
      ['SyncGroup', (await sync()).errorCode],
    ] as const) {
      assert.notEqual(code, denied, name);
      assert.notEqual(code, ErrorCode.NONE, `${name}: no such member`);
    }
    const left = await leave();
    assert.notEqual(left.errorCode, denied);
    // READ implies DESCRIBE, not DELETE.
    assert.notEqual((await describeGroup()).groups[0].errorCode, denied);
    const classic = await whenCoordinatorReady(
      () => alice.call(ApiKey.DESCRIBE_GROUPS, 5, { groups: ['gm'], includeAuthorizedOperations: true }),
      (r) => r.groups[0].errorCode,
    );
    assert.equal(classic.groups[0].errorCode, ErrorCode.NONE);
    assert.equal(classic.groups[0].authorizedOperations, (1 << Op.READ) | (1 << Op.DESCRIBE));
    assert.equal((await offsetDelete()).errorCode, denied);

    await addAcls(admin, [acl(RT.GROUP, 'gm', 'User:alice', Op.DELETE)]);
    const withoutTopic = await offsetDelete();
    assert.notEqual(withoutTopic.errorCode, denied);
    assert.equal(withoutTopic.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [acl(RT.TOPIC, 'gm-t', 'User:alice', Op.READ)]);
    const withTopic = await offsetDelete();
    assert.notEqual(withTopic.topics[0]?.partitions[0]?.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);

    // OffsetFetch v8 asks for several groups at once: each group is checked on its own, then each named topic.
    const batched = await alice.call(ApiKey.OFFSET_FETCH, 8, {
      groups: [
        {
          groupId: 'gm',
          memberId: null,
          memberEpoch: -1,
          topics: [
            { name: 'gm-t', partitionIndexes: [0] },
            { name: 'imp-none', partitionIndexes: [0] },
          ],
        },
        { groupId: 'gm-other', memberId: null, memberEpoch: -1, topics: null },
      ],
      requireStable: false,
    });
    const [mine, other] = batched.groups;
    assert.equal(mine.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      mine.topics.map((t: { name: string; partitions: { errorCode: number }[] }) => [
        t.name,
        t.partitions[0]!.errorCode,
      ]),
      [
        ['gm-t', ErrorCode.NONE],
        ['imp-none', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ],
    );
    assert.equal(other.errorCode, denied);
  });
});

describe('transactional producers', () => {
  it('AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and ListTransactions check the transactional id', async () => {
    const bob = await as(b, 'bob');
    const addPartitions = (topics: string[]) =>
      bob.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
        transactions: [],
        v3AndBelowTransactionalId: 'txa',
        v3AndBelowProducerId: 1n,
        v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: topics.map((name) => ({ name, partitions: [0] })),
      });
    const partitionErrors = (r: {
      resultsByTopicV3AndBelow: { resultsByPartition: { partitionErrorCode: number }[] }[];
    }) => r.resultsByTopicV3AndBelow.map((t) => t.resultsByPartition[0]!.partitionErrorCode);
    const addOffsets = () =>
      bob.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, {
        transactionalId: 'txa',
        producerId: 1n,
        producerEpoch: 0,
        groupId: 'txg',
      });
    const txnCommit = () =>
      bob.call(ApiKey.TXN_OFFSET_COMMIT, 3, {
        transactionalId: 'txa',
        groupId: 'txg',
        producerId: 1n,
        producerEpoch: 0,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [
          {
            name: 'tx-t',
            partitions: [
              { partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null },
            ],
          },
        ],
      });
    const list = () =>
      bob.call(ApiKey.LIST_TRANSACTIONS, 0, { stateFilters: [], producerIdFilters: [], durationFilter: -1n });

    const txDenied = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    assert.deepEqual(partitionErrors(await addPartitions(['tx-t'])), [txDenied]);
    assert.equal((await addOffsets()).errorCode, txDenied);
    assert.equal((await txnCommit()).topics[0].partitions[0].errorCode, txDenied);

    // A transaction the super user's producer opened, so that ListTransactions has something to hide.
    const init = await whenCoordinatorReady(
      () =>
        admin.call(ApiKey.INIT_PRODUCER_ID, 4, {
          transactionalId: 'txa',
          transactionTimeoutMs: 60_000,
          producerId: -1n,
          producerEpoch: -1,
        }),
      (r) => r.errorCode,
    );
    assert.equal(init.errorCode, ErrorCode.NONE);
    const listedAsAdmin = await admin.call(ApiKey.LIST_TRANSACTIONS, 0, {
      stateFilters: [],
      producerIdFilters: [],
      durationFilter: -1n,
    });
    assert.ok(
      listedAsAdmin.transactionStates.some((t: { transactionalId: string }) => t.transactionalId === 'txa'),
    );
    assert.deepEqual((await list()).transactionStates, [], 'bob may describe no transactional id');

    await addAcls(admin, [acl(RT.TRANSACTIONAL_ID, 'txa', 'User:bob', Op.WRITE)]);
    // WRITE implies DESCRIBE: the transaction is listed now.
    assert.deepEqual(
      (await list()).transactionStates.map((t: { transactionalId: string }) => t.transactionalId),
      ['txa'],
    );
    // The id passes; the topic without WRITE is refused, the other partition is not attempted, as in Kafka.
    await addAcls(admin, [acl(RT.TOPIC, 'tx-t2', 'User:bob', Op.WRITE)]);
    assert.deepEqual(partitionErrors(await addPartitions(['tx-t', 'tx-t2'])), [
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      ErrorCode.OPERATION_NOT_ATTEMPTED,
    ]);
    const added = partitionErrors(await addPartitions(['tx-t2']));
    assert.notEqual(added[0], txDenied);
    assert.notEqual(added[0], ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    // The group comes next: READ on it.
    assert.equal((await addOffsets()).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal((await txnCommit()).topics[0].partitions[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    await addAcls(admin, [acl(RT.GROUP, 'txg', 'User:bob', Op.READ)]);
    const offsetsAdded = (await addOffsets()).errorCode;
    assert.ok(
      offsetsAdded !== txDenied && offsetsAdded !== ErrorCode.GROUP_AUTHORIZATION_FAILED,
      `error ${offsetsAdded}`,
    );
    // Then READ on each topic whose offsets are committed.
    assert.equal((await txnCommit()).topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });
});

describe('transactions without a transactional id, and what DescribeTransactions shows', () => {
  it('transactional batches without a transactional id are TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka', async () => {
    await addAcls(admin, [acl(RT.TOPIC, 'tx-open', 'User:carol', Op.WRITE)]);
    const carol = await as(b, 'carol');
    const produce = async (records: Buffer) =>
      (
        await carol.call(ApiKey.PRODUCE, 9, {
          transactionalId: null,
          acks: 1,
          timeoutMs: 5000,
          topicData: [{ name: 'tx-open', partitionData: [{ index: 0, records }] }],
        })
      ).responses[0].partitionResponses[0].errorCode;
    // WRITE on the topic is enough for plain records, not for a transaction nobody coordinates.
    assert.equal(await produce(buildBatch([{ value: 'plain' }])), ErrorCode.NONE);
    const transactional = buildBatch([{ value: 'open' }], {
      producerId: 4242,
      producerEpoch: 0,
      baseSequence: 0,
      transactional: true,
    });
    assert.equal(await produce(transactional), ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    // Nothing was appended: the partition holds the plain record only.
    const listed = await admin.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        { name: 'tx-open', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
      ],
    });
    assert.equal(listed.topics[0].partitions[0].offset, 1n);
  });

  it('DescribeTransactions leaves out the partitions of topics the caller may not describe', async () => {
    const init = await whenCoordinatorReady(
      () =>
        admin.call(ApiKey.INIT_PRODUCER_ID, 4, {
          transactionalId: 'txd',
          transactionTimeoutMs: 60_000,
          producerId: -1n,
          producerEpoch: -1,
        }),
      (r) => r.errorCode,
    );
    assert.equal(init.errorCode, ErrorCode.NONE);
    const added = await admin.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: 'txd',
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [
        { name: 'dt-a', partitions: [0] },
        { name: 'dt-b', partitions: [0] },
      ],
    });
    for (const t of added.resultsByTopicV3AndBelow) {
      assert.equal(t.resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
    }
    await addAcls(admin, [
      acl(RT.TRANSACTIONAL_ID, 'txd', 'User:carol', Op.DESCRIBE),
      acl(RT.TOPIC, 'dt-a', 'User:carol', Op.DESCRIBE),
    ]);
    const carol = await as(b, 'carol');
    const described = await carol.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, { transactionalIds: ['txd'] });
    const state = described.transactionStates[0];
    assert.equal(state.errorCode, ErrorCode.NONE);
    assert.deepEqual(state.topics, [{ topic: 'dt-a', partitions: [0] }]);
    const asAdmin = await admin.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, { transactionalIds: ['txd'] });
    assert.deepEqual(asAdmin.transactionStates[0].topics.map((t: { topic: string }) => t.topic).sort(), [
      'dt-a',
      'dt-b',
    ]);
  });
});

describe('cluster-level APIs', () => {
  it('reassignments, replica log dirs, SCRAM credentials, broker configs and client quotas need the cluster ACL', async () => {
    const carol = await as(b, 'carol');
    const reassign = () =>
      carol.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {
        timeoutMs: 5000,
        topics: [{ name: 'gm-t', partitions: [{ partitionIndex: 0, replicas: null }] }],
      });
    const logDirs = () =>
      carol.call(ApiKey.ALTER_REPLICA_LOG_DIRS, 2, {
        dirs: [{ path: '/nowhere', topics: [{ name: 'gm-t', partitions: [0] }] }],
      });
    const scram = () =>
      carol.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {
        deletions: [{ name: 'dave', mechanism: 1 }],
        upsertions: [],
      });
    const brokerConfig = () =>
      carol.call(ApiKey.ALTER_CONFIGS, 2, {
        resources: [
          {
            resourceType: CONFIG_BROKER,
            resourceName: '',
            configs: [{ name: 'log.cleaner.threads', value: '1' }],
          },
        ],
        validateOnly: true,
      });
    // KIP-412 broker loggers: DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster, as broker configs.
    const describeLoggers = async () =>
      (
        await carol.call(ApiKey.DESCRIBE_CONFIGS, 4, {
          resources: [{ resourceType: CONFIG_BROKER_LOGGER, resourceName: '0', configurationKeys: ['root'] }],
          includeSynonyms: false,
          includeDocumentation: false,
        })
      ).results[0].errorCode;
    const alterLoggers = async () =>
      (
        await carol.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
          resources: [
            {
              resourceType: CONFIG_BROKER_LOGGER,
              resourceName: '0',
              configs: [{ name: 'root', configOperation: 0, value: 'INFO' }],
            },
          ],
          validateOnly: true,
        })
      ).responses[0].errorCode;
    const quotaEntity = [{ entityType: 'user', entityName: 'dave' }];
    const alterQuotas = () =>
      carol.call(ApiKey.ALTER_CLIENT_QUOTAS, 1, {
        entries: [{ entity: quotaEntity, ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }],
        validateOnly: false,
      });
    const describeQuotas = () =>
      carol.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
        components: [{ entityType: 'user', matchType: 0, match: 'dave' }],
        strict: false,
      });
    /** KIP-430's cluster operations for carol, which DescribeCluster and Metadata v10 answer alike. */
    const clusterOps = async () => {
      const described = await carol.call(ApiKey.DESCRIBE_CLUSTER, 0, {
        includeClusterAuthorizedOperations: true,
        endpointType: 1,
      });
      const metadata = await carol.call(ApiKey.METADATA, 10, {
        topics: [],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: true,
        includeTopicAuthorizedOperations: false,
      });
      assert.equal(metadata.clusterAuthorizedOperations, described.clusterAuthorizedOperations);
      return described.clusterAuthorizedOperations as number;
    };

    const denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    const reassignRefused = await reassign();
    assert.equal(reassignRefused.errorCode, denied);
    assert.equal((await logDirs()).results[0].partitions[0].errorCode, denied);
    assert.equal((await scram()).results[0].errorCode, denied);
    assert.equal((await brokerConfig()).responses[0].errorCode, denied);
    assert.deepEqual([await describeLoggers(), await alterLoggers()], [denied, denied]);
    const quotasRefused = await alterQuotas();
    assert.equal(quotasRefused.entries[0].errorCode, denied);
    assert.equal(quotasRefused.entries[0].errorMessage, 'Cluster authorization failed.');
    const describeRefused = await describeQuotas();
    assert.equal(describeRefused.errorCode, denied);
    assert.equal(describeRefused.entries, null);
    assert.equal(await clusterOps(), 0);
    // Nothing was written: the super user sees no quota of dave.
    const stored = await admin.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
      components: [{ entityType: 'user', matchType: 0, match: 'dave' }],
      strict: false,
    });
    assert.equal(stored.errorCode, ErrorCode.NONE);
    assert.deepEqual(stored.entries, []);

    // ALTER_CONFIGS on the cluster: the configs and quotas pass; it implies DESCRIBE_CONFIGS.
    await addAcls(admin, [acl(RT.CLUSTER, CLUSTER, 'User:carol', Op.ALTER_CONFIGS)]);
    assert.equal((await brokerConfig()).responses[0].errorCode, ErrorCode.NONE);
    assert.deepEqual([await describeLoggers(), await alterLoggers()], [ErrorCode.NONE, ErrorCode.NONE]);
    assert.equal((await alterQuotas()).entries[0].errorCode, ErrorCode.NONE);
    const described = await describeQuotas();
    assert.equal(described.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      described.entries.map((e: { values: { key: string; value: number }[] }) => e.values),
      [[{ key: 'producer_byte_rate', value: 1024 }]],
    );
    // As Kafka, the cluster's operations are answered only to a principal that may DESCRIBE the cluster.
    assert.equal(await clusterOps(), 0);
    assert.equal((await reassign()).errorCode, denied, 'ALTER_CONFIGS is not ALTER');

    // ALTER on the cluster: reassignments, log dirs, SCRAM credentials; it implies DESCRIBE.
    await addAcls(admin, [acl(RT.CLUSTER, CLUSTER, 'User:carol', Op.ALTER)]);
    assert.notEqual((await reassign()).errorCode, denied);
    assert.notEqual((await logDirs()).results[0].partitions[0].errorCode, denied);
    assert.notEqual((await scram()).results[0].errorCode, denied);
    const listed = await carol.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {
      timeoutMs: 5000,
      topics: null,
    });
    assert.equal(listed.errorCode, ErrorCode.NONE, 'ALTER implies DESCRIBE');
    assert.equal(
      await clusterOps(),
      (1 << Op.ALTER) | (1 << Op.DESCRIBE) | (1 << Op.ALTER_CONFIGS) | (1 << Op.DESCRIBE_CONFIGS),
    );
  });
});

describe('consumers and implications', () => {
  it('OffsetForLeaderEpoch from a consumer needs DESCRIBE on the topic', async () => {
    const alice = await as(b, 'alice');
    const epochs = async () =>
      (
        await alice.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, {
          replicaId: -1,
          topics: [
            { topic: 'ofl-t', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
          ],
        })
      ).topics[0].partitions[0].errorCode;
    assert.equal(await epochs(), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [acl(RT.TOPIC, 'ofl-t', 'User:alice', Op.DESCRIBE)]);
    assert.equal(await epochs(), ErrorCode.NONE);
  });

  it('OffsetForLeaderEpoch passes CLUSTER_ACTION, else DESCRIBE per topic, whatever the replica id', async () => {
    // Kafka's handler asks CLUSTER_ACTION first (without logging its denial), then DESCRIBE on each topic; the
    // replica id plays no part, so a follower's id is not refused as a cluster request.
    const epochError = async (client: WireClient, version: number, replicaId: number) =>
      (
        await client.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, {
          replicaId,
          topics: [
            { topic: 'ofl-r', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] },
          ],
        })
      ).topics[0].partitions[0].errorCode;
    const alice = await as(b, 'alice');
    assert.equal(await epochError(alice, 4, 1), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [acl(RT.TOPIC, 'ofl-r', 'User:alice', Op.DESCRIBE)]);
    assert.equal(await epochError(alice, 4, 1), ErrorCode.NONE);
    const bob = await as(b, 'bob');
    assert.equal(await epochError(bob, 4, -1), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await addAcls(admin, [acl(RT.CLUSTER, CLUSTER, 'User:bob', Op.CLUSTER_ACTION)]);
    for (const [version, replicaId] of [
      [4, -1],
      [4, 1],
      [2, -1],
    ] as const) {
      assert.equal(
        await epochError(bob, version, replicaId),
        ErrorCode.NONE,
        `v${version} replica ${replicaId}`,
      );
    }
  });

  it('READ, WRITE, DELETE and ALTER on a topic imply DESCRIBE; DESCRIBE_CONFIGS and CREATE do not', async () => {
    const bob = await as(b, 'bob');
    await addAcls(admin, [
      acl(RT.TOPIC, 'imp-read', 'User:bob', Op.READ),
      acl(RT.TOPIC, 'imp-write', 'User:bob', Op.WRITE),
      acl(RT.TOPIC, 'imp-delete', 'User:bob', Op.DELETE),
      acl(RT.TOPIC, 'imp-alter', 'User:bob', Op.ALTER),
      acl(RT.TOPIC, 'imp-none', 'User:bob', Op.DESCRIBE_CONFIGS),
      acl(RT.TOPIC, 'imp-none', 'User:bob', Op.CREATE),
    ]);
    const topics = ['imp-read', 'imp-write', 'imp-delete', 'imp-alter', 'imp-none'];
    // ListOffsets checks DESCRIBE on each topic.
    const listed = await bob.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: topics.map((name) => ({
        name,
        partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }],
      })),
    });
    assert.deepEqual(
      listed.topics.map((t: { name: string; partitions: { errorCode: number }[] }) => [
        t.name,
        t.partitions[0]!.errorCode,
      ]),
      [
        ['imp-read', ErrorCode.NONE],
        ['imp-write', ErrorCode.NONE],
        ['imp-delete', ErrorCode.NONE],
        ['imp-alter', ErrorCode.NONE],
        ['imp-none', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ],
    );
    // A DENY of DESCRIBE takes the implied DESCRIBE away again.
    await addAcls(admin, [
      acl(RT.TOPIC, 'imp-', 'User:bob', Op.DESCRIBE, {
        patternType: PatternType.PREFIXED,
        permissionType: PermissionType.DENY,
      }),
    ]);
    const after = await bob.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        { name: 'imp-read', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
      ],
    });
    assert.equal(after.topics[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });
});

describe('allow.everyone.if.no.acl.found', () => {
  it('true: a resource without ACLs is open to everyone; one with an ACL only to whom it names', async () => {
    const open = await startAclBroker({ extra: { 'allow.everyone.if.no.acl.found': 'true' } });
    try {
      const openAdmin = await open.admin();
      clients.push(openAdmin);
      await createTopic(openAdmin, 'free');
      await createTopic(openAdmin, 'guarded');
      await addAcls(openAdmin, [acl(RT.TOPIC, 'guarded', 'User:alice', Op.DESCRIBE)]);
      const bob = await as(open, 'bob');
      const alice = await as(open, 'alice');
      const md = async (c: WireClient) =>
        (
          await c.call(ApiKey.METADATA, 12, {
            topics: null,
            allowAutoTopicCreation: false,
            includeTopicAuthorizedOperations: false,
          })
        ).topics
          .map((t: { name: string }) => t.name)
          .sort();
      assert.deepEqual(await md(bob), ['free']);
      assert.deepEqual(await md(alice), ['free', 'guarded']);
    } finally {
      await open.broker.stop();
    }
  });
});

describe('the authorization log', () => {
  it('writes a name from the request on its own line, control characters escaped, a huge one cut', async () => {
    const alice = await as(b, 'alice');
    const forged = 'Principal = User:admin is Allowed Operation = Write from host = 10.9.9.9';
    const produced = await alice.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: `evil\n${forged}`, partitionData: [{ index: 0, records: null }] }],
    });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const hugeGroup = `g${'x'.repeat(100_000)}`;
    const found = await alice.call(ApiKey.FIND_COORDINATOR, 3, { key: hugeGroup, keyType: 0 });
    assert.equal(found.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const escaped = `on resource = Topic:LITERAL:evil\\u000a${forged} for request = Produce`;
    await waitUntil(
      () =>
        b.broker.log().includes(escaped) &&
        b.broker.log().includes(`(${hugeGroup.length - 1024} more characters)`),
      30_000,
      () => b.broker.log().slice(-3000),
    );
    const lines = b.broker.log().split('\n');
    assert.ok(!lines.some((l) => l.startsWith(forged)), 'no line of its own');
    const groupLine = lines.find((l) => l.includes('on resource = Group:LITERAL:gxxx'));
    assert.ok(groupLine !== undefined);
    assert.ok(groupLine.length < 1500, `a line of ${groupLine.length} characters`);
    assert.match(
      groupLine,
      new RegExp(
        `Group:LITERAL:gx{1023}\\.\\.\\.\\(${hugeGroup.length - 1024} more characters\\) for request = FindCoordinator`,
      ),
    );
  });
});
