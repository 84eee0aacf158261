// Connection: one client socket. It owns the socket, its frame reader, its security state and the queue of
// requests dispatched on it and not yet answered, in request order.
//
// Lifecycle: open (reading, dispatching) -> closing (no new requests; answers the ones in flight, then ends the
// socket) -> closed. A malformed frame or a failed handler closes it at once. Reading stops whenever a bound is
// reached (requests in flight on this connection, requests queued across the broker, unsent response bytes, a
// cluster-sized request read while another of the connection is in flight) and resumes when the bound clears;
// until then the socket is paused, so the kernel's receive window pushes back on the client and no bytes pile up
// here.
//
// Everything runs on the event loop thread; no method awaits in the middle of a state change.

import type { Socket } from 'node:net';
import { assert } from '../common/assert.js';
import type { FramePool } from '../common/frame-pool.js';
import type { LogFields, Logger, LogLevel } from '../common/logger.js';
import { DecodeError } from '../protocol/primitives/decode-error.js';
import { ApiKey } from '../protocol/registry.js';
import { FrameError, FrameReader } from './frame-reader.js';
import type { ResolvedNetworkOptions } from './options.js';
import type { OwnReadSocket, ReadTarget } from './own-reads.js';
import {
  NotReadyError,
  REQUEST_PREFIX_BYTES,
  type Request,
  type RequestHandler,
  type RequestObserver,
  type Response,
} from './request.js';
import { RAW_SASL_TOKEN_API_KEY, SASL_HANDSHAKE, type SecurityProtocol, SecurityState } from './security.js';
import type { NetworkStats } from './stats.js';

/** What a connection needs from the server that accepted it: shared bounds, handler, logger and counters. */
export interface ConnectionHost {
  readonly options: ResolvedNetworkOptions;
  readonly handler: RequestHandler;
  readonly logger: Logger;
  readonly stats: NetworkStats;
  /** Where large frames are gathered and given back to (null: each frame is a fresh buffer). */
  readonly framePool: FramePool | null;
  /** Told where each request's time went (metrics); null: requests are not timed at all. */
  readonly requestObserver: RequestObserver | null;
  /** Where reads land between frames on sockets that read into buffers of ours (own-reads.ts), shared. */
  readonly scratchReadBuffer: Buffer;
  /** Whether the broker-wide request count admits one more; when not, the host calls resumeReading() later. */
  hasRequestCapacity(connection: Connection): boolean;
  /**
   * Asks for a frame's bytes under queued.max.request.bytes when its size prefix arrives, before its body is
   * read; when refused, the host calls resumeReading() later. Granted bytes are given back by requestFinished,
   * or by releaseRequestBytes for a frame that never becomes a request.
   */
  reserveRequestBytes(connection: Connection, frameBytes: number): boolean;
  releaseRequestBytes(frameBytes: number): void;
  requestStarted(): void;
  /** A request stopped counting against queued.max.requests: it waits for an event, not for work. */
  requestWaiting(): void;
  requestFinished(frameBytes: number, waiting: boolean): void;
  connectionClosed(connection: Connection): void;
}

export type ConnectionState = 'open' | 'closing' | 'closed';

const INT32_MAX = 0x7fffffff;
/**
 * Responses up to this size are copied into one buffer with their size prefix. Copying a few hundred bytes
 * costs less than a stream write per chunk; record batches from the log are larger and go out uncopied.
 */
const COALESCE_BYTES_MAX = 1024;
/** sasl.server.max.receive.size meaning no bound of its own (Kafka's NetworkReceive.UNLIMITED). */
const SASL_FRAME_BYTES_UNLIMITED = -1;
/** After ending the socket, how long to wait for the peer to close before destroying it. */
const CLOSE_LINGER_MS = 2_000;
/**
 * API keys whose response grows with the cluster or its data rather than with the request: Fetch (sized by
 * fetch.max.bytes, 50 MiB by default), an all-topic Metadata, DescribeConfigs, DescribeLogDirs, the group and
 * transaction listings, ACLs, quotas, SCRAM users, an all-partition OffsetFetch. A connection has at most one of
 * each in flight (see Connection.clusterSizedInFlight). The table gives each key its bit (0 for other keys); built
 * once, one lookup per frame.
 */
