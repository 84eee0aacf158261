// One TCP (or TLS) connection to one broker. Requests are pipelined: up to maxInFlight are on the wire at once,
// the rest wait in a bounded FIFO, and responses are matched to requests by correlation id (Kafka answers in
// order on a connection, but matching by id also catches a broker that does not). Each request has a timer of
// request.timeout.ms; a timed-out request fails alone and the connection is closed, since the stream position of
// its late response can no longer be trusted to line up.
//
// On open the connection negotiates versions with ApiVersions (v3, falling back to v0 when the broker says
// UNSUPPORTED_VERSION, as Kafka's clients do) and from then on every request uses the highest version both
// sides support, capped by CLIENT_MAX_VERSIONS where this client has not implemented a newer version's shape.
//
// Lifecycle: connect() -> request()* -> close(). After close or a socket error every pending request is
// rejected with ConnectionError and later requests are refused.
//
// With SASL, a broker may grant a session lifetime (KIP-368). The connection then re-authenticates on its own at a
// random 85-95 % of it, as Kafka's clients do: new requests wait in the queue while the SaslHandshake and
// SaslAuthenticate requests go first (requests already on the wire were admitted before the handshake), and a
// failed re-authentication closes the connection.
//
// Buffers a request carries (record batches, attached by reference and written with writev, not copied) belong
// to the socket until the request's promise settles, and only until then: it resolves once the response came (the
// broker had read the whole request), and it rejects only after the socket was destroyed, which drops whatever of
// its frames the socket still queued (a destroyed socket sends nothing more). So a caller may rewrite or reuse
// those buffers as soon as it sees the outcome (the producer's retries and its BufferPool rely on this); a request
// that times out is the case that needs it, since its bytes may still wait behind a stalled peer. With
// noResponse the promise resolves when the frame is handed to the socket, which may still hold it.
//
// Reads: into buffers of the connection's own (Node's `onread` on plain sockets, the same buffer hand-over on TLS
// ones once the handshake is done; see network/own-reads.ts), cut into frames by the FrameReader the broker's
// listeners use: between frames a read lands in a small scratch buffer of this connection, and once a large
// response's size is known the rest of it is read straight into the response's own buffer, instead of a fresh
// 64 KiB ArrayBuffer per socket read plus a fresh frame to gather them in (external memory that V8 answers with
// full collections). With a `framePool` (the broker's, for inter-broker connections) that buffer comes from the
// pool: a response of `requestHeld` stays the caller's until it hands the frame back with `releaseFrame`; any other
// response's frame leaves the pool, since its decoded body may keep views of it.
//
// The broker's connections to other brokers are these connections too (broker/cluster/inter-broker-connection.ts):
// with `versions` they skip ApiVersions and use the versions they are given, with `honourThrottle: false` they
// ignore throttle times, as a broker's own requests do.

import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import type { FramePool } from '../common/frame-pool.js';
import { FrameError, FrameReader, SCRATCH_READ_BYTES } from '../network/frame-reader.js';
import { adoptTlsForOwnReads } from '../network/own-reads.js';
import { clientShouldThrottle } from '../protocol/client-throttle.js';
import { decodeResponseHeader, encodeRequestHeader } from '../protocol/headers.js';
import type { ApiVersionsResponse } from '../protocol/messages/18-api-versions.js';
import { Reader, Writer } from '../protocol/primitives/index.js';
import { ApiKey, findApi, getApi } from '../protocol/registry.js';
import { ClientStateError, ConnectionError, KafkaClientError, RequestTimeoutError } from './errors.js';
import type { ResolvedClientOptions } from './options.js';
import { authenticate } from './sasl.js';

/**
 * Newest versions this client sends. Produce 13+ names topics by id only; the client speaks topic names, which
 * every broker from Kafka 0.10 to 4.x still accepts at this version. (The consumer's Fetch goes up to the newest
 * version, by topic id, and caps itself at 12 for a fetch of a topic without an id.) OffsetFetch 8+ batches
 * groups: requests that use it (the admin's several-group listing, a KIP-848 member's v9) name their version.
 */
