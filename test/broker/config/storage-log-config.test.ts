// The bridge from topic settings and BrokerConfig to the storage engine's config types.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveBrokerConfig } from '../../../src/broker/config/broker-config.js';
import { staticOnly } from '../../../src/broker/config/config-layers.js';
import {
  GROUP_COMMIT_OFF,
  groupCommitOf,
  toLogManagerConfig,
  toStorageLogConfig,
} from '../../../src/broker/config/storage-log-config.js';
import { resolveTopicLogSettings } from '../../../src/broker/config/topic-log-settings.js';
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG } from '../../../src/storage/log-config.js';

const NO_STATIC = staticOnly(new Map());

describe('storage config bridge', () => {
  test("Kafka defaults produce the storage engine's own defaults", () => {
    const settings = resolveTopicLogSettings(new Map(), NO_STATIC);
    assert.deepEqual(toStorageLogConfig(settings, GROUP_COMMIT_OFF), { ...DEFAULT_LOG_CONFIG });
    assert.deepEqual(toLogManagerConfig(resolveBrokerConfig(new Map())), { ...DEFAULT_LOG_MANAGER_CONFIG });
  });

  test('brook.log.append.inline.enable reaches the log manager, off unless set', () => {
    assert.equal(toLogManagerConfig(resolveBrokerConfig(new Map())).appendInlineEnable, false);
    const on = resolveBrokerConfig(new Map([['brook.log.append.inline.enable', 'true']]));
    assert.equal(toLogManagerConfig(on).appendInlineEnable, true);
  });

  test('topic overrides and group commit reach the storage config', () => {
    const settings = resolveTopicLogSettings(
      new Map([
        ['cleanup.policy', 'delete,compact'],
        ['segment.bytes', '1048576'],
        ['flush.messages', '1'],
      ]),
      NO_STATIC,
    );
    const config = toStorageLogConfig(settings, { enable: true, maxDelayMs: 5 });
    assert.equal(config.cleanupPolicy, 'compact,delete');
    assert.equal(config.segmentBytes, 1048576);
    assert.equal(config.flushMessages, 1);
    assert.equal(config.ackAfterFsync, true);
    assert.equal(config.groupCommitMaxDelayMs, 5);
  });

  test('the group commit keys are read from the merged broker layers', () => {
    assert.deepEqual(groupCommitOf(new Map()), GROUP_COMMIT_OFF);
    const on = new Map([
      ['brook.log.flush.group.commit.enable', 'true'],
      ['brook.log.flush.group.commit.max.delay.ms', '20'],
    ]);
    assert.deepEqual(groupCommitOf(on), { enable: true, maxDelayMs: 20 });
  });

  test('an empty cleanup.policy keeps everything', () => {
    const settings = resolveTopicLogSettings(new Map([['cleanup.policy', '']]), NO_STATIC);
    const config = toStorageLogConfig(settings, GROUP_COMMIT_OFF);
    assert.deepEqual([config.cleanupPolicy, config.retentionMs, config.retentionBytes], ['delete', -1, -1]);
  });

  test('broker-level log manager settings come from their Kafka keys', () => {
    const config = resolveBrokerConfig(
      new Map([
        ['log.retention.check.interval.ms', '1000'],
        ['log.flush.scheduler.interval.ms', '2000'],
        ['producer.id.expiration.ms', '3000'],
      ]),
    );
    const manager = toLogManagerConfig(config);
    assert.equal(manager.retentionCheckIntervalMs, 1000);
    assert.equal(manager.flushSchedulerIntervalMs, 2000);
    assert.equal(manager.producerIdExpirationMs, 3000);
  });
});
