// The receiving end of L_net and L_sink, run as its own process (forked by net-limit.ts) so that sender and
// receiver do not share an event loop or a core. It listens on 127.0.0.1 on a free port, reports the port over
// the IPC channel, counts the bytes of each connection and reports the count when the sender ends it. It exits
// when its parent disconnects, so it cannot outlive a benchmark that crashed.
//
// Given a directory (L_sink), it also appends every chunk it receives to one file there, at the next position,
// with a synchronous positional write into the page cache (as the broker's inline appends and L_relay's relay
// do): the least any broker does with a produced byte, without a protocol.
//
// With BROOK_BENCH_SINK_TLS_CERT and BROOK_BENCH_SINK_TLS_KEY in its environment (PEM files), it listens with
// TLS instead (L_tls): the least a TLS listener costs, whatever the protocol above it.
//
// Given `--ack` after the directory (L_sink_acked, and a follower of L_replicate_acked), it appends asynchronously
// (async-append.ts) and answers each completed write with its cumulative byte count (ack-counts.ts), as a broker
// answers acks=1 after its append and a follower's next fetch tells the leader how far it has appended.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { encodeAckCount } from './ack-counts.js';
import { AsyncAppender } from './async-append.js';

export type SinkMessage =
  | { type: 'listening'; port: number }
  | { type: 'received'; bytes: number; bytesWritten: number };

function send(message: SinkMessage): void {
  process.send?.(message);
}

const directory = process.argv[2];
const acknowledge = process.argv[3] === '--ack';
if (acknowledge && directory === undefined)
  throw new Error('net-sink acknowledges appends: give it a directory');
const fd = directory === undefined ? -1 : openSync(join(directory, 'sink.log'), 'w');
let position = 0;

function onConnection(socket: Socket): void {
  // Acknowledgements are 8-byte writes, one per chunk: with Nagle's algorithm each would wait for the leader's
  // delayed ACK of the one before (tens of ms), as a broker's would without TCP_NODELAY.
  if (acknowledge) socket.setNoDelay(true);
  let bytes = 0;
  const appender = acknowledge
    ? new AsyncAppender(fd, (written) => socket.write(encodeAckCount(written)))
    : undefined;
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (appender !== undefined) {
      appender.append(chunk);
    } else if (fd >= 0) {
      writeSync(fd, chunk, 0, chunk.length, position);
      position += chunk.length;
    }
  });
  socket.on('end', () => {
    // Acknowledging, the producer ends only once every byte was acknowledged, so every write has completed.
    send({ type: 'received', bytes, bytesWritten: appender?.written ?? position });
    socket.end();
  });
  socket.on('error', () => socket.destroy());
}

const tlsCert = process.env.BROOK_BENCH_SINK_TLS_CERT;
const tlsKey = process.env.BROOK_BENCH_SINK_TLS_KEY;
const server =
  tlsCert !== undefined && tlsKey !== undefined
    ? createTlsServer({ cert: readFileSync(tlsCert), key: readFileSync(tlsKey) }, onConnection)
    : createServer(onConnection);

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') send({ type: 'listening', port: address.port });
});

process.on('disconnect', () => {
  server.close();
  if (fd >= 0) closeSync(fd);
  process.exit(0);
});
