// SocketServer: binds the configured listeners, admits connections within max.connections and
// max.connections.per.ip, and owns the broker-wide request bounds (queued.max.requests,
// queued.max.request.bytes) and the network counters.
//
// Lifecycle: new -> start() (binds every listener or none) -> running -> shutdown() (stops accepting, lets
// each connection answer what it has in flight, closes what is left at the deadline) -> stopped. While running,
// addListener() binds one more listener and removeListener() stops one and closes its connections (Kafka's
// dynamic listeners, KIP-226).
// State: the set of connections, per-address counts, connections waiting for broker-wide capacity, and the
// stats object. Connections own everything about themselves.

import { constants as cryptoConstants } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import tls from 'node:tls';
import { assert } from '../common/assert.js';
import type { FramePool } from '../common/frame-pool.js';
import { type Logger, silentLogger } from '../common/logger.js';
import { Connection, type ConnectionHost } from './connection.js';
import { SCRATCH_READ_BYTES } from './frame-reader.js';
import { checkListener, type ListenerConfig, ListenerConfigError } from './listener.js';
import {
  NetworkConfigError,
  type NetworkOptions,
  type ResolvedNetworkOptions,
  resolveNetworkOptions,
} from './options.js';
import { adoptForOwnReads, adoptTlsForOwnReads, type OwnReadSocket } from './own-reads.js';
import type { RequestHandler, RequestObserver } from './request.js';
import { usesTls } from './security.js';
import { createNetworkStats, type NetworkStats } from './stats.js';

export interface SocketServerConfig {
  readonly listeners: readonly ListenerConfig[];
  readonly handler: RequestHandler;
  readonly options?: NetworkOptions;
  readonly logger?: Logger;
  /** Where connections gather large frames (see common/frame-pool.ts); none: a fresh buffer each. */
  readonly framePool?: FramePool;
  /** Told where each request's time went (metrics); none: requests are not timed. */
  readonly requestObserver?: RequestObserver;
  /**
   * Plain TCP connections read into buffers of their own (own-reads.ts): large frames straight into their
   * buffer, the rest into one scratch buffer, instead of a fresh 64 KiB buffer per read. Default true.
   */
  readonly readsIntoFrames?: boolean;
  /**
   * Asked for each connection admitted (KIP-612 IP connection-rate quotas): milliseconds to hold it, unread, before
   * closing it, or 0 to serve it. None: every admitted connection is served.
   */
  readonly connectionThrottleMs?: (address: string) => number;
  /**
   * Asked for each connection about to be served (KIP-612 broker-wide and listener connection creation rates):
   * how long the listener's acceptor must wait, with the connection recorded at `nowMs`. The connection and those
   * accepted after it on the listener are served that much later, as Kafka's blocked acceptor does.
   */
  readonly listenerThrottleMs?: (listenerName: string, nowMs: number) => number;
  /**
   * The listener not counted against the broker-wide max.connections (Kafka's protected inter-broker listener,
   * when there are several), or null.
   */
  readonly protectedListener?: () => string | null;
}

export interface BoundAddress {
  readonly host: string;
  readonly port: number;
}

export interface ShutdownResult {
  /** Connections still busy at the deadline and closed with requests unanswered. */
  readonly connectionsForced: number;
}

type ServerState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/** A socket accepted at max.connections, and what to do once it is counted. */
interface WaitingSocket {
  readonly socket: net.Socket;
  readonly config: ListenerConfig;
  readonly admitted: () => void;
}

interface BoundListener {
  readonly config: ListenerConfig;
  readonly server: net.Server;
}

/**
 * The connection counts a broker admits: max.connections, listener.name.<listener>.max.connections,
 * max.connections.per.ip and its overrides.
 */
export interface ConnectionLimits {
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
  readonly perIpOverrides: ReadonlyMap<string, number>;
  /** listener.name.<listener>.max.connections, by listener name; absent: no bound of the listener's own. */
  readonly perListener?: ReadonlyMap<string, number>;
}

