// The serving end of L_serve, run as its own process (forked by serve-limit.ts). Given file paths, it listens on
// 127.0.0.1 on a free port, reports the port over the IPC channel, and sends the files, in order and whole, to the
// first connection: 1 MiB positional reads off the event loop into a few reused buffers, each written to the socket
// as soon as it is read, while the next read runs (a buffer is read into again once the socket has taken it). No
// framing, no decoding: the least a Node server does to move stored bytes to a socket, having no sendfile. It
// exits when its parent disconnects.
import { open } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { readChunkBytes } from './read-limit.js';

export type ServeMessage = { type: 'listening'; port: number } | { type: 'failed'; message: string };

/** Buffers in rotation: reads may run this far ahead of what the socket has taken. */
const buffersInRotation = 4;

const paths = process.argv.slice(2);

async function serve(socket: Socket): Promise<void> {
  const idle: Buffer[] = Array.from({ length: buffersInRotation }, () => Buffer.allocUnsafe(readChunkBytes));
  let waiting: (() => void) | null = null;
  const giveBack = (buffer: Buffer): void => {
    idle.push(buffer);
    const wake = waiting;
    waiting = null;
    wake?.();
  };
  for (const path of paths) {
    const handle = await open(path, 'r');
    try {
      let position = 0;
      for (;;) {
        while (idle.length === 0) await new Promise<void>((resolve) => (waiting = resolve));
        const buffer = idle.pop()!;
        const { bytesRead } = await handle.read(buffer, 0, readChunkBytes, position);
        if (bytesRead === 0) {
          idle.push(buffer);
          break;
        }
        position += bytesRead;
        socket.write(buffer.subarray(0, bytesRead), () => giveBack(buffer));
      }
    } finally {
      await handle.close();
    }
  }
  socket.end();
}

const server = createServer({ noDelay: true }, (socket) => {
  server.close();
  socket.on('error', () => socket.destroy());
  serve(socket).catch((error: unknown) => {
    process.send?.({ type: 'failed', message: (error as Error).message } satisfies ServeMessage);
    socket.destroy();
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object')
    process.send?.({ type: 'listening', port: address.port } satisfies ServeMessage);
});

process.on('disconnect', () => process.exit(0));
