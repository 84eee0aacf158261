// Listener configuration: a listener is a name, a host, a port and a security protocol, written in
// server.properties as `listeners=NAME://host:port,...` with `listener.security.protocol.map=NAME:PROTOCOL,...`.
// This file parses that form; the socket server binds what it describes.

import type { TLSSocket, TlsOptions } from 'node:tls';
import { isSecurityProtocol, type SecurityProtocol, usesTls } from './security.js';

export interface ListenerConfig {
  /** Kafka's listener name (PLAINTEXT, INTERNAL, ...), used in logs and by advertised.listeners. */
  readonly name: string;
  /** Address to bind; '' or '0.0.0.0' binds all IPv4 interfaces, as in Kafka. */
  readonly host: string;
  /** Port to bind; 0 picks a free port (tests). */
  readonly port: number;
  readonly securityProtocol: SecurityProtocol;
  /** Key, certificate and client-auth settings, required for SSL and SASL_SSL listeners. */
  readonly tls?: TlsOptions;
  /**
   * For TLS listeners: the principal of a connection once its handshake is done (from its client certificate),
   * or an Error to refuse the connection. Without it TLS connections are User:ANONYMOUS.
   */
  readonly peerPrincipal?: (socket: TLSSocket) => string | Error;
  /**
   * For SASL listeners: the largest frame before authentication on this listener (Kafka's
   * listener.name.<listener>.sasl.server.max.receive.size). Absent: the server's sasl.server.max.receive.size.
   */
  readonly saslServerMaxReceiveSize?: number;
}

export class ListenerConfigError extends Error {
  override name = 'ListenerConfigError';
}

/** Kafka's default map: each security protocol is also a listener name. */
export const defaultSecurityProtocolMap: Readonly<Record<string, SecurityProtocol>> = {
  PLAINTEXT: 'PLAINTEXT',
  SSL: 'SSL',
  SASL_PLAINTEXT: 'SASL_PLAINTEXT',
  SASL_SSL: 'SASL_SSL',
};

/** Parses `listener.security.protocol.map` ("INTERNAL:PLAINTEXT,EXTERNAL:SSL"). */
export function parseSecurityProtocolMap(value: string): Record<string, SecurityProtocol> {
  const map: Record<string, SecurityProtocol> = {};
  for (const entry of value.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const colon = trimmed.indexOf(':');
    const name = trimmed.slice(0, colon).trim();
    const protocol = trimmed.slice(colon + 1).trim();
    if (colon <= 0 || !isSecurityProtocol(protocol)) {
      throw new ListenerConfigError(`bad listener.security.protocol.map entry "${trimmed}"`);
    }
    map[name] = protocol;
  }
  return map;
}

const LISTENER_PATTERN = /^([A-Za-z0-9_-]+):\/\/(\[[^\]]*\]|[^:/]*):(\d+)$/;

/**
 * Parses `listeners` ("PLAINTEXT://127.0.0.1:9092,SSL://:9093"). An empty host binds all interfaces. Names must be
 * unique and must appear in the protocol map. TLS options are attached by the caller for TLS listeners.
 */
export function parseListeners(
  value: string,
  protocolMap: Readonly<Record<string, SecurityProtocol>> = defaultSecurityProtocolMap,
): ListenerConfig[] {
  const listeners: ListenerConfig[] = [];
  for (const entry of value.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const match = LISTENER_PATTERN.exec(trimmed);
    if (match === null) throw new ListenerConfigError(`bad listener "${trimmed}"`);
    const name = match[1]!;
    const host = match[2]!.replace(/^\[|\]$/g, '');
    const port = Number(match[3]);
    const securityProtocol = protocolMap[name];
    if (securityProtocol === undefined) {
      throw new ListenerConfigError(`listener ${name} has no entry in listener.security.protocol.map`);
    }
    if (port > 65535) throw new ListenerConfigError(`listener ${name} port ${port} out of range`);
    if (listeners.some((l) => l.name === name))
      throw new ListenerConfigError(`listener ${name} listed twice`);
    listeners.push({ name, host, port, securityProtocol });
  }
  if (listeners.length === 0) throw new ListenerConfigError('no listeners configured');
  return listeners;
}

/** Checks what parsing cannot: a TLS listener needs TLS options. */
export function checkListener(listener: ListenerConfig): void {
  if (usesTls(listener.securityProtocol) && listener.tls === undefined) {
    throw new ListenerConfigError(
      `listener ${listener.name} uses ${listener.securityProtocol} but has no TLS options`,
    );
  }
  if (!Number.isInteger(listener.port) || listener.port < 0 || listener.port > 65535) {
    throw new ListenerConfigError(`listener ${listener.name} port ${listener.port} out of range`);
  }
}