export class SocketServer implements ConnectionHost {
  readonly options: ResolvedNetworkOptions;
  readonly handler: RequestHandler;
  readonly logger: Logger;
  readonly stats: NetworkStats = createNetworkStats();
  readonly framePool: FramePool | null;
  readonly requestObserver: RequestObserver | null;
  readonly scratchReadBuffer = Buffer.allocUnsafeSlow(SCRATCH_READ_BYTES);
  private readonly readsIntoFrames: boolean;
  private readonly connectionThrottleMs: ((address: string) => number) | null;
  private readonly listenerThrottleMs: ((listenerName: string, nowMs: number) => number) | null;
  /** When each listener's acceptor is free again after a connection creation rate throttle (epoch ms). */
  private readonly acceptorFreeAtMs = new Map<string, number>();
  private state: ServerState = 'new';
  private readonly listenerConfigs: readonly ListenerConfig[];
  private readonly bound: BoundListener[] = [];
  /** The listener each admitted socket came through, so that removing a listener finds its sockets. */
  private readonly socketListener = new WeakMap<net.Socket, string>();
  private readonly connections = new Set<Connection>();
  /** Admitted TCP sockets, including TLS sockets still in their handshake (not yet connections). */
  private readonly sockets = new Set<net.Socket>();
  private readonly connectionsPerAddress = new Map<string, number>();
  /**
   * max.connections, max.connections.per.ip and its overrides as they apply now: from the options at start, then
   * from each dynamic change (updateConnectionLimits).
   */
  private limits: ConnectionLimits;
  /** The address each host name of the overrides last resolved to, used while an update resolves it again. */
  private readonly overrideHostAddresses = new Map<string, string>();
  /** Settles once the host names of the overrides given at construction are resolved (start() waits for it). */
  private readonly overridesResolved: Promise<void>;
  /** TCP sockets accepted while their listener had no slot, unread, by listener in the order they came. */
  private readonly waitingForSlot = new Map<string, WaitingSocket[]>();
  private readonly connectionsPerListener = new Map<string, number>();
  private readonly protectedListener: () => string | null;
  /** Connections that stopped reading because the broker-wide bound was reached, in the order they stopped. */
  private readonly waitingForCapacity = new Set<Connection>();
  private resumeScheduled = false;
  private nextConnectionId = 1;
  private shutdownPromise: Promise<ShutdownResult> | null = null;
  private onAllClosed: (() => void) | null = null;

  constructor(config: SocketServerConfig) {
    this.options = resolveNetworkOptions(config.options);
    this.handler = config.handler;
    this.logger = config.logger ?? silentLogger;
    this.framePool = config.framePool ?? null;
    this.requestObserver = config.requestObserver ?? null;
    this.readsIntoFrames = config.readsIntoFrames ?? true;
    this.connectionThrottleMs = config.connectionThrottleMs ?? null;
    this.listenerThrottleMs = config.listenerThrottleMs ?? null;
    this.protectedListener = config.protectedListener ?? (() => null);
    // Listeners come from the operator's configuration: mistakes are reported, not asserted.
    if (config.listeners.length === 0) throw new ListenerConfigError('no listeners configured');
    for (const listener of config.listeners) checkListener(listener);
    const names = new Set(config.listeners.map((l) => l.name));
    if (names.size !== config.listeners.length)
      throw new ListenerConfigError('listener names must be unique');
    this.listenerConfigs = config.listeners;
    this.limits = {
      maxConnections: this.options['max.connections'],
      maxConnectionsPerIp: this.options['max.connections.per.ip'],
      perIpOverrides: new Map(),
    };
    this.overridesResolved = this.setLimits({
      ...this.limits,
      perIpOverrides: parsePerAddressOverrides(this.options['max.connections.per.ip.overrides']),
    });
  }

  /**
   * New connection limits from a dynamic broker config change (Kafka's DynamicConnectionQuota): they count for
   * connections accepted from now on; connections already open stay, as in Kafka.
   */
  updateConnectionLimits(limits: ConnectionLimits): void {
    void this.setLimits(limits);
    this.admitWaiting();
  }

