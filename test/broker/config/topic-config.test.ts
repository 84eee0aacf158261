// Effective topic configs with sources and synonyms, and their TopicLogSettings.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BrokerConfigLayers, mergeBrokerLayers } from '../../../src/broker/config/config-layers.js';
import { ConfigSource } from '../../../src/broker/config/config-types.js';
import { resolveTopicConfig } from '../../../src/broker/config/topic-config.js';
import { toTopicLogSettings } from '../../../src/broker/config/topic-log-settings.js';

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

function entry(overrides: Record<string, string>, l: BrokerConfigLayers, name: string) {
  const e = resolveTopicConfig(new Map(Object.entries(overrides)), l).get(name);
  assert.ok(e, name);
  return e;
}

describe('topic config resolution', () => {
  test('with nothing set, retention.ms is 7 days from the log.retention.hours default', () => {
    const e = entry({}, layers(), 'retention.ms');
    assert.equal(e.value, 604800000n);
    assert.equal(e.source, ConfigSource.DEFAULT_CONFIG);
    assert.deepEqual(e.synonyms, [
      { name: 'log.retention.hours', value: 168, source: ConfigSource.DEFAULT_CONFIG },
    ]);
  });

  test('a topic override wins and is listed first among the synonyms', () => {
    const e = entry({ 'retention.ms': '1000' }, layers({ 'log.retention.ms': '5000' }), 'retention.ms');
    assert.equal(e.value, 1000n);
    assert.equal(e.source, ConfigSource.DYNAMIC_TOPIC_CONFIG);
    assert.deepEqual(
      e.synonyms.map((s) => [s.name, s.source]),
      [
        ['retention.ms', ConfigSource.DYNAMIC_TOPIC_CONFIG],
        ['log.retention.ms', ConfigSource.STATIC_BROKER_CONFIG],
        ['log.retention.hours', ConfigSource.DEFAULT_CONFIG],
      ],
    );
  });

  test('layers apply in order: dynamic broker, dynamic default, static, default', () => {
    const l = layers(
      { 'log.segment.bytes': '3000' },
      { 'log.segment.bytes': '2000' },
      { 'log.segment.bytes': '1000' },
    );
    const e = entry({}, l, 'segment.bytes');
    assert.equal(e.value, 1000);
    assert.equal(e.source, ConfigSource.DYNAMIC_BROKER_CONFIG);
    assert.deepEqual(
      e.synonyms.map((s) => [s.value, s.source]),
      [
        [1000, ConfigSource.DYNAMIC_BROKER_CONFIG],
        [2000, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
        [3000, ConfigSource.STATIC_BROKER_CONFIG],
        [1073741824, ConfigSource.DEFAULT_CONFIG],
      ],
    );
    assert.equal(
      entry({}, layers({ 'log.segment.bytes': '3000' }, { 'log.segment.bytes': '2000' }), 'segment.bytes')
        .source,
      ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    );
  });

  test('a dynamic log.retention.hours beats a static log.retention.ms (layer first, then precision)', () => {
    const l = layers({ 'log.retention.ms': '5000' }, { 'log.retention.hours': '2' });
    const e = entry({}, l, 'retention.ms');
    assert.equal(e.value, 7200000n);
    assert.equal(e.source, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    // The merged map the broker runs with agrees with what DescribeConfigs reports.
    const merged = mergeBrokerLayers(l);
    assert.equal(merged.get('log.retention.ms'), undefined);
    assert.equal(merged.get('log.retention.hours'), '2');
  });

  test('max.message.bytes takes its default from message.max.bytes', () => {
    const e = entry({}, layers({ 'message.max.bytes': '2048' }), 'max.message.bytes');
    assert.equal(e.value, 2048);
    assert.equal(e.source, ConfigSource.STATIC_BROKER_CONFIG);
  });

  test('keys without a broker synonym use the topic default', () => {
    const e = entry({}, layers(), 'leader.replication.throttled.replicas');
    assert.deepEqual(e.value, []);
    assert.equal(e.source, ConfigSource.DEFAULT_CONFIG);
    assert.deepEqual(e.synonyms, []);
  });
});

describe('TopicLogSettings', () => {
  test('maps overrides onto the typed fields the storage engine reads', () => {
    const settings = toTopicLogSettings(
      resolveTopicConfig(
        new Map([
          ['segment.bytes', '1048576'],
          ['segment.ms', '60000'],
          ['retention.ms', '-1'],
          ['retention.bytes', '1000000'],
          ['cleanup.policy', 'compact, delete'],
          ['flush.messages', '1'],
          ['message.timestamp.type', 'LogAppendTime'],
          ['compression.type', 'zstd'],
          ['min.insync.replicas', '2'],
          ['preallocate', 'true'],
          ['max.compaction.lag.ms', '9223372036854775807'],
        ]),
        layers(),
      ),
    );
    assert.equal(settings.segmentBytes, 1048576);
    assert.equal(settings.segmentMs, 60000);
    assert.equal(settings.retentionMs, -1);
    assert.equal(settings.retentionBytes, 1000000);
    assert.deepEqual(settings.cleanupPolicy, ['compact', 'delete']);
    assert.equal(settings.flushMessages, 1);
    assert.equal(settings.messageTimestampType, 'LogAppendTime');
    assert.equal(settings.compressionType, 'zstd');
    assert.equal(settings.minInsyncReplicas, 2);
    assert.equal(settings.preallocate, true);
    assert.equal(settings.maxCompactionLagMs, Number.MAX_SAFE_INTEGER);
  });
});
