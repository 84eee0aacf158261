// Plain TCP sockets that read into buffers their connection chooses, with Node's `onread` socket option, instead
// of a fresh 64 KiB ArrayBuffer per read. Node offers `onread` only to sockets it is given at construction, not
// to those a server accepts, so an accepted socket's handle is moved into a new Socket built with it: the server
// accepts with `pauseOnConnect` (nothing read yet), and the old Socket object is left without a handle and
// without its server, inert; the new one counts against the server's connections in its place.
//
// That move uses two fields Node does not document (`_handle`, `_server`, stable through Node 20 and 22); when
// they are not what this expects, `adoptForOwnReads` returns null and the caller keeps the accepted socket with
// ordinary reads.
//
// TLS sockets: Node decrypts each TLS record (up to 16 KiB) into a fresh ArrayBuffer for its 'data' event, external
// memory whose churn drove V8 into major collections (a quarter of a TLS broker's CPU under produce, in perf). Node
// ignores `onread` for a TLSSocket built over an accepted socket, but its TLS handle is a stream like a TCP handle
// and takes a user buffer the same way: `adoptTlsForOwnReads` sets, once the handshake is done, the three socket
// fields `onread` would have set (found by their symbols' descriptions, `kBuffer`, `kBufferCb`, `kBufferGen`, as
// set by every net.Socket in Node 20 and 22) and hands the handle the first buffer. Node's TLS handle then copies
// each decrypted record into the buffer the connection chooses, as the TCP handle does with the kernel's bytes.
// When a field is missing, or bytes were already read the ordinary way, it returns null (ordinary reads).
//
// Reads are synchronous with their callback on the event loop: a read lands in the buffer `readBuffer()` chose
// after the previous one, and `onRead` is called before any other read happens, so a buffer shared by many
// sockets (the frame reader's scratch) is safe as long as nothing keeps a view of it past `onRead`.
import net from 'node:net';

/** What a connection gives its socket: where the next read lands, and what to do with the bytes read. */
export interface ReadTarget {
  readBuffer(): Buffer;
  onRead(bytes: number, buffer: Buffer): void;
}

export interface OwnReadSocket {
  readonly socket: net.Socket;
  /** Routes the socket's reads to `target`; until then they land in `initial` and pause the socket. */
  attach(target: ReadTarget): void;
}

interface SocketInternals {
  _handle?: { useUserBuffer?: unknown; readStop?: unknown } | null;
  _server?: unknown;
  server?: unknown;
}

/**
 * Moves an accepted, paused socket's handle into a Socket that reads into buffers chosen by a ReadTarget; null
 * when this Node does not expose what that needs. `initial` is where the first read lands if it comes before
 * `attach` (it cannot: attach follows at once, but the Socket asks for a buffer when it is built).
 */
export function adoptForOwnReads(
  accepted: net.Socket,
  initial: Buffer,
  options: { allowHalfOpen: boolean; writableHighWaterMark?: number },
): OwnReadSocket | null {
  const internals = accepted as unknown as SocketInternals;
  const handle = internals._handle;
  if (
    handle === null ||
    handle === undefined ||
    typeof handle.useUserBuffer !== 'function' ||
    !('_server' in internals)
  ) {
    return null;
  }
  let target: ReadTarget | null = null;
  const server = internals._server;
  internals._handle = null;
  internals._server = null;
  const socket = new net.Socket({
    handle: handle as never,
    allowHalfOpen: options.allowHalfOpen,
    readable: true,
    writable: true,
    ...(options.writableHighWaterMark !== undefined
      ? { writableHighWaterMark: options.writableHighWaterMark }
      : {}),
    onread: {
      buffer: () => (target === null ? initial : target.readBuffer()),
      callback: (bytes: number, buffer: Uint8Array): boolean => {
        if (target === null) return false;
        target.onRead(bytes, buffer as Buffer);
        return true;
      },
    },
  } as net.SocketConstructorOpts);
  const adopted = socket as unknown as SocketInternals;
  adopted._server = server;
  adopted.server = server;
  return {
    socket,
    attach(next) {
      target = next;
    },
  };
}

interface TlsReadInternals {
  _handle?: { useUserBuffer?: (buf: Uint8Array) => void } | null;
  [key: symbol]: unknown;
}

/**
 * Makes a TLS socket whose handshake is done read its decrypted bytes into buffers a ReadTarget chooses (see the
 * top of this file); null when this Node does not offer what that needs, or the socket has already buffered bytes.
 */
export function adoptTlsForOwnReads(socket: net.Socket): OwnReadSocket | null {
  const internals = socket as unknown as TlsReadInternals;
  const symbols = Object.getOwnPropertySymbols(socket);
  const find = (description: string): symbol | undefined =>
    symbols.find((s) => s.description === description);
  const kBuffer = find('kBuffer');
  const kBufferCb = find('kBufferCb');
  const kBufferGen = find('kBufferGen');
  const handle = internals._handle;
  if (
    kBuffer === undefined ||
    kBufferCb === undefined ||
    kBufferGen === undefined ||
    internals[kBuffer] !== null ||
    handle === null ||
    handle === undefined ||
    typeof handle.useUserBuffer !== 'function' ||
    socket.readableLength > 0
  ) {
    return null;
  }
  return {
    socket,
    attach(target) {
      internals[kBufferGen] = () => target.readBuffer();
      internals[kBufferCb] = (bytes: number, buffer: Uint8Array): boolean => {
        target.onRead(bytes, buffer as Buffer);
        return true;
      };
      const first = target.readBuffer();
      internals[kBuffer] = first;
      handle.useUserBuffer!(first);
    },
  };
}
