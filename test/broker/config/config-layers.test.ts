// Merging the dynamic and static broker layers, and value lookup with sources.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { brokerValue, mergeBrokerLayers } from '../../../src/broker/config/config-layers.js';
import { ConfigSource } from '../../../src/broker/config/config-types.js';

function layers(
  staticConfig: Record<string, string>,
  dynamicDefault: Record<string, string>,
  dynamicBroker: Record<string, string>,
) {
  return {
    staticConfig: new Map(Object.entries(staticConfig)),
    dynamicDefault: new Map(Object.entries(dynamicDefault)),
    dynamicBroker: new Map(Object.entries(dynamicBroker)),
  };
}

describe('broker config layers', () => {
  test('a plain key takes the highest layer that sets it', () => {
    const merged = mergeBrokerLayers(
      layers({ 'message.max.bytes': '1', 'num.partitions': '2' }, { 'message.max.bytes': '3' }, {}),
    );
    assert.equal(merged.get('message.max.bytes'), '3');
    assert.equal(merged.get('num.partitions'), '2');
  });

  test("within a synonym group the highest layer decides, and lower layers' keys of the group are dropped", () => {
    const merged = mergeBrokerLayers(
      layers({ 'log.roll.ms': '5', 'log.roll.hours': '1' }, {}, { 'log.roll.hours': '2' }),
    );
    assert.equal(merged.get('log.roll.hours'), '2');
    assert.equal(merged.has('log.roll.ms'), false);
  });

  test('a listener override and its base key are merged independently', () => {
    const merged = mergeBrokerLayers(
      layers({ 'ssl.keystore.location': '/a' }, {}, { 'listener.name.ssl.ssl.keystore.location': '/b' }),
    );
    assert.equal(merged.get('ssl.keystore.location'), '/a');
    assert.equal(merged.get('listener.name.ssl.ssl.keystore.location'), '/b');
  });

  test('brokerValue reports the parsed value and its source, or the default', () => {
    const l = layers({ 'num.partitions': '4' }, {}, {});
    assert.deepEqual(brokerValue(l, 'num.partitions'), {
      name: 'num.partitions',
      value: 4,
      source: ConfigSource.STATIC_BROKER_CONFIG,
    });
    assert.deepEqual(brokerValue(l, 'default.replication.factor'), {
      name: 'default.replication.factor',
      value: 1,
      source: ConfigSource.DEFAULT_CONFIG,
    });
    assert.equal(brokerValue(l, 'log.dirs'), undefined);
  });
});
