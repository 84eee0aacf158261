// The bridge from BrokerConfig to the network layer's options and listeners.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveBrokerConfig } from '../../../src/broker/config/broker-config.js';
import { toNetworkOptions } from '../../../src/broker/config/network-config.js';
import type { ListenerConfig } from '../../../src/network/listener.js';
import { networkDefaults, resolveNetworkOptions } from '../../../src/network/options.js';

describe('network config bridge', () => {
  test('Kafka defaults give the network layer its own defaults', () => {
    const options = resolveNetworkOptions(toNetworkOptions(resolveBrokerConfig(new Map())));
    assert.deepEqual({ ...options }, { ...networkDefaults });
  });

  test('configured bounds reach the network options, and listeners fit the network layer as they are', () => {
    const config = resolveBrokerConfig(
      new Map([
        ['socket.request.max.bytes', '1048576'],
        ['max.connections.per.ip.overrides', '10.0.0.1:3'],
        ['connections.max.idle.ms', '1000'],
        ['listeners', 'PLAINTEXT://127.0.0.1:0'],
      ]),
    );
    const options = resolveNetworkOptions(toNetworkOptions(config));
    assert.equal(options['socket.request.max.bytes'], 1048576);
    assert.equal(options['max.connections.per.ip.overrides'], '10.0.0.1:3');
    assert.equal(options['connections.max.idle.ms'], 1000);
    const listeners: readonly ListenerConfig[] = config.listeners;
    assert.equal(listeners[0]?.port, 0);
  });
});
