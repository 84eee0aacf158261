// The broker's listeners as the network layer binds them: TLS listeners (SSL, SASL_SSL) completed with their
// node:tls options and the certificate principal of each connection, SASL listeners with their frame bound
// before authentication.

import { type BrokerConfig, listenerValue } from '../broker/config/broker-config.js';
import type { Listener } from '../broker/config/listeners.js';
import type { ListenerConfig } from '../network/listener.js';
import { usesSasl, usesTls } from '../network/security.js';
import { listenerTls } from './tls-listener.js';

/** Throws ConfigError when a TLS listener's settings are missing or do not load. */
export function securedListeners(config: BrokerConfig): ListenerConfig[] {
  return config.listeners.map((listener) => securedListener(config, listener));
}

/** One listener of `config`, completed for the socket server; throws ConfigError as securedListeners. */
export function securedListener(config: BrokerConfig, listener: Listener): ListenerConfig {
  const sasl = saslBounds(config, listener);
  if (!usesTls(listener.securityProtocol)) return { ...listener, ...sasl };
  const tls = listenerTls(config.values, listener.name, listener.securityProtocol === 'SASL_SSL');
  return { ...listener, ...sasl, tls: tls.options, peerPrincipal: (socket) => tls.principalOf(socket) };
}

/**
 * A SASL listener's frame bound before authentication: Kafka's channel builder reads its configs with the
 * listener's prefix applied, so listener.name.<listener>.sasl.server.max.receive.size overrides the broker's.
 */
function saslBounds(
  config: BrokerConfig,
  listener: Listener,
): Pick<ListenerConfig, 'saslServerMaxReceiveSize'> {
  if (!usesSasl(listener.securityProtocol)) return {};
  return {
    saslServerMaxReceiveSize: Number(listenerValue(config, listener.name, 'sasl.server.max.receive.size')),
  };
}
