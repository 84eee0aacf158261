// The server side of the echo benchmark, run as its own process (forked by echo.ts) so that server and load
// generator do not share an event loop. Mode `brook` serves Brook's network layer with an echo handler; mode
// `raw` echoes bytes with a bare net server, the loopback ceiling for the same traffic. It reports its port and
// exits when its parent disconnects, so it cannot outlive a crashed benchmark.
import { createServer } from 'node:net';
import type { NetworkOptions } from '../../src/network/options.js';
import type { Request, Response } from '../../src/network/request.js';
import { SocketServer } from '../../src/network/socket-server.js';

export type EchoServerMode = 'brook' | 'raw';
export type EchoServerMessage = { type: 'listening'; port: number };

function send(message: EchoServerMessage): void {
  process.send?.(message);
}

/** Response header v0 (the correlation id) and the request's bytes after its 8-byte prefix. */
function echo(request: Request): Response {
  const header = Buffer.allocUnsafe(4);
  header.writeInt32BE(request.correlationId, 0);
  return [header, request.frame.subarray(8)];
}

async function serveBrook(options: NetworkOptions): Promise<() => Promise<void>> {
  const server = new SocketServer({
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' }],
    handler: echo,
    options,
  });
  await server.start();
  send({ type: 'listening', port: server.address('PLAINTEXT').port });
  return async () => {
    await server.shutdown(1_000);
  };
}

async function serveRaw(): Promise<() => Promise<void>> {
  const server = createServer({ noDelay: true }, (socket) => {
    socket.pipe(socket);
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address !== null && typeof address === 'object') send({ type: 'listening', port: address.port });
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

const mode = process.argv[2] as EchoServerMode;
/** Network options for the Brook server, as JSON (`{"socket.send.buffer.bytes":1048576}`). */
const options = JSON.parse(process.argv[3] ?? '{}') as NetworkOptions;
const stop = mode === 'brook' ? await serveBrook(options) : await serveRaw();
process.on('disconnect', () => {
  void stop().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
});
