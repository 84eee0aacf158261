// Per-resource entry points for the config APIs: resource lookup errors, describe and alter results.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AlterConfigOp, ConfigErrorCode } from '../../../src/broker/config/config-error-codes.js';
import { staticOnly } from '../../../src/broker/config/config-layers.js';
import {
  alterResource,
  type ConfigState,
  describeResource,
  incrementalAlterResource,
} from '../../../src/broker/config/config-resources.js';
import { ConfigResourceType, ConfigSource } from '../../../src/broker/config/config-types.js';

const topics = new Map([['orders', new Map([['retention.ms', '1000']])]]);
const state: ConfigState = {
  brokerId: 0,
  layers: staticOnly(new Map([['num.partitions', '3']])),
  topicOverrides: (t) => topics.get(t),
};

describe('config resources', () => {
  test('describes an existing topic with its overrides', () => {
    const r = describeResource(
      state,
      { resourceType: ConfigResourceType.TOPIC, resourceName: 'orders', configurationKeys: ['retention.ms'] },
      true,
      false,
    );
    assert.equal(r.errorCode, ConfigErrorCode.NONE);
    assert.deepEqual(
      r.configs.map((c) => [c.name, c.value, c.configSource]),
      [['retention.ms', '1000', ConfigSource.DYNAMIC_TOPIC_CONFIG]],
    );
  });

  test("an unknown topic, an illegal topic name and another broker's id are per-resource errors", () => {
    const unknown = describeResource(
      state,
      { resourceType: ConfigResourceType.TOPIC, resourceName: 'nope', configurationKeys: null },
      false,
      false,
    );
    assert.equal(unknown.errorCode, ConfigErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual(unknown.configs, []);
    const illegal = describeResource(
      state,
      { resourceType: ConfigResourceType.TOPIC, resourceName: 'a/b', configurationKeys: null },
      false,
      false,
    );
    assert.equal(illegal.errorCode, 17);
    const other = describeResource(
      state,
      { resourceType: ConfigResourceType.BROKER, resourceName: '7', configurationKeys: null },
      false,
      false,
    );
    assert.equal(other.errorCode, ConfigErrorCode.INVALID_REQUEST);
    const group = describeResource(
      state,
      { resourceType: 3, resourceName: 'g', configurationKeys: null },
      false,
      false,
    );
    assert.equal(group.errorCode, ConfigErrorCode.INVALID_REQUEST);
  });

  test('describes this broker', () => {
    const r = describeResource(
      state,
      { resourceType: ConfigResourceType.BROKER, resourceName: '0', configurationKeys: ['num.partitions'] },
      false,
      false,
    );
    assert.deepEqual(
      r.configs.map((c) => [c.name, c.value, c.configSource, c.readOnly]),
      [['num.partitions', '3', ConfigSource.STATIC_BROKER_CONFIG, true]],
    );
  });

  test('alter and incremental alter say what to store and where', () => {
    const replaced = alterResource(state, ConfigResourceType.TOPIC, 'orders', [
      { name: 'segment.ms', value: '5000' },
    ]);
    assert.ok(replaced.ok);
    assert.deepEqual(replaced.target, { kind: 'topic', topic: 'orders' });
    assert.deepEqual([...replaced.configs], [['segment.ms', '5000']]);

    const edited = incrementalAlterResource(state, ConfigResourceType.TOPIC, 'orders', [
      { name: 'segment.ms', value: '5000', configOperation: AlterConfigOp.SET },
    ]);
    assert.ok(edited.ok);
    assert.deepEqual(
      [...edited.configs],
      [
        ['retention.ms', '1000'],
        ['segment.ms', '5000'],
      ],
    );

    const cluster = incrementalAlterResource(state, ConfigResourceType.BROKER, '', [
      { name: 'log.retention.ms', value: '60000', configOperation: AlterConfigOp.SET },
    ]);
    assert.ok(cluster.ok);
    assert.deepEqual(cluster.target, { kind: 'broker', perBroker: false });

    const missing = alterResource(state, ConfigResourceType.TOPIC, 'nope', []);
    assert.ok(!missing.ok && missing.errorCode === ConfigErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});
