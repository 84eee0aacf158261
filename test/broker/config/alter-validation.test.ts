// CreateTopics, AlterConfigs and IncrementalAlterConfigs validation: resulting configs and Kafka error codes.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  malformedEntries,
  validateAlterBrokerConfigs,
  validateAlterTopicConfigs,
  validateCreateTopicConfigs,
  validateIncrementalBrokerConfigs,
  validateIncrementalTopicConfigs,
} from '../../../src/broker/config/alter-validation.js';
import { brokerResource } from '../../../src/broker/config/broker-resource.js';
import {
  AlterConfigOp,
  type ConfigChangeResult,
  ConfigErrorCode,
} from '../../../src/broker/config/config-error-codes.js';
import { type BrokerConfigLayers, staticOnly } from '../../../src/broker/config/config-layers.js';

const L: BrokerConfigLayers = staticOnly(new Map([['listeners', 'PLAINTEXT://127.0.0.1:9092']]));

function configs(result: ConfigChangeResult): Record<string, string> {
  assert.ok(result.ok, result.ok ? '' : result.errorMessage);
  return Object.fromEntries(result.configs);
}

function failure(result: ConfigChangeResult, code: number, fragment: string): void {
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.equal(result.errorCode, code);
  assert.ok(result.errorMessage.includes(fragment), result.errorMessage);
}

describe('wire values', () => {
  test("error codes and incremental operations have Kafka's numbers", () => {
    assert.deepEqual(
      [
        ConfigErrorCode.INVALID_CONFIG,
        ConfigErrorCode.INVALID_REQUEST,
        ConfigErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ],
      [40, 42, 3],
    );
    assert.deepEqual(
      [AlterConfigOp.SET, AlterConfigOp.DELETE, AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT],
      [0, 1, 2, 3],
    );
  });
});

