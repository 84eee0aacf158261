// A loopback TCP proxy that a test can cut and restore, to make a ZooKeeper client lose its connection (and,
// if cut for longer than the session timeout, its session) without touching the server.

import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export class TcpProxy {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly sockets: Set<Socket>,
    private readonly state: { cutOff: boolean; blackHoled: boolean; silent: Set<Socket> },
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const sockets = new Set<Socket>();
    const state = { cutOff: false, blackHoled: false, silent: new Set<Socket>() };
    const server = createServer((client) => {
      if (state.cutOff) {
        client.destroy();
        return;
      }
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => client.destroy());
      if (state.blackHoled) {
        // A connection opened into a black hole is never answered.
        state.silent.add(client);
        client.on('data', () => {});
        return;
      }
      const upstream = tcpConnect({ host: '127.0.0.1', port: targetPort });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      // A silent (black-holed) client hears nothing more, not even that the server went away.
      const endBoth = () => {
        upstream.destroy();
        if (!state.silent.has(client)) client.destroy();
      };
      upstream.on('error', endBoth);
      upstream.on('close', endBoth);
      client.on('close', () => upstream.destroy());
      client.on('data', (chunk) => {
        if (!state.silent.has(client)) upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (!state.silent.has(client)) client.write(chunk);
      });
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
    this.state.blackHoled = false;
  }

  /**
   * Drops every byte of the open connections, both ways, without closing them, as an iptables DROP rule does:
   * neither end hears anything, a close included. New connections are accepted and never answered until
   * restore(); the connections open now stay silent for good, as a half-open TCP connection whose peer is gone
   * stays until the sender's retransmissions give up.
   */
  blackHole(): void {
    this.state.blackHoled = true;
    for (const s of this.sockets) this.state.silent.add(s);
  }

  async close(): Promise<void> {
    this.cut();
    for (const s of this.state.silent) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
