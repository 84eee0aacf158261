// Plain TCP sockets that read into buffers their connection chooses, with Node's `onread` socket option, instead
// of a fresh 64 KiB ArrayBuffer per read. Node offers `onread` only to sockets it is given at construction, not
// to those a server accepts, so an accepted socket's handle is moved into a new Socket built with it: the server
// accepts with `pauseOnConnect` (nothing read yet), and the old Socket object is left without a handle and
// without its server, inert; the new one counts against the server's connections in its place.
//
// That move uses two fields Node does not document (`_handle`, `_server`, stable through Node 20 and 22); when
// they are not what this expects, `adoptForOwnReads` returns null and the caller keeps the accepted socket with
// ordinary reads. TLS sockets always read the ordinary way (their records are decrypted into fresh buffers).
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
