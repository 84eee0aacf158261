// The broker's SASL authenticator: which mechanisms each SASL listener offers (sasl.enabled.mechanisms, per
// listener too), the PLAIN users of its JAAS config, SCRAM credentials from the metadata store, and the progress
// of each connection. The SaslHandshake and SaslAuthenticate handlers and the raw-token path (after a
// SaslHandshake v0) call it; it drives connection.security and decides when a connection must close.
//
// Kafka's rules: a mechanism not enabled is answered UNSUPPORTED_SASL_MECHANISM with the enabled list and the
// connection closes; a request out of order is ILLEGAL_SASL_STATE and closes; a failed authentication is
// SASL_AUTHENTICATION_FAILED with a message that never says whether the user exists, and closes.
//
// Sessions (KIP-368): with connections.max.reauth.ms set, or a credential that expires (an OAUTHBEARER token), a
// successful SaslAuthenticate v1+ tells the client the session's lifetime; the client re-authenticates before it
// ends with a new SaslHandshake on the same connection (same mechanism, same principal), and a connection that
// sends anything else after the end is closed by the network layer.

import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerConfig } from '../../broker/config/broker-config.js';
import { listenerValue } from '../../broker/config/broker-config.js';
import { ConfigError } from '../../broker/config/config-error.js';
import { Password } from '../../broker/config/config-types.js';
import type { Logger } from '../../common/logger.js';
import type { CoordinationStore } from '../../controller/store/store.js';
import type { Connection } from '../../network/connection.js';
import { NO_RESPONSE, type Request, type Response } from '../../network/request.js';
import { usesSasl } from '../../network/security.js';
import { errorResponseBody } from '../../protocol/error-response.js';
import { ErrorCode } from '../../protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../protocol/headers.js';
import { DecodeError, Reader, Writer } from '../../protocol/primitives/index.js';
import { ApiKey, getApi, isSupportedVersion } from '../../protocol/registry.js';
import { type JaasConfigError, parseJaasConfig, plainUsers } from './jaas.js';
import { isSupportedMechanism, SaslFailure, type SaslServer, SUPPORTED_MECHANISMS } from './mechanism.js';
import { OAuthBearerServer, type TokenValidator } from './oauthbearer.js';
import { JwtValidator } from './oauthbearer-jwt.js';
import { UnsecuredJwsValidator, unsecuredValidatorOptions } from './oauthbearer-unsecured.js';
import { PlainServer } from './plain.js';
import { ScramServer, type TokenCredentialLookup } from './scram.js';
import { ScramCredentialStore } from './scram-store.js';

export interface ListenerSasl {
  readonly mechanisms: readonly string[];
  readonly plainUsers: ReadonlyMap<string, string>;
  /** The OAUTHBEARER token validator, when the listener enables OAUTHBEARER. */
  readonly oauthBearer: OAuthBearerSettings | null;
  /**
   * connections.max.reauth.ms of each enabled mechanism on the listener (Kafka's per-mechanism key, then the
   * listener's, then the broker's); 0: sessions end only when their credential does.
   */
  readonly maxReauthMsByMechanism: ReadonlyMap<string, number>;
}

export interface OAuthBearerSettings {
  readonly validator: TokenValidator;
  /** Kafka's unsecured JWS validator (development only) rather than signed JWTs against a JWKS. */
  readonly unsecured: boolean;
}

export interface HandshakeAnswer {
  readonly errorCode: 'NONE' | 'UNSUPPORTED_SASL_MECHANISM' | 'ILLEGAL_SASL_STATE';
  readonly mechanisms: readonly string[];
  readonly close: boolean;
}

export interface AuthenticateAnswer {
  readonly errorCode:
    | 'NONE'
    | 'SASL_AUTHENTICATION_FAILED'
    | 'ILLEGAL_SASL_STATE'
    | 'UNSUPPORTED_SASL_MECHANISM';
  readonly errorMessage: string | null;
  readonly authBytes: Buffer;
  readonly close: boolean;
  /** KIP-368 session lifetime for SaslAuthenticate v1+; 0 when the session does not expire. */
  readonly sessionLifetimeMs: number;
}

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Password ? value.value : String(value);
}

