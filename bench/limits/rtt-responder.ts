// The answering end of L_rtt, run as its own process (forked by rtt-limit.ts) so that asker and responder do not
// share an event loop or a core. It listens on 127.0.0.1 on a free port and reports the port over the IPC
// channel. Each request is a frame of RTT_REQUEST_BYTES: a 4-byte size prefix, then the response size wanted (an
// int32) and padding to a Kafka fetch request's size; the answer is a 4-byte size prefix and that many bytes, one
// write of a buffer made once per size. Nothing is read from a file and nothing is decoded: the least any server
// does to answer a request with a response of that size. It exits when its parent disconnects.
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { RTT_REQUEST_BYTES, RTT_RESPONSE_BYTES_MAX, type RttMessage } from './rtt-frames.js';

/** Responses by size: the prefix and the payload in one buffer, written as is. */
const responses = new Map<number, Buffer>();

function response(size: number): Buffer {
  let frame = responses.get(size);
  if (frame === undefined) {
    frame = Buffer.concat([Buffer.alloc(4), randomBytes(size)]);
    frame.writeInt32BE(size, 0);
    responses.set(size, frame);
  }
  return frame;
}

function onConnection(socket: Socket): void {
  // Bytes of the request being received (requests never span more than a few chunks; one is in flight).
  const pending = Buffer.alloc(RTT_REQUEST_BYTES);
  let have = 0;
  socket.on('data', (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(RTT_REQUEST_BYTES - have, chunk.length - at);
      chunk.copy(pending, have, at, at + take);
      have += take;
      at += take;
      if (have < RTT_REQUEST_BYTES) break;
      have = 0;
      const size = pending.readInt32BE(4);
      if (pending.readInt32BE(0) !== RTT_REQUEST_BYTES - 4 || size < 0 || size > RTT_RESPONSE_BYTES_MAX) {
        console.error(`rtt responder: malformed request (prefix ${pending.readInt32BE(0)}, size ${size})`);
        socket.destroy();
        return;
      }
      socket.write(response(size));
    }
  });
  socket.on('error', () => socket.destroy());
}

const server = createServer({ noDelay: true }, onConnection);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object')
    process.send?.({ type: 'listening', port: address.port } satisfies RttMessage);
});

process.on('disconnect', () => {
  server.close();
  process.exit(0);
});