describe('CreateTopics config validation', () => {
  test('accepts valid topic configs', () => {
    assert.deepEqual(
      configs(
        validateCreateTopicConfigs(
          [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'retention.ms', value: '-1' },
          ],
          L,
        ),
      ),
      { 'cleanup.policy': 'compact', 'retention.ms': '-1' },
    );
  });

  test('refuses unknown keys and bad values with INVALID_CONFIG naming the key', () => {
    failure(
      validateCreateTopicConfigs([{ name: 'retention.hours', value: '1' }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'retention.hours',
    );
    failure(
      validateCreateTopicConfigs([{ name: 'retention.ms', value: '-2' }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'retention.ms',
    );
    failure(
      validateCreateTopicConfigs([{ name: 'segment.bytes', value: 'big' }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'segment.bytes',
    );
    failure(
      validateCreateTopicConfigs([{ name: 'message.timestamp.type', value: 'Whenever' }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'CreateTime, LogAppendTime',
    );
  });

  test("a null value is INVALID_CONFIG, as Kafka's ZkAdminManager answers it", () => {
    failure(
      validateCreateTopicConfigs([{ name: 'retention.ms', value: null }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'retention.ms',
    );
  });

  test('min.compaction.lag.ms may not exceed max.compaction.lag.ms', () => {
    failure(
      validateCreateTopicConfigs(
        [
          { name: 'min.compaction.lag.ms', value: '10' },
          { name: 'max.compaction.lag.ms', value: '5' },
        ],
        L,
      ),
      ConfigErrorCode.INVALID_CONFIG,
      'max.compaction.lag.ms',
    );
  });

  test('remote storage cannot be turned on, nor the KIP-950 switches, as in Kafka 3.9 in ZooKeeper mode', () => {
    failure(
      validateCreateTopicConfigs([{ name: 'remote.storage.enable', value: 'true' }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'Tiered Storage functionality is disabled in the broker.',
    );
    for (const name of ['remote.log.copy.disable', 'remote.log.delete.on.disable']) {
      failure(
        validateCreateTopicConfigs(
          [
            { name: 'remote.storage.enable', value: 'true' },
            { name, value: 'true' },
          ],
          L,
        ),
        ConfigErrorCode.INVALID_CONFIG,
        "under Zookeeper's mode",
      );
    }
    // What a Kafka 3.9 broker without tiered storage accepts, a topic copied from one may carry.
    const copied = validateCreateTopicConfigs(
      [
        { name: 'remote.storage.enable', value: 'false' },
        { name: 'remote.log.copy.disable', value: 'false' },
        { name: 'remote.log.delete.on.disable', value: 'false' },
        { name: 'local.retention.ms', value: '-2' },
        { name: 'local.retention.bytes', value: '1048576' },
      ],
      L,
    );
    assert.equal(copied.ok, true);
    failure(
      validateCreateTopicConfigs([{ name: 'local.retention.ms', value: '-3' }], L),
      ConfigErrorCode.INVALID_CONFIG,
      'local.retention.ms',
    );
  });
});

describe('AlterConfigs (legacy) validation', () => {
  test('replaces the whole set; a null value is INVALID_REQUEST, as in Kafka 3.9', () => {
    assert.deepEqual(configs(validateAlterTopicConfigs([{ name: 'segment.ms', value: '1000' }], L)), {
      'segment.ms': '1000',
    });
    failure(
      malformedEntries([
        { name: 'segment.ms', value: '1000' },
        { name: 'retention.ms', value: null },
      ])!,
      ConfigErrorCode.INVALID_REQUEST,
      'Null value not supported for : retention.ms',
    );
  });
});

describe('IncrementalAlterConfigs validation for topics', () => {
  const current = new Map([
    ['retention.ms', '1000'],
    ['cleanup.policy', 'delete'],
  ]);

  test('SET and DELETE change only the named keys', () => {
    assert.deepEqual(
      configs(
        validateIncrementalTopicConfigs(
          current,
          [
            { name: 'segment.bytes', value: '1048576', configOperation: AlterConfigOp.SET },
            { name: 'retention.ms', value: null, configOperation: AlterConfigOp.DELETE },
          ],
          L,
        ),
      ),
      { 'cleanup.policy': 'delete', 'segment.bytes': '1048576' },
    );
  });

  test('APPEND and SUBTRACT edit list keys, starting from the default when nothing is stored', () => {
    assert.deepEqual(
      configs(
        validateIncrementalTopicConfigs(
          current,
          [{ name: 'cleanup.policy', value: 'compact', configOperation: AlterConfigOp.APPEND }],
          L,
        ),
      )['cleanup.policy'],
      'delete,compact',
    );
    assert.deepEqual(
      configs(
        validateIncrementalTopicConfigs(
          current,
          [{ name: 'cleanup.policy', value: 'delete', configOperation: AlterConfigOp.SUBTRACT }],
          L,
        ),
      )['cleanup.policy'],
      '',
    );
    assert.deepEqual(
      configs(
        validateIncrementalTopicConfigs(
          new Map(),
          [
            {
              name: 'leader.replication.throttled.replicas',
              value: '0:1,1:2',
              configOperation: AlterConfigOp.APPEND,
            },
          ],
          L,
        ),
      )['leader.replication.throttled.replicas'],
      '0:1,1:2',
    );
    assert.equal(
      configs(
        validateIncrementalTopicConfigs(
          new Map(),
          [{ name: 'cleanup.policy', value: 'compact', configOperation: AlterConfigOp.APPEND }],
          L,
        ),
      )['cleanup.policy'],
      'delete,compact',
    );
  });

  test('APPEND on a non-list key is INVALID_CONFIG (Kafka 3.3+)', () => {
    failure(
      validateIncrementalTopicConfigs(
        current,
        [{ name: 'retention.ms', value: '5', configOperation: AlterConfigOp.APPEND }],
        L,
      ),
      ConfigErrorCode.INVALID_CONFIG,
      'retention.ms',
    );
  });

  test('duplicate keys, unknown operations and null SET values are INVALID_REQUEST', () => {
    failure(
      malformedEntries([
        { name: 'retention.ms', value: '5', configOperation: AlterConfigOp.SET },
        { name: 'retention.ms', value: null, configOperation: AlterConfigOp.DELETE },
      ])!,
      ConfigErrorCode.INVALID_REQUEST,
      'duplicate',
    );
    failure(
      validateIncrementalTopicConfigs(current, [{ name: 'retention.ms', value: '5', configOperation: 9 }], L),
      ConfigErrorCode.INVALID_REQUEST,
      'operation',
    );
    failure(
      malformedEntries([{ name: 'retention.ms', value: null, configOperation: AlterConfigOp.SET }])!,
      ConfigErrorCode.INVALID_REQUEST,
      'retention.ms',
    );
    assert.equal(
      malformedEntries([{ name: 'retention.ms', value: null, configOperation: AlterConfigOp.DELETE }]),
      null,
      'a DELETE needs no value',
    );
  });

  test('a bad resulting value is INVALID_CONFIG', () => {
    failure(
      validateIncrementalTopicConfigs(
        current,
        [{ name: 'cleanup.policy', value: 'shred', configOperation: AlterConfigOp.APPEND }],
        L,
      ),
      ConfigErrorCode.INVALID_CONFIG,
      'shred',
    );
    failure(
      validateIncrementalTopicConfigs(
        current,
        [{ name: 'nope', value: 'x', configOperation: AlterConfigOp.SET }],
        L,
      ),
      ConfigErrorCode.INVALID_CONFIG,
      'nope',
    );
  });
});

describe('broker config changes', () => {
  test('broker resource names: "" is the cluster default, our id is per-broker, others are refused', () => {
    assert.deepEqual(brokerResource('', 1), { ok: true, perBroker: false });
    assert.deepEqual(brokerResource('1', 1), { ok: true, perBroker: true });
    assert.equal(brokerResource('2', 1).ok, false);
    const bad = brokerResource('x', 1);
    assert.ok(!bad.ok && bad.errorCode === ConfigErrorCode.INVALID_REQUEST);
  });

  test('cluster-wide keys may be set for one broker or as the default', () => {
    assert.deepEqual(
      configs(validateAlterBrokerConfigs([{ name: 'log.retention.ms', value: '1000' }], false, L)),
      {
        'log.retention.ms': '1000',
      },
    );
    assert.deepEqual(
      configs(validateAlterBrokerConfigs([{ name: 'max.connections', value: '100' }], true, L)),
      {
        'max.connections': '100',
      },
    );
  });

  test('a broker value making an invalid topic default is refused (Kafka 3.9: INVALID_REQUEST)', () => {
    failure(
      validateAlterBrokerConfigs([{ name: 'log.roll.ms', value: '0' }], false, L),
      ConfigErrorCode.INVALID_REQUEST,
      'log.roll.ms',
    );
  });

  test("read-only keys, Brook's and Kafka's, are refused with Kafka's INVALID_REQUEST and message", () => {
    const refused = validateAlterBrokerConfigs(
      [
        { name: 'num.partitions', value: '3' },
        { name: 'log.dirs', value: '/x' },
      ],
      true,
      L,
      '0',
    );
    assert.deepEqual(refused, {
      ok: false,
      errorCode: ConfigErrorCode.INVALID_REQUEST,
      errorMessage: 'Cannot update these configs dynamically: Set(num.partitions, log.dirs)',
    });
    // Kafka's own keys that Brook does not implement: read-only ones are refused, dynamic ones and custom keys stored.
    failure(
      validateIncrementalBrokerConfigs(
        [{ name: 'auto.include.jmx.reporter', value: 'false', configOperation: AlterConfigOp.SET }],
        true,
        L,
        '0',
      ),
      ConfigErrorCode.INVALID_REQUEST,
      'Cannot update these configs dynamically: Set(auto.include.jmx.reporter)',
    );
    assert.ok(
      validateAlterBrokerConfigs(
        [
          { name: 'sasl.kerberos.service.name', value: 'kafka' },
          { name: 'my.custom.key', value: '1' },
        ],
        true,
        L,
        '0',
      ).ok,
    );
  });

  test('key store settings change only per listener', () => {
    failure(
      validateAlterBrokerConfigs([{ name: 'ssl.keystore.location', value: '/k.pem' }], true, L, '0'),
      ConfigErrorCode.INVALID_REQUEST,
      'These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)',
    );
    assert.ok(
      validateAlterBrokerConfigs(
        [{ name: 'listener.name.plaintext.ssl.keystore.location', value: '/k.pem' }],
        true,
        L,
        '0',
      ).ok,
    );
  });

  test('per-broker keys cannot be set as the cluster default', () => {
    failure(
      validateAlterBrokerConfigs([{ name: 'advertised.listeners', value: 'PLAINTEXT://h:1' }], false, L),
      ConfigErrorCode.INVALID_REQUEST,
      'Cannot update these configs at default cluster level, broker id must be specified: Set(advertised.listeners)',
    );
  });

  test('a per-broker change is checked against the whole config', () => {
    assert.ok(
      validateAlterBrokerConfigs([{ name: 'advertised.listeners', value: 'PLAINTEXT://h:1' }], true, L).ok,
    );
    failure(
      validateAlterBrokerConfigs([{ name: 'advertised.listeners', value: 'SSL://h:1' }], true, L),
      ConfigErrorCode.INVALID_REQUEST,
      'advertised.listeners',
    );
  });

  test("listener overrides follow their base key's update mode", () => {
    assert.ok(
      validateAlterBrokerConfigs(
        [{ name: 'listener.name.plaintext.ssl.client.auth', value: 'required' }],
        true,
        L,
      ).ok,
    );
    failure(
      validateAlterBrokerConfigs(
        [{ name: 'listener.name.plaintext.ssl.client.auth', value: 'required' }],
        false,
        L,
      ),
      ConfigErrorCode.INVALID_REQUEST,
      'broker id must be specified',
    );
  });

  test('dynamic passwords are refused rather than stored in clear text', () => {
    failure(
      validateAlterBrokerConfigs(
        [{ name: 'listener.name.plaintext.ssl.keystore.password', value: 'x' }],
        true,
        L,
      ),
      ConfigErrorCode.INVALID_CONFIG,
      'password',
    );
  });

  test("num.replica.fetchers changes as Kafka's DynamicThreadPool allows: half to double the current count", () => {
    const set = (value: string, layers: BrokerConfigLayers = L) =>
      validateIncrementalBrokerConfigs(
        [{ name: 'num.replica.fetchers', value, configOperation: AlterConfigOp.SET }],
        false,
        layers,
      );
    assert.deepEqual(configs(set('2')), { 'num.replica.fetchers': '2' });
    failure(set('3'), ConfigErrorCode.INVALID_REQUEST, 'not be greater than double the current value 1');
    failure(set('0'), ConfigErrorCode.INVALID_REQUEST, 'num.replica.fetchers');
    const three: BrokerConfigLayers = { ...L, dynamicDefault: new Map([['num.replica.fetchers', '3']]) };
    // Half by integer division, as Kafka's Int arithmetic: 3 / 2 = 1.
    assert.deepEqual(configs(set('1', three)), { 'num.replica.fetchers': '1' });
    assert.deepEqual(configs(set('6', three)), { 'num.replica.fetchers': '6' });
    const eight: BrokerConfigLayers = { ...L, dynamicDefault: new Map([['num.replica.fetchers', '8']]) };
    failure(set('3', eight), ConfigErrorCode.INVALID_REQUEST, 'at least half the current value 8');
  });

  test('incremental broker changes start from the addressed layer', () => {
    const l: BrokerConfigLayers = { ...L, dynamicDefault: new Map([['log.cleanup.policy', 'delete']]) };
    assert.deepEqual(
      configs(
        validateIncrementalBrokerConfigs(
          [{ name: 'log.cleanup.policy', value: 'compact', configOperation: AlterConfigOp.APPEND }],
          false,
          l,
        ),
      ),
      { 'log.cleanup.policy': 'delete,compact' },
    );
    failure(
      validateIncrementalBrokerConfigs(
        [{ name: 'message.max.bytes', value: '-1', configOperation: AlterConfigOp.SET }],
        false,
        l,
      ),
      ConfigErrorCode.INVALID_REQUEST,
      'message.max.bytes',
    );
    // Kafka allows custom broker configs: SET of a key Brook does not define is stored; APPEND needs its type.
    assert.deepEqual(
      configs(
        validateIncrementalBrokerConfigs(
          [{ name: 'unknown.key', value: '1', configOperation: AlterConfigOp.SET }],
          true,
          l,
        ),
      ),
      { 'unknown.key': '1' },
    );
    failure(
      validateIncrementalBrokerConfigs(
        [{ name: 'unknown.key', value: '1', configOperation: AlterConfigOp.APPEND }],
        true,
        l,
      ),
      ConfigErrorCode.INVALID_CONFIG,
      'unknown.key',
    );
  });
});