/** Reads and checks every SASL listener's settings; throws ConfigError naming the key at fault. */
export function listenerSaslSettings(config: BrokerConfig): Map<string, ListenerSasl> {
  const settings = new Map<string, ListenerSasl>();
  for (const listener of config.listeners) {
    if (!usesSasl(listener.securityProtocol)) continue;
    const mechanisms = listenerValue(config, listener.name, 'sasl.enabled.mechanisms') as string[];
    for (const m of mechanisms) {
      if (!isSupportedMechanism(m)) {
        throw new ConfigError(
          'sasl.enabled.mechanisms',
          mechanisms.join(','),
          `Brook supports ${SUPPORTED_MECHANISMS.join(', ')}; listener ${listener.name} enables ${m}`,
        );
      }
    }
    let users = new Map<string, string>();
    if (mechanisms.includes('PLAIN')) {
      const jaas = text(listenerValue(config, listener.name, 'sasl.jaas.config', 'plain'));
      const key = `listener.name.${listener.name.toLowerCase()}.plain.sasl.jaas.config`;
      if (jaas === null)
        throw ConfigError.rule(key, `${key} must list the PLAIN users (user_<name>="<password>")`);
      try {
        users = plainUsers(parseJaasConfig(jaas));
      } catch (err) {
        throw new ConfigError(key, '[hidden]', (err as JaasConfigError).message);
      }
    }
    const oauthBearer = mechanisms.includes('OAUTHBEARER')
      ? oauthBearerSettings(config, listener.name)
      : null;
    const maxReauthMsByMechanism = new Map(
      mechanisms.map((m) => [
        m,
        Number(listenerValue(config, listener.name, 'connections.max.reauth.ms', m)),
      ]),
    );
    settings.set(listener.name, { mechanisms, plainUsers: users, oauthBearer, maxReauthMsByMechanism });
  }
  return settings;
}

const VALIDATOR_HANDLERS = new Set([
  'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
  'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler',
]);

/**
 * A listener's OAUTHBEARER validator. As in Kafka, the listener needs an OAuthBearerLoginModule JAAS entry, and
 * the validator callback handler selects signed JWTs against sasl.oauthbearer.jwks.endpoint.url; without it the
 * unsecured JWS validator runs. Unlike Kafka, a JWKS URL alone also selects signed JWTs, so that configuring a
 * JWKS can never leave the listener accepting unsigned tokens.
 */
function oauthBearerSettings(config: BrokerConfig, listenerName: string): OAuthBearerSettings {
  const prefix = `listener.name.${listenerName.toLowerCase()}.oauthbearer.`;
  const value = (key: string) => listenerValue(config, listenerName, key, 'oauthbearer');
  const jaasKey = `${prefix}sasl.jaas.config`;
  const jaas = text(value('sasl.jaas.config'));
  if (jaas === null) throw ConfigError.rule(jaasKey, `${jaasKey} must configure the OAuthBearerLoginModule`);
  let options: ReadonlyMap<string, string>;
  try {
    const entry = parseJaasConfig(jaas).find((e) => e.loginModule.endsWith('.OAuthBearerLoginModule'));
    if (entry === undefined) throw new Error('no OAuthBearerLoginModule entry');
    options = entry.options;
  } catch (err) {
    throw new ConfigError(jaasKey, '[hidden]', (err as Error).message);
  }
  const handler = text(value('sasl.server.callback.handler.class'));
  if (handler !== null && !VALIDATOR_HANDLERS.has(handler)) {
    throw new ConfigError(
      `${prefix}sasl.server.callback.handler.class`,
      handler,
      "Brook runs Kafka's OAuthBearerValidatorCallbackHandler or, unset, the unsecured validator; it cannot load Java classes",
    );
  }
  const jwksUrl = text(value('sasl.oauthbearer.jwks.endpoint.url'));
  if (handler === null && jwksUrl === null) {
    try {
      return { validator: new UnsecuredJwsValidator(unsecuredValidatorOptions(options)), unsecured: true };
    } catch (err) {
      throw new ConfigError(jaasKey, '[hidden]', (err as Error).message);
    }
  }
  if (jwksUrl === null) {
    throw ConfigError.rule(
      'sasl.oauthbearer.jwks.endpoint.url',
      'OAuthBearerValidatorCallbackHandler needs sasl.oauthbearer.jwks.endpoint.url',
    );
  }
  try {
    const validator = new JwtValidator({
      jwksEndpointUrl: jwksUrl,
      jwksRefreshMs: Number(value('sasl.oauthbearer.jwks.endpoint.refresh.ms')),
      jwksCooldownMs: Number(value('sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms')),
      expectedAudience: value('sasl.oauthbearer.expected.audience') as string[],
      expectedIssuer: text(value('sasl.oauthbearer.expected.issuer')),
      clockSkewSeconds: Number(value('sasl.oauthbearer.clock.skew.seconds')),
      scopeClaimName: text(value('sasl.oauthbearer.scope.claim.name')) ?? 'scope',
      subClaimName: text(value('sasl.oauthbearer.sub.claim.name')) ?? 'sub',
    });
    return { validator, unsecured: false };
  } catch (err) {
    throw new ConfigError('sasl.oauthbearer.jwks.endpoint.url', jwksUrl, (err as Error).message);
  }
}

