// The network layer's bounds, named with Kafka's broker config keys so the broker can pass the parsed
// server.properties subset unchanged. Resolved once into a frozen object; nothing here changes at runtime.

import { limits } from '../common/limits.js';

/** What the broker passes in: any subset, by Kafka's key names. */
export interface NetworkOptions {
  /** Largest request frame (size prefix value). A larger prefix closes the connection before the body is read. */
  'socket.request.max.bytes'?: number;
  /** Requests dispatched and not yet answered, across the broker. When reached, every socket stops reading. */
  'queued.max.requests'?: number;
  /** Bytes of those requests; -1 means no byte bound beyond the count bound (Kafka's default). */
  'queued.max.request.bytes'?: number;
  /**
   * Pipelined requests one connection may have dispatched and not yet answered. Kafka's broker handles one at
   * a time per connection; Brook lets a client pipeline up to this many (the name is the client's setting).
   */
  'max.in.flight.requests.per.connection'?: number;
  /** Open connections across all listeners; a connection beyond it is closed on accept. */
  'max.connections'?: number;
  /** Open connections from one address; a connection beyond it is closed on accept. */
  'max.connections.per.ip'?: number;
  /** Per-address exceptions to max.connections.per.ip: "address:count,address:count". */
  'max.connections.per.ip.overrides'?: string;
  /** A connection with no reads, no writes and nothing in flight for this long is closed. */
  'connections.max.idle.ms'?: number;
  /**
   * Node does not expose SO_SNDBUF for TCP. This sets the user-space write buffer of each connection instead:
   * when a socket holds more unsent bytes than this, the connection stops reading requests until it drains.
   * -1 keeps Node's default high-water mark.
   */
  'socket.send.buffer.bytes'?: number;
  /** Node does not expose SO_RCVBUF for TCP; accepted and validated for config compatibility, otherwise unused. */
  'socket.receive.buffer.bytes'?: number;
  /** Pending connections the kernel queues for each listener before accept (KIP-764). */
  'socket.listen.backlog.size'?: number;
  /** How long a graceful shutdown waits for in-flight requests before closing connections anyway. */
  'shutdown.timeout.ms'?: number;
  /**
   * Largest frame a SASL connection may send before it has authenticated (Kafka's key); -1 (Kafka's UNLIMITED):
   * only socket.request.max.bytes. As Kafka, 0 admits only empty frames and a value below -1 none.
   */
  'sasl.server.max.receive.size'?: number;
  /** A SASL connection not authenticated this long after it opened is closed (no Kafka key; Brook's bound). */
  'sasl.authentication.timeout.ms'?: number;
}

export type ResolvedNetworkOptions = Readonly<Required<NetworkOptions>>;
type NumericKey = {
  [K in keyof NetworkOptions]-?: NetworkOptions[K] extends number | undefined ? K : never;
}[keyof NetworkOptions];

const INT32_MAX = 0x7fffffff;

export const networkDefaults: ResolvedNetworkOptions = Object.freeze({
  'socket.request.max.bytes': 104_857_600,
  'queued.max.requests': 500,
  'queued.max.request.bytes': -1,
  'max.in.flight.requests.per.connection': 100,
  'max.connections': INT32_MAX,
  'max.connections.per.ip': INT32_MAX,
  'max.connections.per.ip.overrides': '',
  'connections.max.idle.ms': 600_000,
  'socket.send.buffer.bytes': 102_400,
  'socket.receive.buffer.bytes': 102_400,
  'socket.listen.backlog.size': 50,
  'shutdown.timeout.ms': 30_000,
  'sasl.server.max.receive.size': 524_288,
  'sasl.authentication.timeout.ms': 10_000,
});

/** A configuration mistake, reported with the key so the operator can find it. */
export class NetworkConfigError extends Error {
  override name = 'NetworkConfigError';
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
  }
}

function checkInt(key: NumericKey, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new NetworkConfigError(key, `must be an integer in [${min}, ${max}], got ${value}`);
  }
}

/** Defaults filled in and every value checked; throws NetworkConfigError on the first bad one. */
export function resolveNetworkOptions(options: NetworkOptions = {}): ResolvedNetworkOptions {
  const resolved: Required<NetworkOptions> = { ...networkDefaults };
  for (const key of Object.keys(options) as (keyof NetworkOptions)[]) {
    if (!(key in networkDefaults)) throw new NetworkConfigError(key, 'unknown network option');
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== typeof networkDefaults[key]) {
      throw new NetworkConfigError(key, `must be a ${typeof networkDefaults[key]}, got ${typeof value}`);
    }
    (resolved as Record<string, unknown>)[key] = value;
  }
  // Decoders refuse frames above limits.frameBytesMax whatever the configuration says.
  checkInt('socket.request.max.bytes', resolved['socket.request.max.bytes'], 8, limits.frameBytesMax);
  checkInt('queued.max.requests', resolved['queued.max.requests'], 1);
  checkInt('queued.max.request.bytes', resolved['queued.max.request.bytes'], -1);
  if (resolved['queued.max.request.bytes'] === 0) {
    throw new NetworkConfigError('queued.max.request.bytes', 'must be -1 (no bound) or positive');
  }
  checkInt('max.in.flight.requests.per.connection', resolved['max.in.flight.requests.per.connection'], 1);
  checkInt('max.connections', resolved['max.connections'], 0);
  checkInt('max.connections.per.ip', resolved['max.connections.per.ip'], 0);
  checkInt('connections.max.idle.ms', resolved['connections.max.idle.ms'], -1, INT32_MAX);
  checkInt('socket.send.buffer.bytes', resolved['socket.send.buffer.bytes'], -1, INT32_MAX);
  checkInt('socket.receive.buffer.bytes', resolved['socket.receive.buffer.bytes'], -1, INT32_MAX);
  checkInt('socket.listen.backlog.size', resolved['socket.listen.backlog.size'], 1, INT32_MAX);
  checkInt('shutdown.timeout.ms', resolved['shutdown.timeout.ms'], 0, INT32_MAX);
  checkInt(
    'sasl.server.max.receive.size',
    resolved['sasl.server.max.receive.size'],
    -INT32_MAX - 1,
    INT32_MAX,
  );
  checkInt('sasl.authentication.timeout.ms', resolved['sasl.authentication.timeout.ms'], 1, INT32_MAX);
  return Object.freeze(resolved);
}
