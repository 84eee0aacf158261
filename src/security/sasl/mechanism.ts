// What a SASL mechanism's server side looks like to the authenticator: it takes the client's tokens one at a
// time and answers a token, until it names the authenticated principal or fails.

export type SaslErrorName =
  | 'SASL_AUTHENTICATION_FAILED'
  | 'ILLEGAL_SASL_STATE'
  | 'UNSUPPORTED_SASL_MECHANISM';

/**
 * An authentication that must stop: the message goes to the client (never saying whether a user exists); `detail`,
 * when set, only to the broker's log (what was wrong with a message the client gets Kafka's generic answer for).
 */
export class SaslFailure extends Error {
  override name = 'SaslFailure';
  constructor(
    readonly error: SaslErrorName,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

export interface SaslStep {
  /** The token for the client (may be empty). */
  readonly response: Buffer;
  /** Set once authentication is complete: "User:name". */
  readonly principal: string | null;
  /**
   * When the credential itself stops being valid (an OAUTHBEARER token's exp, epoch ms); it bounds the session
   * lifetime given to the client (KIP-368). Absent: the credential does not expire.
   */
  readonly credentialExpiresAtMs?: number;
  /** The peer authenticated with a delegation token (which may not be used to get or manage tokens). */
  readonly tokenAuthenticated?: boolean;
}

export interface SaslServer {
  step(token: Buffer): SaslStep | Promise<SaslStep>;
}

export const SUPPORTED_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
export type Mechanism = (typeof SUPPORTED_MECHANISMS)[number];

export function isSupportedMechanism(name: string): name is Mechanism {
  return (SUPPORTED_MECHANISMS as readonly string[]).includes(name);
}
