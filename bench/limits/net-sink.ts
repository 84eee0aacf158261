// The receiving end of L_net and L_sink, run as its own process (forked by net-limit.ts) so that sender and
// receiver do not share an event loop or a core. It listens on 127.0.0.1 on a free port, reports the port over
// the IPC channel, counts the bytes of each connection and reports the count when the sender ends it. It exits
// when its parent disconnects, so it cannot outlive a benchmark that crashed.
//
// Given a directory (L_sink), it also appends every chunk it receives to one file there, at the next position,
// with a synchronous positional write into the page cache (as the broker's inline appends and L_relay's relay
// do): the least any broker does with a produced byte, without a protocol.
import { closeSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export type SinkMessage =
  | { type: 'listening'; port: number }
  | { type: 'received'; bytes: number; bytesWritten: number };

function send(message: SinkMessage): void {
  process.send?.(message);
}

const directory = process.argv[2];
const fd = directory === undefined ? -1 : openSync(join(directory, 'sink.log'), 'w');
let position = 0;

const server = createServer((socket) => {
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (fd >= 0) {
      writeSync(fd, chunk, 0, chunk.length, position);
      position += chunk.length;
    }
  });
  socket.on('end', () => {
    send({ type: 'received', bytes, bytesWritten: position });
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
  if (fd >= 0) closeSync(fd);
  process.exit(0);
});
