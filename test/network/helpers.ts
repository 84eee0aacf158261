// Shared test support: a server on a free loopback port that is always shut down, an echo handler, and polling.

import type { Socket } from 'node:net';
import type { FramePool } from '../../src/common/frame-pool.js';
import { CapturingLogger } from '../../src/common/logger.js';
import type { ListenerConfig } from '../../src/network/listener.js';
import type { NetworkOptions } from '../../src/network/options.js';
import type { Request, RequestHandler, RequestObserver, Response } from '../../src/network/request.js';
import { SocketServer } from '../../src/network/socket-server.js';
import { RawClient, type RawClientOptions } from '../helpers/raw-client.js';

export interface ServerContext {
  readonly server: SocketServer;
  readonly port: number;
  readonly logger: CapturingLogger;
  connect(options?: RawClientOptions): Promise<RawClient>;
}

export interface TestServerConfig {
  readonly handler: RequestHandler;
  readonly options?: NetworkOptions;
  readonly listener?: Partial<ListenerConfig>;
  readonly framePool?: FramePool;
  /** See SocketServerConfig.readsIntoFrames (default true). */
  readonly readsIntoFrames?: boolean;
  /** Told each request's times (see SocketServerConfig.requestObserver). */
  readonly requestObserver?: RequestObserver;
}

/** Starts a server on 127.0.0.1:0, runs `body`, and always destroys its clients and shuts the server down. */
export async function withServer(
  config: TestServerConfig,
  body: (context: ServerContext) => Promise<void>,
): Promise<void> {
  const logger = new CapturingLogger();
  const listener: ListenerConfig = {
    name: 'PLAINTEXT',
    host: '127.0.0.1',
    port: 0,
    securityProtocol: 'PLAINTEXT',
    ...config.listener,
  };
  const server = new SocketServer({
    listeners: [listener],
    handler: config.handler,
    options: config.options,
    logger,
    framePool: config.framePool,
    readsIntoFrames: config.readsIntoFrames,
    requestObserver: config.requestObserver,
  });
  await server.start();
  const port = server.address(listener.name).port;
  const clients: RawClient[] = [];
  const connect = async (options?: RawClientOptions): Promise<RawClient> => {
    const client = await RawClient.connect('127.0.0.1', port, options);
    clients.push(client);
    return client;
  };
  try {
    await body({ server, port, logger, connect });
  } finally {
    for (const client of clients) client.destroy();
    await server.shutdown(1_000);
  }
}

/** A response header v0 (the correlation id) followed by the request bytes after the 8-byte prefix. */
export function echoResponse(request: Request): Response {
  const header = Buffer.allocUnsafe(4);
  header.writeInt32BE(request.correlationId, 0);
  return [header, request.frame.subarray(8)];
}

export const echoHandler: RequestHandler = echoResponse;

/** Polls `condition` every few milliseconds until it holds or `timeoutMs` passes. */
export async function waitFor(
  condition: () => boolean,
  timeoutMs = 5_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise with its resolve exposed, for handlers that answer when the test says so. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A size-prefixed frame as raw bytes. */
export function sizePrefixed(frame: Buffer): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(frame.length, 0);
  return Buffer.concat([prefix, frame]);
}

/** A small deterministic generator, so that random-input tests can be replayed from their seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

/** Resolves true when `socket` closes, false if it is still open after `timeoutMs`. */
export function closedWithin(socket: Socket, timeoutMs: number): Promise<boolean> {
  if (socket.closed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
