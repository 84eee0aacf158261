// One connection from this broker to another, for the controller's requests and the replica fetchers. Requests
// are encoded with the generated codecs and matched to responses by correlation id; responses arrive in request
// order (Kafka's guarantee), so a queue of waiters is enough. A broken connection fails every waiting request and
// reconnects on the next one.
//
// Security is the inter-broker listener's (src/security/inter-broker.ts): TLS when it uses TLS, and on SASL
// listeners a SaslHandshake v1 and SaslAuthenticate v2 exchange before the connection is handed out. When the
// other broker grants a session lifetime (KIP-368), the connection re-authenticates in band before it ends: the
// first request after 85 % of the lifetime waits for the exchange, and requests arriving meanwhile wait behind it.
//
// Reads (plain TCP): into buffers of the connection's own (Node's `onread`, see network/own-reads.ts), a large
// response straight into a frame of the broker's FramePool, instead of a fresh 64 KiB ArrayBuffer per socket read
// plus a fresh frame to gather them in. A follower takes in every replicated byte this way; the fresh buffers were
// external memory that V8 answered with full collections, a third of a follower's main thread under rf=3 produce.
// A frame stays the caller's only through `requestHeld`, which hands it back with `releaseFrame`; any other
// request's frame leaves the pool (its decoded body may keep views of it). TLS sockets read the ordinary way.

import net from 'node:net';
import tls from 'node:tls';
import { authenticate } from '../../client/sasl.js';
import type { FramePool } from '../../common/frame-pool.js';
import { FrameReader, SCRATCH_READ_BYTES } from '../../network/frame-reader.js';
import { decodeResponseHeader, encodeRequestHeader } from '../../protocol/headers.js';
import { Reader, Writer } from '../../protocol/primitives/index.js';
import { ApiKey, getApi } from '../../protocol/registry.js';
import { type InterBrokerSecurity, PLAINTEXT_INTER_BROKER } from '../../security/inter-broker.js';

/** Largest response accepted from another broker (replica.fetch.response.max.bytes plus headroom). */
const RESPONSE_BYTES_MAX = 128 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;
/** Time allowed to each SASL request of the broker's own login. */
const SASL_REQUEST_TIMEOUT_MS = 10_000;
/** Re-authenticate once this share of the session lifetime has passed. */
const REAUTH_AT_SHARE = 0.85;

/** A decoded response with the frame it was read from, held for the caller until `releaseFrame`. */
export interface HeldResponse<Response> {
  readonly response: Response;
  readonly frame: Buffer;
}

interface Waiter {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  /** Resolve with the frame too (`requestHeld`), leaving it in the pool for the caller to release. */
  readonly held: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class InterBrokerConnection {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private readonly waiters: Waiter[] = [];
  private nextCorrelationId = 1;
  private closed = false;
  /** When the socket's SASL session should be renewed (epoch ms); null: it does not expire. */
  private reauthenticateAtMs: number | null = null;
  private reauthenticating: Promise<void> | null = null;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly clientId: string,
    private readonly security: InterBrokerSecurity = PLAINTEXT_INTER_BROKER,
    /** Where large response frames come from (the broker's); null: each is allocated. */
    private readonly pool: FramePool | null = null,
  ) {}

  /** Sends one request and resolves with the decoded response body. */
  async request<Response>(
    apiKey: number,
    apiVersion: number,
    body: unknown,
    timeoutMs: number,
  ): Promise<Response> {
    const socket = await this.ready();
    return this.send<Response>(socket, apiKey, apiVersion, body, timeoutMs, false);
  }

  /**
   * `request`, resolving with the frame the response was decoded from as well: its views (a fetch's records) stay
   * valid until the caller gives the frame back with `releaseFrame`, after which the pool may reuse its memory.
   */
  async requestHeld<Response>(
    apiKey: number,
    apiVersion: number,
    body: unknown,
    timeoutMs: number,
  ): Promise<HeldResponse<Response>> {
    const socket = await this.ready();
    return this.send<HeldResponse<Response>>(socket, apiKey, apiVersion, body, timeoutMs, true);
  }

  /** Gives back a frame of `requestHeld`: nothing may read its views afterwards. */
  releaseFrame(frame: Buffer): void {
    this.pool?.release(frame);
  }

  /** The socket, connected and authenticated (again, when the SASL session is about to end). */
  private async ready(): Promise<net.Socket> {
    const socket = await this.connect();
    if (this.reauthenticateAtMs !== null && Date.now() >= this.reauthenticateAtMs) {
      this.reauthenticating ??= this.login(socket).finally(() => {
        this.reauthenticating = null;
      });
    }
    if (this.reauthenticating !== null) await this.reauthenticating;
    return socket;
  }

