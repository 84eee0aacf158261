// The dynamic update modes of Kafka 3.9's broker keys that Brook does not define, through the wire. Kafka refuses
// to change dynamically every key its KafkaConfig defines outside DynamicBrokerConfig.AllDynamicConfigs (internal
// ones too), and refuses at the cluster default every per-broker key: DynamicListenerConfig's SASL and TLS keys,
// and any listener-prefixed key but max.connections, max.connection.creation.rate and num.network.threads
// (DynamicBrokerConfig.validateConfigs). Keys neither defines are custom configs, which Kafka stores.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { BROKER_RESOURCE, CLUSTER_DEFAULT, incrementalAlter } from '../../helpers/dynamic-configs.js';

/** Kafka 3.9 keys Brook does not define, with a valid value, that Kafka cannot change dynamically. */
const KAFKA_READ_ONLY: Record<string, string> = {
  'remote.log.reader.threads': '10',
  'remote.log.manager.copier.thread.pool.size': '10',
  'remote.log.manager.expiration.thread.pool.size': '10',
  'alter.log.dirs.replication.quota.window.num': '11',
  'alter.log.dirs.replication.quota.window.size.seconds': '1',
  'eligible.leader.replicas.enable': 'false',
  'group.coordinator.new.enable': 'false',
  'group.coordinator.threads': '1',
  'group.coordinator.append.linger.ms': '10',
  'group.consumer.assignors': 'uniform',
  'group.consumer.migration.policy': 'disabled',
  'group.share.enable': 'false',
  'group.share.max.groups': '10',
  'group.share.record.lock.duration.ms': '30000',
  'initial.broker.registration.timeout.ms': '60000',
  'max.request.partition.size.limit': '2000',
  'metadata.log.segment.bytes': '1073741824',
  'metadata.max.retention.ms': '604800000',
  'metadata.max.idle.interval.ms': '500',
  'server.max.startup.time.ms': '1000',
  'unclean.leader.election.interval.ms': '300000',
  'zookeeper.metadata.migration.min.batch.size': '200',
};

/** Keys Kafka 3.9 changes only per broker, which Brook does not define. */
const KAFKA_PER_BROKER: Record<string, string> = {
  'sasl.kerberos.service.name': 'kafka',
  'sasl.kerberos.ticket.renew.window.factor': '0.8',
  'sasl.login.refresh.buffer.seconds': '300',
  'ssl.engine.factory.class': 'com.example.Factory',
  'listener.name.plaintext.sasl.kerberos.service.name': 'kafka',
  'listener.name.plaintext.custom.setting': 'x',
};

