// One connection from this broker to another, for the controller's requests and the replica fetchers. Requests
// are encoded with the generated codecs and matched to responses by correlation id; responses arrive in request
// order (Kafka's guarantee), so a queue of waiters is enough. A broken connection fails every waiting request and
// reconnects on the next one.

import net from 'node:net';
import { FrameReader } from '../../network/frame-reader.js';
import { decodeResponseHeader, encodeRequestHeader } from '../../protocol/headers.js';
import { Reader, Writer } from '../../protocol/primitives/index.js';
import { getApi } from '../../protocol/registry.js';

/** Largest response accepted from another broker (replica.fetch.response.max.bytes plus headroom). */
const RESPONSE_BYTES_MAX = 128 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;

interface Waiter {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class InterBrokerConnection {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private readonly waiters: Waiter[] = [];
  private nextCorrelationId = 1;
  private closed = false;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly clientId: string,
  ) {}

  /** Sends one request and resolves with the decoded response body. */
  async request<Response>(
    apiKey: number,
    apiVersion: number,
    body: unknown,
    timeoutMs: number,
  ): Promise<Response> {
    const socket = await this.connect();
    const correlationId = this.nextCorrelationId++;
    const w = new Writer(256);
    w.int32(0);
    encodeRequestHeader(w, {
      requestApiKey: apiKey,
      requestApiVersion: apiVersion,
      correlationId,
      clientId: this.clientId,
    });
    getApi(apiKey).encodeRequest(w, apiVersion, body);
    const frame = w.toBuffer();
    frame.writeInt32BE(frame.length - 4, 0);
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new Error(`request ${apiKey} v${apiVersion} timed out`)),
        timeoutMs,
      );
      this.waiters.push({
        apiKey,
        apiVersion,
        correlationId,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
      });
      socket.write(frame);
    });
  }

  close(): void {
    this.closed = true;
    this.fail(new Error('connection closed'));
  }

  private connect(): Promise<net.Socket> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    if (this.socket !== null) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
      const reader = new FrameReader(RESPONSE_BYTES_MAX);
      const timer = setTimeout(
        () => socket.destroy(new Error(`connect to ${this.host}:${this.port} timed out`)),
        CONNECT_TIMEOUT_MS,
      );
      socket.once('connect', () => {
        clearTimeout(timer);
        this.socket = socket;
        this.connecting = null;
        resolve(socket);
      });
      socket.on('data', (chunk: Buffer) => {
        try {
          reader.push(chunk);
          for (let frame = reader.next(); frame !== null; frame = reader.next()) this.onFrame(frame);
        } catch (err) {
          socket.destroy(err instanceof Error ? err : new Error(String(err)));
        }
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        if (this.socket === socket) this.socket = null;
        if (this.connecting !== null) {
          this.connecting = null;
          reject(new Error(`cannot connect to ${this.host}:${this.port}`));
        }
        this.fail(new Error(`connection to ${this.host}:${this.port} closed`));
      });
    });
    return this.connecting;
  }

  private onFrame(frame: Buffer): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) throw new Error('response without a request');
    clearTimeout(waiter.timer);
    try {
      const r = new Reader(frame);
      const header = decodeResponseHeader(r, waiter.apiKey, waiter.apiVersion);
      if (header.correlationId !== waiter.correlationId) throw new Error('responses out of order');
      waiter.resolve(getApi(waiter.apiKey).decodeResponse(r, waiter.apiVersion));
    } catch (err) {
      waiter.reject(err instanceof Error ? err : new Error(String(err)));
      this.socket?.destroy();
    }
  }

  private fail(error: Error): void {
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(error);
    }
    this.socket?.destroy();
    this.socket = null;
  }
}
