// One Kafka connection for the broker benchmarks: pipelined requests, responses matched to them in order. It is
// a load generator's connection, not a client: the caller decides how many requests are in flight, bodies are
// passed as pre-encoded buffers (written by reference, never copied), and a response frame is handed to the
// callback that sent its request, still encoded (a view valid only during the callback with `transientFrames`).
// Setup requests (ApiVersions, Metadata, CreateTopics) go through `call`, which encodes and decodes with the
// protocol codecs.
//
// Lifecycle: `connect` opens it; `close` ends it and fails every request still waiting. A response whose
// correlation id is not the oldest pending one means the peer broke ordering: the connection fails.
import { once } from 'node:events';
import net from 'node:net';
import { assert } from '../../src/common/assert.js';
import { decodeResponseHeader, requestHeaderVersion } from '../../src/protocol/headers.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { getApi } from '../../src/protocol/registry.js';
import { FrameAssembler } from './frame-assembler.js';

/** Largest response frame accepted (a fetch answer is bounded by the fetch's maxBytes, 50 MiB by default). */
const responseFrameBytesMax = 64 * 1024 * 1024;
/** How long `connect` and `call` wait before giving up. */
const setupTimeoutMs = 15_000;
const clientId = 'brook-bench';

/** Called with the whole response frame (header included) and a reader placed after the response header. */
export type ResponseHandler = (reader: Reader, frame: Buffer) => void;

export interface ConnectOptions {
  /**
   * Frames handed to response handlers are views of buffers the connection reuses, valid only during the call
   * (the backlog and tail readers, which walk a fetch response's batches and keep nothing of it); reads then land
   * in one reused buffer too, so receiving allocates nothing per read or frame. Off by default: handlers get
   * frames of their own.
   */
  transientFrames?: boolean;
}

/** The reused read buffer of a connection with transient frames (Node's own reads take 64 KiB). */
const readBufferBytes = 256 * 1024;

interface Pending {
  correlationId: number;
  apiKey: number;
  apiVersion: number;
  onResponse: ResponseHandler;
}

export class WireConnection {
  /** Requests sent and not yet answered, oldest first (Kafka answers in order on a connection). */
  private readonly pending: Pending[] = [];
  private nextCorrelationId = 1;
  /** Cuts response frames out of what arrives. */
  private readonly frames: FrameAssembler;
  private failure: Error | null = null;
  private readonly failureListeners: ((error: Error) => void)[] = [];
  bytesSent = 0;
  bytesReceived = 0;