export const CLIENT_MAX_VERSIONS: Readonly<Record<number, number>> = {
  [ApiKey.PRODUCE]: 11,
  [ApiKey.OFFSET_FETCH]: 7,
};

/** Largest response frame accepted by default (a fetch of fetch.max.bytes plus headers fits well inside). */
const FRAME_BYTES_MAX = 256 * 1024 * 1024;
/** Smallest response frame: its correlation id. */
const FRAME_BYTES_MIN = 4;

/** A version range an API is served in. */
export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

/** What a connection needs of the client's options, and what a broker's connection to another broker adds. */
export type ConnectionOptions = Pick<
  ResolvedClientOptions,
  | 'clientId'
  | 'requestTimeoutMs'
  | 'connectionTimeoutMs'
  | 'maxInFlightRequestsPerConnection'
  | 'tls'
  | 'sasl'
  | 'logger'
> & {
  /**
   * The versions the peer serves, known beforehand: ApiVersions is not asked. Requests name their version or get
   * the highest of these this client implements.
   */
  readonly versions?: ReadonlyMap<number, VersionRange>;
  /** Where large response frames come from (see `requestHeld`); without one each is allocated. */
  readonly framePool?: FramePool;
  /** Whether a response's throttle time holds back further requests (KIP-219); true unless false. */
  readonly honourThrottle?: boolean;
  /** Largest response frame accepted; 256 MiB unless given. */
  readonly responseBytesMax?: number;
};

/** A decoded response with the frame it was read from, held for the caller until `releaseFrame`. */
export interface HeldResponse<Response> {
  readonly response: Response;
  readonly frame: Buffer;
}
/** Requests waiting for an in-flight slot on one connection. */
const QUEUED_REQUESTS_MAX = 10_000;

/** Close listeners a connection holds: its owner's (the cluster's reconnect backoff), and room for a test's. */
const CLOSE_LISTENERS_MAX = 4;

interface Pending {
  apiKey: number;
  version: number;
  correlationId: number;
  /** Resolve with the frame too (`requestHeld`), leaving it in the pool for the caller to release. */
  held: boolean;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

interface Queued {
  frame: Buffer[];
  pending: Pending | null;
  resolveSent: () => void;
}

export interface RequestOptions {
  /** Use exactly this version (it must be within the negotiated range). */
  version?: number;
  /** Cap the version (a caller that needs a field only older versions have, or not a newer shape). */
  maxVersion?: number;
  /** Produce with acks=0: the broker sends no response. */
  noResponse?: boolean;
  timeoutMs?: number;
  /** A SASL request of a re-authentication: sent ahead of the queued requests it holds back. */
  sasl?: boolean;
}

/**
 * One socket to one broker: ApiVersions negotiation, optional TLS and SASL, pipelined requests up to
 * max.in.flight with correlation ids and timeouts.
 */
export class Connection {
  private socket: net.Socket | null = null;
  private correlationId = 0;
  private readonly inFlight = new Map<number, Pending>();
  private readonly queue: Queued[] = [];
  /** SASL requests of a re-authentication; while `saslHold`, only these are sent. */
  private readonly saslQueue: Queued[] = [];
  private saslHold = false;
  private reauthTimer: NodeJS.Timeout | null = null;
  /** Cuts the received bytes into frames (see the top of this file). */
  private readonly reader: FrameReader;
  /** Whether reads land in this connection's buffers; false while Node's chunks are pushed (see `open`). */
  private ownReads = false;
  private closed = false;
  /** While the socket is being connected: ends that attempt at once (close() during open()). */
  private abortOpening: (() => void) | null = null;
  private closeError: Error | null = null;
  /** Told once when the connection closes, for whatever reason (onClose); at most one per owner. */
  private readonly closeListeners: (() => void)[] = [];
  private versions = new Map<number, { min: number; max: number }>();
  /** A broker's quota asked this client to wait (KIP-219): nothing more is sent before this time (performance.now()). */
  private throttledUntilMs = 0;
  private throttleTimer: NodeJS.Timeout | null = null;

