// BrokerConfig resolution: Kafka defaults, precedence rules, listeners, bad values and per-listener overrides.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { listenerValue, resolveBrokerConfig } from '../../../src/broker/config/broker-config.js';
import { ConfigError } from '../../../src/broker/config/config-error.js';
import { LONG_AS_NUMBER_MAX } from '../../../src/broker/config/parsed-config.js';

function resolve(entries: Record<string, string> = {}) {
  return resolveBrokerConfig(new Map(Object.entries(entries)));
}

function failsOn(key: string, entries: Record<string, string>, fragment = '') {
  assert.throws(
    () => resolve(entries),
    (e: unknown) => e instanceof ConfigError && e.key === key && e.message.includes(fragment),
    `expected a ConfigError for ${key}`,
  );
}

describe('broker config defaults', () => {
  test("an empty file gives Kafka's documented defaults", () => {
    const c = resolve();
    assert.equal(c.brokerId, -1);
    assert.deepEqual(c.logDirs, ['/tmp/kafka-logs']);
    assert.equal(c.numPartitions, 1);
    assert.equal(c.defaultReplicationFactor, 1);
    assert.equal(c.autoCreateTopicsEnable, true);
    assert.equal(c.deleteTopicEnable, true);
    assert.equal(c.messageMaxBytes, 1048588);
    assert.equal(c.socketRequestMaxBytes, 104857600);
    assert.equal(c.queuedMaxRequests, 500);
    assert.equal(c.connectionsMaxIdleMs, 600000);
    assert.equal(c.maxConnections, 2147483647);
    assert.equal(c.offsetsTopicNumPartitions, 50);
    assert.equal(c.offsetsTopicReplicationFactor, 3);
    assert.equal(c.transactionStateLogMinIsr, 2);
    assert.equal(c.groupInitialRebalanceDelayMs, 3000);
    assert.equal(c.groupMinSessionTimeoutMs, 6000);
    assert.equal(c.groupMaxSessionTimeoutMs, 1800000);
    assert.equal(c.replicaLagTimeMaxMs, 30000);
    assert.equal(c.logRetentionCheckIntervalMs, 300000);
    assert.equal(c.zookeeperConnect, null);
    assert.equal(c.zookeeperSessionTimeoutMs, 18000);
    assert.equal(c.brookLogFlushGroupCommitEnable, false);
  });

  test("topic defaults come from the broker's log keys", () => {
    const d = resolve().logDefaults;
    assert.equal(d.segmentBytes, 1073741824);
    assert.equal(d.segmentMs, 168 * 3600000);
    assert.equal(d.retentionMs, 604800000);
    assert.equal(d.retentionBytes, -1);
    assert.deepEqual(d.cleanupPolicy, ['delete']);
    assert.equal(d.flushMessages, LONG_AS_NUMBER_MAX);
    assert.equal(d.flushMs, LONG_AS_NUMBER_MAX);
    assert.equal(d.maxMessageBytes, 1048588);
    assert.equal(d.messageTimestampType, 'CreateTime');
    assert.equal(d.compressionType, 'producer');
    assert.equal(d.minInsyncReplicas, 1);
    assert.equal(d.uncleanLeaderElectionEnable, false);
    assert.equal(d.segmentIndexBytes, 10485760);
    assert.equal(d.indexIntervalBytes, 4096);
    assert.equal(d.deleteRetentionMs, 86400000);
    assert.equal(d.fileDeleteDelayMs, 60000);
    assert.equal(d.minCleanableDirtyRatio, 0.5);
  });

  test('the default listener is PLAINTEXT on every interface, port 9092, also advertised', () => {
    const c = resolve();
    assert.deepEqual(c.listeners, [
      { name: 'PLAINTEXT', host: '', port: 9092, securityProtocol: 'PLAINTEXT' },
    ]);
    assert.deepEqual(c.advertisedListeners, c.listeners);
    assert.equal(c.interBrokerListenerName, 'PLAINTEXT');
  });
});

