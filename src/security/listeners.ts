// The broker's listeners as the network layer binds them: TLS listeners (SSL, SASL_SSL) completed with their
// node:tls options and the certificate principal of each connection.

import type { BrokerConfig } from '../broker/config/broker-config.js';
import type { Listener } from '../broker/config/listeners.js';
import type { ListenerConfig } from '../network/listener.js';
import { usesTls } from '../network/security.js';
import { listenerTls } from './tls-listener.js';

/** Throws ConfigError when a TLS listener's settings are missing or do not load. */
export function securedListeners(config: BrokerConfig): ListenerConfig[] {
  return config.listeners.map((listener) => securedListener(config, listener));
}

/** One listener of `config`, completed for the socket server; throws ConfigError as securedListeners. */
export function securedListener(config: BrokerConfig, listener: Listener): ListenerConfig {
  if (!usesTls(listener.securityProtocol)) return listener;
  const tls = listenerTls(config.values, listener.name, listener.securityProtocol === 'SASL_SSL');
  return { ...listener, tls: tls.options, peerPrincipal: (socket) => tls.principalOf(socket) };
}