  /** The SASL exchange on this socket (at connect, and again before the session ends); a failure closes it. */
  private async login(socket: net.Socket): Promise<void> {
    const sasl = this.security.sasl;
    if (sasl === null) return;
    this.reauthenticateAtMs = null;
    try {
      const session = await authenticate(
        (apiKey, body) =>
          this.send(
            socket,
            apiKey,
            apiKey === ApiKey.SASL_HANDSHAKE ? 1 : 2,
            body,
            SASL_REQUEST_TIMEOUT_MS,
            false,
          ),
        sasl,
      );
      if (session.sessionLifetimeMs > 0) {
        this.reauthenticateAtMs = Date.now() + Math.floor(session.sessionLifetimeMs * REAUTH_AT_SHARE);
      }
    } catch (err) {
      socket.destroy();
      throw err;
    }
  }

  private send<Response>(
    socket: net.Socket,
    apiKey: number,
    apiVersion: number,
    body: unknown,
    timeoutMs: number,
    held: boolean,
  ): Promise<Response> {
    const correlationId = this.nextCorrelationId++;
    const w = new Writer(256);
    w.int32(0);
    encodeRequestHeader(w, {
      requestApiKey: apiKey,
      requestApiVersion: apiVersion,
      correlationId,
      clientId: this.clientId,
    });
    getApi(apiKey).encodeRequest(w, apiVersion, body);
    const frame = w.toBuffer();
    frame.writeInt32BE(frame.length - 4, 0);
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new Error(`request ${apiKey} v${apiVersion} timed out`)),
        timeoutMs,
      );
      this.waiters.push({
        apiKey,
        apiVersion,
        correlationId,
        held,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
      });
      socket.write(frame);
    });
  }

  close(): void {
    this.closed = true;
    this.fail(new Error('connection closed'));
  }

  private connect(): Promise<net.Socket> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    if (this.socket !== null) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<net.Socket>((resolve, reject) => {
      const tlsOptions = this.security.tls;
      // Plain sockets read into the reader's buffers (see the file header); TLS ones push Node's chunks.
      const reader = new FrameReader(
        RESPONSE_BYTES_MAX,
        null,
        this.pool,
        tlsOptions === null ? Buffer.allocUnsafeSlow(SCRATCH_READ_BYTES) : null,
      );
      const frames = (): void => {
        try {
          for (let frame = reader.next(); frame !== null; frame = reader.next()) this.onFrame(frame);
        } catch (err) {
          socket.destroy(err instanceof Error ? err : new Error(String(err)));
        }
      };
      const socket =
        tlsOptions === null
          ? net.connect({
              host: this.host,
              port: this.port,
              noDelay: true,
              onread: {
                buffer: () => reader.readBuffer(),
                callback: (bytes: number, buffer: Uint8Array): boolean => {
                  reader.received(bytes, buffer as Buffer);
                  frames();
                  return true;
                },
              },
            })
          : tls.connect({
              // SNI carries host names only (RFC 6066); the certificate is checked against the host either way.
              servername: net.isIP(this.host) === 0 ? this.host : undefined,
              ...tlsOptions,
              host: this.host,
              port: this.port,
            });
      socket.setNoDelay(true);
      const timer = setTimeout(
        () => socket.destroy(new Error(`connect to ${this.host}:${this.port} timed out`)),
        CONNECT_TIMEOUT_MS,
      );
      let failure: Error | null = null;
      socket.once(tlsOptions === null ? 'connect' : 'secureConnect', () => {
        clearTimeout(timer);
        this.login(socket).then(
          () => {
            this.socket = socket;
            this.connecting = null;
            resolve(socket);
          },
          (err: Error) => {
            failure = err;
            socket.destroy();
          },
        );
      });
      if (tlsOptions !== null) {
        socket.on('data', (chunk: Buffer) => {
          reader.push(chunk);
          frames();
        });
      }
      socket.on('error', (err: Error) => {
        failure ??= err;
      });
      socket.on('close', () => {
        clearTimeout(timer);
        if (this.socket === socket) this.socket = null;
        if (this.connecting !== null) {
          this.connecting = null;
          const reason = failure === null ? '' : `: ${failure.message}`;
          reject(new Error(`cannot connect to ${this.host}:${this.port}${reason}`));
        }
        this.fail(new Error(`connection to ${this.host}:${this.port} closed`));
      });
    });
    return this.connecting;
  }

  private onFrame(frame: Buffer): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) throw new Error('response without a request');
    clearTimeout(waiter.timer);
    try {
      const r = new Reader(frame);
      const header = decodeResponseHeader(r, waiter.apiKey, waiter.apiVersion);
      if (header.correlationId !== waiter.correlationId) throw new Error('responses out of order');
      const response = getApi(waiter.apiKey).decodeResponse(r, waiter.apiVersion);
      if (waiter.held) {
        waiter.resolve({ response, frame } satisfies HeldResponse<unknown>);
        return;
      }
      this.pool?.forget(frame);
      waiter.resolve(response);
    } catch (err) {
      this.pool?.forget(frame);
      waiter.reject(err instanceof Error ? err : new Error(String(err)));
      this.socket?.destroy();
    }
  }

  private fail(error: Error): void {
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(error);
    }
    this.socket?.destroy();
    this.socket = null;
  }
}
