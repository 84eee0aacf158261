// A loopback TCP proxy that a test can cut and restore, to make a ZooKeeper client lose its connection (and,
// if cut for longer than the session timeout, its session) without touching the server.

import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export class TcpProxy {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly sockets: Set<Socket>,
    private readonly state: { cutOff: boolean },
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const sockets = new Set<Socket>();
    const state = { cutOff: false };
    const server = createServer((client) => {
      if (state.cutOff) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect({ host: '127.0.0.1', port: targetPort });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (typeof address === 'object' && address !== null) resolve(address.port);
        else reject(new Error('no address'));
      });
    });
    return new TcpProxy(server, port, sockets, state);
  }

  /** Drops every connection and refuses new ones until restore(). */
  cut(): void {
    this.state.cutOff = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.state.cutOff = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
