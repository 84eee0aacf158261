// SASL/OAUTHBEARER server (RFC 7628), as Kafka runs it (KIP-255): the client's one message carries a bearer token,
//
//   client-first  n,[a=<authzid>],^Aauth=Bearer <token>^A[<key>=<value>^A...]^A      (^A is 0x01)
//
// and a token validator (unsecured JWS for development, or signed JWTs against a JWKS) decides who it names. A
// token that does not validate is answered, as RFC 7628 says, with an error challenge `{"status":"invalid_token"}`
// (errorCode NONE); the client acknowledges it with a lone 0x01 and only then fails with
// SASL_AUTHENTICATION_FAILED carrying the same JSON. The challenge names no reason: what was wrong with a token is
// logged on the broker, never told to the peer. SASL extensions are accepted and ignored, as Kafka's default
// extensions validator does.

import { SaslFailure, type SaslStep } from './mechanism.js';

/** A validated token: the principal's name, when it stops being valid, and its scope. */
export interface OAuthBearerToken {
  readonly principalName: string;
  /** The token's exp, epoch milliseconds. */
  readonly expiresAtMs: number;
  readonly scope: readonly string[];
}

/** A token that did not validate; `detail` is for the broker's log only. */
export class TokenInvalid extends Error {
  override name = 'TokenInvalid';
  constructor(
    readonly detail: string,
    readonly status: 'invalid_token' | 'insufficient_scope' = 'invalid_token',
    readonly scope: string | null = null,
  ) {
    super(detail);
  }
}

export interface TokenValidator {
  /** Resolves with the token's principal, or rejects with TokenInvalid. */
  validate(token: string): Promise<OAuthBearerToken>;
}

const CONTROL_A = 0x01;
// RFC 7628's saslname: any 7-bit character but ',' and '=', which are escaped as =2C and =3D.
const SASLNAME = String.raw`(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+`;
const KV = String.raw`[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01`;
const CLIENT_FIRST = new RegExp(String.raw`^n,(?:a=(${SASLNAME}))?,\x01((?:${KV})*)\x01$`);
const AUTH = /^(\w+) +([-_~+/.a-zA-Z0-9]+=*)$/;

function malformed(): SaslFailure {
  // Kafka answers a message it cannot parse with its generic invalid-credentials text.
  return new SaslFailure(
    'SASL_AUTHENTICATION_FAILED',
    'Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER',
  );
}

/** The authorization id and bearer token of a client-first message; throws SaslFailure when malformed. */
export function parseClientFirst(message: Buffer): { authzid: string; token: string } {
  const match = CLIENT_FIRST.exec(message.toString('utf8'));
  if (match === null) throw malformed();
  let auth: string | undefined;
  for (const pair of (match[2] as string).split('\x01')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (pair.slice(0, eq) === 'auth') auth = pair.slice(eq + 1);
  }
  const bearer = auth === undefined ? null : AUTH.exec(auth);
  if (bearer === null || (bearer[1] as string).toLowerCase() !== 'bearer') throw malformed();
  const authzid = (match[1] ?? '').replace(/=2C/g, ',').replace(/=3D/g, '=');
  return { authzid, token: bearer[2] as string };
}

function errorChallenge(error: TokenInvalid): string {
  const scope = error.scope === null ? '' : `, "scope":"${error.scope}"`;
  return `{"status":"${error.status}"${scope}}`;
}

type State = 'client-first' | 'error-sent' | 'done';

export class OAuthBearerServer {
  private state: State = 'client-first';
  private challenge = '';

  constructor(
    private readonly validator: TokenValidator,
    /** Where a rejected token's reason goes (the broker log); never to the client. */
    private readonly onRejected: (detail: string) => void,
  ) {}

  async step(message: Buffer): Promise<SaslStep> {
    if (this.state === 'error-sent') {
      this.state = 'done';
      if (message.length === 1 && message[0] === CONTROL_A) {
        throw new SaslFailure('SASL_AUTHENTICATION_FAILED', this.challenge);
      }
      throw malformed();
    }
    if (this.state === 'done') {
      throw new SaslFailure('ILLEGAL_SASL_STATE', 'OAUTHBEARER authentication is already complete');
    }
    this.state = 'done'; // until this step answers
    const { authzid, token } = parseClientFirst(message);
    let validated: OAuthBearerToken;
    try {
      validated = await this.validator.validate(token);
    } catch (err) {
      const invalid = err instanceof TokenInvalid ? err : new TokenInvalid(String(err));
      this.onRejected(invalid.detail);
      this.challenge = errorChallenge(invalid);
      this.state = 'error-sent';
      return { response: Buffer.from(this.challenge, 'utf8'), principal: null };
    }
    if (authzid !== '' && authzid !== validated.principalName) {
      throw new SaslFailure(
        'SASL_AUTHENTICATION_FAILED',
        "Authentication failed: Client requested an authorization id that is different from the token's principal name",
      );
    }
    return {
      response: Buffer.alloc(0),
      principal: `User:${validated.principalName}`,
      credentialExpiresAtMs: validated.expiresAtMs,
    };
  }
}