  /**
   * Applies `limits` at once, but for overrides naming a host: Kafka's ConnectionQuotas resolves those with
   * InetAddress.getByName, so they apply to the host's address once it is resolved (a host that does not resolve
   * is logged and its entry left out). Until then a host's last known address stands for it. Overrides of a later
   * update are not replaced by an earlier one's lookups.
   */
  private setLimits(limits: ConnectionLimits): Promise<void> {
    const hosts = [...limits.perIpOverrides.keys()].filter((host) => net.isIP(host) === 0);
    if (hosts.length === 0) {
      this.limits = limits;
      return Promise.resolve();
    }
    const known = new Map<string, number>();
    for (const [host, count] of limits.perIpOverrides) {
      const address = net.isIP(host) !== 0 ? host : this.overrideHostAddresses.get(host);
      if (address !== undefined) known.set(address, count);
    }
    const applied: ConnectionLimits = { ...limits, perIpOverrides: known };
    this.limits = applied;
    return resolveOverrideHosts(limits.perIpOverrides, this.overrideHostAddresses, this.logger).then(
      (resolved) => {
        if (this.limits !== applied) return;
        this.limits = { ...limits, perIpOverrides: resolved };
        this.admitWaiting();
      },
    );
  }

  /** Binds every listener; if one fails, closes those already bound and rejects with its error. */
  async start(): Promise<void> {
    assert(this.state === 'new', `start() called in state ${this.state}`);
    this.state = 'starting';
    await this.overridesResolved;
    try {
      for (const config of this.listenerConfigs) {
        const server = this.createServer(config);
        await listen(server, config, this.options['socket.listen.backlog.size'], this.logger);
        this.bound.push({ config, server });
        this.logListening(config, false);
      }
    } catch (error) {
      for (const { server } of this.bound) server.close();
      this.bound.length = 0;
      this.state = 'stopped';
      throw error;
    }
    this.state = 'running';
  }

  /**
   * Binds one more listener while running (a dynamic `listeners` change): connections are accepted on it as soon
   * as this resolves. Rejects when its name is taken, its settings are wrong, or its address cannot be bound.
   */
  async addListener(config: ListenerConfig): Promise<BoundAddress> {
    assert(this.state === 'running', `addListener() called in state ${this.state}`);
    checkListener(config);
    if (this.bound.some((l) => l.config.name === config.name))
      throw new ListenerConfigError(`listener ${config.name} is already bound`);
    const server = this.createServer(config);
    await listen(server, config, this.options['socket.listen.backlog.size'], this.logger);
    if (this.state !== 'running') {
      server.close();
      throw new ListenerConfigError(`network stopped while listener ${config.name} was being bound`);
    }
    this.bound.push({ config, server });
    return this.logListening(config, true);
  }

  /** The line that says a listener is bound, where, and whether a dynamic change added it; its address. */
  private logListening(config: ListenerConfig, dynamic: boolean): BoundAddress {
    const address = this.address(config.name);
    this.logger.info('listening', {
      listener: config.name,
      securityProtocol: config.securityProtocol,
      host: address.host,
      port: address.port,
      ...(dynamic ? { dynamic: true } : {}),
    });
    return address;
  }

  /**
   * Stops a listener (a dynamic `listeners` change): it accepts nothing more, and its connections, open or still
   * in their TLS handshake, are closed, as Kafka's removeListeners closes the listener's processors. Resolves once
   * the port is released. A name not bound is nothing to do.
   */
  async removeListener(listenerName: string): Promise<void> {
    const index = this.bound.findIndex((l) => l.config.name === listenerName);
    if (index < 0) return;
    const [{ server }] = this.bound.splice(index, 1) as [BoundListener];
    this.acceptorFreeAtMs.delete(listenerName);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    let count = 0;
    for (const connection of [...this.connections]) {
      if (connection.listenerName !== listenerName) continue;
      count++;
      connection.close('closing connection: its listener was removed', 'info');
    }
    for (const socket of [...this.sockets]) {
      if (this.socketListener.get(socket) === listenerName) socket.destroy();
    }
    for (const { socket } of this.waitingForSlot.get(listenerName)?.splice(0) ?? []) socket.destroy();
    this.waitingForSlot.delete(listenerName);
    this.logger.info('listener removed', { listener: listenerName, connectionsClosed: count });
    await closed;
  }

  /** The names of the listeners bound now. */
  listenerNames(): string[] {
    return this.bound.map((l) => l.config.name);
  }

