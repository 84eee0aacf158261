// Options shared by the producer, the consumer and the admin client, in Kafka's terms (camelCase of the Java
// client's keys) with Kafka's defaults. TLS takes Node's own tls.ConnectionOptions; SASL (PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512, OAUTHBEARER) runs on each connection after ApiVersions, and again before the session the broker
// granted ends (KIP-368; sasl.ts).

import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { Logger } from '../common/logger.js';
import { ConfigError } from './errors.js';

/** How a client authenticates with SASL: a password mechanism or OAUTHBEARER. */
export type SaslOptions = PasswordSaslOptions | OAuthBearerSaslOptions;

/** SASL PLAIN or SCRAM with a username and password. */
export interface PasswordSaslOptions {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
  /**
   * SCRAM with a delegation token (Kafka's `tokenauth="true"` of the ScramLoginModule): `username` is the token id,
   * `password` its HMAC in base64, and the broker authenticates the token's owner.
   */
  tokenauth?: boolean;
}

/**
 * OAUTHBEARER: `token` is called at each authentication and re-authentication and returns a compact JWT. Use
 * `clientCredentialsTokenProvider` for an OAuth token endpoint, `unsecuredTokenProvider` for a development broker
 * that runs Kafka's unsecured validator, or any function of your own.
 */
export interface OAuthBearerSaslOptions {
  mechanism: 'oauthbearer';
  token: () => string | Promise<string>;
  /** SASL extensions (RFC 7628 key=value pairs) sent with the token. */
  extensions?: Record<string, string>;
}

/**
 * Settings every client shares: bootstrap servers, client id, timeouts, retries, TLS and SASL (Kafka's common
 * client keys in camelCase).
 */
export interface ClientOptions {
  /** host:port pairs (bootstrap.servers). */
  bootstrapServers: string[] | string;
  /**
   * client.id; by default Kafka's generated names: producer-<transactional id or n>, consumer-<group id>-<group
   * instance id or n>, adminclient-<n> (a bare Cluster sends brook-client).
   */
  clientId?: string;
  /** request.timeout.ms: how long one request may wait for its response (default 30000). */
  requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms (default 10000). */
  connectionTimeoutMs?: number;
  /**
   * retries of a retriable failure before it is reported (default 5 for metadata; an admin call by default retries
   * until its timeout, as Kafka's admin client).
   */
  retries?: number;
  /** retry.backoff.ms and retry.backoff.max.ms: exponential backoff between retries (100, 1000). */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /**
   * reconnect.backoff.ms and reconnect.backoff.max.ms (50, 1000): after a failed connection attempt a broker is
   * not picked for an any-broker request (Metadata) before this backoff, doubled per failure up to the max.
   */
  reconnectBackoffMs?: number;
  reconnectBackoffMaxMs?: number;
  /** max.in.flight.requests.per.connection (default 5): requests pipelined on one connection. */
  maxInFlightRequestsPerConnection?: number;
  /** metadata.max.age.ms (default 300000): metadata older than this is refreshed before use. */
  metadataMaxAgeMs?: number;
  /** Present: connect with TLS using these options. */
  tls?: TlsConnectionOptions;
  sasl?: SaslOptions;
  logger?: Logger;
}

export interface ResolvedClientOptions {
  bootstrapServers: string[];
  clientId: string;
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  retries: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  reconnectBackoffMs: number;
  reconnectBackoffMaxMs: number;
  maxInFlightRequestsPerConnection: number;
  metadataMaxAgeMs: number;
  tls: TlsConnectionOptions | undefined;
  sasl: SaslOptions | undefined;
  logger: Logger | undefined;
}

/** How many client ids of each kind this process has generated (Kafka's client id sequences, from 1). */
const generatedClientIds = { producer: 0, consumer: 0, admin: 0 };

/**
 * The client.id of a producer: the configured one (even empty), else producer-<transactional id>, else
 * producer-<sequence>, as Kafka's ProducerConfig names it.
 */
export function producerClientId(clientId: string | undefined, transactionalId: string | undefined): string {
  if (clientId !== undefined) return clientId;
  return `producer-${transactionalId ?? ++generatedClientIds.producer}`;
}

/**
 * The client.id of a consumer: the configured one unless empty, else consumer-<group id>-<group instance id or
 * sequence> as Kafka's ConsumerConfig names it (the group id reads "null" when there is none, as there).
 */
export function consumerClientId(
  clientId: string | undefined,
  groupId: string | undefined,
  groupInstanceId: string | undefined,
): string {
  if (clientId !== undefined && clientId !== '') return clientId;
  return `consumer-${groupId ?? 'null'}-${groupInstanceId ?? ++generatedClientIds.consumer}`;
}

/** The client.id of an admin client: the configured one unless empty, else adminclient-<sequence>, as Kafka's. */
export function adminClientId(clientId: string | undefined): string {
  if (clientId !== undefined && clientId !== '') return clientId;
  return `adminclient-${++generatedClientIds.admin}`;
}

/** A bootstrap.servers list as Kafka parses it: comma-separated, each entry trimmed, empty ones dropped. */
export function bootstrapServerList(servers: string | readonly string[]): string[] {
  return (typeof servers === 'string' ? servers.split(',') : servers)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function resolveClientOptions(o: ClientOptions): ResolvedClientOptions {
  const bootstrapServers = bootstrapServerList(o.bootstrapServers);
  if (bootstrapServers.length === 0) throw new ConfigError('bootstrapServers is empty');
  return {
    bootstrapServers,
    clientId: o.clientId ?? 'brook-client',
    requestTimeoutMs: o.requestTimeoutMs ?? 30_000,
    connectionTimeoutMs: o.connectionTimeoutMs ?? 10_000,
    retries: o.retries ?? 5,
    retryBackoffMs: o.retryBackoffMs ?? 100,
    retryBackoffMaxMs: o.retryBackoffMaxMs ?? 1000,
    reconnectBackoffMs: o.reconnectBackoffMs ?? 50,
    reconnectBackoffMaxMs: o.reconnectBackoffMaxMs ?? 1000,
    maxInFlightRequestsPerConnection: o.maxInFlightRequestsPerConnection ?? 5,
    metadataMaxAgeMs: o.metadataMaxAgeMs ?? 300_000,
    tls: o.tls,
    sasl: o.sasl,
    logger: o.logger,
  };
}

/**
 * default.api.timeout.ms as Kafka's ConsumerConfig and AdminClientConfig define it (an INT, at least 0): the value,
 * or a ConfigError with Kafka's ConfigException text.
 */
export function checkDefaultApiTimeoutMs(value: unknown): number {
  const key = 'default.api.timeout.ms';
  if (typeof value !== 'number' || !Number.isInteger(value) || value > 2 ** 31 - 1 || value < -(2 ** 31))
    throw new ConfigError(
      `Invalid value ${String(value)} for configuration ${key}: Not a number of type INT`,
    );
  if (value < 0)
    throw new ConfigError(`Invalid value ${value} for configuration ${key}: Value must be at least 0`);
  return value;
}

/** Splits "host:port" (and "[v6]:port"). */
export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(s.trim());
  if (m === null) throw new ConfigError(`bad broker address '${s}', expected host:port`);
  return { host: m[1]!, port: Number(m[2]) };
}