describe("Kafka 3.9's broker keys that Brook does not define keep Kafka's update modes", () => {
  const suite = useBrokerWithClient();
  const incremental = (resourceName: string, configs: Record<string, string | null>) =>
    incrementalAlter(suite.client, BROKER_RESOURCE, resourceName, configs);

  test('a key Kafka cannot change dynamically is refused, per broker and at the cluster default', async () => {
    for (const [name, value] of Object.entries(KAFKA_READ_ONLY)) {
      const refused = [ErrorCode.INVALID_REQUEST, `Cannot update these configs dynamically: Set(${name})`];
      assert.deepEqual(await incremental('0', { [name]: value }), refused, name);
      assert.deepEqual(await incremental(CLUSTER_DEFAULT, { [name]: value }), refused, name);
    }
  });

  test('a per-broker key is refused at the cluster default and stored for the broker', async () => {
    for (const [name, value] of Object.entries(KAFKA_PER_BROKER)) {
      assert.deepEqual(
        await incremental(CLUSTER_DEFAULT, { [name]: value }),
        [
          ErrorCode.INVALID_REQUEST,
          `Cannot update these configs at default cluster level, broker id must be specified: Set(${name})`,
        ],
        name,
      );
      assert.deepEqual(await incremental('0', { [name]: value }), [ErrorCode.NONE, null], name);
      assert.deepEqual(await incremental('0', { [name]: null }), [ErrorCode.NONE, null], name);
    }
  });

  test('a listener-prefixed key is stored per broker whatever its base, as Kafka checks only plain names', async () => {
    const listenerKeys = {
      'listener.name.plaintext.connections.max.reauth.ms': '60000',
      'listener.name.plaintext.sasl.server.max.receive.size': '524288',
      'listener.name.plaintext.ssl.principal.mapping.rules': 'DEFAULT',
    };
    for (const [name, value] of Object.entries(listenerKeys)) {
      assert.deepEqual(await incremental('0', { [name]: value }), [ErrorCode.NONE, null], name);
      assert.deepEqual(await incremental('0', { [name]: null }), [ErrorCode.NONE, null], name);
      assert.deepEqual(
        await incremental(CLUSTER_DEFAULT, { [name]: value }),
        [
          ErrorCode.INVALID_REQUEST,
          `Cannot update these configs at default cluster level, broker id must be specified: Set(${name})`,
        ],
        name,
      );
    }
  });

  test("a dynamic Kafka key's value is checked against Kafka's type and bounds", async () => {
    const invalid = (value: string, name: string, rule: string) => [
      ErrorCode.INVALID_REQUEST,
      `Invalid value ${value} for configuration ${name}: ${rule}`,
    ];
    const window = 'sasl.kerberos.ticket.renew.window.factor';
    assert.deepEqual(
      await incremental('0', { [window]: 'abc' }),
      invalid('abc', window, 'Not a number of type DOUBLE'),
    );
    // A listener's value is checked as its base key, which Kafka's message names.
    const buffer = 'sasl.login.refresh.buffer.seconds';
    assert.deepEqual(
      await incremental('0', { [`listener.name.plaintext.${buffer}`]: '40000' }),
      invalid('40000', buffer, 'Not a number of type SHORT'),
    );
    const copy = 'remote.log.manager.copy.max.bytes.per.second';
    assert.deepEqual(
      await incremental(CLUSTER_DEFAULT, { [copy]: '0' }),
      invalid('0', copy, 'Value must be at least 1'),
    );
    const localMs = 'log.local.retention.ms';
    assert.deepEqual(
      await incremental(CLUSTER_DEFAULT, { [localMs]: '-3' }),
      invalid('-3', localMs, 'Value must be at least -2'),
    );
    // DynamicLogConfig: the local retention may not be unbounded (-1) or longer than log.retention.ms (7 days).
    assert.deepEqual(
      await incremental(CLUSTER_DEFAULT, { [localMs]: '-1' }),
      invalid('-1', localMs, 'Value must not be -1 as log.retention.ms value is set as 604800000.'),
    );
    assert.deepEqual(
      await incremental(CLUSTER_DEFAULT, { [localMs]: '604800001' }),
      invalid('604800001', localMs, 'Value must not be more than log.retention.ms property value: 604800000'),
    );
    // log.retention.bytes is unbounded (-1), so any local bound is taken.
    assert.deepEqual(await incremental(CLUSTER_DEFAULT, { 'log.local.retention.bytes': '-1' }), [
      ErrorCode.NONE,
      null,
    ]);
    assert.deepEqual(await incremental(CLUSTER_DEFAULT, { 'log.local.retention.bytes': null }), [
      ErrorCode.NONE,
      null,
    ]);
  });

  test("Brook's own keys keep Brook's modes: group commit cluster-wide, the others read-only", async () => {
    const groupCommit = { 'brook.log.flush.group.commit.max.delay.ms': '5' };
    assert.deepEqual(await incremental(CLUSTER_DEFAULT, groupCommit), [ErrorCode.NONE, null]);
    assert.deepEqual(
      await incremental(CLUSTER_DEFAULT, { 'brook.log.flush.group.commit.max.delay.ms': null }),
      [ErrorCode.NONE, null],
    );
    for (const name of ['brook.log.tail.cache.bytes', 'brook.authorizer.log.level']) {
      const value = name === 'brook.authorizer.log.level' ? 'DEBUG' : '0';
      assert.deepEqual(
        await incremental('0', { [name]: value }),
        [ErrorCode.INVALID_REQUEST, `Cannot update these configs dynamically: Set(${name})`],
        name,
      );
    }
  });

  test('cluster-level listener keys and dynamic tiered storage bounds are accepted at the default', async () => {
    const accepted = {
      'listener.name.plaintext.num.network.threads': '3',
      'remote.log.manager.copy.max.bytes.per.second': '1000000',
      'remote.fetch.max.wait.ms': '500',
      'log.local.retention.ms': '-2',
    };
    for (const [name, value] of Object.entries(accepted)) {
      assert.deepEqual(await incremental(CLUSTER_DEFAULT, { [name]: value }), [ErrorCode.NONE, null], name);
      assert.deepEqual(await incremental(CLUSTER_DEFAULT, { [name]: null }), [ErrorCode.NONE, null], name);
    }
  });
});
