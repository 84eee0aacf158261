// One connection from this broker to another, for the controller's requests, the replica fetchers, AlterPartition,
// transaction markers and controlled shutdown. It is the client's Connection (client/connection.ts: pipelining,
// correlation ids, timeouts, reads into the broker's FramePool, KIP-368 re-authentication) opened the broker's
// way, plus what a broker needs of it: the connection is opened on the first request and opened again on the
// request after it broke, so a caller holds one object for the life of its peer.
//
// The broker's way: no ApiVersions (the caller names each request's version: brokers of one cluster speak the
// versions this code base chose), no client-side throttling (a broker's own requests are not held back by its
// peers' quotas), no bound on requests in flight (callers bound themselves: a fetcher has one fetch outstanding,
// the controller one request per broker and kind), and the inter-broker listener's security
// (src/security/inter-broker.ts): TLS when it uses TLS, and on SASL listeners a SaslHandshake v1 and
// SaslAuthenticate v2 exchange before the connection is handed out, repeated before the session lifetime the
// other broker granted runs out.
//
// Reads: a large response lands straight in a frame of the broker's FramePool (plain and TLS alike), so a follower
// takes in every replicated byte into reused memory. A frame stays the caller's only through `requestHeld`, which
// hands it back with `releaseFrame`; any other request's frame leaves the pool (its decoded body may keep views of
// it).

import { Connection, type ConnectionOptions, type HeldResponse } from '../../client/connection.js';
import type { FramePool } from '../../common/frame-pool.js';
import { ApiKey } from '../../protocol/registry.js';
import { type InterBrokerSecurity, PLAINTEXT_INTER_BROKER } from '../../security/inter-broker.js';

export type { HeldResponse } from '../../client/connection.js';

/** Largest response accepted from another broker (replica.fetch.response.max.bytes plus headroom). */
const RESPONSE_BYTES_MAX = 128 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;
/** Time allowed to each SASL request of the broker's own login (the other requests name their own). */
const SASL_REQUEST_TIMEOUT_MS = 10_000;
/** The SASL versions every broker of the cluster serves: the only requests whose version the caller does not name. */
const SASL_VERSIONS: ReadonlyMap<number, { min: number; max: number }> = new Map([
  [ApiKey.SASL_HANDSHAKE, { min: 1, max: 1 }],
  [ApiKey.SASL_AUTHENTICATE, { min: 2, max: 2 }],
]);

export class InterBrokerConnection {
  private connection: Connection | null = null;
  private connecting: Promise<Connection> | null = null;
  private closed = false;
  private readonly options: ConnectionOptions;

  constructor(
    readonly host: string,
    readonly port: number,
    clientId: string,
    security: InterBrokerSecurity = PLAINTEXT_INTER_BROKER,
    /** Where large response frames come from (the broker's); null: each is allocated. */
    private readonly pool: FramePool | null = null,
  ) {
    this.options = {
      clientId,
      requestTimeoutMs: SASL_REQUEST_TIMEOUT_MS,
      connectionTimeoutMs: CONNECT_TIMEOUT_MS,
      maxInFlightRequestsPerConnection: Number.POSITIVE_INFINITY,
      tls: security.tls ?? undefined,
      sasl: security.sasl ?? undefined,
      logger: undefined,
      versions: SASL_VERSIONS,
      framePool: pool ?? undefined,
      honourThrottle: false,
      responseBytesMax: RESPONSE_BYTES_MAX,
    };
  }

  /** Sends one request and resolves with the decoded response body. */
  request<Response>(apiKey: number, apiVersion: number, body: unknown, timeoutMs: number): Promise<Response> {
    const options = { version: apiVersion, timeoutMs };
    const open = this.connection;
    if (open?.isOpen) return open.request<Response>(apiKey, body, options);
    return this.connect().then((connection) => connection.request<Response>(apiKey, body, options));
  }

  /**
   * `request`, resolving with the frame the response was decoded from as well: its views (a fetch's records) stay
   * valid until the caller gives the frame back with `releaseFrame`, after which the pool may reuse its memory.
   */
  requestHeld<Response>(
    apiKey: number,
    apiVersion: number,
    body: unknown,
    timeoutMs: number,
  ): Promise<HeldResponse<Response>> {
    const options = { version: apiVersion, timeoutMs };
    const open = this.connection;
    // The fetcher's hot path: straight to the open connection, no promise in between.
    if (open?.isOpen) return open.requestHeld<Response>(apiKey, body, options);
    return this.connect().then((connection) => connection.requestHeld<Response>(apiKey, body, options));
  }

  /** Whether the open connection reads into buffers of its own (see client/connection.ts); false when none is open. */
  get readsIntoOwnBuffers(): boolean {
    return this.connection?.readsIntoOwnBuffers ?? false;
  }

  /** Gives back a frame of `requestHeld`: nothing may read its views afterwards. */
  releaseFrame(frame: Buffer): void {
    this.pool?.release(frame);
  }

  /** Closes the connection for good: waiting requests fail, later ones are refused. */
  close(): void {
    this.closed = true;
    this.connection?.close();
    this.connection = null;
  }

  /** A connection, opened (and authenticated) now when there is none or the last one broke. */
  private connect(): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    this.connecting ??= Connection.connect(this.host, this.port, this.options).then(
      (connection) => {
        this.connecting = null;
        if (this.closed) {
          connection.close();
          throw new Error('connection closed');
        }
        this.connection = connection;
        return connection;
      },
      (err: unknown) => {
        this.connecting = null;
        throw err;
      },
    );
    return this.connecting;
  }
}