  /** The address a listener is bound to (the real port when configured with port 0). */
  address(listenerName: string): BoundAddress {
    const listener = this.bound.find((l) => l.config.name === listenerName);
    assert(listener !== undefined, `listener ${listenerName} is not bound`);
    const address = listener.server.address();
    assert(address !== null && typeof address === 'object', 'listener has no TCP address');
    return { host: address.address, port: address.port };
  }

  /**
   * Replaces the certificates, trust and client-certificate demand of a TLS listener (a certificate reload or a
   * dynamic ssl.* change): connections accepted from now on handshake with the new ones, open connections keep
   * the session they have.
   */
  updateTls(listenerName: string, options: tls.TlsOptions): void {
    const listener = this.bound.find((l) => l.config.name === listenerName);
    assert(listener !== undefined, `listener ${listenerName} is not bound`);
    assert(listener.server instanceof tls.Server, `listener ${listenerName} does not use TLS`);
    listener.server.setSecureContext({ ...options, secureOptions: withoutRenegotiation(options) });
    // setSecureContext replaces only the context: whether a client must show a certificate (ssl.client.auth) is
    // the server's own setting, read for each new connection, so a change to it is applied here or never.
    const server = listener.server as tls.Server & { requestCert: boolean; rejectUnauthorized: boolean };
    if (options.requestCert !== undefined) server.requestCert = options.requestCert;
    if (options.rejectUnauthorized !== undefined) server.rejectUnauthorized = options.rejectUnauthorized;
  }

  /** Open connections (for the admin APIs and tests); do not hold on to them. */
  openConnections(): ReadonlySet<Connection> {
    return this.connections;
  }

  /** Bytes held across all connections: unsent responses and received bytes not yet dispatched. */
  bytesQueued(): number {
    let bytes = 0;
    for (const connection of this.connections) bytes += connection.bytesQueued;
    return bytes;
  }

  /**
   * Stops accepting, lets every connection answer the requests it has in flight, and closes what is still open
   * after `deadlineMs` (shutdown.timeout.ms by default). Safe to call more than once.
   */
  shutdown(deadlineMs = this.options['shutdown.timeout.ms']): Promise<ShutdownResult> {
    if (this.shutdownPromise === null) this.shutdownPromise = this.runShutdown(deadlineMs);
    return this.shutdownPromise;
  }

