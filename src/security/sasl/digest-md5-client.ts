// The client side of SASL DIGEST-MD5 (RFC 2831), qop "auth" only: what ZooKeeper's DigestLoginModule accepts
// from a client's JAAS `Client` section, and nothing else of Brook uses it. MD5 comes from node:crypto; this
// file only arranges the fields as the RFC says.
//
// Exchange: the client starts with an empty token (the mechanism has no initial response), answers the server's
// digest-challenge with a digest-response, then checks the server's rspauth, which proves that the server knew
// the password too. Anything else is an Error value, never an exception.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface DigestMd5Options {
  readonly username: string;
  readonly password: string;
  /** The service ("zookeeper") and server name ("zk-sasl-md5") forming digest-uri, as ZooKeeper names them. */
  readonly protocol: string;
  readonly serverName: string;
  /** For tests: a fixed client nonce. */
  readonly cnonce?: string;
}

type Step = 'start' | 'challenge' | 'rspauth' | 'done';

/** Parses `key=value,key="quoted value",...` (RFC 2831 section 7.1, with backslash escapes in quotes). */
export function parseDirectives(text: string): Map<string, string> | Error {
  const out = new Map<string, string>();
  const pattern = /\s*([A-Za-z0-9-]+)\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^,\s"]*))\s*(?:,|$)/y;
  let at = 0;
  while (at < text.length) {
    if (/^[\s,]*$/.test(text.slice(at))) break;
    pattern.lastIndex = at;
    const m = pattern.exec(text);
    if (m === null) return new Error(`malformed DIGEST-MD5 directive near "${text.slice(at, at + 20)}"`);
    const key = (m[1] as string).toLowerCase();
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] as string);
    // Only qop options and ciphers may repeat in a challenge; a repeated nonce or realm is refused below.
    if (out.has(key) && key !== 'realm') return new Error(`DIGEST-MD5 directive ${key} repeated`);
    if (!out.has(key)) out.set(key, value);
    at = pattern.lastIndex;
  }
  return out;
}

function md5(...parts: (string | Buffer)[]): Buffer {
  const hash = createHash('md5');
  for (const p of parts) hash.update(p);
  return hash.digest();
}

const hex = (b: Buffer): string => b.toString('hex');

function quoted(value: string): string {
  return `"${value.replace(/(["\\])/g, '\\$1')}"`;
}

export class DigestMd5Client {
  private step: Step = 'start';
  private expectedRspauth: Buffer | null = null;

  constructor(private readonly options: DigestMd5Options) {}

  isComplete(): boolean {
    return this.step === 'done';
  }

  /** The next token to send for the server's last one (empty at the start), null when done, or an Error. */
  evaluate(serverToken: Buffer): Buffer | null | Error {
    switch (this.step) {
      case 'start':
        this.step = 'challenge';
        return Buffer.alloc(0);
      case 'challenge':
        return this.answerChallenge(serverToken.toString('utf8'));
      case 'rspauth':
        return this.checkRspauth(serverToken.toString('utf8'));
      default:
        return new Error('DIGEST-MD5 exchange already complete');
    }
  }

  private answerChallenge(text: string): Buffer | Error {
    const challenge = parseDirectives(text);
    if (challenge instanceof Error) return challenge;
    const nonce = challenge.get('nonce');
    if (nonce === undefined) return new Error('DIGEST-MD5 challenge without a nonce');
    const qops = (challenge.get('qop') ?? 'auth').split(',').map((q) => q.trim());
    if (!qops.includes('auth')) return new Error(`DIGEST-MD5 server offers no qop Brook supports: ${qops}`);
    const algorithm = challenge.get('algorithm');
    if (algorithm !== 'md5-sess')
      return new Error(`DIGEST-MD5 challenge algorithm must be md5-sess, not ${algorithm}`);
    // With charset=utf-8 the user name and password are UTF-8; without, ISO 8859-1 (RFC 2831 2.1.2.1).
    const utf8 = challenge.get('charset')?.toLowerCase() === 'utf-8';
    const encode = (s: string) => Buffer.from(s, utf8 ? 'utf8' : 'latin1');
    const realm = challenge.get('realm') ?? '';
    const cnonce = this.options.cnonce ?? randomBytes(24).toString('base64');
    const nc = '00000001';
    const digestUri = `${this.options.protocol}/${this.options.serverName}`;
    const secret = md5(encode(this.options.username), ':', encode(realm), ':', encode(this.options.password));
    const a1 = md5(secret, `:${nonce}:${cnonce}`);
    const kd = (a2: string) => hex(md5(`${hex(a1)}:${nonce}:${nc}:${cnonce}:auth:${hex(md5(a2))}`));
    const response = kd(`AUTHENTICATE:${digestUri}`);
    this.expectedRspauth = Buffer.from(kd(`:${digestUri}`));
    this.step = 'rspauth';
    const fields = [
      ...(utf8 ? ['charset=utf-8'] : []),
      `username=${quoted(this.options.username)}`,
      `realm=${quoted(realm)}`,
      `nonce=${quoted(nonce)}`,
      `nc=${nc}`,
      `cnonce=${quoted(cnonce)}`,
      `digest-uri=${quoted(digestUri)}`,
      'maxbuf=65536',
      `response=${response}`,
      'qop=auth',
    ];
    return Buffer.from(fields.join(','), utf8 ? 'utf8' : 'latin1');
  }

  private checkRspauth(text: string): null | Error {
    const directives = parseDirectives(text);
    if (directives instanceof Error) return directives;
    const rspauth = Buffer.from(directives.get('rspauth') ?? '');
    const expected = this.expectedRspauth as Buffer;
    if (rspauth.length !== expected.length || !timingSafeEqual(rspauth, expected)) {
      return new Error(
        'DIGEST-MD5 server response (rspauth) does not match: the server does not know the password',
      );
    }
    this.step = 'done';
    return null;
  }
}
