// A recording TCP proxy for golden fixtures: real clients talk to it as if it were the broker, it forwards every
// byte both ways and keeps each complete request frame (size prefix removed) in arrival order. The broker behind
// it must advertise the proxy's address (advertised.listeners) so that clients keep using the proxy after
// bootstrap.

import { once } from 'node:events';
import net from 'node:net';

export interface CapturedFrame {
  /** Connection number, in the order the proxy accepted them. */
  connection: number;
  apiKey: number;
  apiVersion: number;
  frame: Buffer;
}

const FRAME_BYTES_MAX = 64 * 1024 * 1024;

export class CaptureProxy {
  readonly frames: CapturedFrame[] = [];
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private connections = 0;

  /** The broker behind the proxy; may be set after listen(), since the broker must advertise the proxy's port. */
  targetHost = '127.0.0.1';
  targetPort = 0;

  async listen(port = 0): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const connection = this.connections++;
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(client).add(upstream);
    let pending: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (size < 8 || size > FRAME_BYTES_MAX) {
          pending = Buffer.alloc(0);
          return;
        }
        if (pending.length < 4 + size) break;
        const frame = Buffer.from(pending.subarray(4, 4 + size));
        this.frames.push({
          connection,
          apiKey: frame.readInt16BE(0),
          apiVersion: frame.readInt16BE(2),
          frame,
        });
        pending = pending.subarray(4 + size);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}
