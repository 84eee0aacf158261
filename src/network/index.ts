// The network layer's public surface: what the broker and tests import.

export { Connection, type ConnectionState } from './connection.js';
export { FrameError, FrameReader } from './frame-reader.js';
export {
  defaultSecurityProtocolMap,
  type ListenerConfig,
  ListenerConfigError,
  parseListeners,
  parseSecurityProtocolMap,
} from './listener.js';
export {
  NetworkConfigError,
  type NetworkOptions,
  networkDefaults,
  type ResolvedNetworkOptions,
  resolveNetworkOptions,
} from './options.js';
export {
  NO_RESPONSE,
  REQUEST_PREFIX_BYTES,
  type Request,
  type RequestHandler,
  type Response,
} from './request.js';
export {
  ANONYMOUS_PRINCIPAL,
  RAW_SASL_TOKEN_API_KEY,
  type SaslState,
  type SecurityProtocol,
  SecurityState,
} from './security.js';
export {
  type BoundAddress,
  parsePerAddressOverrides,
  type ShutdownResult,
  SocketServer,
  type SocketServerConfig,
} from './socket-server.js';
export { createNetworkStats, type NetworkStats } from './stats.js';