describe('broker config precedence', () => {
  test('log.retention.ms wins over .minutes, which wins over .hours', () => {
    assert.equal(resolve({ 'log.retention.hours': '1' }).logDefaults.retentionMs, 3600000);
    assert.equal(
      resolve({ 'log.retention.hours': '1', 'log.retention.minutes': '2' }).logDefaults.retentionMs,
      120000,
    );
    assert.equal(
      resolve({ 'log.retention.hours': '1', 'log.retention.minutes': '2', 'log.retention.ms': '5' })
        .logDefaults.retentionMs,
      5,
    );
  });

  test('a negative retention in any unit means keep forever (-1)', () => {
    assert.equal(resolve({ 'log.retention.hours': '-1' }).logDefaults.retentionMs, -1);
    assert.equal(resolve({ 'log.retention.ms': '-5' }).logDefaults.retentionMs, -1);
  });

  test('log.roll.ms wins over log.roll.hours, and jitter likewise', () => {
    assert.equal(resolve({ 'log.roll.hours': '2' }).logDefaults.segmentMs, 7200000);
    assert.equal(resolve({ 'log.roll.hours': '2', 'log.roll.ms': '1000' }).logDefaults.segmentMs, 1000);
    assert.equal(resolve({ 'log.roll.jitter.hours': '1' }).logDefaults.segmentJitterMs, 3600000);
    assert.equal(
      resolve({ 'log.roll.jitter.hours': '1', 'log.roll.jitter.ms': '7' }).logDefaults.segmentJitterMs,
      7,
    );
  });

  test('log.flush.interval.ms falls back to log.flush.scheduler.interval.ms', () => {
    assert.equal(resolve({ 'log.flush.scheduler.interval.ms': '3000' }).logDefaults.flushMs, 3000);
    assert.equal(
      resolve({ 'log.flush.scheduler.interval.ms': '3000', 'log.flush.interval.ms': '10' }).logDefaults
        .flushMs,
      10,
    );
  });

  test('log.dirs wins over log.dir, and is split on commas', () => {
    assert.deepEqual(resolve({ 'log.dir': '/a' }).logDirs, ['/a']);
    assert.deepEqual(resolve({ 'log.dir': '/a', 'log.dirs': '/b, /c' }).logDirs, ['/b', '/c']);
    failsOn('log.dirs', { 'log.dirs': '/b,/b' }, 'distinct');
  });

  test('node.id and broker.id name the same id', () => {
    assert.equal(resolve({ 'broker.id': '3' }).brokerId, 3);
    assert.equal(resolve({ 'node.id': '4' }).brokerId, 4);
    assert.equal(resolve({ 'broker.id': '5', 'node.id': '5' }).brokerId, 5);
    failsOn('node.id', { 'broker.id': '5', 'node.id': '6' });
    failsOn('broker.id', { 'broker.id': '1001' }, 'reserved.broker.max.id');
    assert.equal(resolve({ 'broker.id': '5000', 'broker.id.generation.enable': 'false' }).brokerId, 5000);
    failsOn('broker.id', { 'broker.id.generation.enable': 'false' }, 'greater than or equal to 0');
  });

  test('advertised.listeners defaults to listeners, and may differ in host and port', () => {
    const own = resolve({ listeners: 'PLAINTEXT://127.0.0.1:9092' });
    assert.deepEqual(own.advertisedListeners, own.listeners);
    const nat = resolve({
      listeners: 'PLAINTEXT://0.0.0.0:9092',
      'advertised.listeners': 'PLAINTEXT://broker.example:19092',
    });
    assert.equal(nat.listeners[0]?.host, '0.0.0.0');
    assert.deepEqual(nat.advertisedListeners, [
      { name: 'PLAINTEXT', host: 'broker.example', port: 19092, securityProtocol: 'PLAINTEXT' },
    ]);
  });

  test('zookeeper.connection.timeout.ms defaults to the session timeout', () => {
    assert.equal(resolve({ 'zookeeper.session.timeout.ms': '9000' }).zookeeperConnectionTimeoutMs, 9000);
    assert.equal(
      resolve({ 'zookeeper.session.timeout.ms': '9000', 'zookeeper.connection.timeout.ms': '100' })
        .zookeeperConnectionTimeoutMs,
      100,
    );
  });

  test('the deprecated timestamp difference applies when before/after are left unbounded', () => {
    const d = resolve({ 'log.message.timestamp.difference.max.ms': '1000' }).logDefaults;
    assert.equal(d.messageTimestampBeforeMaxMs, 1000);
    assert.equal(d.messageTimestampAfterMaxMs, 1000);
    const e = resolve({
      'log.message.timestamp.difference.max.ms': '1000',
      'log.message.timestamp.after.max.ms': '50',
    }).logDefaults;
    assert.equal(e.messageTimestampAfterMaxMs, 50);
    assert.equal(e.messageTimestampBeforeMaxMs, 1000);
  });
});

