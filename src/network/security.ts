// Listener security: which protocol a listener speaks and what a connection has proven about its peer.
//
// PLAINTEXT and SSL connections start authenticated (as User:ANONYMOUS, or later the TLS principal); SASL
// connections start in the handshake and may send only ApiVersions and SaslHandshake; after a SaslHandshake v1
// (state 'authenticating') every request is handed on, and the broker refuses any but SaslAuthenticate with an
// error response. The network layer enforces the gate before the handshake; the SASL authenticator
// (src/security/sasl) drives the state through Connection.security.

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';

export const securityProtocols: readonly SecurityProtocol[] = [
  'PLAINTEXT',
  'SSL',
  'SASL_PLAINTEXT',
  'SASL_SSL',
];

export function isSecurityProtocol(value: string): value is SecurityProtocol {
  return (securityProtocols as readonly string[]).includes(value);
}

export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
}

/**
 * SASL progress on one connection; 'not-required' on listeners without SASL. 'raw-tokens' follows a
 * SaslHandshake v0: the client then sends bare SASL tokens in size-prefixed frames with no request header, and
 * each answer is a bare token too.
 */
export type SaslState =
  | 'not-required'
  | 'handshake'
  | 'authenticating'
  | 'raw-tokens'
  | 'authenticated'
  | 'failed';

/** The apiKey of a Request that carries a bare SASL token (after SaslHandshake v0); never a real API key. */
export const RAW_SASL_TOKEN_API_KEY = -1;

export const ANONYMOUS_PRINCIPAL = 'User:ANONYMOUS';

/** Kafka's MIN_REAUTH_INTERVAL_ONE_SECOND: the least time between the starts of two re-authentications. */
export const REAUTHENTICATION_INTERVAL_MIN_MS = 1000;

/** API keys a SASL connection may send before it is authenticated. */
const API_VERSIONS = 18;
export const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;

/** Mutable per-connection security state. The security module writes it; the network layer and authorizer read it. */
export class SecurityState {
  saslState: SaslState;
  /** Kafka principal, "User:name". */
  principal = ANONYMOUS_PRINCIPAL;
  /** The mechanism chosen in SaslHandshake, once chosen. */
  saslMechanism: string | null = null;
  /**
   * When the authenticated session ends (epoch ms; KIP-368): after it, any request but a SaslHandshake that starts
   * re-authentication closes the connection. Null: the session does not expire.
   */
  sessionExpiresAtMs: number | null = null;
  /** Set while an authenticated connection re-authenticates; the principal must come out the same. */
  reauthenticating = false;
  /** When the last re-authentication began (epoch ms); null before the first. */
  reauthenticationStartedAtMs: number | null = null;
  /**
   * Whether the principal was proven with a delegation token (SCRAM tokenauth); such a connection may not create,
   * renew, expire or describe tokens, as in Kafka.
   */
  tokenAuthenticated = false;
  /**
   * Whether an ApiVersions was answered before the SaslHandshake. Kafka's authenticator then expects the handshake
   * only (HANDSHAKE_OR_VERSIONS_REQUEST -> HANDSHAKE_REQUEST): a second ApiVersions closes the connection unanswered.
   */
  private apiVersionsAnsweredBeforeHandshake = false;

  constructor(readonly protocol: SecurityProtocol) {
    this.saslState = usesSasl(protocol) ? 'handshake' : 'not-required';
  }

  get authenticated(): boolean {
    return this.saslState === 'not-required' || this.saslState === 'authenticated';
  }

  /** Whether a request with this API key may be handled in the current state. */
  admits(apiKey: number): boolean {
    if (this.authenticated) return true;
    if (this.saslState === 'failed') return false;
    // After a SaslHandshake v1 every request reaches the broker: Kafka answers one that is not SaslAuthenticate
    // with its API's error response (ILLEGAL_SASL_STATE), then closes. The broker's handler does that.
    if (this.saslState === 'authenticating') return true;
    // Kafka's authenticator takes SaslAuthenticate only once a SaslHandshake has chosen the mechanism; before
    // that, it fails the authentication without an answer, as for any other request.
    if (apiKey === SASL_AUTHENTICATE) return this.saslState !== 'handshake';
    if (apiKey === API_VERSIONS)
      return this.saslState !== 'handshake' || !this.apiVersionsAnsweredBeforeHandshake;
    return apiKey === SASL_HANDSHAKE;
  }

  /**
   * Called by the ApiVersions handler when it answered with the broker's versions. Before the handshake that uses up
   * the one ApiVersions Kafka allows; an answer of UNSUPPORTED_VERSION or INVALID_REQUEST does not, as in Kafka,
   * so the client may try again with a version or names the broker accepts.
   */
  noteApiVersionsAnswered(): void {
    if (this.saslState === 'handshake') this.apiVersionsAnsweredBeforeHandshake = true;
  }

  /** Called by the SaslHandshake v0 handler: the next frames are bare tokens until authenticate() or fail(). */
  expectRawSaslTokens(mechanism: string): void {
    this.saslMechanism = mechanism;
    this.saslState = 'raw-tokens';
  }

  /** Called by the SASL mechanism when authentication failed; every later request closes the connection. */
  fail(): void {
    this.saslState = 'failed';
  }

  /** Called by the SASL mechanism when the peer has proven who it is. */
  authenticate(
    principal: string,
    sessionExpiresAtMs: number | null = null,
    tokenAuthenticated = false,
  ): void {
    this.principal = principal;
    this.tokenAuthenticated = tokenAuthenticated;
    this.saslState = 'authenticated';
    this.sessionExpiresAtMs = sessionExpiresAtMs;
    this.reauthenticating = false;
  }

  /** Called on a SaslHandshake v1+ of an authenticated connection whose session expires (KIP-368). */
  beginReauthentication(mechanism: string, nowMs: number): void {
    this.saslMechanism = mechanism;
    this.saslState = 'authenticating';
    this.reauthenticating = true;
    this.reauthenticationStartedAtMs = nowMs;
  }

  /**
   * Whether a re-authentication may begin now. Kafka's KafkaChannel lets one begin at most once a second, counted
   * from the start of the previous re-authentication (the first may follow the authentication at once), so an
   * authenticated peer cannot make the broker run its mechanisms in a loop.
   */
  mayBeginReauthentication(nowMs: number): boolean {
    const last = this.reauthenticationStartedAtMs;
    return last === null || nowMs - last >= REAUTHENTICATION_INTERVAL_MIN_MS;
  }

  /** Whether a request other than the SaslHandshake of a re-authentication must close the connection. */
  sessionExpired(nowMs: number): boolean {
    // While re-authenticating, the SASL requests carry on; the gate in admits() keeps out everything else.
    return (
      this.saslState === 'authenticated' &&
      this.sessionExpiresAtMs !== null &&
      nowMs > this.sessionExpiresAtMs
    );
  }
}