  private async runShutdown(deadlineMs: number): Promise<ShutdownResult> {
    this.state = 'stopping';
    const closed = this.bound.map(
      ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())),
    );
    this.logger.info('shutting down network', { connections: this.connections.size });
    for (const queue of this.waitingForSlot.values())
      for (const { socket } of queue.splice(0)) socket.destroy();
    for (const connection of [...this.connections]) connection.closeAfterResponses('broker shutting down');
    // Sockets still in a TLS handshake have nothing in flight. A TLS connection wraps its TCP socket, so the two
    // are matched by their address pair.
    const connected = new Set([...this.connections].map((c) => addressPair(c.socket)));
    for (const socket of this.sockets) if (!connected.has(addressPair(socket))) socket.destroy();
    let connectionsForced = 0;
    if (this.connections.size > 0 || this.sockets.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const drained = new Promise<boolean>((resolve) => {
        this.onAllClosed = () => resolve(true);
        timer = setTimeout(() => resolve(false), deadlineMs);
      });
      const allClosed = await drained;
      clearTimeout(timer);
      this.onAllClosed = null;
      if (!allClosed) {
        for (const connection of [...this.connections]) {
          if (connection.inFlight > 0) connectionsForced++;
          connection.close(
            'closing connection at shutdown deadline',
            connection.inFlight > 0 ? 'warn' : 'debug',
          );
        }
        for (const socket of this.sockets) socket.destroy();
      }
    }
    await Promise.all(closed);
    this.state = 'stopped';
    this.logger.info('network stopped', { connectionsForced });
    return { connectionsForced };
  }

  private createServer(config: ListenerConfig): net.Server {
    // Node cannot set SO_SNDBUF on TCP sockets; the user-space write buffer bound stands in for it.
    const sendBufferBytes = this.options['socket.send.buffer.bytes'];
    const socketOptions = {
      allowHalfOpen: true,
      noDelay: true,
      keepAlive: true,
      ...(sendBufferBytes > 0 ? { highWaterMark: sendBufferBytes } : {}),
    };
    if (usesTls(config.securityProtocol)) {
      // A client that has not finished its TLS handshake has proven nothing: it gets the deadline of a SASL
      // connection that has not authenticated (10 s), and never longer than an idle connection would.
      const idleMs = this.options['connections.max.idle.ms'];
      const unprovenMs = this.options['sasl.authentication.timeout.ms'];
      const handshakeTimeout = idleMs > 0 ? Math.min(idleMs, unprovenMs) : unprovenMs;
      const server = tls.createServer({
        handshakeTimeout,
        ...config.tls,
        secureOptions: withoutRenegotiation(config.tls),
        ...socketOptions,
      });
      // Connection bounds apply to TCP connections, before the TLS handshake spends anything on them.
      server.on('connection', (socket: net.Socket) => this.admit(socket, config, () => {}));
      // TLS connections are counted against the connection creation rates once their handshake is done.
      server.on('secureConnection', (socket: tls.TLSSocket) =>
        this.openWhenDue(socket, config, () =>
          this.open(socket, config, this.readsIntoFrames ? adoptTlsForOwnReads(socket) : null),
        ),
      );
      server.on('tlsClientError', (error: Error, socket: tls.TLSSocket) => {
        this.logger.info('TLS handshake failed', {
          listener: config.name,
          remote: `${socket.remoteAddress}:${socket.remotePort}`,
          error: error.message,
        });
        // Node leaves the socket open after a handshake timeout once this event has a listener.
        socket.destroy();
      });
      return server;
    }
    if (!this.readsIntoFrames) {
      const server = net.createServer(socketOptions);
      server.on('connection', (socket: net.Socket) => {
        this.admit(socket, config, () => this.openWhenDue(socket, config, () => this.open(socket, config)));
      });
      return server;
    }
    // Accepted paused, so that nothing is read before the socket reads into buffers of ours (own-reads.ts).
    const server = net.createServer({ ...socketOptions, pauseOnConnect: true });
    server.on('connection', (accepted: net.Socket) => {
      const own = adoptForOwnReads(accepted, this.scratchReadBuffer, {
        allowHalfOpen: socketOptions.allowHalfOpen,
        writableHighWaterMark: sendBufferBytes > 0 ? sendBufferBytes : undefined,
      });
      if (own === null) accepted.resume();
      const socket = own?.socket ?? accepted;
      this.admit(socket, config, () =>
        this.openWhenDue(socket, config, () => this.open(socket, config, own)),
      );
    });
    return server;
  }

  /**
   * Opens an admitted socket now, or when its listener's acceptor is free again (KIP-612): a connection over the
   * broker's or the listener's connection creation rate waits, unread, and the ones behind it wait their turn.
   */
  private openWhenDue(socket: net.Socket, config: ListenerConfig, open: () => void): void {
    const delayMs = this.acceptorDelayMs(config.name);
    if (delayMs <= 0) {
      open();
      return;
    }
    this.logger.debug(`delaying a connection over the connection creation rate for ${delayMs} ms`, {
      listener: config.name,
      remote: socket.remoteAddress,
    });
    // Nothing is read meanwhile: a socket reading into our buffers has none to read into before open().
    socket.pause();
    const timer = setTimeout(() => {
      socket.resume();
      open();
    }, delayMs);
    socket.once('close', () => clearTimeout(timer));
  }

  private acceptorDelayMs(listenerName: string): number {
    if (this.listenerThrottleMs === null) return 0;
    const nowMs = Date.now();
    // Recorded when the acceptor gets to it: after the wait of the connections before it.
    const startMs = Math.max(nowMs, this.acceptorFreeAtMs.get(listenerName) ?? 0);
    const throttleMs = this.listenerThrottleMs(listenerName, startMs);
    if (throttleMs > 0 || startMs > nowMs) this.acceptorFreeAtMs.set(listenerName, startMs + throttleMs);
    else this.acceptorFreeAtMs.delete(listenerName);
    return startMs + throttleMs - nowMs;
  }

  /**
   * Counts a new TCP connection against max.connections and max.connections.per.ip, then calls `admitted`, or
   * closes it. At max.connections it waits, unread, until a connection closes (Kafka's acceptor blocks in
   * ConnectionQuotas.waitForConnectionSlot), and the connections after it wait behind it; over
   * max.connections.per.ip it is closed (Kafka's TooManyConnectionsException). The count is released when the TCP
   * socket closes, whoever closes it.
   */
  private admit(socket: net.Socket, config: ListenerConfig, admitted: () => void): void {
    if (this.state !== 'running' || socket.remoteAddress === undefined) {
      socket.destroy();
      return;
    }
    const queue = this.waitingForSlot.get(config.name) ?? [];
    if (queue.length > 0 || !this.slotAvailable(config.name)) {
      // Kafka's blocked acceptor leaves the waiting connections in the kernel's accept queue, which
      // socket.listen.backlog.size bounds; Node accepts them all, so the same bound is kept here: beyond it a
      // connection is closed, as the kernel would refuse it, and no peer can pile up sockets while the broker is full.
      if (queue.length >= this.options['socket.listen.backlog.size']) {
        this.stats.connectionsRejected++;
        this.logger.info(
          'rejecting connection: max.connections reached and socket.listen.backlog.size waiting',
          {
            listener: config.name,
            remote: socket.remoteAddress,
          },
        );
        socket.destroy();
        return;
      }
      this.logger.debug('max.connections reached: the connection waits for one to close', {
        listener: config.name,
        remote: socket.remoteAddress,
      });
      socket.pause();
      const waiting: WaitingSocket = { socket, config, admitted };
      queue.push(waiting);
      this.waitingForSlot.set(config.name, queue);
      socket.once('close', () => {
        const at = queue.indexOf(waiting);
        if (at >= 0) queue.splice(at, 1);
      });
      return;
    }
    if (this.count(socket, config)) admitted();
  }

  /**
   * Kafka's ConnectionQuotas.connectionSlotAvailable: below the listener's own max.connections, and below the
   * broker's unless the listener is the inter-broker one of several (protected from the broker-wide count).
   */
  private slotAvailable(listenerName: string): boolean {
    const listenerMax = this.limits.perListener?.get(listenerName) ?? Number.POSITIVE_INFINITY;
    if ((this.connectionsPerListener.get(listenerName) ?? 0) >= listenerMax) return false;
    if (listenerName === this.protectedListener()) return true;
    return this.sockets.size < this.limits.maxConnections;
  }

  /** Admits the sockets waiting for a slot, each listener's in order, while their limits allow. */
  private admitWaiting(): void {
    for (const [listenerName, queue] of this.waitingForSlot) {
      while (queue.length > 0 && this.slotAvailable(listenerName)) {
        const { socket, config, admitted } = queue.shift()!;
        if (socket.destroyed) continue;
        if (this.state !== 'running') {
          socket.destroy();
          continue;
        }
        socket.resume();
        if (this.count(socket, config)) admitted();
      }
    }
  }

  /** Counts an admitted socket, or closes it over max.connections.per.ip or its address's connection rate. */
  private count(socket: net.Socket, config: ListenerConfig): boolean {
    const address = socket.remoteAddress === undefined ? undefined : javaAddress(socket.remoteAddress);
    if (address === undefined) {
      socket.destroy();
      return false;
    }
    const fromAddress = this.connectionsPerAddress.get(address) ?? 0;
    if (fromAddress >= this.limitForAddress(address)) {
      this.stats.connectionsRejected++;
      this.logger.info('rejecting connection: max.connections.per.ip reached', {
        listener: config.name,
        remote: address,
      });
      socket.destroy();
      return false;
    }
    this.connectionsPerAddress.set(address, fromAddress + 1);
    this.connectionsPerListener.set(config.name, (this.connectionsPerListener.get(config.name) ?? 0) + 1);
    this.sockets.add(socket);
    this.socketListener.set(socket, config.name);
    this.stats.connectionsAccepted++;
    this.stats.connectionsOpen++;
    socket.once('close', () => this.release(socket, address));
    const throttleMs = this.connectionThrottleMs?.(address) ?? 0;
    if (throttleMs > 0) {
      // Kafka's delayed close of a throttled connection: it stays counted and unread, then closes, so a client
      // that reconnects in a loop waits rather than being served or refused at once.
      this.stats.connectionsRejected++;
      this.logger.debug(
        `delaying the close of a connection over its IP connection rate for ${throttleMs} ms`,
        {
          listener: config.name,
          remote: address,
        },
      );
      socket.pause();
      const timer = setTimeout(() => socket.destroy(), throttleMs);
      socket.once('close', () => clearTimeout(timer));
      return false;
    }
    return true;
  }

  /** max.connections.per.ip for connections from `address`: its override, if one names it. */
  limitForAddress(address: string): number {
    return this.limits.perIpOverrides.get(address) ?? this.limits.maxConnectionsPerIp;
  }

  private release(socket: net.Socket, address: string): void {
    if (!this.sockets.delete(socket)) return;
    this.stats.connectionsOpen--;
    const listenerName = this.socketListener.get(socket);
    if (listenerName !== undefined) decrementCount(this.connectionsPerListener, listenerName);
    decrementCount(this.connectionsPerAddress, address);
    this.admitWaiting();
    this.checkAllClosed();
  }

  /** Wraps an admitted socket (plain, or TLS after its handshake) in a Connection. */
  private open(socket: net.Socket, config: ListenerConfig, ownReads: OwnReadSocket | null = null): void {
    // A connection whose listener was removed while it waited (a creation-rate delay, a TLS handshake) is closed.
    const listenerBound = this.bound.some((l) => l.config.name === config.name);
    if (this.state !== 'running' || socket.destroyed || !listenerBound) {
      socket.destroy();
      return;
    }
    const principal =
      config.peerPrincipal !== undefined ? config.peerPrincipal(socket as tls.TLSSocket) : null;
    if (principal instanceof Error) {
      this.logger.info('TLS client refused', {
        listener: config.name,
        remote: `${socket.remoteAddress}:${socket.remotePort}`,
        error: principal.message,
      });
      socket.destroy();
      return;
    }
    const connection = new Connection(
      this.nextConnectionId++,
      config.name,
      config.securityProtocol,
      socket,
      this,
      ownReads,
      config.saslServerMaxReceiveSize,
    );
    if (principal !== null) connection.security.principal = principal;
    this.connections.add(connection);
  }

  hasRequestCapacity(connection: Connection): boolean {
    if (this.stats.requestsInFlight < this.options['queued.max.requests']) return true;
    this.waitingForCapacity.add(connection);
    return false;
  }

  reserveRequestBytes(connection: Connection, frameBytes: number): boolean {
    const bytesMax = this.options['queued.max.request.bytes'];
    // As Kafka's request memory pool, a frame is admitted while the total is below the bound, so one frame larger
    // than the bound can still be served.
    if (bytesMax >= 0 && this.stats.requestBytesInFlight >= bytesMax) {
      this.waitingForCapacity.add(connection);
      return false;
    }
    this.stats.requestBytesInFlight += frameBytes;
    return true;
  }

  releaseRequestBytes(frameBytes: number): void {
    if (frameBytes === 0) return;
    this.stats.requestBytesInFlight -= frameBytes;
    assert(this.stats.requestBytesInFlight >= 0, 'request bytes in flight below zero');
    this.capacityFreed();
  }

  requestStarted(): void {
    this.stats.requestsInFlight++;
  }

  requestWaiting(): void {
    this.stats.requestsInFlight--;
    this.stats.requestsWaiting++;
    this.capacityFreed();
  }

  requestFinished(frameBytes: number, waiting: boolean): void {
    if (waiting) this.stats.requestsWaiting--;
    else this.stats.requestsInFlight--;
    this.stats.requestBytesInFlight -= frameBytes;
    assert(
      this.stats.requestsInFlight >= 0 &&
        this.stats.requestsWaiting >= 0 &&
        this.stats.requestBytesInFlight >= 0,
      'in-flight count below zero',
    );
    this.capacityFreed();
  }

  private capacityFreed(): void {
    if (this.waitingForCapacity.size > 0 && !this.resumeScheduled) {
      // Resumed on a later turn of the event loop, so that completing one request never recurses into
      // dispatching requests of other connections.
      this.resumeScheduled = true;
      setImmediate(() => this.resumeWaiting());
    }
  }

  private resumeWaiting(): void {
    this.resumeScheduled = false;
    const waiting = [...this.waitingForCapacity];
    this.waitingForCapacity.clear();
    for (const connection of waiting) connection.resumeReading();
  }

  connectionClosed(connection: Connection): void {
    this.connections.delete(connection);
    this.waitingForCapacity.delete(connection);
    this.checkAllClosed();
  }

  private checkAllClosed(): void {
    if (this.connections.size === 0 && this.sockets.size === 0 && this.onAllClosed !== null)
      this.onAllClosed();
  }
}