const CLUSTER_SIZED_BITS = (() => {
  const keys = [
    ApiKey.FETCH,
    ApiKey.METADATA,
    ApiKey.OFFSET_FETCH,
    ApiKey.DESCRIBE_GROUPS,
    ApiKey.LIST_GROUPS,
    ApiKey.DESCRIBE_ACLS,
    ApiKey.DESCRIBE_CONFIGS,
    ApiKey.DESCRIBE_LOG_DIRS,
    ApiKey.LIST_PARTITION_REASSIGNMENTS,
    ApiKey.DESCRIBE_CLIENT_QUOTAS,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    ApiKey.DESCRIBE_PRODUCERS,
    ApiKey.LIST_TRANSACTIONS,
    ApiKey.CONSUMER_GROUP_DESCRIBE,
  ];
  assert(keys.length <= 31, 'one bit of a 32-bit mask per cluster-sized key');
  const table = new Uint32Array(Math.max(...keys) + 1);
  keys.forEach((key, i) => {
    table[key] = 1 << i;
  });
  return table;
})();

/** The bit of a cluster-sized request's API key, 0 for any other (an out-of-range or negative key reads undefined). */
function clusterSizedBit(apiKey: number): number {
  return CLUSTER_SIZED_BITS[apiKey] ?? 0;
}

export class Connection {
  readonly security: SecurityState;
  readonly remoteAddress: string;
  readonly remotePort: number;
  private stateValue: ConnectionState = 'open';
  private readonly reader: FrameReader;
  /** Requests dispatched and not yet written, in request order. */
  private readonly pending: PendingRequest[] = [];
  /**
   * Requests whose response went to the socket with onWritten as its completion callback, oldest first: a
   * Writable runs write callbacks in write order, so one callback per connection serves every response and a
   * timed request costs no closure of its own.
   */
  private readonly awaitingWrite: PendingRequest[] = [];
  private readonly onWritten = (): void => {
    // Each response with a callback pushed one request before its write, so one is always there.
    this.awaitingWrite.shift()?.afterWrite();
  };
  private readonly inFlightMax: number;
  /**
   * The kinds (CLUSTER_SIZED_BITS) of cluster-sized requests of this connection dispatched whose responses have not
   * been handed to the socket yet. Kafka's processor mutes a channel from a request until its response is sent, so
   * it holds one response per connection; Brook pipelines, but a peer pipelining fetches or all-topic Metadata
   * without reading would make it build and hold up to max.in.flight.requests.per.connection of them. So a request
   * of a kind already in flight waits, undispatched (heldClusterSized), until that one's response is written and
   * the socket needs no drain; the frames behind it wait too, keeping request order. At most one response of each
   * kind is built for a peer that does not read. Other kinds still pass: a consumer's Metadata or OffsetFetch does
   * not wait behind its own long-poll Fetch on the same connection, and Produce pipelines as before.
   */
  private clusterSizedInFlight = 0;
  /** A cluster-sized frame whose kind was in flight when it was read; dispatched first once that one is written. */
  private heldClusterSized: Buffer | null = null;
  /** The kind (bit) of heldClusterSized. */
  private heldClusterSizedBit = 0;
  private pumping = false;
  private readPaused = false;
  private peerEnded = false;
  private lingerTimer: NodeJS.Timeout | null = null;
  private throttleTimer: NodeJS.Timeout | null = null;
  /** When the running mute ends (performance.now()); meaningful while throttleTimer is set. */
  private throttleEndMs = 0;
  private authenticationTimer: NodeJS.Timeout | null = null;
  /** The frame bound while authenticating; see boundFrames(). */
  private readonly saslFrameBytesMax: number;
  /** Whether frames are bounded as during an authentication (boundFrames() keeps it in step with the state). */
  private saslBounded = false;
  /**
   * When the last chunk was read (performance.now()), or a held frame was let through (see pump), kept only while
   * requests are timed.
   */
  private lastReadMs = 0;

