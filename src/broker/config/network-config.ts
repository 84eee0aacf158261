// The bridge from BrokerConfig to the network layer's options (src/network/options.ts), which are keyed by
// Kafka's own config names. Listeners need no conversion: BrokerConfig's Listener has the fields of the network
// layer's ListenerConfig, which the broker completes with TLS options for SSL listeners.
//
// Two network bounds have no Kafka broker key (max.in.flight.requests.per.connection, shutdown.timeout.ms); they
// keep the network layer's defaults until the lead decides on their names.

import { type NetworkOptions, networkDefaults } from '../../network/options.js';
import { type ConnectionLimits, parsePerAddressOverrides } from '../../network/socket-server.js';
import type { BrokerConfig } from './broker-config.js';

export function toNetworkOptions(config: BrokerConfig): NetworkOptions {
  return {
    'socket.request.max.bytes': config.socketRequestMaxBytes,
    'queued.max.requests': config.queuedMaxRequests,
    'queued.max.request.bytes': config.queuedMaxRequestBytes,
    'max.connections': config.maxConnections,
    'max.connections.per.ip': config.maxConnectionsPerIp,
    'max.connections.per.ip.overrides': config.values.string('max.connections.per.ip.overrides'),
    'connections.max.idle.ms': config.connectionsMaxIdleMs,
    'socket.send.buffer.bytes': config.socketSendBufferBytes,
    'socket.receive.buffer.bytes': config.socketReceiveBufferBytes,
    'sasl.server.max.receive.size': config.values.int('sasl.server.max.receive.size'),
  };
}

/**
 * The connection limits of the merged broker config text (static and dynamic layers): max.connections,
 * max.connections.per.ip and its overrides are dynamic cluster-wide keys in Kafka, and
 * listener.name.<listener>.max.connections a dynamic per-listener one. Values were validated when
 * written; absent keys take Kafka's defaults.
 */
export function connectionLimitsOf(merged: ReadonlyMap<string, string>): ConnectionLimits {
  const int = (key: 'max.connections' | 'max.connections.per.ip'): number => {
    const text = merged.get(key);
    return text === undefined ? networkDefaults[key] : Number.parseInt(text, 10);
  };
  const perListener = new Map<string, number>();
  for (const [key, text] of merged) {
    const match = LISTENER_MAX_CONNECTIONS.exec(key);
    if (match !== null) perListener.set((match[1] as string).toUpperCase(), Number.parseInt(text, 10));
  }
  return {
    maxConnections: int('max.connections'),
    maxConnectionsPerIp: int('max.connections.per.ip'),
    perIpOverrides: parsePerAddressOverrides(
      merged.get('max.connections.per.ip.overrides') ?? networkDefaults['max.connections.per.ip.overrides'],
    ),
    perListener,
  };
}

/** listener.name.<listener>.max.connections: that listener's own bound (Kafka's per-listener ConnectionQuotas). */
const LISTENER_MAX_CONNECTIONS = /^listener\.name\.([^.]+)\.max\.connections$/;