function listen(server: net.Server, config: ListenerConfig, backlog: number, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    const host = config.host === '' ? undefined : config.host;
    server.listen({ host, port: config.port, backlog }, () => {
      server.off('error', onError);
      // After binding, errors come from accept (out of file descriptors); the listener keeps going.
      server.on('error', (error: Error) =>
        logger.error('listener error', { listener: config.name, error: error.message }),
      );
      resolve();
    });
  });
}

/**
 * Parses max.connections.per.ip.overrides ("127.0.0.1:200,[::1]:5,broker-7.example:10"): addresses and host names,
 * as Kafka; the socket server resolves host names (see SocketServer.setLimits).
 */
export function parsePerAddressOverrides(value: string): Map<string, number> {
  const overrides = new Map<string, number>();
  for (const entry of value.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const colon = trimmed.lastIndexOf(':');
    const address = trimmed.slice(0, colon).replace(/^\[|\]$/g, '');
    const count = Number(trimmed.slice(colon + 1));
    const ip = net.isIP(address) !== 0;
    if (colon <= 0 || !(ip || HOST_NAME.test(address)) || !Number.isInteger(count) || count < 0) {
      throw new NetworkConfigError('max.connections.per.ip.overrides', `bad entry "${trimmed}"`);
    }
    overrides.set(ip ? javaAddress(address) : address, count);
  }
  return overrides;
}