  constructor(
    readonly id: number,
    readonly listenerName: string,
    securityProtocol: SecurityProtocol,
    /** The socket (a TLSSocket on TLS listeners); owned by this connection, exposed for the server's bookkeeping. */
    readonly socket: Socket,
    private readonly host: ConnectionHost,
    /** Set when `socket` reads into buffers of ours (own-reads.ts): reads then land straight in large frames. */
    ownReads: OwnReadSocket | null = null,
    /** The frame bound before SASL authentication; the listener's own, else the server's. */
    saslFrameBytesMax = host.options['sasl.server.max.receive.size'],
  ) {
    this.security = new SecurityState(securityProtocol);
    this.remoteAddress = socket.remoteAddress ?? '';
    this.remotePort = socket.remotePort ?? 0;
    this.reader = new FrameReader(
      host.options['socket.request.max.bytes'],
      (frameBytes) => host.reserveRequestBytes(this, frameBytes),
      host.framePool,
      ownReads === null ? null : host.scratchReadBuffer,
    );
    this.inFlightMax = host.options['max.in.flight.requests.per.connection'];
    this.saslFrameBytesMax = saslFrameBytesMax;
    if (!this.security.authenticated) {
      // Before authentication a SASL connection gets a small frame bound and a deadline (see boundFrames()).
      this.boundFrames();
      const timeoutMs = host.options['sasl.authentication.timeout.ms'];
      this.authenticationTimer = setTimeout(() => {
        if (!this.security.authenticated && this.stateValue === 'open') {
          this.close('closing connection: SASL authentication not completed in time', 'info', { timeoutMs });
        }
      }, timeoutMs);
      this.authenticationTimer.unref();
    }
    if (ownReads === null) {
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
    } else {
      const target: ReadTarget = {
        readBuffer: () => this.reader.readBuffer(),
        onRead: (bytes, buffer) => this.onRead(bytes, buffer),
      };
      ownReads.attach(target);
    }
    socket.on('drain', () => this.resumeReading());
    socket.on('end', () => this.onEnd());
    // Node destroys a socket on a TCP error, but a TLS error after the handshake (an alert, a refused
    // renegotiation) leaves it open and unusable: close it either way, as Kafka's selector does.
    socket.on('error', (error: Error) => this.close('socket error', 'debug', { error: error.message }));
    socket.on('close', () => this.onClose());
    const idleMs = host.options['connections.max.idle.ms'];
    if (idleMs > 0) {
      socket.setTimeout(idleMs);
      socket.on('timeout', () => this.onIdle(idleMs));
    }
    this.log('debug', 'connection accepted');
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** Requests dispatched on this connection whose responses have not been written yet. */
  get inFlight(): number {
    return this.pending.length;
  }

  /** Bytes held for this connection: unsent response bytes and received bytes not yet dispatched. */
  get bytesQueued(): number {
    const held = this.heldClusterSized === null ? 0 : this.heldClusterSized.length;
    return this.socket.writableLength + this.socket.readableLength + this.reader.bufferedBytes + held;
  }

  /**
   * Stops taking requests, writes the responses of those in flight, then ends the socket. Used by graceful
   * shutdown and after a failed authentication whose response must still reach the client.
   */
  closeAfterResponses(reason: string): void {
    if (this.stateValue !== 'open') return;
    this.stateValue = 'closing';
    this.log('debug', reason);
    this.dropHeldClusterSized();
    // Unread bytes at close make the kernel send a reset, which can destroy responses the peer has not read yet;
    // so keep reading, and discard.
    this.setReading(true);
    if (this.pending.length === 0) this.endSocket();
  }

  /** Closes the connection now; responses not yet written are dropped. */
  close(reason: string, level: LogLevel = 'info', fields?: LogFields): void {
    if (this.stateValue === 'closed') return;
    this.log(level, reason, fields);
    this.teardown();
    this.socket.destroy();
  }

  /**
   * Takes no new requests from this connection for `durationMs` (a quota's throttle time: Kafka mutes the channel
   * after sending a throttled response). Requests already dispatched still complete and are answered. A mute
   * already running that ends later is kept: a shorter throttle of a request pipelined behind a throttled one must
   * not let the client in early (Kafka, which handles one request of a connection at a time, never shortens one).
   */
  throttle(durationMs: number): void {
    if (this.stateValue !== 'open' || !(durationMs > 0)) return;
    const endMs = performance.now() + durationMs;
    if (this.throttleTimer !== null) {
      if (endMs <= this.throttleEndMs) return;
      clearTimeout(this.throttleTimer);
    }
    this.throttleEndMs = endMs;
    // The authentication deadline keeps running: a mute must never extend what an unauthenticated peer may hold.
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = null;
      // Kafka's muted channel leaves the requests behind the throttled one unread until now; its queue and total
      // times start when a request is read, so frames this connection read ahead of the mute count from here, not
      // from the read that brought them (the mute is the throttle time, reported apart).
      if (this.host.requestObserver !== null) this.lastReadMs = performance.now();
      this.resumeReading();
    }, durationMs);
    this.setReading(false);
  }

  /** Dispatches buffered frames and resumes the socket if no bound holds it back. Called when a bound clears. */
  resumeReading(): void {
    if (this.pumping || this.stateValue !== 'open') return;
    this.pumping = true;
    this.socket.cork();
    try {
      this.pump();
    } finally {
      this.pumping = false;
      this.socket.uncork();
    }
  }

  private pump(): void {
    for (;;) {
      if (!this.mayDispatch()) {
        this.setReading(false);
        return;
      }
      const held = this.heldClusterSized;
      if (held !== null) {
        this.heldClusterSized = null;
        // Kafka's muted channel leaves the held request, and those behind it, unread until now; its queue and total
        // times start when a request is read, so they count from here, not from the read that brought the bytes.
        if (this.host.requestObserver !== null) this.lastReadMs = performance.now();
        this.dispatch(held);
        if (this.stateValue !== 'open') return;
        continue;
      }
      if (this.saslBounded !== !this.security.authenticated) this.boundFrames();
      const frame = this.nextFrame();
      if (this.stateValue !== 'open') return;
      if (frame !== null && this.clusterSizedInFlight !== 0) {
        const bit = this.clusterSizedBitOf(frame);
        if ((this.clusterSizedInFlight & bit) !== 0) {
          this.heldClusterSized = frame;
          this.heldClusterSizedBit = bit;
          this.setReading(false);
          return;
        }
      }
      if (frame === null) {
        if (this.reader.awaitingReservation) {
          this.setReading(false);
        } else if (this.peerEnded) {
          if (this.reader.midFrame) this.log('debug', 'peer ended inside a frame');
          this.closeAfterResponses('peer finished sending');
        } else {
          this.setReading(true);
        }
        return;
      }
      this.dispatch(frame);
      if (this.stateValue !== 'open') return;
    }
  }

  /**
   * Bounds frames by sasl.server.max.receive.size while the connection authenticates or re-authenticates (Kafka's
   * authenticator reads those frames itself, with that bound), else by socket.request.max.bytes. Applied before
   * the next size prefix is read, not when its frame is dispatched, so the first request after an authentication
   * (a producer's Produce) may be larger. The first authentication also ends its deadline.
   */
  private boundFrames(): void {
    this.saslBounded = !this.security.authenticated;
    const saslMax = this.saslFrameBytesMax;
    const full = this.host.options['socket.request.max.bytes'];
    if (this.saslBounded && saslMax !== SASL_FRAME_BYTES_UNLIMITED && saslMax < full) {
      this.reader.frameBytesMax = saslMax;
      this.reader.frameBoundKey = 'sasl.server.max.receive.size';
    } else {
      this.reader.frameBytesMax = full;
      this.reader.frameBoundKey = 'socket.request.max.bytes';
    }
    if (!this.saslBounded && this.authenticationTimer !== null) {
      clearTimeout(this.authenticationTimer);
      this.authenticationTimer = null;
    }
  }

  private mayDispatch(): boolean {
    return (
      this.throttleTimer === null &&
      this.pending.length < this.inFlightMax &&
      !this.socket.writableNeedDrain &&
      (this.heldClusterSized === null || (this.clusterSizedInFlight & this.heldClusterSizedBit) === 0) &&
      this.host.hasRequestCapacity(this)
    );
  }

  /** The cluster-sized bit of `frame`'s API key, 0 for others (a bare SASL token has no header, and is none). */
  private clusterSizedBitOf(frame: Buffer): number {
    if (this.security.saslState === 'raw-tokens' || frame.length < REQUEST_PREFIX_BYTES) return 0;
    return clusterSizedBit(frame.readInt16BE(0));
  }

  /** Gives back what a held cluster-sized frame was granted: it will never be dispatched (the connection closes). */
  private dropHeldClusterSized(): void {
    const frame = this.heldClusterSized;
    if (frame === null) return;
    this.heldClusterSized = null;
    this.host.releaseRequestBytes(frame.length);
    this.host.framePool?.release(frame);
  }

  private nextFrame(): Buffer | null {
    try {
      return this.reader.next();
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      this.host.stats.connectionsClosedMalformed++;
      // A TLS record header (handshake type 22, version 3.x) read as a size prefix: say what the client got wrong.
      const tlsHello = error.size >>> 16 === 0x1603;
      const reason = tlsHello
        ? `${error.message} (a TLS handshake: the client uses SSL on a ${this.security.protocol} listener)`
        : error.message;
      this.close('closing connection: bad frame size', 'warn', { reason });
      return null;
    }
  }

  private dispatch(frame: Buffer): void {
    const host = this.host;
    host.stats.requestsReceived++;
    if (this.security.saslState === 'raw-tokens') {
      // A bare SASL token has no request header; the SASL handler knows it by this API key.
      this.start(new PendingRequest(this, host, RAW_SASL_TOKEN_API_KEY, -1, -1, frame));
      return;
    }
    if (frame.length < REQUEST_PREFIX_BYTES) {
      host.releaseRequestBytes(frame.length);
      host.stats.connectionsClosedMalformed++;
      this.close('closing connection: frame shorter than a request header', 'warn', {
        frameBytes: frame.length,
      });
      return;
    }
    const apiKey = frame.readInt16BE(0);
    if (!this.security.admits(apiKey)) {
      host.releaseRequestBytes(frame.length);
      this.close('closing connection: request not allowed before authentication', 'warn', {
        apiKey,
        saslState: this.security.saslState,
      });
      return;
    }
    if (this.security.sessionExpiresAtMs !== null) {
      // KIP-368: a SaslHandshake that may begin re-authentication goes on; anything else after the session (or its
      // credential) expired closes the connection, as Kafka's processor does: the client did not re-authenticate in
      // time, or tried again too soon after the last re-authentication.
      const nowMs = Date.now();
      const reauthenticates = apiKey === SASL_HANDSHAKE && this.security.mayBeginReauthentication(nowMs);
      if (!reauthenticates && this.security.sessionExpired(nowMs)) {
        host.releaseRequestBytes(frame.length);
        this.close('closing connection: SASL session expired without re-authentication', 'info', {
          apiKey,
          principal: this.security.principal,
        });
        return;
      }
    }
    // Set before the handler runs: an answer ready at once is flushed inside start().
    this.clusterSizedInFlight |= clusterSizedBit(apiKey);
    this.start(new PendingRequest(this, host, apiKey, frame.readInt16BE(2), frame.readInt32BE(4), frame));
  }

  /** Queues the request for its response and calls the handler. */
  private start(request: PendingRequest): void {
    const host = this.host;
    this.pending.push(request);
    host.requestStarted();
    if (host.requestObserver !== null) request.timeDispatch(this.lastReadMs, performance.now());
    let result: Response | Promise<Response>;
    try {
      result = host.handler(request);
    } catch (error) {
      this.handlerFailed(error, request);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (response) => this.complete(request, response),
        (error: unknown) => this.handlerFailed(error, request),
      );
    } else {
      this.complete(request, result);
    }
  }

  private complete(request: PendingRequest, response: Response): void {
    if (this.stateValue === 'closed') return;
    if (response !== null) {
      const bytes = responseBytes(response);
      if (bytes < 0) {
        this.handlerFailed(
          new TypeError('handler returned neither buffers fitting a frame nor NO_RESPONSE'),
          request,
        );
        return;
      }
      request.responseBytes = bytes;
    }
    request.done = true;
    request.response = response;
    if (this.host.requestObserver !== null) request.completedMs = performance.now();
    // Only the oldest request's completion can let anything be written.
    if (this.pending[0] === request) this.flush();
  }

  /** Writes every completed response at the head of the queue, in request order, in one corked batch. */
  private flush(): void {
    const socket = this.socket;
    const pending = this.pending;
    // One clock read for the batch: its responses are all handed to the socket now.
    const flushedMs = this.host.requestObserver !== null ? performance.now() : 0;
    socket.cork();
    try {
      while (pending.length > 0 && pending[0]!.done) {
        const request = pending.shift()!;
        request.flushedMs = flushedMs;
        // The next request of its kind may go once the socket needs no drain (mayDispatch), as after any write.
        this.clusterSizedInFlight &= ~clusterSizedBit(request.apiKey);
        if (request.response !== null) {
          const notify = request.prepareWrite();
          if (notify) this.awaitingWrite.push(request);
          this.write(request.response, request.responseBytes, notify ? this.onWritten : undefined);
        } else {
          request.giveBack(true);
          request.reportTimes(request.flushedMs);
        }
        request.release();
      }
    } finally {
      socket.uncork();
    }
    if (this.stateValue === 'open') this.resumeReading();
    else if (this.stateValue === 'closing' && pending.length === 0) this.endSocket();
  }

  /** Writes one response with its size prefix; `written`, when given, runs once the socket has taken it all. */
  private write(chunks: readonly Buffer[], size: number, written: (() => void) | undefined): void {
    const socket = this.socket;
    if (size <= COALESCE_BYTES_MAX) {
      // Small responses are copied into one buffer with their size prefix: one write instead of several.
      const frame = Buffer.allocUnsafe(4 + size);
      frame.writeInt32BE(size, 0);
      let at = 4;
      for (const chunk of chunks) at += chunk.copy(frame, at);
      socket.write(frame, written);
    } else {
      const prefix = Buffer.allocUnsafe(4);
      prefix.writeInt32BE(size, 0);
      // Writes complete in order: the callback of the last one says the whole response was taken.
      let last = chunks.length - 1;
      while (last >= 0 && chunks[last]!.length === 0) last--;
      socket.write(prefix, last < 0 ? written : undefined);
      for (let i = 0; i <= last; i++) {
        const chunk = chunks[i]!;
        if (chunk.length > 0) socket.write(chunk, i === last ? written : undefined);
      }
    }
    this.host.stats.responsesSent++;
    this.host.stats.bytesOut += size + 4;
  }

  private handlerFailed(error: unknown, request: Request): void {
    if (this.stateValue === 'closed') return;
    const fields = {
      apiKey: request.apiKey,
      apiVersion: request.apiVersion,
      correlationId: request.correlationId,
    };
    if (error instanceof NotReadyError) {
      this.close('closing connection: not serving yet', 'debug', { ...fields, reason: error.message });
    } else if (error instanceof DecodeError) {
      this.host.stats.connectionsClosedMalformed++;
      this.close('closing connection: malformed request', 'warn', { ...fields, reason: error.message });
    } else {
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
      this.close('closing connection: request handler failed', 'error', { ...fields, error: detail });
    }
  }

  private onData(chunk: Buffer): void {
    this.host.stats.bytesIn += chunk.length;
    if (this.host.requestObserver !== null) this.lastReadMs = performance.now();
    if (this.stateValue !== 'open') return;
    this.reader.push(chunk);
    this.resumeReading();
  }

  /** A read into a buffer of ours (see the constructor): `bytes` landed in `buffer`. */
  private onRead(bytes: number, buffer: Buffer): void {
    this.host.stats.bytesIn += bytes;
    if (this.host.requestObserver !== null) this.lastReadMs = performance.now();
    if (this.stateValue !== 'open') return;
    if (this.reader.received(bytes, buffer)) this.host.stats.bytesReadIntoFrames += bytes;
    this.resumeReading();
  }

  private onEnd(): void {
    this.peerEnded = true;
    if (this.stateValue === 'open') this.resumeReading();
    else if (this.stateValue === 'closing' && this.pending.length === 0) this.endSocket();
  }

  private onIdle(idleMs: number): void {
    if (this.stateValue !== 'open') return;
    if (this.pending.length > 0) {
      // Waiting on our own answer (a long poll) is not idleness; look again later.
      this.socket.setTimeout(idleMs);
      return;
    }
    this.host.stats.connectionsClosedIdle++;
    this.close('closing idle connection', 'info', { idleMs });
  }

  private onClose(): void {
    if (this.stateValue === 'closed') return;
    this.log('debug', 'connection closed');
    this.teardown();
  }

  private endSocket(): void {
    if (this.lingerTimer !== null) return;
    this.socket.end();
    this.lingerTimer = setTimeout(() => this.close('peer did not close after end', 'debug'), CLOSE_LINGER_MS);
    this.lingerTimer.unref();
  }

  private setReading(reading: boolean): void {
    if (reading === !this.readPaused) return;
    this.readPaused = !reading;
    if (reading) {
      this.socket.resume();
    } else {
      this.host.stats.readPauses++;
      this.socket.pause();
    }
  }

  private teardown(): void {
    this.stateValue = 'closed';
    // Nothing of an unwritten response reaches the socket now: what its requests held can be given back.
    for (const request of this.pending) {
      request.giveBack(false);
      request.release();
    }
    this.pending.length = 0;
    this.clusterSizedInFlight = 0;
    this.dropHeldClusterSized();
    this.host.releaseRequestBytes(this.reader.reservedBytes);
    if (this.lingerTimer !== null) clearTimeout(this.lingerTimer);
    if (this.throttleTimer !== null) clearTimeout(this.throttleTimer);
    this.host.connectionClosed(this);
  }

  private log(level: LogLevel, message: string, fields?: LogFields): void {
    this.host.logger[level](message, {
      connectionId: this.id,
      listener: this.listenerName,
      remote: `${this.remoteAddress}:${this.remotePort}`,
      ...fields,
    });
  }
}

