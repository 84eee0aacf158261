// The broker's SASL authenticator: which mechanisms each SASL listener offers (sasl.enabled.mechanisms, per
// listener too), the PLAIN users of its JAAS config, SCRAM credentials from the metadata store, and the progress
// of each connection. The SaslHandshake and SaslAuthenticate handlers and the raw-token path (after a
// SaslHandshake v0) call it; it drives connection.security and decides when a connection must close.
//
// Kafka's rules: a mechanism not enabled is answered UNSUPPORTED_SASL_MECHANISM with the enabled list and the
// connection closes; a request out of order is ILLEGAL_SASL_STATE and closes; a failed authentication is
// SASL_AUTHENTICATION_FAILED with a message that never says whether the user exists, and closes.

import type { BrokerConfig } from '../../broker/config/broker-config.js';
import { listenerValue } from '../../broker/config/broker-config.js';
import { ConfigError } from '../../broker/config/config-error.js';
import { Password } from '../../broker/config/config-types.js';
import type { Logger } from '../../common/logger.js';
import type { CoordinationStore } from '../../controller/store/store.js';
import type { Connection } from '../../network/connection.js';
import { NO_RESPONSE, type Request, type Response } from '../../network/request.js';
import { usesSasl } from '../../network/security.js';
import { type JaasConfigError, parseJaasConfig, plainUsers } from './jaas.js';
import { isSupportedMechanism, SaslFailure, type SaslServer, SUPPORTED_MECHANISMS } from './mechanism.js';
import { PlainServer } from './plain.js';
import { ScramServer } from './scram.js';
import { ScramCredentialStore } from './scram-store.js';

export interface ListenerSasl {
  readonly mechanisms: readonly string[];
  readonly plainUsers: ReadonlyMap<string, string>;
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
    settings.set(listener.name, { mechanisms, plainUsers: users });
  }
  return settings;
}

export class SaslAuthenticator {
  private readonly servers = new WeakMap<Connection, SaslServer>();
  private readonly credentials: ScramCredentialStore;

  constructor(
    private readonly listeners: ReadonlyMap<string, ListenerSasl>,
    store: CoordinationStore,
    private readonly logger: Logger,
  ) {
    this.credentials = new ScramCredentialStore(store);
  }

  get scramCredentials(): ScramCredentialStore {
    return this.credentials;
  }

  handshake(connection: Connection, version: number, mechanism: string): HandshakeAnswer {
    const security = connection.security;
    const listener = this.listeners.get(connection.listenerName);
    const mechanisms = listener?.mechanisms ?? [];
    if (listener === undefined || security.saslState !== 'handshake') {
      // Not a SASL listener, or already past the handshake: Kafka answers, and closes a connection still
      // authenticating.
      return { errorCode: 'ILLEGAL_SASL_STATE', mechanisms, close: !security.authenticated };
    }
    if (!mechanisms.includes(mechanism)) {
      security.fail();
      this.logger.info('SASL mechanism not enabled', { listener: connection.listenerName, mechanism });
      return { errorCode: 'UNSUPPORTED_SASL_MECHANISM', mechanisms, close: true };
    }
    this.servers.set(connection, this.serverFor(mechanism, listener));
    if (version === 0) security.expectRawSaslTokens(mechanism);
    else {
      security.saslMechanism = mechanism;
      security.saslState = 'authenticating';
    }
    return { errorCode: 'NONE', mechanisms, close: false };
  }

  private serverFor(mechanism: string, listener: ListenerSasl): SaslServer {
    if (mechanism === 'PLAIN') return new PlainServer(listener.plainUsers);
    const scram = mechanism as 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
    return new ScramServer(scram, (user, m) => this.credentials.credential(user, m));
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
      return {
        errorCode: 'ILLEGAL_SASL_STATE',
        errorMessage: message,
        authBytes: Buffer.alloc(0),
        close: !security.authenticated,
      };
    }
    try {
      const step = await server.step(token);
      if (step.principal !== null) {
        this.servers.delete(connection);
        security.authenticate(step.principal);
        this.logger.debug('SASL authenticated', {
          listener: connection.listenerName,
          principal: step.principal,
        });
      }
      return { errorCode: 'NONE', errorMessage: null, authBytes: step.response, close: false };
    } catch (err) {
      if (!(err instanceof SaslFailure)) throw err;
      this.servers.delete(connection);
      security.fail();
      this.logger.info('SASL authentication failed', {
        listener: connection.listenerName,
        remote: `${connection.remoteAddress}:${connection.remotePort}`,
        mechanism: security.saslMechanism,
        error: err.message,
      });
      return { errorCode: err.error, errorMessage: err.message, authBytes: Buffer.alloc(0), close: true };
    }
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
    request.connection.closeAfterResponses(
      `SASL authentication failed: ${answer.errorMessage ?? answer.errorCode}`,
    );
    return NO_RESPONSE;
  }
  return [answer.authBytes];
}
