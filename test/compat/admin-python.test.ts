import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

// Debian's python3-kafka and python3-confluent-kafka are importable only from the system interpreter.
const PYTHON = '/usr/bin/python3';
const SCRIPTS = resolve(import.meta.dirname, '../../../test/compat/scripts');
// DescribeConfigs' ConfigSource codes.
const TOPIC_CONFIG = 1;
const DEFAULT_CONFIG = 5;
const INVALID_REQUEST = 42;
const INVALID_CONFIG = 40;
// Kafka refuses the hours and minutes synonyms of log.retention.ms and log.roll.ms (and
// log.flush.scheduler.interval.ms) at runtime: only the first broker synonym of a topic key is dynamic.
const NOT_DYNAMIC = 'Cannot update these configs dynamically';

async function runScript(
  broker: BrokerProcess,
  script: string,
  prefix: string,
): Promise<Record<string, unknown>> {
  const r = await run(PYTHON, [resolve(SCRIPTS, script), broker.bootstrap, prefix], { timeoutMs: 150_000 });
  assert.equal(r.code, 0, `${script} failed:\n${r.stdout}\n${r.stderr}\n--- broker log ---\n${broker.log()}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe('Python admin clients and consumer offset calls against a Brook broker', () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await startBroker({
      overrides: {
        'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
        'super.users': 'User:ANONYMOUS',
      },
    });
  });
  after(async () => {
    await broker?.stop();
  });

  it('kafka-python: topics, partitions, configs, groups, consumer offsets and ACLs answer as Kafka does', async () => {
    const out = await runScript(broker, 'kafka_python_admin.py', 'ka');
    assert.equal(out.create_existing, 'TopicAlreadyExistsError');
    assert.equal(out.create_validate_only, null);
    assert.equal(out.create_bad_value, 'InvalidConfigurationError');
    assert.equal(out.create_assignment, null);
    assert.equal(out.create_unknown_broker, 'InvalidReplicationAssignmentError');
    assert.equal(out.partitions_grow, null);
    assert.equal(out.partitions_same, 'InvalidPartitionsError');
    assert.equal(out.partitions_unknown, 'UnknownTopicOrPartitionError');
    assert.deepEqual(out.describe_topics, { 'ka-t1': [0, 4], 'ka-t2': [0, 3], 'ka-nope': [3, 0] });
    assert.deepEqual(out.listed, ['ka-t1', 'ka-t2']);
    assert.equal(out.cluster, 0);

    assert.deepEqual(out.topic_configs, [
      0,
      {
        'cleanup.policy': {
          value: 'compact',
          read_only: false,
          source: TOPIC_CONFIG,
          synonyms: [
            ['cleanup.policy', 'compact', TOPIC_CONFIG],
            ['log.cleanup.policy', 'delete', DEFAULT_CONFIG],
          ],
        },
        'retention.ms': {
          value: '100000',
          read_only: false,
          source: TOPIC_CONFIG,
          synonyms: [['retention.ms', '100000', TOPIC_CONFIG]],
        },
      },
    ]);
    assert.equal(out.unknown_topic_configs, 3);
    assert.equal(out.alter_topic, 0);
    assert.deepEqual(out.alter_bad_value, [
      INVALID_CONFIG,
      "Invalid config value for resource ConfigResource(type=TOPIC, name='ka-t1'): " +
        'Invalid value x for configuration retention.ms: Not a number of type LONG',
    ]);
    const after = (out.topic_configs_after as [number, Record<string, { value: string; source: number }>])[1];
    assert.deepEqual(
      [after['retention.ms']?.value, after['cleanup.policy']?.value, after['cleanup.policy']?.source],
      ['2000000', 'delete', DEFAULT_CONFIG],
    );

    // Kafka's DynamicBrokerReconfigurationTest: log.retention.hours and log.roll.hours are read-only.
    const broker0 = (out.broker_configs as [number, Record<string, { read_only: boolean }>])[1];
    assert.deepEqual(Object.fromEntries(Object.entries(broker0).map(([k, v]) => [k, v.read_only])), {
      'log.retention.ms': false,
      'log.retention.hours': true,
      'log.roll.hours': true,
      'log.roll.ms': false,
      'num.io.threads': false,
    });
    assert.deepEqual(out.alter_broker_hours, [INVALID_REQUEST, `${NOT_DYNAMIC}: Set(log.retention.hours)`]);

    assert.equal(out.consumed, 10);
    assert.deepEqual(out.groups_listed, [['ka-group', 'consumer']]);
    assert.deepEqual(out.group_described, ['Stable', 'consumer', 1]);
    assert.deepEqual(out.group_offsets, { '0': 5, '1': 5, '2': 0, '3': 0 });
    assert.deepEqual(out.delete_active_group, ['NonEmptyGroupError']);
    assert.deepEqual(out.delete_groups, ['NoError', 'GroupIdNotFoundError']);
    assert.deepEqual(out.beginning, [0, 0]);
    assert.deepEqual(out.end, [5, 5]);
    assert.deepEqual(out.by_time, [2, null]);
    assert.deepEqual(out.positions, [5, 0]);
    assert.equal(out.paused, 1);
    assert.deepEqual(out.committed, [3, null]);
    assert.deepEqual(out.manual_group, [['ka-manual', '']]);
    // Kafka's GroupCoordinator.handleDeletedPartitions: a deleted topic's offsets go from every group, and a group
    // that is empty and has no offsets left is removed.
    assert.deepEqual(out.offsets_after_topic_deleted, ['ka-t1']);
    assert.deepEqual(out.groups_after_topic_deleted, ['ka-manual']);

    // The CLUSTER ACL named other than kafka-cluster is refused, as Kafka's AclApis does.
    assert.deepEqual(out.acls_created, [2, ['InvalidRequestError']]);
    assert.equal(out.acls_described, 2);
    assert.deepEqual(out.acls_matching, ['PREFIXED']);
    assert.equal(out.acls_deleted, 2);
    assert.equal(out.acls_after, 0);
  });

  it('confluent-kafka: AdminClient and Consumer offset calls answer as Kafka does', async () => {
    const out = await runScript(broker, 'confluent_admin.py', 'cq');
    assert.deepEqual(out.create, { 'cq-c1': null });
    assert.deepEqual(out.create_more, {
      'cq-c2': null,
      'cq-c1': 'TOPIC_ALREADY_EXISTS',
      'cq-c3': 'INVALID_CONFIG',
      'cq-c4': 'INVALID_CONFIG',
    });
    assert.deepEqual(out.create_validate_only, { 'cq-c5': 'INVALID_REPLICATION_FACTOR' });
    assert.deepEqual(out.partitions, { 'cq-c1': null, 'cq-c2': 'INVALID_PARTITIONS' });
    assert.deepEqual(out.configs, {
      'cq-c1': {
        'retention.ms': ['100000', TOPIC_CONFIG, false],
        'cleanup.policy': ['delete', DEFAULT_CONFIG, false],
      },
      '0': {
        'log.retention.hours': ['168', DEFAULT_CONFIG, true],
        'log.roll.hours': ['168', DEFAULT_CONFIG, true],
        'log.retention.ms': [null, DEFAULT_CONFIG, false],
        'num.io.threads': ['8', DEFAULT_CONFIG, false],
        // Kafka's keys that Brook accepts without implementing, described as Kafka 3.9 describes them.
        'sasl.kerberos.kinit.cmd': ['/usr/bin/kinit', DEFAULT_CONFIG, false],
        'socket.connection.setup.timeout.ms': ['10000', DEFAULT_CONFIG, true],
      },
    });
    assert.deepEqual(out.alter, { 'cq-c1': null, 'cq-c2': 'INVALID_CONFIG' });
    assert.deepEqual(out.alter_broker, { '0': 'INVALID_REQUEST' });
    // Kafka 3.9's ConfigHelper throws on a type it does not know, which fails the whole DescribeConfigs with the
    // error's own message; ConfigAdminManager.preprocess refuses the resource of an AlterConfigs.
    const malformed = [
      'INVALID_REQUEST',
      'This most likely occurs because of a request being malformed by the client library or the message was ' +
        'sent to an incompatible broker. See the broker logs for more details.',
    ];
    assert.deepEqual(out.describe_unknown_type, { group: malformed, topic: malformed });
    assert.deepEqual(out.alter_unknown_type, ['INVALID_REQUEST', 'Unknown resource type 3']);
    assert.deepEqual(out.listed, ['cq-c1', 'cq-c2']);
    assert.equal(out.partitions_of_c1, 5);
    assert.deepEqual(out.deleted, { 'cq-c2': null });
    assert.deepEqual(out.watermarks, [0, 5]);
    assert.deepEqual(out.by_time, [2, -1]);
    assert.equal(out.consumed, 10);
    assert.deepEqual(out.positions, [5, 5]);
    assert.deepEqual(out.committed, [2, 4]);
    assert.deepEqual(out.assigned, [0, 1, 2]);
    assert.deepEqual(out.groups, [['cq-group', 'Empty', '']]);
  });
});