describe('listeners', () => {
  test('named listeners map to protocols through listener.security.protocol.map', () => {
    const c = resolve({
      listeners: 'internal://:9093,EXTERNAL://[::1]:9094',
      'listener.security.protocol.map': 'INTERNAL:PLAINTEXT,EXTERNAL:SSL',
      'inter.broker.listener.name': 'INTERNAL',
    });
    assert.deepEqual(c.listeners, [
      { name: 'INTERNAL', host: '', port: 9093, securityProtocol: 'PLAINTEXT' },
      { name: 'EXTERNAL', host: '::1', port: 9094, securityProtocol: 'SSL' },
    ]);
    assert.equal(c.interBrokerListenerName, 'INTERNAL');
    assert.equal(c.interBrokerSecurityProtocol, 'PLAINTEXT');
  });

  test('an unbracketed IPv6 address parses with the port after the last colon', () => {
    assert.deepEqual(resolve({ listeners: 'PLAINTEXT://::1:9092' }).listeners[0], {
      name: 'PLAINTEXT',
      host: '::1',
      port: 9092,
      securityProtocol: 'PLAINTEXT',
    });
  });

  test('bad listener settings name the key', () => {
    failsOn('listeners', { listeners: 'PLAINTEXT//localhost:9092' }, 'NAME://host:port');
    failsOn('listeners', { listeners: 'PLAINTEXT://localhost:70000' }, '65535');
    failsOn('listeners', { listeners: 'FOO://localhost:1' }, 'No security protocol defined for listener FOO');
    failsOn('listeners', { listeners: 'PLAINTEXT://:1,SSL://:1' }, 'different port');
    failsOn('listeners', { listeners: 'PLAINTEXT://:1,plaintext://:2' }, 'different name');
    failsOn('listeners', { listeners: '' }, 'At least one');
    failsOn('advertised.listeners', { 'advertised.listeners': 'PLAINTEXT://0.0.0.0:9092' }, '0.0.0.0');
    failsOn(
      'advertised.listeners',
      { 'advertised.listeners': 'SSL://host:9093' },
      'not defined in listeners',
    );
    failsOn(
      'listener.security.protocol.map',
      { 'listener.security.protocol.map': 'A:NOPE' },
      'Unknown security protocol',
    );
    failsOn('inter.broker.listener.name', { 'inter.broker.listener.name': 'OTHER' }, 'advertised.listeners');
    failsOn('inter.broker.listener.name', {
      'inter.broker.listener.name': 'PLAINTEXT',
      'security.inter.broker.protocol': 'PLAINTEXT',
    });
  });
});

