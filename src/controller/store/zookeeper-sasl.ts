// SASL authentication to ZooKeeper for node-zookeeper-client, which has no SASL support (its response parser
// drops the connection at an opcode it does not know, 102 `sasl`).
//
// Owns: the SASL exchange on each new connection, done as ZooKeeper's Java client does it: once the server has
// answered the connect request, and before any other request leaves. It hooks three methods of one client's
// connection manager (the instance, not the prototype):
// - setState: the move to CONNECTED is held while the exchange runs, so the client reports `connected` (and
//   sends its queued requests) only on an authenticated connection;
// - onSocketData: while the exchange runs, frames are read here (the library would take them for a connect
//   response); bytes after the last SASL reply go back to the library;
// - onPacketQueueReadable: nothing of the library's queue is written during the exchange.
// A refused exchange (the server's AUTHFAILED, a server that cannot prove the password) moves the client to its
// AUTHENTICATION_FAILED state, from which the library does not reconnect, as the Java client gives up.
//
// Wire format (ZooKeeper's jute): request = int32 length, RequestHeader {int32 xid, int32 type=102},
// GetSASLRequest {buffer token}; reply = int32 length, ReplyHeader {int32 xid, int64 zxid, int32 err},
// SetSASLResponse {buffer token}.

import type { Socket } from 'node:net';
import type * as zk from 'node-zookeeper-client';
import { assert } from '../../common/assert.js';

/** One SASL client exchange: the next token for the server's last one (empty at the start), null when done. */
export interface ZooKeeperSaslExchange {
  evaluate(serverToken: Buffer): Buffer | null | Error;
}

/** What this reads and replaces of node-zookeeper-client 1.1.3's ConnectionManager. */
interface ConnectionManagerInternals {
  state: number;
  socket?: Socket;
  pingTimeout: number;
  setState(state: number): void;
  onSocketData(data: Buffer): void;
  onPacketQueueReadable(): void;
  onSocketTimeout(): void;
}

/** ConnectionManager.STATES of 1.1.3. */
const CM_CONNECTED = 2;
const CM_AUTHENTICATION_FAILED = -4;
const OP_SASL = 102;
/** What ZooKeeper means by the errors it answers a refused exchange with. */
const REFUSALS = new Map([
  [-115, 'the server refused the credentials (AUTHFAILED)'],
  [-124, 'the server refused the credentials and closed the session (SESSIONCLOSEDREQUIRESASLAUTH)'],
]);
/** Xid of SASL requests: apart from the library's own counter (from 0 up) and ZooKeeper's negative specials. */
const SASL_XID = 0x7fff_0000;
/** The largest SASL reply accepted (a DIGEST-MD5 challenge is a few hundred bytes). */
const MAX_SASL_FRAME = 64 * 1024;

function saslRequest(token: Buffer): Buffer {
  const frame = Buffer.alloc(4 + 4 + 4 + 4 + token.length);
  frame.writeInt32BE(frame.length - 4, 0);
  frame.writeInt32BE(SASL_XID, 4);
  frame.writeInt32BE(OP_SASL, 8);
  frame.writeInt32BE(token.length, 12);
  token.copy(frame, 16);
  return frame;
}

/**
 * Authenticates every connection of `client` with a new exchange from `newExchange`. Call before
 * client.connect(); `onError` hears why an exchange failed.
 */
export function useSasl(
  client: zk.Client,
  newExchange: () => ZooKeeperSaslExchange,
  onError: (error: Error) => void = () => {},
): void {
  const manager = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager;
  assert(
    manager !== undefined &&
      typeof manager.setState === 'function' &&
      typeof manager.onSocketData === 'function' &&
      typeof manager.onPacketQueueReadable === 'function' &&
      typeof manager.onSocketTimeout === 'function',
    'node-zookeeper-client no longer has the connection manager methods the SASL exchange hooks',
  );
  const setState = manager.setState.bind(manager);
  const onSocketData = manager.onSocketData.bind(manager);
  const onPacketQueueReadable = manager.onPacketQueueReadable.bind(manager);
  /** The socket whose exchange runs, its exchange and the bytes of a frame not complete yet. */
  let running: { socket: Socket; exchange: ZooKeeperSaslExchange; pending: Buffer } | null = null;

  const fail = (socket: Socket, error: Error) => {
    running = null;
    onError(error);
    setState(CM_AUTHENTICATION_FAILED);
    socket.destroy();
  };

  const send = (socket: Socket, token: Buffer | null | Error): 'sent' | 'done' | 'failed' => {
    if (token instanceof Error) {
      fail(socket, token);
      return 'failed';
    }
    if (token === null) return 'done';
    socket.write(saslRequest(token));
    return 'sent';
  };

  const authenticated = (socket: Socket, rest: Buffer) => {
    running = null;
    setState(CM_CONNECTED);
    onPacketQueueReadable();
    // The library armed its ping timer when it saw the connect reply, but the state was not CONNECTED then, so
    // the timer fired into nothing and was not armed again.
    socket.setTimeout(manager.pingTimeout, () => manager.onSocketTimeout());
    if (rest.length > 0) onSocketData(rest);
  };

  manager.setState = (state: number) => {
    const socket = manager.socket;
    if (state !== CM_CONNECTED || socket === undefined) {
      if (state !== CM_CONNECTED) running = null;
      setState(state);
      return;
    }
    // The connect reply was read: authenticate before anything else is sent.
    const exchange = newExchange();
    running = { socket, exchange, pending: Buffer.alloc(0) };
    const first = send(socket, exchange.evaluate(Buffer.alloc(0)));
    if (first === 'done') authenticated(socket, Buffer.alloc(0));
  };

  manager.onPacketQueueReadable = () => {
    if (running === null) onPacketQueueReadable();
  };

  manager.onSocketData = (data: Buffer) => {
    const current = running;
    if (current === null || current.socket !== manager.socket) {
      onSocketData(data);
      return;
    }
    let buffer = Buffer.concat([current.pending, data]);
    while (buffer.length >= 4) {
      const size = buffer.readInt32BE(0);
      if (size < 16 || size > MAX_SASL_FRAME) {
        fail(
          current.socket,
          new Error(`unexpected reply of ${size} bytes during the ZooKeeper SASL exchange`),
        );
        return;
      }
      if (buffer.length < 4 + size) break;
      const frame = buffer.subarray(4, 4 + size);
      buffer = buffer.subarray(4 + size);
      const xid = frame.readInt32BE(0);
      const err = frame.readInt32BE(12);
      if (err !== 0 || xid !== SASL_XID) {
        const why = REFUSALS.get(err) ?? `error ${err}`;
        fail(current.socket, new Error(`ZooKeeper SASL authentication failed: ${why}`));
        return;
      }
      // A reply without a body, or with a null buffer (length -1), carries an empty token.
      const length = frame.length >= 20 ? frame.readInt32BE(16) : -1;
      const token = length <= 0 ? Buffer.alloc(0) : frame.subarray(20, 20 + length);
      const next = send(current.socket, current.exchange.evaluate(Buffer.from(token)));
      if (next === 'failed') return;
      if (next === 'done') {
        authenticated(current.socket, Buffer.from(buffer));
        return;
      }
    }
    current.pending = Buffer.from(buffer);
  };
}