export class SaslAuthenticator {
  private readonly servers = new WeakMap<Connection, SaslServer>();
  private readonly credentials: ScramCredentialStore;

  /** Each SASL listener's settings; replaced whole by a dynamic change (updateListeners). */
  private listeners: ReadonlyMap<string, ListenerSasl>;

  constructor(
    listeners: ReadonlyMap<string, ListenerSasl>,
    store: CoordinationStore,
    private readonly logger: Logger,
    /** Delegation tokens for SCRAM's tokenauth extension; none by default. */
    private readonly tokenLookup: TokenCredentialLookup = () => null,
    /** connection.failed.authentication.delay.ms (KIP-306); see failureDelay. */
    private readonly failedAuthenticationDelayMs = 0,
  ) {
    this.credentials = new ScramCredentialStore(store);
    this.listeners = listeners;
    this.warnUnsecured(listeners);
  }

  /**
   * New SASL settings from a dynamic change (sasl.enabled.mechanisms, sasl.jaas.config, per listener too, or a
   * listener added): a handshake from now on sees them; a connection already authenticated, or whose handshake
   * chose its mechanism already, keeps what it has, as in Kafka.
   */
  updateListeners(listeners: ReadonlyMap<string, ListenerSasl>): void {
    this.listeners = listeners;
    this.warnUnsecured(listeners);
  }

  private warnUnsecured(listeners: ReadonlyMap<string, ListenerSasl>): void {
    for (const [name, listener] of listeners) {
      if (listener.oauthBearer?.unsecured === true) {
        this.logger.warn(
          'OAUTHBEARER accepts unsecured (unsigned) JWS tokens: for development only; set sasl.oauthbearer.jwks.endpoint.url to require signed tokens',
          { listener: name },
        );
      }
    }
  }

  /**
   * What a SASL handler awaits before it answers a failure (an answer whose `close` is set), as Kafka's broker
   * delays it (KIP-306): connection.failed.authentication.delay.ms. The connection has taken no request since the
   * failure and closes once the answer is written, so a client retrying bad credentials in a loop, or a peer
   * guessing passwords, gets one try per delay per connection, and the connection still counts against
   * max.connections.per.ip while it waits.
   */
  failureDelay(): Promise<void> {
    return this.failedAuthenticationDelayMs > 0 ? sleep(this.failedAuthenticationDelayMs) : Promise.resolve();
  }

