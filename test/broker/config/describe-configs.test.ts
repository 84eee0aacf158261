// DescribeConfigs entries for topics and brokers: values, sources, synonyms, types and hidden secrets.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BrokerConfigLayers } from '../../../src/broker/config/config-layers.js';
import { ConfigSource, ConfigType } from '../../../src/broker/config/config-types.js';
import {
  type DescribeOptions,
  describeBrokerConfigs,
  describeTopicConfigs,
} from '../../../src/broker/config/describe-configs.js';

const ALL: DescribeOptions = { keys: null, includeSynonyms: true, includeDocumentation: true };

function layers(
  staticConfig: Record<string, string> = {},
  dynamicDefault: Record<string, string> = {},
  dynamicBroker: Record<string, string> = {},
): BrokerConfigLayers {
  return {
    staticConfig: new Map(Object.entries(staticConfig)),
    dynamicDefault: new Map(Object.entries(dynamicDefault)),
    dynamicBroker: new Map(Object.entries(dynamicBroker)),
  };
}

describe('DescribeConfigs wire values', () => {
  test("config sources and types have Kafka's numbers", () => {
    assert.deepEqual(
      [
        ConfigSource.UNKNOWN,
        ConfigSource.DYNAMIC_TOPIC_CONFIG,
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
        ConfigSource.STATIC_BROKER_CONFIG,
        ConfigSource.DEFAULT_CONFIG,
        ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
      ],
      [0, 1, 2, 3, 4, 5, 6],
    );
    assert.deepEqual(
      [
        ConfigType.BOOLEAN,
        ConfigType.STRING,
        ConfigType.INT,
        ConfigType.SHORT,
        ConfigType.LONG,
        ConfigType.DOUBLE,
        ConfigType.LIST,
        ConfigType.CLASS,
        ConfigType.PASSWORD,
      ],
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  });
});

describe('DescribeConfigs for topics', () => {
  test('reports converted values, sources, synonyms and types', () => {
    const configs = describeTopicConfigs(new Map([['cleanup.policy', 'compact']]), layers(), ALL);
    const retention = configs.find((c) => c.name === 'retention.ms');
    assert.deepEqual(retention, {
      name: 'retention.ms',
      value: '604800000',
      readOnly: false,
      isDefault: true,
      configSource: ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      // Kafka drops the group's entries before the first log.retention.ms: no synonyms at all here.
      synonyms: [],
      configType: ConfigType.LONG,
      documentation: retention?.documentation,
    });
    assert.ok((retention?.documentation ?? '').length > 0);
    const cleanup = configs.find((c) => c.name === 'cleanup.policy');
    assert.equal(cleanup?.value, 'compact');
    assert.equal(cleanup?.configSource, ConfigSource.DYNAMIC_TOPIC_CONFIG);
    assert.equal(cleanup?.isDefault, false);
    assert.equal(cleanup?.configType, ConfigType.LIST);
  });

  test('Long.MAX_VALUE defaults are reported exactly', () => {
    const [flush] = describeTopicConfigs(new Map(), layers(), { ...ALL, keys: ['flush.messages'] });
    assert.equal(flush?.value, '9223372036854775807');
  });

  test('only the requested keys are described, and unknown names are left out', () => {
    const configs = describeTopicConfigs(new Map(), layers(), {
      keys: ['segment.bytes', 'no.such.key'],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      configs.map((c) => [c.name, c.synonyms.length, c.documentation]),
      [['segment.bytes', 0, null]],
    );
  });
});

describe('DescribeConfigs for brokers', () => {
  test('describes static, dynamic and default values with their sources', () => {
    const l = layers(
      { 'num.partitions': '3', 'log.retention.hours': '24' },
      {},
      { 'log.retention.ms': '1000' },
    );
    const configs = describeBrokerConfigs(l, true, ALL);
    const byName = new Map(configs.map((c) => [c.name, c]));
    assert.equal(byName.get('num.partitions')?.value, '3');
    assert.equal(byName.get('num.partitions')?.configSource, ConfigSource.STATIC_BROKER_CONFIG);
    assert.equal(byName.get('num.partitions')?.readOnly, true);
    assert.equal(byName.get('message.max.bytes')?.configSource, ConfigSource.DEFAULT_CONFIG);
    assert.equal(byName.get('message.max.bytes')?.readOnly, false);
    const ms = byName.get('log.retention.ms');
    assert.equal(ms?.value, '1000');
    assert.equal(ms?.configSource, ConfigSource.DYNAMIC_BROKER_CONFIG);
    assert.deepEqual(
      ms?.synonyms.map((s) => [s.name, s.value, s.source]),
      [
        ['log.retention.ms', '1000', ConfigSource.DYNAMIC_BROKER_CONFIG],
        ['log.retention.hours', '24', ConfigSource.STATIC_BROKER_CONFIG],
        ['log.retention.hours', '168', ConfigSource.DEFAULT_CONFIG],
      ],
    );
    // A less precise key's synonyms start at itself.
    assert.deepEqual(
      byName.get('log.retention.hours')?.synonyms.map((s) => s.source),
      [ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG],
    );
    assert.equal(byName.get('log.dirs')?.value, null);
  });

  test('passwords and unknown keys are sensitive and their values hidden', () => {
    const l = layers({ 'ssl.keystore.password': 'hunter2-value', 'plugin.token': 'abc' });
    const configs = describeBrokerConfigs(l, true, ALL);
    const password = configs.find((c) => c.name === 'ssl.keystore.password');
    assert.equal(password?.isSensitive, true);
    assert.equal(password?.value, null);
    assert.equal(password?.configSource, ConfigSource.STATIC_BROKER_CONFIG);
    assert.deepEqual(
      password?.synonyms.map((s) => s.value),
      [null],
    );
    const unknown = configs.find((c) => c.name === 'plugin.token');
    assert.equal(unknown?.isSensitive, true);
    assert.equal(unknown?.value, null);
    assert.equal(unknown?.configType, ConfigType.UNKNOWN);
    assert.ok(!JSON.stringify(configs).includes('hunter2-value'));
  });

  test('a listener override is described with its base key as synonym', () => {
    const l = layers({
      'ssl.keystore.location': '/base.jks',
      'listener.name.ssl.ssl.keystore.location': '/ssl.jks',
    });
    const configs = describeBrokerConfigs(l, true, ALL);
    const override = configs.find((c) => c.name === 'listener.name.ssl.ssl.keystore.location');
    assert.equal(override?.value, '/ssl.jks');
    assert.equal(override?.isSensitive, false);
    // As Kafka's: read-only in the answer, its name not being in DynamicBrokerConfig.AllDynamicConfigs.
    assert.equal(override?.readOnly, true);
    assert.deepEqual(
      override?.synonyms.map((s) => [s.name, s.value]),
      [
        ['listener.name.ssl.ssl.keystore.location', '/ssl.jks'],
        ['ssl.keystore.location', '/base.jks'],
      ],
    );
    assert.equal(configs.find((c) => c.name === 'ssl.keystore.location')?.value, '/base.jks');
  });

  test('the default resource shows only the cluster-wide dynamic values', () => {
    const l = layers(
      { 'num.partitions': '3' },
      { 'log.segment.bytes': '2000000' },
      { 'log.segment.bytes': '1000000' },
    );
    const configs = describeBrokerConfigs(l, false, ALL);
    assert.deepEqual(
      configs.map((c) => [c.name, c.value, c.configSource]),
      [['log.segment.bytes', '2000000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]],
    );
    assert.deepEqual(
      configs[0]?.synonyms.map((s) => s.source),
      [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    );
  });
});