/**
 * The listener's OpenSSL options with renegotiation refused: Kafka's SslTransportLayer closes a connection whose
 * peer starts a TLS 1.2 renegotiation (each one a full handshake the broker pays for), where Node would accept two
 * every ten minutes. OpenSSL refuses it with an alert; the connection then closes on its socket error.
 */
function withoutRenegotiation(options: tls.TlsOptions | undefined): number {
  return (options?.secureOptions ?? 0) | cryptoConstants.SSL_OP_NO_RENEGOTIATION;
}

/**
 * An address as Java's InetAddress holds it: an IPv4-mapped IPv6 address (how Node reports an IPv4 peer of a
 * listener bound to "::") is the IPv4 address, so per-address counts and overrides match Kafka's.
 */
function javaAddress(address: string): string {
  const mapped = IPV4_MAPPED.exec(address);
  return mapped === null ? address : (mapped[1] as string);
}

const IPV4_MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens (underscores tolerated, as Java). */
const HOST_NAME =
  /^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/;

/**
 * The overrides with each host name replaced by its address (the first, as getByName), noted in `addresses`;
 * never rejects.
 */
async function resolveOverrideHosts(
  overrides: ReadonlyMap<string, number>,
  addresses: Map<string, string>,
  logger: Logger,
): Promise<Map<string, number>> {
  const resolved = new Map<string, number>();
  for (const [host, count] of overrides) {
    if (net.isIP(host) !== 0) {
      resolved.set(host, count);
      continue;
    }
    try {
      const { address } = await lookup(host);
      addresses.set(host, address);
      resolved.set(address, count);
    } catch (error) {
      logger.warn('max.connections.per.ip.overrides: host not resolved, its entry does not apply', {
        host,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return resolved;
}

/** Local and remote address and port: what identifies a TCP connection, the same for a TLS socket and its TCP socket. */
function addressPair(socket: net.Socket): string {
  return `${socket.localAddress}:${socket.localPort}-${socket.remoteAddress}:${socket.remotePort}`;
}

/** One connection fewer under `key`; a count that reaches zero leaves the map (no entry per address ever seen). */
function decrementCount(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