describe('bad broker values', () => {
  test("a value that does not parse names the key, in Kafka's wording", () => {
    assert.throws(() => resolve({ 'num.partitions': 'ten' }), {
      message: 'Invalid value ten for configuration num.partitions: Not a number of type INT',
    });
    failsOn('auto.create.topics.enable', { 'auto.create.topics.enable': 'maybe' }, 'true or false');
  });

  test('a value outside its range names the key and the bound', () => {
    assert.throws(() => resolve({ 'num.partitions': '0' }), {
      message: 'Invalid value 0 for configuration num.partitions: Value must be at least 1',
    });
    failsOn(
      'log.cleaner.min.cleanable.ratio',
      { 'log.cleaner.min.cleanable.ratio': '1.5' },
      'no more than 1',
    );
    failsOn('log.cleanup.policy', { 'log.cleanup.policy': 'delete,shred' }, 'compact, delete');
    failsOn('compression.type', { 'compression.type': 'brotli' }, 'String must be one of');
    failsOn('compression.gzip.level', { 'compression.gzip.level': '0' }, 'or -1');
  });

  test('rules between keys are checked', () => {
    failsOn('replica.fetch.wait.max.ms', {
      'replica.fetch.wait.max.ms': '40000',
      'replica.socket.timeout.ms': '50000',
    });
    failsOn('replica.socket.timeout.ms', {
      'replica.fetch.wait.max.ms': '1000',
      'replica.socket.timeout.ms': '500',
    });
    failsOn('max.connections.per.ip.overrides', { 'max.connections.per.ip': '0' });
    failsOn('offsets.commit.required.acks', {
      'offsets.commit.required.acks': '2',
      'offsets.topic.replication.factor': '1',
    });
    assert.equal(
      resolve({ 'offsets.commit.required.acks': '1', 'offsets.topic.replication.factor': '1' }).brokerId,
      -1,
    );
    failsOn(
      'create.topic.policy.class.name',
      { 'create.topic.policy.class.name': 'com.example.Policy' },
      'plug-ins',
    );
  });

  test('broker log values must also be valid topic values, and the error names the broker key', () => {
    failsOn('log.roll.ms', { 'log.roll.ms': '0' }, 'at least 1');
    failsOn('log.roll.jitter.ms', { 'log.roll.jitter.ms': '-1' }, 'at least 0');
    failsOn('log.flush.interval.ms', { 'log.flush.interval.ms': '-5' }, 'at least 0');
    assert.equal(resolve({ 'log.retention.ms': '-7' }).logDefaults.retentionMs, -1);
  });

  test('the cleaner dedupe buffer needs 1 MB per thread', () => {
    failsOn('log.cleaner.dedupe.buffer.size', {
      'log.cleaner.dedupe.buffer.size': '4194304',
      'log.cleaner.threads': '4',
    });
    assert.equal(
      resolve({ 'log.cleaner.dedupe.buffer.size': '4194304', 'log.cleaner.threads': '2' }).logCleanerThreads,
      2,
    );
  });

  test('max.connections.per.ip.overrides parses host:count pairs', () => {
    const c = resolve({ 'max.connections.per.ip.overrides': '127.0.0.1:5, host.example:7' });
    assert.deepEqual(
      [...c.maxConnectionsPerIpOverrides],
      [
        ['127.0.0.1', 5],
        ['host.example', 7],
      ],
    );
    failsOn(
      'max.connections.per.ip.overrides',
      { 'max.connections.per.ip.overrides': 'nohost' },
      'host:count',
    );
  });

  test('unknown keys are kept and listed, not rejected', () => {
    const c = resolve({ 'some.plugin.setting': 'x', 'another.one': 'y' });
    assert.deepEqual(c.unknownKeys, ['another.one', 'some.plugin.setting']);
    assert.equal(c.values.originals.get('some.plugin.setting'), 'x');
  });

  test("the keys of Kafka 3.x's stock server.properties are all known", () => {
    const stock = resolve({
      'broker.id': '0',
      'num.network.threads': '3',
      'num.io.threads': '8',
      'socket.send.buffer.bytes': '102400',
      'socket.receive.buffer.bytes': '102400',
      'socket.request.max.bytes': '104857600',
      'log.dirs': '/tmp/kafka-logs',
      'num.partitions': '1',
      'num.recovery.threads.per.data.dir': '1',
      'offsets.topic.replication.factor': '1',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'log.retention.hours': '168',
      'log.retention.check.interval.ms': '300000',
      'zookeeper.connect': 'localhost:2181',
      'zookeeper.connection.timeout.ms': '18000',
      'group.initial.rebalance.delay.ms': '0',
    });
    assert.deepEqual(stock.unknownKeys, []);
    assert.equal(stock.zookeeperConnect, 'localhost:2181');
  });

  test('no-op thread keys are accepted and still validated', () => {
    assert.equal(resolve({ 'num.io.threads': '16' }).values.int('num.io.threads'), 16);
    failsOn('num.network.threads', { 'num.network.threads': '0' }, 'at least 1');
  });
});

