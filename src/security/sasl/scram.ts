// SCRAM-SHA-256 and SCRAM-SHA-512 server (RFC 5802, RFC 7677), as Kafka runs them: no channel binding,
// credentials from the metadata store, or from a delegation token with Kafka's `tokenauth=true` extension (the
// user name is then the token id, the password the token's HMAC in base64, and the principal the token's owner,
// marked as token-authenticated). Three messages:
//
//   client-first  n,[a=<user>],n=<user>,r=<client nonce>[,tokenauth=true]   (an authorization id other than
//                 the user is refused, as Kafka does)
//   server-first  r=<client nonce><server nonce>,s=<salt>,i=<iterations>
//   client-final  c=biws,r=<nonce>,p=<proof>      answered with  v=<server signature>
//
// An unknown user gets a made-up credential (salt derived from the name with a per-process secret, so it is
// stable) and fails at the proof like a wrong password: same messages, same work.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { principalName } from '../delegation-token/token-info.js';
import type { TokenCredential } from '../delegation-token/token-manager.js';
import { SaslFailure, type SaslStep } from './mechanism.js';
import {
  hash,
  hmac,
  SCRAM_ITERATIONS_MIN,
  type ScramCredential,
  type ScramMechanism,
} from './scram-credential.js';

export type CredentialLookup = (user: string, mechanism: ScramMechanism) => Promise<ScramCredential | null>;

/** A delegation token's credential by token id, its owner and expiry; null for an unknown or expired token. */
export type TokenCredentialLookup = (tokenId: string, mechanism: ScramMechanism) => TokenCredential | null;

const FAKE_SECRET = randomBytes(32);

function fakeCredential(mechanism: ScramMechanism, user: string): ScramCredential {
  const seed = createHmac('sha512', FAKE_SECRET).update(`${mechanism}\0${user}`).digest();
  const keyLength = mechanism === 'SCRAM-SHA-256' ? 32 : 64;
  return {
    salt: seed.subarray(0, 16),
    storedKey: randomBytes(keyLength),
    serverKey: randomBytes(keyLength),
    iterations: SCRAM_ITERATIONS_MIN,
  };
}

function invalid(mechanism: ScramMechanism): SaslFailure {
  return new SaslFailure(
    'SASL_AUTHENTICATION_FAILED',
    `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`,
  );
}

/**
 * A message that does not follow the protocol (a bad nonce, a missing proof). Kafka's ScramSaslServer throws a plain
 * SaslException for these, which its authenticator answers with the same message as bad credentials, so a peer
 * learns nothing from the difference: `step` turns this into that answer, with what was wrong for the log only.
 */
class MalformedScram extends Error {}

function malformed(detail: string): MalformedScram {
  return new MalformedScram(`invalid SCRAM message: ${detail}`);
}

/** `a=1,b=2` attributes of a SCRAM message, in order. */
function attributes(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of text.split(',')) {
    if (part.length < 2 || part[1] !== '=') throw malformed(`bad attribute "${part}"`);
    map.set(part[0] as string, part.slice(2));
  }
  return map;
}

/**
 * The client-first message's attributes and, after `r`, Kafka's extensions (`key=value` with a longer key, as
 * its ScramExtensions; `tokenauth` is the one it knows).
 */
function clientFirstAttributes(text: string): {
  attrs: Map<string, string>;
  extensions: Map<string, string>;
} {
  const attrs = new Map<string, string>();
  const extensions = new Map<string, string>();
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq === 1) attrs.set(part[0] as string, part.slice(2));
    else if (eq > 1 && attrs.has('r') && /^[A-Za-z]+$/.test(part.slice(0, eq))) {
      extensions.set(part.slice(0, eq), part.slice(eq + 1));
    } else throw malformed(`bad attribute "${part}"`);
  }
  return { attrs, extensions };
}

