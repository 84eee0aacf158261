// The key tables themselves: defaults valid, synonyms defined, a sample checked against Kafka 3.9.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BROKER_KEYS, brokerKey } from '../../../src/broker/config/broker-keys.js';
import { staticOnly } from '../../../src/broker/config/config-layers.js';
import { ConfigType } from '../../../src/broker/config/config-types.js';
import { parseKey } from '../../../src/broker/config/parsed-config.js';
import { resolveTopicConfig } from '../../../src/broker/config/topic-config.js';
import { TOPIC_KEYS } from '../../../src/broker/config/topic-keys.js';

describe('config key definitions', () => {
  test('every default parses and passes its own validator', () => {
    for (const def of [...BROKER_KEYS.values(), ...TOPIC_KEYS.values()]) {
      assert.doesNotThrow(() => parseKey(def, undefined), `default of ${def.name}`);
    }
  });

  test("each topic key's own default equals what its broker synonyms give by default", () => {
    const effective = resolveTopicConfig(new Map(), staticOnly(new Map()));
    for (const def of TOPIC_KEYS.values()) {
      assert.deepEqual(effective.get(def.name)?.value, parseKey(def, undefined), def.name);
    }
  });

  test('every broker synonym of a topic key is a defined broker key', () => {
    for (const def of TOPIC_KEYS.values()) {
      for (const s of def.synonyms) assert.ok(brokerKey(s.name), `${def.name} -> ${s.name}`);
    }
  });

  test('Brook extras all use the brook. prefix and are few', () => {
    // Encryption at rest is a feature Kafka leaves to the disk, self-healing one it leaves to Cruise Control,
    // fast failure detection one it leaves to the ZooKeeper session: their keys form their own families.
    const extras = [...BROKER_KEYS.keys()].filter(
      (k) =>
        k.startsWith('brook.') &&
        !k.startsWith('brook.encryption.') &&
        !k.startsWith('brook.self.healing.') &&
        !k.startsWith('brook.controller.liveness.'),
    );
    // Six for storage and network behaviour, one for the metrics endpoint (Kafka has JMX instead), one for the
    // web console served by the broker (Kafka has none), one for the authorization log's level (Kafka sets it in
    // log4j).
    assert.ok(extras.length > 0 && extras.length <= 9, extras.join(', '));
    assert.ok(extras.includes('brook.log.flush.group.commit.enable'));
  });

  test('defaults, types and update modes match Kafka 3.9 for a sample of keys', () => {
    const expected: [string, string | null, number, string][] = [
      ['broker.id', '-1', ConfigType.INT, 'read-only'],
      ['listeners', 'PLAINTEXT://:9092', ConfigType.STRING, 'per-broker'],
      ['advertised.listeners', null, ConfigType.STRING, 'per-broker'],
      ['log.dirs', null, ConfigType.STRING, 'read-only'],
      ['log.dir', '/tmp/kafka-logs', ConfigType.STRING, 'read-only'],
      ['num.partitions', '1', ConfigType.INT, 'read-only'],
      ['default.replication.factor', '1', ConfigType.INT, 'read-only'],
      ['log.segment.bytes', '1073741824', ConfigType.INT, 'cluster-wide'],
      ['log.retention.hours', '168', ConfigType.INT, 'read-only'],
      ['log.retention.ms', null, ConfigType.LONG, 'cluster-wide'],
      ['log.retention.check.interval.ms', '300000', ConfigType.LONG, 'read-only'],
      ['log.cleanup.policy', 'delete', ConfigType.LIST, 'cluster-wide'],
      ['log.cleaner.io.max.bytes.per.second', '1.7976931348623157E308', ConfigType.DOUBLE, 'cluster-wide'],
      ['offsets.topic.num.partitions', '50', ConfigType.INT, 'read-only'],
      ['offsets.topic.replication.factor', '3', ConfigType.SHORT, 'read-only'],
      ['transaction.state.log.replication.factor', '3', ConfigType.SHORT, 'read-only'],
      ['auto.create.topics.enable', 'true', ConfigType.BOOLEAN, 'read-only'],
      ['message.max.bytes', '1048588', ConfigType.INT, 'cluster-wide'],
      ['socket.request.max.bytes', '104857600', ConfigType.INT, 'read-only'],
      ['queued.max.requests', '500', ConfigType.INT, 'read-only'],
      ['connections.max.idle.ms', '600000', ConfigType.LONG, 'read-only'],
      ['max.connections', '2147483647', ConfigType.INT, 'cluster-wide'],
      ['group.initial.rebalance.delay.ms', '3000', ConfigType.INT, 'read-only'],
      ['min.insync.replicas', '1', ConfigType.INT, 'cluster-wide'],
      ['unclean.leader.election.enable', 'false', ConfigType.BOOLEAN, 'cluster-wide'],
      ['replica.lag.time.max.ms', '30000', ConfigType.LONG, 'read-only'],
      ['num.io.threads', '8', ConfigType.INT, 'cluster-wide'],
      ['num.network.threads', '3', ConfigType.INT, 'cluster-wide'],
      ['zookeeper.session.timeout.ms', '18000', ConfigType.INT, 'read-only'],
      ['ssl.keystore.password', null, ConfigType.PASSWORD, 'per-broker'],
      ['log.flush.interval.messages', '9223372036854775807', ConfigType.LONG, 'cluster-wide'],
    ];
    for (const [name, defaultValue, type, updateMode] of expected) {
      const def = brokerKey(name);
      assert.ok(def, name);
      assert.deepEqual([def.defaultValue, def.type, def.updateMode], [defaultValue, type, updateMode], name);
    }
  });

  test('topic keys name their broker default the way Kafka documents it', () => {
    const expected: Record<string, string[]> = {
      'retention.ms': ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
      'segment.ms': ['log.roll.ms', 'log.roll.hours'],
      'segment.bytes': ['log.segment.bytes'],
      'cleanup.policy': ['log.cleanup.policy'],
      'max.message.bytes': ['message.max.bytes'],
      'min.cleanable.dirty.ratio': ['log.cleaner.min.cleanable.ratio'],
      'file.delete.delay.ms': ['log.segment.delete.delay.ms'],
      'segment.index.bytes': ['log.index.size.max.bytes'],
      'flush.ms': ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'],
      'min.insync.replicas': ['min.insync.replicas'],
    };
    for (const [name, synonyms] of Object.entries(expected)) {
      assert.deepEqual(
        TOPIC_KEYS.get(name)?.synonyms.map((s) => s.name),
        synonyms,
        name,
      );
    }
  });
});