  /**
   * Fails a connection's authentication and stops it taking requests at the same instant: a mechanism may fail
   * synchronously, inside the network layer's loop over the frames of one read, and a request pipelined behind the
   * failing one must not be served (nor close the connection before the failure is answered). The connection
   * closes once its answers are written.
   */
  private closeOnFailure(connection: Connection, reason: string): void {
    connection.security.fail();
    connection.closeAfterResponses(reason);
  }

  get scramCredentials(): ScramCredentialStore {
    return this.credentials;
  }

  handshake(connection: Connection, version: number, mechanism: string): HandshakeAnswer {
    const security = connection.security;
    const listener = this.listeners.get(connection.listenerName);
    const mechanisms = listener?.mechanisms ?? [];
    if (
      listener !== undefined &&
      security.saslState === 'authenticated' &&
      security.sessionExpiresAtMs !== null &&
      version >= 1
    ) {
      const nowMs = Date.now();
      if (security.mayBeginReauthentication(nowMs)) {
        return this.beginReauthentication(connection, listener, mechanism, nowMs);
      }
      // Too soon after the last re-authentication began: Kafka does not start one, and its request handler answers
      // the SaslHandshake ILLEGAL_SASL_STATE below, leaving the connection open (a session that has ended is
      // closed before this, by the network layer).
    }
    if (listener === undefined || security.saslState !== 'handshake') {
      // Not a SASL listener, already past the handshake, or a re-authentication refused above: Kafka answers
      // (listing no mechanisms, as its SaslHandshake error response and KafkaApis do), and closes a connection still
      // authenticating.
      const close = !security.authenticated;
      if (close) this.closeOnFailure(connection, 'SaslHandshake: ILLEGAL_SASL_STATE');
      return { errorCode: 'ILLEGAL_SASL_STATE', mechanisms: [], close };
    }
    if (!mechanisms.includes(mechanism)) {
      this.closeOnFailure(connection, 'SaslHandshake: UNSUPPORTED_SASL_MECHANISM');
      this.logger.info('SASL mechanism not enabled', { listener: connection.listenerName, mechanism });
      return { errorCode: 'UNSUPPORTED_SASL_MECHANISM', mechanisms, close: true };
    }
    this.servers.set(connection, this.serverFor(mechanism, listener, connection.listenerName));
    if (version === 0) security.expectRawSaslTokens(mechanism);
    else {
      security.saslMechanism = mechanism;
      security.saslState = 'authenticating';
    }
    return { errorCode: 'NONE', mechanisms, close: false };
  }

  /**
   * KIP-368: a SaslHandshake on an authenticated connection whose session expires starts re-authentication. A
   * different mechanism is accepted here and refused at the SaslAuthenticate that follows, as Kafka does.
   */
  private beginReauthentication(
    connection: Connection,
    listener: ListenerSasl,
    mechanism: string,
    nowMs: number,
  ): HandshakeAnswer {
    const security = connection.security;
    const previous = security.saslMechanism as string;
    if (!listener.mechanisms.includes(mechanism)) {
      this.closeOnFailure(connection, 'SaslHandshake: UNSUPPORTED_SASL_MECHANISM');
      return { errorCode: 'UNSUPPORTED_SASL_MECHANISM', mechanisms: listener.mechanisms, close: true };
    }
    const server: SaslServer =
      mechanism === previous
        ? this.serverFor(mechanism, listener, connection.listenerName)
        : {
            step: () => {
              throw new SaslFailure(
                'SASL_AUTHENTICATION_FAILED',
                `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${previous}'`,
              );
            },
          };
    this.servers.set(connection, server);
    security.beginReauthentication(previous, nowMs);
    return { errorCode: 'NONE', mechanisms: listener.mechanisms, close: false };
  }

  private serverFor(mechanism: string, listener: ListenerSasl, listenerName: string): SaslServer {
    if (mechanism === 'PLAIN') return new PlainServer(listener.plainUsers);
    if (mechanism === 'OAUTHBEARER') {
      const validator = (listener.oauthBearer as OAuthBearerSettings).validator;
      return new OAuthBearerServer(validator, (detail) =>
        this.logger.info('OAUTHBEARER token rejected', { listener: listenerName, detail }),
      );
    }
    const scram = mechanism as 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
    return new ScramServer(scram, (user, m) => this.credentials.credential(user, m), this.tokenLookup);
  }