describe('listener overrides', () => {
  test("listener.name.<listener>.<key> is parsed with its base key's type and validation", () => {
    const c = resolve({
      listeners: 'PLAINTEXT://:9092,SASL_SSL://:9093',
      'ssl.client.auth': 'none',
      'listener.name.sasl_ssl.ssl.client.auth': 'required',
      'listener.name.sasl_ssl.max.connections': '10',
    });
    assert.deepEqual(c.unknownKeys, []);
    assert.equal(listenerValue(c, 'SASL_SSL', 'ssl.client.auth'), 'required');
    assert.equal(listenerValue(c, 'PLAINTEXT', 'ssl.client.auth'), 'none');
    assert.equal(listenerValue(c, 'SASL_SSL', 'max.connections'), 10);
    failsOn(
      'listener.name.sasl_ssl.ssl.client.auth',
      { 'listener.name.sasl_ssl.ssl.client.auth': 'always' },
      'one of',
    );
  });

  test('SASL keys may be scoped to a mechanism, and fall back to the listener then the broker', () => {
    const c = resolve({
      'sasl.jaas.config': 'base',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'plain-only',
    });
    assert.equal(String(listenerValue(c, 'SASL_PLAINTEXT', 'sasl.jaas.config', 'PLAIN')), '[hidden]');
    const plain = listenerValue(c, 'SASL_PLAINTEXT', 'sasl.jaas.config', 'PLAIN');
    const scram = listenerValue(c, 'SASL_PLAINTEXT', 'sasl.jaas.config', 'SCRAM-SHA-256');
    assert.deepEqual(
      [(plain as { value: string }).value, (scram as { value: string }).value],
      ['plain-only', 'base'],
    );
  });

  test('connections.max.reauth.ms may be scoped to a mechanism, as Kafka documents it', () => {
    const c = resolve({
      'connections.max.reauth.ms': '5000',
      'listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms': '1200',
    });
    assert.deepEqual(c.unknownKeys, []);
    assert.equal(listenerValue(c, 'SASL_PLAINTEXT', 'connections.max.reauth.ms', 'OAUTHBEARER'), 1200n);
    assert.equal(listenerValue(c, 'SASL_PLAINTEXT', 'connections.max.reauth.ms', 'PLAIN'), 5000n);
  });

  test('keys that cannot be overridden per listener stay unknown', () => {
    assert.deepEqual(resolve({ 'listener.name.plaintext.num.partitions': '3' }).unknownKeys, [
      'listener.name.plaintext.num.partitions',
    ]);
  });
});

describe('replica.selector.class (KIP-392)', () => {
  test("unset means the leader serves consumers; Kafka's rack-aware selector is built in", () => {
    assert.equal(resolve().replicaSelector, 'leader');
    const rackAware = 'org.apache.kafka.common.replica.RackAwareReplicaSelector';
    assert.equal(resolve({ 'replica.selector.class': rackAware }).replicaSelector, 'rack-aware');
  });

  test('any other class is refused at startup, as a plug-in Brook cannot load', () => {
    failsOn('replica.selector.class', { 'replica.selector.class': 'com.example.MySelector' }, 'plug-ins');
  });
});
