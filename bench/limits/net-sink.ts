// The receiving end of L_net, run as its own process (forked by net-limit.ts) so that sender and receiver do
// not share an event loop or a core. It listens on 127.0.0.1 on a free port, reports the port over the IPC
// channel, counts the bytes of each connection and reports the count when the sender ends it. It exits when
// its parent disconnects, so it cannot outlive a benchmark that crashed.
import { createServer } from 'node:net';

export type SinkMessage = { type: 'listening'; port: number } | { type: 'received'; bytes: number };

function send(message: SinkMessage): void {
  process.send?.(message);
}

const server = createServer((socket) => {
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  socket.on('end', () => {
    send({ type: 'received', bytes });
    socket.end();
  });
  socket.on('error', () => socket.destroy());
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') send({ type: 'listening', port: address.port });
});

process.on('disconnect', () => {
  server.close();
  process.exit(0);
});