  /** Fails the authentication of a connection whose request refuseRequest answered; it closes after the answer. */
  closeAfterRefusal(connection: Connection, reason: string): void {
    this.closeOnFailure(connection, reason);
  }

  /**
   * Whether a request other than SaslAuthenticate or SaslHandshake (which answer for themselves) must be refused
   * because a SaslHandshake v1 chose a mechanism and authentication, or re-authentication, is under way. Kafka's
   * authenticator then takes only SaslAuthenticate: anything else, ApiVersions included, is answered with its
   * own error response carrying ILLEGAL_SASL_STATE and fails the authentication. When it answers true the
   * connection has failed here and closes once the caller's answer is written.
   */
  refusesDuringAuthentication(connection: Connection, apiName: string): boolean {
    if (connection.security.saslState !== 'authenticating') return false;
    this.closeOnFailure(connection, `${apiName} during SASL authentication: ILLEGAL_SASL_STATE`);
    return true;
  }

  /** One SaslAuthenticate token (or a raw token after a v0 handshake). */
  async authenticate(connection: Connection, token: Buffer): Promise<AuthenticateAnswer> {
    const security = connection.security;
    const server = this.servers.get(connection);
    const inProgress = security.saslState === 'authenticating' || security.saslState === 'raw-tokens';
    if (server === undefined || !inProgress) {
      const message = security.authenticated
        ? 'SaslAuthenticate request received after successful authentication'
        : 'Unexpected SaslAuthenticate request: no SaslHandshake chose a mechanism';
      const close = !security.authenticated;
      if (close) this.closeOnFailure(connection, 'SaslAuthenticate: ILLEGAL_SASL_STATE');
      return {
        errorCode: 'ILLEGAL_SASL_STATE',
        errorMessage: message,
        authBytes: Buffer.alloc(0),
        close,
        sessionLifetimeMs: 0,
      };
    }
    try {
      const step = await server.step(token);
      let sessionLifetimeMs = 0;
      if (step.principal !== null) {
        if (security.reauthenticating && step.principal !== security.principal) {
          throw new SaslFailure(
            'SASL_AUTHENTICATION_FAILED',
            `Cannot change principals during re-authentication from ${security.principal.replace(':', '.')}: ${step.principal.replace(':', '.')}`,
          );
        }
        this.servers.delete(connection);
        const nowMs = Date.now();
        sessionLifetimeMs = this.sessionLifetimeMs(connection, step.credentialExpiresAtMs, nowMs);
        const reauthenticated = security.reauthenticating;
        security.authenticate(
          step.principal,
          sessionLifetimeMs > 0 ? nowMs + sessionLifetimeMs : null,
          step.tokenAuthenticated === true,
        );
        this.logger.debug(reauthenticated ? 'SASL re-authenticated' : 'SASL authenticated', {
          listener: connection.listenerName,
          principal: step.principal,
          sessionLifetimeMs,
        });
      }
      return {
        errorCode: 'NONE',
        errorMessage: null,
        authBytes: step.response,
        close: false,
        sessionLifetimeMs,
      };
    } catch (err) {
      if (!(err instanceof SaslFailure)) throw err;
      this.servers.delete(connection);
      this.closeOnFailure(connection, `SASL authentication failed: ${err.message}`);
      this.logger.info('SASL authentication failed', {
        listener: connection.listenerName,
        remote: `${connection.remoteAddress}:${connection.remotePort}`,
        mechanism: security.saslMechanism,
        error: err.message,
        ...(err.detail === undefined ? {} : { detail: err.detail }),
      });
      return {
        errorCode: err.error,
        errorMessage: err.message,
        authBytes: Buffer.alloc(0),
        close: true,
        sessionLifetimeMs: 0,
      };
    }
  }