/** Total bytes of a response's chunks, or -1 if it is not a list of buffers or would not fit a Kafka frame. */
function responseBytes(response: unknown): number {
  if (!Array.isArray(response)) return -1;
  let size = 0;
  for (const chunk of response) {
    if (!Buffer.isBuffer(chunk)) return -1;
    size += chunk.length;
  }
  return size <= INT32_MAX ? size : -1;
}

/**
 * A request from dispatch until its response is written (or its connection closes): what the handler sees, and
 * the connection's record of where its response stands.
 */
class PendingRequest implements Request {
  done = false;
  response: Response = null;
  /** Sum of the response's chunk lengths: the size prefix to write. */
  responseBytes = 0;
  private waiting = false;
  private released = false;
  private frameReusable = false;
  /** Frame-pool references the response holds until it is written (see Request.releaseAfterResponse). */
  private held: Buffer[][] | null = null;
  private gaveBack = false;
  /** The pool memory goes back once the socket has taken the response (prepareWrite). */
  private giveBackAfterWrite = false;
  /** See Request.markFollowerFetch. */
  private followerFetch = false;
  /** Times of the request's stages (performance.now()), kept only while requests are timed. */
  private receivedMs = 0;
  private dispatchedMs = 0;
  private waitingMs = -1;
  completedMs = 0;
  flushedMs = 0;

