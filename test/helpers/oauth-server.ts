// A small OAuth 2 authorization server for tests, on 127.0.0.1: GET /jwks serves the public key set (counting
// fetches), POST /token grants the client credentials of known clients a signed JWT (RS256, with the issuer,
// audience and scope asked for). `sign` mints tokens directly, with any claims, for the negative cases.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

export interface OAuthServerOptions {
  issuer?: string;
  audience?: string;
  /** client id -> secret */
  clients?: Record<string, string>;
  tokenLifetimeSeconds?: number;
}

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export class OAuthServer {
  jwksFetches = 0;
  tokenRequests = 0;

  private constructor(
    private readonly server: Server,
    private readonly privateKey: PrivateKey,
    readonly kid: string,
    readonly issuer: string,
    readonly audience: string,
    private readonly tokenLifetimeSeconds: number,
  ) {}

  static async start(options: OAuthServerOptions = {}): Promise<OAuthServer> {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const kid = 'test-key-1';
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
    const clients = options.clients ?? {};
    let self: OAuthServer | null = null;
    const server = createServer((req, res) => {
      const me = self as OAuthServer;
      if (req.method === 'GET' && req.url === '/jwks') {
        me.jwksFetches++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [jwk] }));
        return;
      }
      if (req.method === 'POST' && req.url === '/token') {
        me.tokenRequests++;
        let body = '';
        req.on('data', (chunk: Buffer) => {
          body += chunk.toString('utf8');
        });
        req.on('end', () => {
          void me.grant(req.headers.authorization, body, clients).then(([status, answer]) => {
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(answer));
          });
        });
        return;
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new OAuthServer(
      server,
      privateKey,
      kid,
      options.issuer ?? 'https://issuer.brook.test',
      options.audience ?? 'brook',
      options.tokenLifetimeSeconds ?? 600,
    );
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async grant(
    authorization: string | undefined,
    body: string,
    clients: Record<string, string>,
  ): Promise<[number, unknown]> {
    const form = new URLSearchParams(body);
    const basic = /^Basic (.+)$/.exec(authorization ?? '');
    const [id, secret] = basic
      ? Buffer.from(basic[1] as string, 'base64')
          .toString('utf8')
          .split(':')
          .map(decodeURIComponent)
      : [form.get('client_id') ?? '', form.get('client_secret') ?? ''];
    if (form.get('grant_type') !== 'client_credentials') return [400, { error: 'unsupported_grant_type' }];
    if (id === undefined || clients[id] === undefined || clients[id] !== secret) {
      return [401, { error: 'invalid_client' }];
    }
    const scope = form.get('scope');
    const token = await this.sign({ sub: id, ...(scope ? { scope } : {}) });
    return [200, { access_token: token, token_type: 'Bearer', expires_in: this.tokenLifetimeSeconds }];
  }

  /** A token signed with the server's key; claims override the defaults (iss, aud, iat, exp = now + lifetime). */
  async sign(claims: JWTPayload, options: { kid?: string; key?: PrivateKey } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: this.issuer,
      aud: this.audience,
      iat: now,
      exp: now + this.tokenLifetimeSeconds,
      ...claims,
    };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? this.kid, typ: 'JWT' })
      .sign(options.key ?? this.privateKey);
  }

  /** A key the JWKS does not hold, to sign tokens whose signature must not verify. */
  static async strangerKey(): Promise<PrivateKey> {
    return (await generateKeyPair('RS256')).privateKey;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
