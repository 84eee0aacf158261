// SASL/PLAIN (RFC 4616) against static users: the token is `[authzid] NUL authcid NUL password`. Kafka's
// PlainServerCallbackHandler checks passwords from the JAAS config's user_<name> options; here the comparison
// hashes both sides and compares in constant time, and an unknown user costs the same as a wrong password.

import { createHash, timingSafeEqual } from 'node:crypto';
import { SaslFailure, type SaslStep } from './mechanism.js';

/** Kafka's message for both an unknown user and a wrong password. */
const INVALID = 'Authentication failed: Invalid username or password';
/** Compared against when the user does not exist, so both failures do the same work. */
const NO_PASSWORD = createHash('sha256').update('brook: no such user').digest();

function digest(text: string | Buffer): Buffer {
  return createHash('sha256').update(text).digest();
}

export class PlainServer {
  private done = false;

  constructor(private readonly users: ReadonlyMap<string, string>) {}

  step(token: Buffer): SaslStep {
    if (this.done) throw new SaslFailure('ILLEGAL_SASL_STATE', 'PLAIN authentication is already complete');
    this.done = true;
    const first = token.indexOf(0);
    const second = first < 0 ? -1 : token.indexOf(0, first + 1);
    if (first < 0 || second < 0 || token.indexOf(0, second + 1) >= 0) {
      throw new SaslFailure('SASL_AUTHENTICATION_FAILED', 'Invalid SASL/PLAIN response: expected 3 tokens');
    }
    const authzid = token.subarray(0, first).toString('utf8');
    const username = token.subarray(first + 1, second).toString('utf8');
    const password = token.subarray(second + 1);
    if (username === '') {
      throw new SaslFailure('SASL_AUTHENTICATION_FAILED', 'Authentication failed: username not specified');
    }
    const expected = this.users.get(username);
    const matches = timingSafeEqual(
      digest(password),
      expected === undefined ? NO_PASSWORD : digest(expected),
    );
    if (!matches || expected === undefined) throw new SaslFailure('SASL_AUTHENTICATION_FAILED', INVALID);
    if (authzid !== '' && authzid !== username) {
      throw new SaslFailure(
        'SASL_AUTHENTICATION_FAILED',
        'Authentication failed: Client requested an authorization id that is different from username',
      );
    }
    return { response: Buffer.alloc(0), principal: `User:${username}` };
  }
}