  private constructor(
    readonly host: string,
    readonly port: number,
    private readonly options: ConnectionOptions,
  ) {
    this.reader = new FrameReader(
      options.responseBytesMax ?? FRAME_BYTES_MAX,
      null,
      options.framePool ?? null,
      Buffer.allocUnsafeSlow(SCRATCH_READ_BYTES),
    );
  }

  /**
   * Opens a connection and makes it ready for requests (TLS, ApiVersions, SASL as configured), so that a caller
   * never holds a half-opened one; closes it again when a step fails.
   */
  /**
   * Opens a connection: socket, ApiVersions, SASL. `opening` is given the connection before any of that, so that an
   * owner closing meanwhile can close it at once rather than wait for a broker that never answers (the socket's
   * connect timeout, the handshake's request timeout).
   */
  static async connect(
    host: string,
    port: number,
    options: ConnectionOptions,
    opening?: (c: Connection) => void,
  ): Promise<Connection> {
    const c = new Connection(host, port, options);
    opening?.(c);
    await c.open();
    try {
      if (options.versions === undefined) await c.negotiate();
      else c.versions = new Map(options.versions);
      const sasl = options.sasl;
      if (sasl !== undefined) {
        const session = await authenticate((apiKey, body) => c.request(apiKey, body), sasl);
        c.scheduleReauthentication(session.sessionLifetimeMs);
      }
    } catch (err) {
      c.close();
      throw err;
    }
    return c;
  }

  private scheduleReauthentication(sessionLifetimeMs: number): void {
    if (sessionLifetimeMs <= 0 || this.closed) return;
    const delayMs = Math.floor(sessionLifetimeMs * (0.85 + Math.random() * 0.1));
    this.reauthTimer = setTimeout(() => void this.reauthenticate(), delayMs);
    this.reauthTimer.unref();
  }

  /** KIP-368: authenticates again on this connection, holding back other requests meanwhile. */
  private async reauthenticate(): Promise<void> {
    this.reauthTimer = null;
    const sasl = this.options.sasl;
    if (sasl === undefined || this.closed) return;
    this.saslHold = true;
    try {
      const session = await authenticate((apiKey, body) => this.request(apiKey, body, { sasl: true }), sasl);
      this.options.logger?.debug('SASL re-authenticated', {
        broker: this.address,
        sessionLifetimeMs: session.sessionLifetimeMs,
      });
      this.scheduleReauthentication(session.sessionLifetimeMs);
    } catch (err) {
      this.fail(
        new ConnectionError(`re-authentication with ${this.address} failed: ${(err as Error).message}`),
      );
    } finally {
      this.saslHold = false;
      this.pump();
    }
  }

