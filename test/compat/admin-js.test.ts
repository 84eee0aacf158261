// The admin and consumer surfaces of kafkajs and @platformatic/kafka that the other compat tests leave out, each
// called against a Brook broker and its answer compared with what a Kafka 3.x broker gives: partitions added,
// configs described (with synonyms) and altered, topics validated and created on given replicas, group offsets
// set, reset, resolved and deleted, groups listed, described and deleted, records deleted; a kafkajs consumer
// that seeks while running, pauses and resumes, reads batches split by a small maxBytesPerPartition and skips
// aborted records.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '@platformatic/kafka';
import kafkajs from 'kafkajs';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { untilValue, waitUntil } from '../helpers/wait.js';

const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;
type Kafka = InstanceType<typeof Kafka>;
type KafkaAdmin = ReturnType<Kafka['admin']>;

/** ConfigSource ids of DescribeConfigs v1+. */
const TOPIC_CONFIG = 1;
const DEFAULT_CONFIG = 5;

const errorType = (type: string) => (e: { type?: string }) => e.type === type;
const firstErrorType = (type: string) => (e: { errors?: { type?: string }[] }) =>
  e.errors?.[0]?.type === type;

describe('kafkajs and @platformatic/kafka admin and consumer surfaces against a Brook broker', () => {
  let broker: BrokerProcess;
  let kafka: Kafka;
  let admin: KafkaAdmin;
  before(async () => {
    broker = await startBroker();
    kafka = new Kafka({
      clientId: 'admin-js',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2, initialRetryTime: 100 },
    });
    admin = kafka.admin();
    await admin.connect();
  });
  after(async () => {
    await admin?.disconnect();
    await broker?.stop();
  });

  async function produce(
    topic: string,
    partition: number,
    values: string[],
    timestamp?: number,
  ): Promise<void> {
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic,
        messages: values.map((value, i) => ({
          partition,
          value,
          ...(timestamp === undefined ? {} : { timestamp: String(timestamp + i * 1000) }),
        })),
      });
    } finally {
      await producer.disconnect();
    }
  }

  it('kafkajs createTopics: validateOnly creates nothing, replicaAssignment is used, errors typed', async () => {
    assert.equal(
      await admin.createTopics({
        validateOnly: true,
        waitForLeaders: false,
        topics: [{ topic: 'ajs-validated', numPartitions: 2 }],
      }),
      true,
    );
    assert.ok(!(await admin.listTopics()).includes('ajs-validated'));
    assert.equal(
      await admin.createTopics({
        topics: [
          {
            topic: 'ajs-assigned',
            replicaAssignment: [
              { partition: 0, replicas: [0] },
              { partition: 1, replicas: [0] },
            ],
          },
        ],
        waitForLeaders: true,
      }),
      true,
    );
    const md = await admin.fetchTopicMetadata({ topics: ['ajs-assigned'] });
    assert.deepEqual(md.topics[0]!.partitions.map((p) => [p.partitionId, p.replicas]).sort(), [
      [0, [0]],
      [1, [0]],
    ]);
    const create = (topic: Record<string, unknown>) =>
      admin.createTopics({ topics: [{ topic: 'ajs-bad', ...topic }] as never });
    await assert.rejects(
      create({ numPartitions: 2, replicaAssignment: [{ partition: 0, replicas: [0] }] }),
      firstErrorType('INVALID_REQUEST'),
    );
    await assert.rejects(
      create({ replicaAssignment: [{ partition: 1, replicas: [0] }] }),
      firstErrorType('INVALID_REPLICA_ASSIGNMENT'),
    );
    await assert.rejects(
      create({ configEntries: [{ name: 'cleanup.policy', value: 'bogus' }] }),
      firstErrorType('INVALID_CONFIG'),
    );
    await assert.rejects(create({ replicationFactor: 3 }), firstErrorType('INVALID_REPLICATION_FACTOR'));
    await assert.rejects(create({ numPartitions: 0 }), firstErrorType('INVALID_PARTITIONS'));
    assert.ok(!(await admin.listTopics()).includes('ajs-bad'));
  });

  it('kafkajs createPartitions grows a topic, and refuses to shrink it or to leave it as it is', async () => {
    await admin.createTopics({ topics: [{ topic: 'ajs-grow', numPartitions: 2 }], waitForLeaders: true });
    await admin.createPartitions({ topicPartitions: [{ topic: 'ajs-grow', count: 3 }] });
    await admin.createPartitions({ validateOnly: true, topicPartitions: [{ topic: 'ajs-grow', count: 8 }] });
    await admin.createPartitions({ topicPartitions: [{ topic: 'ajs-grow', count: 4, assignments: [[0]] }] });
    assert.equal((await admin.fetchTopicMetadata({ topics: ['ajs-grow'] })).topics[0]!.partitions.length, 4);
    const grow = (count: number) =>
      admin.createPartitions({ topicPartitions: [{ topic: 'ajs-grow', count }] });
    await assert.rejects(grow(2), errorType('INVALID_PARTITIONS'));
    await assert.rejects(grow(4), errorType('INVALID_PARTITIONS'));
    await assert.rejects(
      admin.createPartitions({ topicPartitions: [{ topic: 'ajs-grow', count: 6, assignments: [[0]] }] }),
      errorType('INVALID_REPLICA_ASSIGNMENT'),
    );
  });

  it('kafkajs describeConfigs with synonyms and alterConfigs (validateOnly too) on a topic', async () => {
    await admin.createTopics({ topics: [{ topic: 'ajs-configs' }], waitForLeaders: true });
    const describe = async (names: string[]) => {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: true,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: 'ajs-configs', configNames: names }],
      });
      return new Map(resources[0]!.configEntries.map((c) => [c.configName, c]));
    };
    const before = await describe(['cleanup.policy', 'retention.ms']);
    assert.equal(before.get('cleanup.policy')!.configSource, DEFAULT_CONFIG);
    assert.deepEqual(before.get('cleanup.policy')!.configSynonyms, [
      { configName: 'log.cleanup.policy', configValue: 'delete', configSource: DEFAULT_CONFIG },
    ]);
    assert.equal(before.get('retention.ms')!.configValue, '604800000');
    const alter = (value: string, validateOnly: boolean) =>
      admin.alterConfigs({
        validateOnly,
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: 'ajs-configs',
            configEntries: [{ name: 'retention.ms', value }],
          },
        ],
      });
    await alter('1000', true);
    assert.equal((await describe(['retention.ms'])).get('retention.ms')!.configValue, '604800000');
    await alter('1000', false);
    const after = (await describe(['retention.ms'])).get('retention.ms')!;
    assert.equal(after.configValue, '1000');
    assert.equal(after.configSource, TOPIC_CONFIG);
    assert.equal(after.isDefault, false);
    await assert.rejects(alter('soon', false), errorType('INVALID_CONFIG'));
  });

  it('kafkajs describe/alterConfigs on the broker: hours and minutes synonyms are read-only', async () => {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        {
          type: ConfigResourceTypes.BROKER,
          name: '0',
          configNames: ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours', 'log.roll.hours'],
        },
      ],
    });
    const readOnly = Object.fromEntries(resources[0]!.configEntries.map((c) => [c.configName, c.readOnly]));
    // Kafka reconfigures only the first broker synonym of a topic key (DynamicLogConfig.ReconfigurableConfigs).
    assert.deepEqual(readOnly, {
      'log.retention.ms': false,
      'log.retention.minutes': true,
      'log.retention.hours': true,
      'log.roll.hours': true,
    });
    const alter = (name: string) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: '0', configEntries: [{ name, value: '1' }] }],
      });
    await assert.rejects(alter('log.retention.hours'), errorType('INVALID_REQUEST'));
    await alter('log.retention.ms');
  });

  // kafkajs sets and resets offsets with a paused consumer that waits maxWaitTime (5 s) for its fetch.
  it('kafkajs group offsets: set, fetch (resolved), reset, list, describe and delete groups', {
    timeout: 60_000,
  }, async () => {
    await admin.createTopics({ topics: [{ topic: 'ajs-offsets', numPartitions: 2 }], waitForLeaders: true });
    const t0 = Date.now() - 60_000;
    await produce('ajs-offsets', 0, ['a', 'b', 'c', 'd', 'e', 'f'], t0);
    assert.deepEqual(
      (await admin.fetchTopicOffsetsByTimestamp('ajs-offsets', t0 + 2500)).map((p) => [
        p.partition,
        p.offset,
      ]),
      [
        [0, '3'],
        [1, '0'],
      ],
    );
    await admin.setOffsets({
      groupId: 'ajs-group',
      topic: 'ajs-offsets',
      partitions: [{ partition: 0, offset: '2' }],
    });
    const fetch = async (resolveOffsets: boolean) =>
      (
        await admin.fetchOffsets({ groupId: 'ajs-group', topics: ['ajs-offsets'], resolveOffsets })
      )[0]!.partitions
        .map((p) => [p.partition, p.offset])
        .sort();
    assert.deepEqual(await fetch(false), [
      [0, '2'],
      [1, '-1'],
    ]);
    assert.deepEqual(await fetch(true), [
      [0, '2'],
      [1, '0'],
    ]);
    await admin.resetOffsets({ groupId: 'ajs-group', topic: 'ajs-offsets', earliest: true });
    assert.deepEqual(await fetch(true), [
      [0, '0'],
      [1, '0'],
    ]);
    assert.ok((await admin.listGroups()).groups.some((g) => g.groupId === 'ajs-group'));
    const described = await admin.describeGroups(['ajs-group', 'ajs-no-group']);
    assert.deepEqual(
      described.groups.map((g) => [
        g.groupId,
        (g as { errorCode?: number }).errorCode,
        g.state,
        g.members.length,
      ]),
      [
        ['ajs-group', 0, 'Empty', 0],
        ['ajs-no-group', 0, 'Dead', 0],
      ],
    );
    await assert.rejects(
      admin.deleteGroups(['ajs-group', 'ajs-no-group']),
      (e: { groups?: { groupId: string; error: { type: string } }[] }) => {
        assert.deepEqual(
          e.groups?.map((g) => [g.groupId, g.error.type]),
          [['ajs-no-group', 'GROUP_ID_NOT_FOUND']],
        );
        return true;
      },
    );
    assert.ok(!(await admin.listGroups()).groups.some((g) => g.groupId === 'ajs-group'));
  });

  it('kafkajs deleteTopicRecords moves the low watermark (-1: to the high one), not beyond', async () => {
    await admin.createTopics({ topics: [{ topic: 'ajs-delete' }], waitForLeaders: true });
    await produce('ajs-delete', 0, ['a', 'b', 'c', 'd', 'e']);
    const low = async () => (await admin.fetchTopicOffsets('ajs-delete'))[0]!.low;
    // kafkajs finds the leaders in its cached metadata, which fetchTopicOffsets fills in for this topic.
    assert.equal(await low(), '0');
    await admin.deleteTopicRecords({ topic: 'ajs-delete', partitions: [{ partition: 0, offset: '2' }] });
    assert.equal(await low(), '2');
    await assert.rejects(
      admin.deleteTopicRecords({ topic: 'ajs-delete', partitions: [{ partition: 0, offset: '9' }] }),
      // kafkajs wraps the per-partition error in a non-retriable one.
      (e: { cause?: { partitions?: { error: { type: string } }[] } }) =>
        e.cause?.partitions?.[0]?.error.type === 'OFFSET_OUT_OF_RANGE',
    );
    await admin.deleteTopicRecords({ topic: 'ajs-delete', partitions: [{ partition: 0, offset: '-1' }] });
    assert.equal(await low(), '5');
  });

  it('a kafkajs consumer: eachBatch, small maxBytesPerPartition, seek, pause/resume, no aborted', {
    timeout: 90_000,
  }, async () => {
    await admin.createTopics({ topics: [{ topic: 'ajs-consume', numPartitions: 2 }], waitForLeaders: true });
    for (let b = 0; b < 3; b++)
      await produce(
        'ajs-consume',
        0,
        Array.from({ length: 10 }, (_, i) => `${b * 10 + i}-${'x'.repeat(200)}`),
      );
    await produce('ajs-consume', 1, ['p1-0', 'p1-1', 'p1-2']);
    const tx = kafka.producer({ transactionalId: 'ajs-tx', idempotent: true, maxInFlightRequests: 1 });
    await tx.connect();
    const aborted = await tx.transaction();
    await aborted.send({ topic: 'ajs-consume', messages: [{ partition: 1, value: 'aborted' }] });
    await aborted.abort();
    const committed = await tx.transaction();
    await committed.send({ topic: 'ajs-consume', messages: [{ partition: 1, value: 'committed' }] });
    await committed.commit();
    await tx.disconnect();

    const batches: [number, number, string][] = [];
    const values: Record<number, string[]> = { 0: [], 1: [] };
    /** Per partition, the offset the last answered commit of eachBatch carried. */
    const committedTo: Record<number, string> = {};
    const consumer = kafka.consumer({
      groupId: 'ajs-consumer',
      maxBytesPerPartition: 1024,
      maxWaitTimeInMs: 100,
      heartbeatInterval: 500,
      sessionTimeout: 6000,
      readUncommitted: false,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: 'ajs-consume', fromBeginning: true });
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary }) => {
          batches.push([batch.partition, batch.messages.length, batch.firstOffset()!]);
          for (const m of batch.messages) {
            values[batch.partition]!.push(m.value!.toString().split('-x')[0]!);
            resolveOffset(m.offset);
          }
          await heartbeat();
          const next = String(Number(batch.lastOffset()) + 1);
          await commitOffsetsIfNecessary({
            topics: [{ topic: 'ajs-consume', partitions: [{ partition: batch.partition, offset: next }] }],
          });
          committedTo[batch.partition] = next;
        },
      });
      // The values arrive before their batch's commit is answered: wait for both, then read what the broker holds.
      await waitUntil(
        () =>
          values[0]!.length === 30 &&
          values[1]!.length >= 4 &&
          committedTo[0] === '30' &&
          committedTo[1] === '7',
        30_000,
        () => `all records consumed and committed (committed ${JSON.stringify(committedTo)})`,
      );
      // Each produced batch of 10 (about 2 KiB) is larger than 1024 bytes: Kafka returns one whole batch per fetch.
      assert.deepEqual(
        batches.filter(([p]) => p === 0),
        [
          [0, 10, '0'],
          [0, 10, '10'],
          [0, 10, '20'],
        ],
      );
      assert.deepEqual(values[1], ['p1-0', 'p1-1', 'p1-2', 'committed']);
      const committedOffsets = await admin.fetchOffsets({ groupId: 'ajs-consumer', topics: ['ajs-consume'] });
      assert.deepEqual(committedOffsets[0]!.partitions.map((p) => [p.partition, p.offset]).sort(), [
        [0, '30'],
        [1, '7'],
      ]);

      consumer.pause([{ topic: 'ajs-consume', partitions: [1] }]);
      consumer.seek({ topic: 'ajs-consume', partition: 1, offset: '0' });
      consumer.seek({ topic: 'ajs-consume', partition: 0, offset: '27' });
      await waitUntil(
        () => values[0]!.length === 33,
        20_000,
        () => 'records after the seek',
      );
      assert.deepEqual(values[0]!.slice(30), ['27', '28', '29']);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(values[1]!.length, 4, 'a paused partition is not fetched');
      consumer.resume([{ topic: 'ajs-consume', partitions: [1] }]);
      await waitUntil(
        () => values[1]!.length === 8,
        20_000,
        () => 'records after resume',
      );
      assert.deepEqual(values[1]!.slice(4), ['p1-0', 'p1-1', 'p1-2', 'committed']);
    } finally {
      await consumer.disconnect();
    }
  });

  it('@platformatic/kafka admin: partitions, group offsets, groups, configs, records, quotas, ACLs', async () => {
    const plt = new Admin({ clientId: 'admin-js-plt', bootstrapBrokers: [broker.bootstrap], retries: 1 });
    try {
      await plt.createTopics({ topics: ['plt-surface'], partitions: 2, replicas: 1 });
      await plt.createPartitions({ topics: [{ name: 'plt-surface', count: 3 } as never] });
      assert.equal(
        (await plt.metadata({ topics: ['plt-surface'] })).topics.get('plt-surface')!.partitionsCount,
        3,
      );
      // Kafka's ZkAdminManager words for a request to shrink a topic.
      await assert.rejects(
        plt.createPartitions({ topics: [{ name: 'plt-surface', count: 2 } as never] }),
        (e: { errors?: { response?: { results?: { errorCode: number; errorMessage: string }[] } }[] }) => {
          assert.deepEqual(e.errors?.[0]?.response?.results?.[0], {
            name: 'plt-surface',
            errorCode: 37,
            errorMessage: 'Topic currently has 3 partitions, which is higher than the requested 2.',
          });
          return true;
        },
      );
      await produce('plt-surface', 0, ['a', 'b', 'c', 'd']);

      const listed = await plt.listOffsets({
        topics: [
          {
            name: 'plt-surface',
            partitions: [
              { partitionIndex: 0, timestamp: -1n },
              { partitionIndex: 1, timestamp: -2n },
            ],
          },
        ],
      });
      assert.deepEqual(
        listed[0]!.partitions.map((p) => [p.partitionIndex, p.offset]),
        [
          [0, 4n],
          [1, 0n],
        ],
      );

      await plt.alterConsumerGroupOffsets({
        groupId: 'plt-group',
        topics: [
          {
            name: 'plt-surface',
            partitionOffsets: [
              { partition: 0, offset: 3n },
              { partition: 1, offset: 0n },
            ],
          },
        ],
      });
      const offsets = async () =>
        (await plt.listConsumerGroupOffsets({ groups: ['plt-group'] }))[0]!.topics[0]!.partitions.map((p) => [
          p.partitionIndex,
          p.committedOffset,
        ]);
      assert.deepEqual(await offsets(), [
        [0, 3n],
        [1, 0n],
      ]);
      await plt.deleteConsumerGroupOffsets({
        groupId: 'plt-group',
        topics: [{ name: 'plt-surface', partitionIndexes: [1] }],
      });
      assert.deepEqual(await offsets(), [[0, 3n]]);

      const groups = await plt.listGroups();
      assert.equal(groups.get('plt-group')?.state, 'EMPTY');
      assert.equal((await plt.listGroups({ states: ['STABLE'] })).has('plt-group'), false);
      const described = await plt.describeGroups({ groups: ['plt-group'] });
      assert.equal(described.get('plt-group')?.state, 'EMPTY');
      const coordinators = await plt.findCoordinator({ keyType: 0, keys: ['plt-group'] });
      assert.equal(coordinators[0]!.nodeId, 0);

      await plt.incrementalAlterConfigs({
        resources: [
          {
            resourceType: 2,
            resourceName: 'plt-surface',
            configs: [
              { name: 'cleanup.policy', configOperation: 2, value: 'compact' },
              { name: 'segment.ms', configOperation: 0, value: '60000' },
            ],
          },
        ],
      });
      const configs = async () =>
        Object.fromEntries(
          (
            await plt.describeConfigs({
              resources: [
                {
                  resourceType: 2,
                  resourceName: 'plt-surface',
                  configurationKeys: ['cleanup.policy', 'segment.ms'],
                },
              ],
            })
          )[0]!.configs.map((c) => [c.name, c.value]),
        );
      assert.deepEqual(await configs(), { 'cleanup.policy': 'delete,compact', 'segment.ms': '60000' });
      await plt.alterConfigs({
        resources: [
          { resourceType: 2, resourceName: 'plt-surface', configs: [{ name: 'segment.ms', value: '70000' }] },
        ],
      });
      assert.deepEqual(await configs(), { 'cleanup.policy': 'delete', 'segment.ms': '70000' });

      const deleted = await plt.deleteRecords({
        topics: [{ name: 'plt-surface', partitions: [{ partition: 0, offset: 2n }] }],
      });
      assert.equal(deleted[0]!.partitions[0]!.lowWatermark, 2n);
      const dirs = await plt.describeLogDirs({ topics: [{ name: 'plt-surface', partitions: [0] }] });
      assert.equal(dirs[0]!.results[0]!.topics[0]!.partitions[0]!.partitionIndex, 0);

      await plt.alterClientQuotas({
        entries: [
          {
            entities: [{ entityType: 'client-id', entityName: 'plt-client' }],
            ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }],
          },
        ],
      });
      const quotas = await plt.describeClientQuotas({
        components: [{ entityType: 'client-id', matchType: 2 }],
      });
      assert.deepEqual(quotas[0]?.values, [{ key: 'producer_byte_rate', value: 1024 }]);

      await assert.rejects(
        plt.describeAcls({
          filter: {
            resourceType: 1,
            resourceName: null,
            resourcePatternType: 1,
            principal: null,
            host: null,
            operation: 1,
            permissionType: 1,
          } as never,
        }),
        (e: { errors?: { response?: { errorCode?: number } }[] }) =>
          e.errors?.[0]?.response?.errorCode === 54,
      );

      // Deleting a topic deletes the groups' offsets of it, and an empty group left without offsets goes.
      await plt.createTopics({ topics: ['plt-gone'], partitions: 1, replicas: 1 });
      await plt.alterConsumerGroupOffsets({
        groupId: 'plt-gone-group',
        topics: [{ name: 'plt-gone', partitionOffsets: [{ partition: 0, offset: 0n }] }],
      });
      await plt.alterConsumerGroupOffsets({
        groupId: 'plt-group',
        topics: [{ name: 'plt-gone', partitionOffsets: [{ partition: 0, offset: 0n }] }],
      });
      await plt.deleteTopics({ topics: ['plt-gone'] });
      await untilValue('the group of the deleted topic only to go', async () =>
        (await plt.listGroups()).has('plt-gone-group') ? null : true,
      );
      assert.deepEqual(await offsets(), [[0, 3n]]);

      await plt.deleteGroups({ groups: ['plt-group'] });
      await assert.rejects(
        plt.deleteGroups({ groups: ['plt-group'] }),
        (e: { errors?: { response?: { results?: { errorCode: number }[] } }[] }) =>
          e.errors?.[0]?.response?.results?.[0]?.errorCode === 69,
      );
    } finally {
      await plt.close();
    }
  });
});
