// RawClient: a minimal Kafka wire client for tests. It writes frames (or arbitrary bytes, for bad-input tests)
// and reads size-prefixed responses in the order they arrive. It knows nothing of API bodies; broker
// integration tests encode those with the protocol codecs and use this to put them on a socket. A test tool, not
// a connection layer of the product (those are src/client/connection.ts and the inter-broker connection): it must
// be able to send what no client would (bad sizes, any header version, half a frame), as Kafka's own network
// tests use plain sockets.

import net from 'node:net';
import tls from 'node:tls';
import { FrameReader } from '../../src/network/frame-reader.js';

export interface RawClientOptions {
  /** Largest response frame accepted; a larger size prefix fails every pending read. */
  readonly frameBytesMax?: number;
  /** Connect with TLS using these options (servername, ca, rejectUnauthorized ...). */
  readonly tls?: tls.ConnectionOptions;
  /** Give up connecting after this long. */
  readonly connectTimeoutMs?: number;
}

export interface RequestHeaderFields {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  /** Null is sent as Kafka's null string. Default 'raw-client'. */
  readonly clientId?: string | null;
  /** 1 for classic request headers, 2 for flexible versions (adds an empty tagged-field section). Default 1. */
  readonly headerVersion?: 0 | 1 | 2;
}

/** The request header (v0, v1 or v2) followed by `body`, without size prefix. */
export function encodeRequest(header: RequestHeaderFields, body: Buffer = Buffer.alloc(0)): Buffer {
  const headerVersion = header.headerVersion ?? 1;
  const clientId = header.clientId === undefined ? 'raw-client' : header.clientId;
  const clientIdBytes = clientId === null ? null : Buffer.from(clientId, 'utf8');
  const clientIdLength = headerVersion === 0 ? 0 : 2 + (clientIdBytes?.length ?? 0);
  const taggedLength = headerVersion === 2 ? 1 : 0;
  const out = Buffer.alloc(8 + clientIdLength + taggedLength + body.length);
  out.writeInt16BE(header.apiKey, 0);
  out.writeInt16BE(header.apiVersion, 2);
  out.writeInt32BE(header.correlationId, 4);
  let position = 8;
  if (headerVersion > 0) {
    out.writeInt16BE(clientIdBytes === null ? -1 : clientIdBytes.length, position);
    position += 2;
    if (clientIdBytes !== null) position += clientIdBytes.copy(out, position);
  }
  if (headerVersion === 2) out[position++] = 0;
  body.copy(out, position);
  return out;
}

/** Every response header version starts with the correlation id. */
export function responseCorrelationId(frame: Buffer): number {
  return frame.readInt32BE(0);
}

interface Waiter {
  resolve(frame: Buffer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class RawClient {
  private readonly reader: FrameReader;
  private readonly frames: Buffer[] = [];
  private readonly waiters: Waiter[] = [];
  private failure: Error | null = null;
  private closedFlag = false;
  private readonly closeWaiters: (() => void)[] = [];

  private constructor(
    readonly socket: net.Socket,
    frameBytesMax: number,
  ) {
    this.reader = new FrameReader(frameBytesMax);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error: Error) => this.fail(error));
    socket.on('end', () => socket.end());
    socket.on('close', () => {
      this.closedFlag = true;
      this.fail(new Error('connection closed'));
      for (const waiter of this.closeWaiters.splice(0)) waiter();
    });
  }

  static connect(host: string, port: number, options: RawClientOptions = {}): Promise<RawClient> {
    const frameBytesMax = options.frameBytesMax ?? 104_857_600;
    return new Promise((resolve, reject) => {
      const socket =
        options.tls === undefined
          ? net.connect({ host, port, noDelay: true })
          : tls.connect({ host, port, ...options.tls });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect to ${host}:${port} timed out`));
      }, options.connectTimeoutMs ?? 5_000);
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.once(options.tls === undefined ? 'connect' : 'secureConnect', () => {
        clearTimeout(timer);
        resolve(new RawClient(socket, frameBytesMax));
      });
    });
  }

  /** Whether the connection has closed (by either side). */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Writes a size prefix and `frame`. */
  sendFrame(frame: Buffer): void {
    const prefix = Buffer.allocUnsafe(4);
    prefix.writeInt32BE(frame.length, 0);
    this.socket.cork();
    this.socket.write(prefix);
    this.socket.write(frame);
    this.socket.uncork();
  }

  /** Encodes a request header and body and sends it as one frame. */
  sendRequest(header: RequestHeaderFields, body?: Buffer): void {
    this.sendFrame(encodeRequest(header, body));
  }

  /** Sends one request and waits for the next response frame (responses arrive in request order). */
  request(header: RequestHeaderFields, body?: Buffer, timeoutMs?: number): Promise<Buffer> {
    this.sendRequest(header, body);
    return this.nextFrame(timeoutMs);
  }

  /** Writes bytes as they are: garbage, truncated frames, hostile size prefixes. */
  sendRaw(bytes: Buffer): Promise<void> {
    return new Promise((resolve) => this.socket.write(bytes, () => resolve()));
  }

  /** The next response frame (without its size prefix), in arrival order. */
  nextFrame(timeoutMs = 5_000): Promise<Buffer> {
    const frame = this.frames.shift();
    if (frame !== undefined) return Promise.resolve(frame);
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(new Error(`no response within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Resolves true when the peer closes the connection, false if it is still open after `timeoutMs`. */
  waitClosed(timeoutMs = 5_000): Promise<boolean> {
    if (this.closedFlag) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.closeWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Stops reading from the socket (the peer's writes then back up), or starts again. */
  setReading(reading: boolean): void {
    if (reading) this.socket.resume();
    else this.socket.pause();
  }

  /** Half-closes: no more requests, responses still arrive. */
  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.reader.push(chunk);
    try {
      for (let frame = this.reader.next(); frame !== null; frame = this.reader.next()) {
        const waiter = this.waiters.shift();
        if (waiter === undefined) {
          this.frames.push(frame);
        } else {
          clearTimeout(waiter.timer);
          waiter.resolve(frame);
        }
      }
    } catch (error) {
      this.fail(error as Error);
      this.socket.destroy();
    }
  }

  private fail(error: Error): void {
    if (this.failure === null) this.failure = error;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(this.failure);
    }
  }
}
