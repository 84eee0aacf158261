// TLS to ZooKeeper's secureClientPort for node-zookeeper-client, which knows plain TCP only.
//
// Owns: the one place that reaches into the client's internals for TLS. node-zookeeper-client 1.1.3 opens every
// connection in ConnectionManager.prototype.connect with `net.connect(server)` and has no option for another
// socket. Rather than patch the `net` module for the whole process, this replaces `connect` on one client's
// connection manager with the same steps over `tls.connect`: pick the next server as the library does, open
// the socket, arm the library's connect timeout and hand every socket event to the library's own handlers. The
// session is started on `secureConnect` instead of `connect`, so the connect request is the first thing sent
// inside TLS and the connect timeout covers the TLS handshake too (a server that accepts TCP but never
// finishes the handshake is left for the next one, as one that never answers is).
//
// What is read of the library (not public API) is named in ConnectionManagerInternals; an assertion at
// install time fails loudly should a new version move it.

import { isIP } from 'node:net';
import tls from 'node:tls';
import type * as zk from 'node-zookeeper-client';
import { assert } from '../../common/assert.js';

/** The parts of node-zookeeper-client 1.1.3's ConnectionManager the TLS connect uses. */
interface ConnectionManagerInternals {
  socket?: tls.TLSSocket;
  connectTimeout: number;
  connectTimeoutHandler?: NodeJS.Timeout;
  connect(): void;
  setState(state: number): void;
  findNextServer(callback: (server: { host: string; port: number }) => void): void;
  onSocketConnected(): void;
  onSocketData(data: Buffer): void;
  onSocketDrain(): void;
  onSocketClosed(hadError: boolean): void;
  onSocketError(error: Error): void;
  onSocketConnectTimeout(): void;
}

/** The ConnectionManager's CONNECTING state (ConnectionManager.STATES.CONNECTING in 1.1.3). */
const CM_CONNECTING = 1;

/**
 * Makes `client` reach its servers over TLS with `options` (key, certificate, trusted CAs, versions, ciphers,
 * host name check). Call before client.connect(); `onError` hears each socket error (a failed handshake). Each server of the connect string is checked against its own
 * host name (or IP address), as ZooKeeper's Java client does with endpoint identification on.
 */
export function useTlsSockets(
  client: zk.Client,
  options: tls.ConnectionOptions,
  onError: (error: Error) => void = () => {},
): void {
  const manager = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager;
  assert(
    manager !== undefined &&
      typeof manager.findNextServer === 'function' &&
      typeof manager.onSocketConnected === 'function' &&
      typeof manager.setState === 'function',
    'node-zookeeper-client no longer has the connection manager the TLS connect replaces',
  );
  manager.connect = function connectOverTls(this: ConnectionManagerInternals) {
    this.setState(CM_CONNECTING);
    this.findNextServer((server) => {
      const socket = tls.connect({
        ...options,
        host: server.host,
        port: server.port,
        // SNI takes host names only; an address is still checked against the certificate's IP entries.
        servername: isIP(server.host) === 0 ? server.host : undefined,
      });
      this.socket = socket;
      this.connectTimeoutHandler = setTimeout(() => this.onSocketConnectTimeout(), this.connectTimeout);
      socket.setNoDelay();
      socket.on('secureConnect', () => this.onSocketConnected());
      socket.on('data', (data: Buffer) => this.onSocketData(data));
      socket.on('drain', () => this.onSocketDrain());
      socket.on('close', (hadError: boolean) => this.onSocketClosed(hadError));
      socket.on('error', (error: Error) => {
        // The library drops socket errors (a close follows and it tries the next server); a refused
        // certificate would then look like an unreachable server, so the reason goes to the owner too.
        onError(error);
        this.onSocketError(error);
      });
    });
  };
}