  /**
   * Kafka's session lifetime: connections.max.reauth.ms of the mechanism used, shortened to the credential's
   * own expiry when it has one; 0 (no expiry) when neither applies. A credential already expired at this instant gives the smallest
   * lifetime, 1 ms, rather than 0, which would mean "never expires".
   */
  private sessionLifetimeMs(
    connection: Connection,
    credentialExpiresAtMs: number | undefined,
    nowMs: number,
  ): number {
    const listener = this.listeners.get(connection.listenerName);
    const maxReauthMs = listener?.maxReauthMsByMechanism.get(connection.security.saslMechanism ?? '') ?? 0;
    if (credentialExpiresAtMs === undefined) return Math.max(maxReauthMs, 0);
    const untilExpiryMs = credentialExpiresAtMs - nowMs;
    const lifetimeMs = maxReauthMs > 0 ? Math.min(untilExpiryMs, maxReauthMs) : untilExpiryMs;
    return Math.max(1, Math.floor(lifetimeMs));
  }
}

/**
 * A bare token after a SaslHandshake v0: answered with a bare token; a failure closes the connection without an
 * answer, as Kafka does (the v0 exchange has no way to carry an error).
 */
export async function rawSaslToken(authenticator: SaslAuthenticator, request: Request): Promise<Response> {
  const token = Buffer.from(request.frame);
  const answer = await authenticator.authenticate(request.connection, token);
  if (answer.close) {
    // The authenticator has closed the connection; it ends after the delay, with no answer.
    await authenticator.failureDelay();
    return NO_RESPONSE;
  }
  return [answer.authBytes];
}

/** The requests a connection in the middle of SASL authentication may send: the others are refused. */
const ANSWERED_DURING_AUTHENTICATION = new Set<number>([
  ApiKey.SASL_AUTHENTICATE,
  ApiKey.SASL_HANDSHAKE,
  ApiKey.API_VERSIONS,
]);

/** Whether the request arrived after a SaslHandshake v1 and is not part of the SASL exchange (see refuseRequest). */
export function refusedDuringAuthentication(request: Request): boolean {
  return (
    request.connection.security.saslState === 'authenticating' &&
    !ANSWERED_DURING_AUTHENTICATION.has(request.apiKey)
  );
}

/** An API as Kafka's ApiKeys enum names it in messages (PRODUCE, DESCRIBE_CLUSTER): Brook's ApiKey constant. */
function apiConstantName(apiKey: number): string {
  return Object.entries(ApiKey).find(([, key]) => key === apiKey)?.[0] ?? String(apiKey);
}

/**
 * Any request but the SASL exchange after a SaslHandshake v1. Kafka's authenticator (SaslServerAuthenticator
 * handleSaslToken) parses it, answers with that API's own error response carrying ILLEGAL_SASL_STATE and fails the
 * authentication, so the connection closes after the answer (sent after connection.failed.authentication.delay.ms,
 * as any authentication failure). A request that does not decode, or one Kafka sends no error response for (a
 * Produce with acks=0), closes the connection unanswered.
 */
export async function refuseRequest(authenticator: SaslAuthenticator, request: Request): Promise<Response> {
  const api = getApi(request.apiKey);
  const version = request.apiVersion;
  if (!isSupportedVersion(api, version)) {
    throw new DecodeError('unsupported-version', `${api.name} version ${version} is not supported`);
  }
  const reader = new Reader(request.frame);
  decodeRequestHeader(reader);
  const body = api.decodeRequest(reader, version);
  const message = `Unexpected Kafka request of type ${apiConstantName(request.apiKey)} during SASL authentication.`;
  const response = errorResponseBody(request.apiKey, version, body, {
    code: ErrorCode.ILLEGAL_SASL_STATE,
    message,
  });
  authenticator.closeAfterRefusal(
    request.connection,
    `${api.name} during SASL authentication: ILLEGAL_SASL_STATE`,
  );
  await authenticator.failureDelay();
  if (response === null) return NO_RESPONSE;
  const w = new Writer(256);
  encodeResponseHeader(w, request.apiKey, version, request.correlationId);
  api.encodeResponse(w, version, response);
  return w.chunksOut();
}