  constructor(
    readonly connection: Connection,
    private readonly host: ConnectionHost,
    readonly apiKey: number,
    readonly apiVersion: number,
    readonly correlationId: number,
    readonly frame: Buffer,
  ) {}

  markWaiting(): void {
    if (this.waiting || this.released) return;
    this.waiting = true;
    if (this.host.requestObserver !== null) this.waitingMs = performance.now();
    this.host.requestWaiting();
  }

  allowFrameReuse(): void {
    this.frameReusable = true;
  }

  markFollowerFetch(): void {
    this.followerFetch = true;
  }

  releaseAfterResponse(views: Buffer[]): void {
    if (this.host.framePool === null) return;
    if (this.gaveBack) {
      // Nothing more will be written for this request (its connection closed).
      for (const v of views) this.host.framePool.release(v);
      return;
    }
    this.held ??= [];
    this.held.push(views);
  }

  /**
   * Called as the response is handed to the socket: answers whether afterWrite() must run once the socket has
   * taken all of it, to give back the pool memory the request and its response held, or (requests timed) to
   * note the send time. Nothing pooled and no timing: plain writes stay plain, and what the request held with
   * no pooled bytes goes back now.
   */
  prepareWrite(): boolean {
    if (this.host.framePool !== null) {
      if (this.held === null && !(this.frameReusable && this.host.framePool.isPooled(this.frame))) {
        this.giveBack(false);
      } else {
        this.giveBackAfterWrite = true;
      }
    }
    return this.giveBackAfterWrite || this.host.requestObserver !== null;
  }