function saslName(value: string): string {
  if (/=(?!2C|3D)/.test(value)) throw malformed('bad user name escape');
  return value.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

type State = 'client-first' | 'client-final' | 'done';

export class ScramServer {
  private state: State = 'client-first';
  private user = '';
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';
  private gs2Header = '';
  private credential: ScramCredential | null = null;
  private known = false;
  /** Set for a tokenauth exchange with a known token: its owner becomes the principal. */
  private token: TokenCredential | null = null;

  constructor(
    private readonly mechanism: ScramMechanism,
    private readonly lookup: CredentialLookup,
    private readonly tokenLookup: TokenCredentialLookup = () => null,
  ) {}

  async step(token: Buffer): Promise<SaslStep> {
    try {
      if (this.state === 'client-first') return await this.clientFirst(token.toString('utf8'));
      if (this.state === 'client-final') return this.clientFinal(token.toString('utf8'));
    } catch (err) {
      if (!(err instanceof MalformedScram)) throw err;
      const failure = invalid(this.mechanism);
      throw new SaslFailure(failure.error, failure.message, err.message);
    }
    throw new SaslFailure('ILLEGAL_SASL_STATE', 'SCRAM authentication is already complete');
  }

  private async clientFirst(message: string): Promise<SaslStep> {
    this.state = 'done'; // until this step succeeds
    const match = /^([ny]|p=[^,]*),(a=[^,]*)?,(.*)$/.exec(message);
    if (match === null) throw malformed('bad GS2 header');
    if ((match[1] as string).startsWith('p=')) throw malformed('channel binding is not supported');
    this.gs2Header = message.slice(0, message.length - (match[3] as string).length);
    this.clientFirstBare = match[3] as string;
    const { attrs, extensions } = clientFirstAttributes(this.clientFirstBare);
    const user = attrs.get('n');
    const clientNonce = attrs.get('r');
    if (user === undefined || clientNonce === undefined || clientNonce === '')
      throw malformed('missing n or r');
    if (attrs.has('m')) throw malformed('mandatory extensions are not supported');
    this.user = saslName(user);
    this.refuseOtherAuthorizationId(match[2]);
    let found: ScramCredential | null = null;
    if (this.user !== '' && extensions.get('tokenauth')?.toLowerCase() === 'true') {
      this.token = this.tokenLookup(this.user, this.mechanism);
      found = this.token?.credential ?? null;
    } else if (this.user !== '') {
      found = await this.lookup(this.user, this.mechanism);
    }
    this.known = found !== null;
    this.credential = found ?? fakeCredential(this.mechanism, this.user);
    this.nonce = clientNonce + randomBytes(18).toString('base64url');
    this.serverFirst = `r=${this.nonce},s=${this.credential.salt.toString('base64')},i=${this.credential.iterations}`;
    this.state = 'client-final';
    return { response: Buffer.from(this.serverFirst, 'utf8'), principal: null };
  }

  /**
   * The GS2 header may name an authorization id (`n,a=bob,`): acting as another user than the one authenticated.
   * Kafka's ScramSaslServer refuses one that differs from the user name with its own message (not the generic
   * one), at the client-first message, whatever the credentials. Kafka checks it once the user's credential is
   * found, so an unknown user gets the generic answer there; here every user is treated alike, so the answer
   * says nothing about whether the user exists. With tokenauth the user name is the token id, as in Kafka.
   */
  private refuseOtherAuthorizationId(gs2Authzid: string | undefined): void {
    if (gs2Authzid === undefined) return;
    const authzid = saslName(gs2Authzid.slice(2));
    if (authzid !== '' && authzid !== this.user) {
      throw new SaslFailure(
        'SASL_AUTHENTICATION_FAILED',
        'Authentication failed: Client requested an authorization id that is different from username',
      );
    }
  }

  private clientFinal(message: string): SaslStep {
    this.state = 'done';
    const credential = this.credential as ScramCredential;
    const proofAt = message.lastIndexOf(',p=');
    if (proofAt < 0) throw malformed('missing proof');
    const withoutProof = message.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    const proof = Buffer.from(message.slice(proofAt + 3), 'base64');
    if (attrs.get('c') !== Buffer.from(this.gs2Header, 'utf8').toString('base64'))
      throw malformed('bad channel binding');
    // Kafka accepts a nonce that ends with the server-first one: older librdkafka sends the client nonce again in
    // front of it.
    if (!(attrs.get('r') ?? '').endsWith(this.nonce)) throw malformed('nonce mismatch');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.mechanism, credential.storedKey, authMessage);
    if (proof.length !== clientSignature.length) throw invalid(this.mechanism);
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++)
      clientKey[i] = (proof[i] as number) ^ (clientSignature[i] as number);
    const matches = timingSafeEqual(hash(this.mechanism, clientKey), credential.storedKey);
    if (!matches || !this.known) throw invalid(this.mechanism);
    const serverSignature = hmac(this.mechanism, credential.serverKey, authMessage);
    const response = Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8');
    if (this.token !== null) {
      // As Kafka: the principal is User:<owner's name>, and the session ends with the token's expiry (KIP-368).
      return {
        response,
        principal: `User:${principalName(this.token.owner)}`,
        credentialExpiresAtMs: this.token.expiryTimestampMs,
        tokenAuthenticated: true,
      };
    }
    return { response, principal: `User:${this.user}` };
  }
}
