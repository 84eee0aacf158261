// Parsing and checking of listeners, advertised.listeners and listener.security.protocol.map, with Kafka's
// rules: listener names are case-insensitive (stored upper case), every name needs a security protocol,
// listeners need distinct names and ports, advertised listeners must name configured listeners and may not
// advertise 0.0.0.0, and brokers talk to each other over exactly one named listener.

import { ConfigError } from './config-error.js';
import { splitList } from './value-codec.js';

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];

export interface Listener {
  /** Upper-case listener name, e.g. PLAINTEXT or INTERNAL. */
  readonly name: string;
  /** Host or IP address without brackets; '' binds every interface (and, when advertised, means this host's name). */
  readonly host: string;
  /** 0 asks the operating system for a free port. */
  readonly port: number;
  readonly securityProtocol: SecurityProtocol;
}

// NAME://host:port, NAME://[ipv6]:port, NAME://:port. Like Kafka, an unbracketed IPv6 address also parses,
// the port being whatever follows the last colon.
const LISTENER_PATTERN = /^([^:/]+):\/\/(?:\[([0-9a-fA-F:.%]+)\]|([0-9a-zA-Z\-%._:]*)):(-?\d+)$/;

function isSecurityProtocol(s: string): s is SecurityProtocol {
  return (SECURITY_PROTOCOLS as readonly string[]).includes(s);
}

/** Parses "NAME:PROTOCOL,..." into a map from upper-case listener name to protocol. */
export function parseSecurityProtocolMap(key: string, text: string): ReadonlyMap<string, SecurityProtocol> {
  const map = new Map<string, SecurityProtocol>();
  for (const entry of splitList(text)) {
    const [name, protocol, ...rest] = entry.split(':').map((s) => s.trim());
    if (name === undefined || name === '' || protocol === undefined || rest.length > 0) {
      throw new ConfigError(key, text, `Map entry '${entry}' is not in the form NAME:PROTOCOL`);
    }
    const upper = protocol.toUpperCase();
    if (!isSecurityProtocol(upper)) {
      throw new ConfigError(key, text, `Unknown security protocol ${protocol} for listener ${name}`);
    }
    const listenerName = name.toUpperCase();
    if (map.has(listenerName)) throw new ConfigError(key, text, `Listener ${listenerName} is mapped twice`);
    map.set(listenerName, upper);
  }
  return map;
}

function parseListener(
  key: string,
  text: string,
  protocols: ReadonlyMap<string, SecurityProtocol>,
): Listener {
  const match = LISTENER_PATTERN.exec(text);
  if (match === null) {
    throw new ConfigError(key, text, 'Unable to parse as a listener; expected NAME://host:port');
  }
  const name = (match[1] ?? '').toUpperCase();
  const host = match[2] ?? match[3] ?? '';
  const port = Number(match[4]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(key, text, `Port ${match[4]} is not in [0,...,65535]`);
  }
  const securityProtocol = protocols.get(name);
  if (securityProtocol === undefined) {
    throw new ConfigError(key, text, `No security protocol defined for listener ${name}`);
  }
  return { name, host, port, securityProtocol };
}

function parseListenerList(
  key: string,
  text: string,
  protocols: ReadonlyMap<string, SecurityProtocol>,
): Listener[] {
  const listeners = splitList(text).map((entry) => parseListener(key, entry, protocols));
  const names = new Set<string>();
  for (const l of listeners) {
    if (names.has(l.name)) throw new ConfigError(key, text, 'Each listener must have a different name');
    names.add(l.name);
  }
  return listeners;
}

export interface ListenerSettings {
  readonly listeners: readonly Listener[];
  readonly advertisedListeners: readonly Listener[];
  readonly interBrokerListenerName: string;
  readonly interBrokerSecurityProtocol: SecurityProtocol;
}

export interface ListenerInputs {
  readonly listeners: string;
  readonly advertisedListeners: string | null;
  readonly securityProtocolMap: string;
  readonly interBrokerListenerName: string | null;
  readonly securityInterBrokerProtocol: string;
  /** Whether security.inter.broker.protocol was set explicitly, which conflicts with inter.broker.listener.name. */
  readonly securityInterBrokerProtocolSet: boolean;
}

export function resolveListeners(input: ListenerInputs): ListenerSettings {
  const protocols = parseSecurityProtocolMap('listener.security.protocol.map', input.securityProtocolMap);
  const listeners = parseListenerList('listeners', input.listeners, protocols);
  if (listeners.length === 0)
    throw new ConfigError('listeners', input.listeners, 'At least one listener is required');
  const ports = new Set<number>();
  for (const l of listeners) {
    // Port 0 is exempt: each such listener gets its own ephemeral port.
    if (l.port !== 0 && ports.has(l.port)) {
      throw new ConfigError('listeners', input.listeners, 'Each listener must have a different port');
    }
    ports.add(l.port);
  }

  const advertisedListeners =
    input.advertisedListeners === null
      ? listeners
      : parseListenerList('advertised.listeners', input.advertisedListeners, protocols);
  const listenerNames = new Set(listeners.map((l) => l.name));
  for (const a of advertisedListeners) {
    if (a.host === '0.0.0.0' || a.host === '::') {
      throw new ConfigError(
        'advertised.listeners',
        input.advertisedListeners,
        'advertised.listeners cannot use the nonroutable meta-address 0.0.0.0; use a routable address',
      );
    }
    if (!listenerNames.has(a.name)) {
      throw new ConfigError(
        'advertised.listeners',
        input.advertisedListeners,
        `Listener ${a.name} is advertised but not defined in listeners`,
      );
    }
  }

  if (input.interBrokerListenerName !== null && input.securityInterBrokerProtocolSet) {
    throw ConfigError.rule(
      'inter.broker.listener.name',
      'Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.',
    );
  }
  // Without an explicit name, the inter-broker listener is the one named after the protocol (PLAINTEXT).
  const interBrokerListenerName = (
    input.interBrokerListenerName ?? input.securityInterBrokerProtocol
  ).toUpperCase();
  const interBroker = advertisedListeners.find((l) => l.name === interBrokerListenerName);
  if (interBroker === undefined) {
    throw ConfigError.rule(
      'inter.broker.listener.name',
      `inter.broker.listener.name must be a listener name defined in advertised.listeners; ${interBrokerListenerName} is not`,
    );
  }
  return {
    listeners,
    advertisedListeners,
    interBrokerListenerName,
    interBrokerSecurityProtocol: interBroker.securityProtocol,
  };
}