  /** Calls `listener` once when the connection closes (at once if it has closed already). */
  onClose(listener: () => void): void {
    assert.ok(
      this.closeListeners.length < CLOSE_LISTENERS_MAX,
      'a connection has one close listener per owner',
    );
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** False once the connection closed, for good: the cluster then opens a new one. */
  get isOpen(): boolean {
    return !this.closed;
  }

  /** Requests on this connection not yet answered: in flight plus queued (the least-loaded choice reads it). */
  get load(): number {
    return this.inFlight.size + this.queue.length + this.saslQueue.length;
  }

  /** Whether responses are read into buffers of this connection (always on plain sockets; TLS when Node allows). */
  get readsIntoOwnBuffers(): boolean {
    return this.ownReads;
  }

  /** `host:port`, for error messages and logs. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** The negotiated version range for an API, or undefined when the broker does not serve it. */
  versionRange(apiKey: number): { min: number; max: number } | undefined {
    return this.versions.get(apiKey);
  }

  /** The version a request of this API will use: the highest both sides support. */
  pickVersion(apiKey: number, cap?: number): number {
    const theirs = this.versions.get(apiKey);
    const api = getApi(apiKey);
    if (theirs === undefined) {
      throw new KafkaClientError(`broker ${this.address} does not support ${api.name}`, false);
    }
    let ours = Math.min(api.maxVersion, CLIENT_MAX_VERSIONS[apiKey] ?? api.maxVersion);
    if (api.latestVersionUnstable) ours = Math.min(ours, api.maxVersion - 1);
    if (cap !== undefined) ours = Math.min(ours, cap);
    const v = Math.min(ours, theirs.max);
    if (v < theirs.min || v < api.minVersion) {
      throw new KafkaClientError(
        `no common version of ${api.name}: broker ${theirs.min}-${theirs.max}, client ${api.minVersion}-${ours}`,
        false,
      );
    }
    return v;
  }

  private open(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(this.closeError ?? new ConnectionError(`connection to ${this.address} was closed`));
        return;
      }
      const onError = (err: Error): void => {
        this.abortOpening = null;
        clearTimeout(timer);
        socket.destroy();
        reject(new ConnectionError(`cannot connect to ${this.address}: ${err.message}`, { cause: err }));
      };
      const tlsOptions = this.options.tls;
      const socket: net.Socket =
        tlsOptions !== undefined
          ? tls.connect(
              {
                // SNI carries host names only (RFC 6066); the certificate is checked against servername or host.
                servername: net.isIP(this.host) === 0 ? this.host : undefined,
                ...tlsOptions,
                host: this.host,
                port: this.port,
              },
              () => onConnect(),
            )
          : net.connect(
              {
                host: this.host,
                port: this.port,
                // Reads land where the frame reader says (see the top of this file).
                onread: {
                  buffer: () => this.reader.readBuffer(),
                  callback: (bytes: number, buffer: Uint8Array): boolean => {
                    this.onRead(bytes, buffer as Buffer);
                    return true;
                  },
                },
              },
              () => onConnect(),
            );
      const timer = setTimeout(
        () => onError(new Error(`timed out after ${this.options.connectionTimeoutMs} ms`)),
        this.options.connectionTimeoutMs,
      );
      this.abortOpening = () => onError(new Error('closed by the client while connecting'));
      const onConnect = (): void => {
        this.abortOpening = null;
        clearTimeout(timer);
        socket.off('error', onError);
        socket.setNoDelay(true);
        this.ownReads = tlsOptions === undefined;
        if (tlsOptions !== undefined) {
          // Decrypted bytes into our buffers too, when this Node lets us; else Node's chunks are pushed.
          const own = adoptTlsForOwnReads(socket);
          this.ownReads = own !== null;
          if (own !== null) {
            own.attach({
              readBuffer: () => this.reader.readBuffer(),
              onRead: (bytes, buffer) => this.onRead(bytes, buffer),
            });
          } else {
            socket.on('data', (d: Buffer) => {
              this.reader.push(d);
              this.readFrames();
            });
          }
        }
        socket.on('error', (err) =>
          this.fail(new ConnectionError(`${this.address}: ${err.message}`, { cause: err })),
        );
        socket.on('close', () => this.fail(new ConnectionError(`connection to ${this.address} closed`)));
        this.socket = socket;
        resolve();
      };
      socket.once('error', onError);
    });
  }

  private async negotiate(): Promise<void> {
    const body = { clientSoftwareName: 'brook-client', clientSoftwareVersion: '0.1.0' };
    this.versions.set(ApiKey.API_VERSIONS, { min: 0, max: 3 });
    let res = (await this.request(ApiKey.API_VERSIONS, body, { version: 3 })) as ApiVersionsResponse;
    if (res.errorCode === 35) {
      // UNSUPPORTED_VERSION: the broker answered in v0 and listed what it serves; ask again at its newest.
      const theirs = res.apiKeys.find((k) => k.apiKey === ApiKey.API_VERSIONS);
      const version = Math.min(3, theirs?.maxVersion ?? 0);
      this.versions.set(ApiKey.API_VERSIONS, { min: 0, max: version });
      res = (await this.request(ApiKey.API_VERSIONS, body, { version })) as ApiVersionsResponse;
    }
    if (res.errorCode !== 0) throw new ConnectionError(`ApiVersions failed with error ${res.errorCode}`);
    this.versions = new Map();
    for (const k of res.apiKeys) {
      if (findApi(k.apiKey) !== undefined)
        this.versions.set(k.apiKey, { min: k.minVersion, max: k.maxVersion });
    }
  }

  /**
   * Sends one request and resolves with its decoded response body. Rejects with ConnectionError,
   * RequestTimeoutError, or a DecodeError for a response that does not parse.
   */
  request<T = unknown>(apiKey: number, body: unknown, options: RequestOptions = {}): Promise<T> {
    return this.send<T>(apiKey, body, options, false);
  }

  /**
   * `request`, resolving with the frame the response was decoded from as well: its views (a fetch's records) stay
   * valid until the caller gives the frame back with `releaseFrame`, after which the pool may reuse its memory.
   */
  requestHeld<T = unknown>(
    apiKey: number,
    body: unknown,
    options: RequestOptions = {},
  ): Promise<HeldResponse<T>> {
    return this.send<HeldResponse<T>>(apiKey, body, options, true);
  }

  /** Gives back a frame of `requestHeld`: nothing may read its views afterwards. */
  releaseFrame(frame: Buffer): void {
    this.options.framePool?.release(frame);
  }

  private send<T>(apiKey: number, body: unknown, options: RequestOptions, held: boolean): Promise<T> {
    if (this.closed) {
      return Promise.reject(
        this.closeError ?? new ConnectionError(`connection to ${this.address} is closed`),
      );
    }
    let version: number;
    try {
      version = options.version ?? this.pickVersion(apiKey, options.maxVersion);
    } catch (err) {
      return Promise.reject(err);
    }
    const correlationId = this.nextCorrelationId();
    const w = new Writer();
    w.int32(0);
    encodeRequestHeader(w, {
      requestApiKey: apiKey,
      requestApiVersion: version,
      correlationId,
      clientId: this.options.clientId,
    });
    getApi(apiKey).encodeRequest(w, version, body);
    const frame = w.chunksOut();
    frame[0]!.writeInt32BE(w.length - 4, 0);
    if (options.noResponse) {
      return new Promise<T>((resolve, reject) => {
        this.enqueue({ frame, pending: null, resolveSent: () => resolve(undefined as T) }, false);
        if (this.closed) reject(this.closeError!);
      });
    }
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        apiKey,
        version,
        correlationId,
        held,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer: undefined,
      };
      const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs;
      this.enqueue(
        {
          frame,
          pending,
          resolveSent: () => {
            pending.timer = setTimeout(() => this.onTimeout(pending, timeoutMs), timeoutMs);
          },
        },
        options.sasl === true,
      );
    });
  }

  private nextCorrelationId(): number {
    this.correlationId = (this.correlationId + 1) & 0x7fffffff;
    return this.correlationId;
  }

  private enqueue(q: Queued, sasl: boolean): void {
    if (sasl) {
      this.saslQueue.push(q);
      this.pump();
      return;
    }
    if (this.queue.length >= QUEUED_REQUESTS_MAX) {
      q.pending?.reject(
        new ClientStateError(`more than ${QUEUED_REQUESTS_MAX} requests queued for ${this.address}`),
      );
      return;
    }
    this.queue.push(q);
    this.pump();
  }

  /**
   * Honours a response's throttle_time_ms as Kafka's NetworkClient does: requests to this broker wait in the queue
   * until the time has passed (their timeouts start when they are sent).
   */
  private throttle(throttleTimeMs: number): void {
    const until = performance.now() + throttleTimeMs;
    if (until <= this.throttledUntilMs) return;
    this.throttledUntilMs = until;
    if (this.throttleTimer !== null) clearTimeout(this.throttleTimer);
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = null;
      this.pump();
    }, throttleTimeMs);
  }

  /** Whether a broker's throttle time is still running. */
  get throttled(): boolean {
    return performance.now() < this.throttledUntilMs;
  }

  /** Moves queued requests onto the wire while there are free in-flight slots. */
  private pump(): void {
    const max = this.options.maxInFlightRequestsPerConnection;
    const socket = this.socket;
    if (socket === null || (this.queue.length === 0 && this.saslQueue.length === 0)) return;
    // The chunks of the frames sent now (header, attached record batches) leave in one write, not one each.
    socket.cork();
    while (this.inFlight.size < max && !this.closed) {
      // While a broker's throttle time runs only re-authentication goes out (KIP-219 holds the application's requests).
      const held = this.saslHold || this.throttleTimer !== null;
      const q = this.saslQueue.shift() ?? (held ? undefined : this.queue.shift());
      if (q === undefined) break;
      if (q.pending !== null) this.inFlight.set(q.pending.correlationId, q.pending);
      for (const chunk of q.frame) socket.write(chunk);
      q.resolveSent();
    }
    socket.uncork();
  }

  private onTimeout(p: Pending, timeoutMs: number): void {
    if (!this.inFlight.has(p.correlationId)) return;
    this.inFlight.delete(p.correlationId);
    // The connection goes first (as Kafka's NetworkClient disconnects a node whose request timed out): the late
    // response could not be matched safely, and the request's bytes may still be queued in the socket, which must
    // not send them once the caller, told of the timeout, reuses their buffers (see the top of this file).
    this.fail(new ConnectionError(`connection to ${this.address} closed after a request timed out`));
    p.reject(
      new RequestTimeoutError(
        `${getApi(p.apiKey).name} to ${this.address} got no response in ${timeoutMs} ms`,
      ),
    );
  }

  /** Bytes a read left in the buffer the frame reader chose (or any other, for the reader to take as a chunk). */
  private onRead(bytes: number, buffer: Buffer): void {
    this.reader.received(bytes, buffer);
    this.readFrames();
  }

  private readFrames(): void {
    try {
      for (let frame = this.reader.next(); frame !== null && !this.closed; frame = this.reader.next()) {
        if (frame.length < FRAME_BYTES_MIN) {
          this.fail(new ConnectionError(`bad response size ${frame.length} from ${this.address}`));
          return;
        }
        this.onFrame(frame);
      }
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      this.fail(new ConnectionError(`bad response size ${err.size} from ${this.address}`));
    }
  }

  private onFrame(frame: Buffer): void {
    const correlationId = frame.readInt32BE(0);
    const p = this.inFlight.get(correlationId);
    if (p === undefined) {
      this.fail(
        new ConnectionError(`response with unknown correlation id ${correlationId} from ${this.address}`),
      );
      return;
    }
    this.inFlight.delete(correlationId);
    clearTimeout(p.timer);
    const pool = this.options.framePool;
    // Only a held response's frame stays in the pool: any other body may keep views of it for as long as it likes.
    if (!p.held) pool?.forget(frame);
    try {
      const r = new Reader(frame);
      decodeResponseHeader(r, p.apiKey, p.version);
      if (p.apiKey === ApiKey.API_VERSIONS && r.remaining >= 2 && frame.readInt16BE(r.pos) === 35) {
        // An UNSUPPORTED_VERSION answer to ApiVersions is always written at v0.
        p.resolve(getApi(p.apiKey).decodeResponse(r, 0));
      } else {
        const body = getApi(p.apiKey).decodeResponse(r, p.version) as { throttleTimeMs?: unknown };
        const throttleTimeMs = body.throttleTimeMs;
        if (
          typeof throttleTimeMs === 'number' &&
          throttleTimeMs > 0 &&
          this.options.honourThrottle !== false &&
          clientShouldThrottle(p.apiKey, p.version)
        )
          this.throttle(throttleTimeMs);
        p.resolve(p.held ? ({ response: body, frame } satisfies HeldResponse<unknown>) : body);
      }
    } catch (err) {
      if (p.held) pool?.forget(frame);
      p.reject(err as Error);
    }
    this.pump();
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.closeError = err;
    if (this.throttleTimer !== null) clearTimeout(this.throttleTimer);
    // Destroyed before any request is rejected: from here the socket reads none of their buffers.
    this.socket?.destroy();
    this.abortOpening?.();
    for (const p of this.inFlight.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.inFlight.clear();
    if (this.reauthTimer !== null) clearTimeout(this.reauthTimer);
    for (const q of this.saslQueue.splice(0)) q.pending?.reject(err);
    for (const q of this.queue.splice(0)) q.pending?.reject(err);
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  /** Closes the socket; outstanding requests fail with ConnectionError. */
  close(): void {
    this.fail(new ConnectionError(`connection to ${this.address} was closed by the client`));
  }
}