  private constructor(
    private readonly socket: net.Socket,
    /** Frames handed to handlers are views valid only during the call (see ConnectOptions). */
    transientFrames: boolean,
  ) {
    this.frames = new FrameAssembler(responseFrameBytesMax, (frame, gathered) =>
      // Node's 'data' chunks are fresh buffers a handler may keep; the assembler's own buffer is reused.
      this.deliver(gathered && !transientFrames ? Buffer.from(frame) : frame),
    );
    if (!transientFrames) socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static async connect(host: string, port: number, options: ConnectOptions = {}): Promise<WireConnection> {
    const transientFrames = options.transientFrames === true;
    let connection: WireConnection | undefined;
    const socket: net.Socket = net.connect({
      host,
      port,
      noDelay: true,
      // Reads land in one reused buffer; the assembler copies out what it keeps before the next read.
      ...(transientFrames
        ? {
            onread: {
              buffer: Buffer.allocUnsafe(readBufferBytes),
              callback: (bytes: number, buffer: Uint8Array) => {
                // A broker speaks only when asked: bytes before the connection exists are a broken peer.
                if (connection === undefined) socket.destroy(new Error('bytes arrived before any request'));
                else connection.onData(Buffer.from(buffer.buffer, buffer.byteOffset, bytes));
                return true;
              },
            },
          }
        : {}),
    });
    const timer = setTimeout(
      () => socket.destroy(new Error(`connect to ${host}:${port} timed out`)),
      setupTimeoutMs,
    );
    try {
      await once(socket, 'connect');
    } finally {
      clearTimeout(timer);
    }
    connection = new WireConnection(socket, transientFrames);
    return connection;
  }

  get inFlight(): number {
    return this.pending.length;
  }

  get failed(): Error | null {
    return this.failure;
  }

  /** `listener` runs once if the connection fails (closed, reset, out-of-order answer). */
  onFailure(listener: (error: Error) => void): void {
    if (this.failure !== null) listener(this.failure);
    else this.failureListeners.push(listener);
  }

  /**
   * Sends one request: a fresh header (so a body shared by many requests is never written to while the socket
   * may still hold it) followed by `body` by reference. `onResponse` runs when its answer arrives. Returns the
   * bytes put on the wire.
   */
  send(apiKey: number, apiVersion: number, body: readonly Buffer[], onResponse: ResponseHandler): number {
    if (this.failure !== null) throw this.failure;
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = this.nextCorrelationId === 0x7fffffff ? 1 : this.nextCorrelationId + 1;
    let bodyBytes = 0;
    for (const chunk of body) bodyBytes += chunk.length;
    const header = encodeHeader(apiKey, apiVersion, correlationId, bodyBytes);
    this.pending.push({ correlationId, apiKey, apiVersion, onResponse });
    this.socket.cork();
    this.socket.write(header);
    for (const chunk of body) this.socket.write(chunk);
    this.socket.uncork();
    this.bytesSent += header.length + bodyBytes;
    return header.length + bodyBytes;
  }

  /** Encodes `request` with the codec of `apiKey`, sends it and decodes the answer. For setup, not for load. */
  call<Response>(
    apiKey: number,
    apiVersion: number,
    request: unknown,
    timeoutMs = setupTimeoutMs,
  ): Promise<Response> {
    const api = getApi(apiKey);
    const w = new Writer();
    api.encodeRequest(w, apiVersion, request as never);
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${api.name} v${apiVersion}: no answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.onFailure((error) => {
        clearTimeout(timer);
        reject(error);
      });
      this.send(apiKey, apiVersion, [w.toBuffer()], (reader) => {
        clearTimeout(timer);
        try {
          resolve(api.decodeResponse(reader, apiVersion) as Response);
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  /** Ends the connection; requests still waiting fail. */
  close(): void {
    this.socket.destroy();
    this.fail(new Error('connection closed by the benchmark'));
  }

  private onData(chunk: Buffer): void {
    this.bytesReceived += chunk.length;
    try {
      this.frames.push(chunk);
    } catch (error) {
      this.fail(error as Error);
      this.socket.destroy();
    }
  }

  private deliver(frame: Buffer): void {
    const request = this.pending.shift();
    assert(request !== undefined, 'a response arrived with no request waiting');
    const correlationId = frame.readInt32BE(0);
    assert(
      correlationId === request.correlationId,
      `response ${correlationId} out of order (expected ${request.correlationId})`,
    );
    const reader = new Reader(frame);
    decodeResponseHeader(reader, request.apiKey, request.apiVersion);
    request.onResponse(reader, frame);
  }

  private fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    for (const listener of this.failureListeners.splice(0)) listener(error);
  }
}

/** Size prefix and request header (v1 or v2; the benchmarks never use v0), ready to precede a body. */
function encodeHeader(apiKey: number, apiVersion: number, correlationId: number, bodyBytes: number): Buffer {
  const headerVersion = requestHeaderVersion(apiKey, apiVersion);
  assert(headerVersion > 0, 'request header v0 is not used by the benchmarks');
  const headerBytes = 8 + 2 + clientId.length + (headerVersion === 2 ? 1 : 0);
  const out = Buffer.allocUnsafe(4 + headerBytes);
  out.writeInt32BE(headerBytes + bodyBytes, 0);
  out.writeInt16BE(apiKey, 4);
  out.writeInt16BE(apiVersion, 6);
  out.writeInt32BE(correlationId, 8);
  out.writeInt16BE(clientId.length, 12);
  out.write(clientId, 14, 'latin1');
  if (headerVersion === 2) out[14 + clientId.length] = 0;
  return out;
}