  /** The socket took the whole response (or failed to): see prepareWrite(). */
  afterWrite(): void {
    if (this.giveBackAfterWrite) this.giveBack(true);
    if (this.host.requestObserver !== null) this.reportTimes(performance.now());
  }

  /** Called when the handler is: the last read before it completed the frame (see RequestObserver). */
  timeDispatch(lastReadMs: number, nowMs: number): void {
    this.receivedMs = Math.min(lastReadMs, nowMs);
    this.dispatchedMs = nowMs;
  }

  /** Tells the observer where the request's time went; `writtenMs` is when the socket took the response. */
  reportTimes(writtenMs: number): void {
    const observer = this.host.requestObserver;
    if (observer === null) return;
    const localEndMs = this.waitingMs >= 0 ? this.waitingMs : this.completedMs;
    observer.requestDone(
      this.apiKey,
      this.dispatchedMs - this.receivedMs,
      localEndMs - this.dispatchedMs,
      this.waitingMs >= 0 ? this.completedMs - this.waitingMs : 0,
      this.flushedMs - this.completedMs,
      writtenMs - this.flushedMs,
      writtenMs - this.receivedMs,
      this.followerFetch,
    );
  }

  /**
   * Gives back the frame-pool references of the response's views, and the frame itself: to the pool when the
   * request was answered and its handler allowed it, else out of the pool for good. Once.
   */
  giveBack(answered: boolean): void {
    const pool = this.host.framePool;
    if (pool === null || this.gaveBack) return;
    this.gaveBack = true;
    const held = this.held;
    this.held = null;
    if (held !== null) for (const views of held) for (const v of views) pool.release(v);
    if (answered && this.frameReusable) pool.release(this.frame);
    else pool.forget(this.frame);
  }

  /** Gives back what the request held in the broker-wide bounds; once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.host.requestFinished(this.frame.length, this.waiting);
  }
}
