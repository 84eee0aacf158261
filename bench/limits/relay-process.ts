// The middle of L_relay and the leader of L_replicate, run as its own process (forked by relay-limit.ts and
// replicate-limit.ts) as a broker is: the data path every log broker runs, without any protocol. Every chunk that
// arrives on its input connection is appended to one file at the next position (a synchronous write into the
// page cache, as the broker's inline appends and a follower's appends) and only then written to every output,
// as a fetch sends what was appended. When an output's buffer is full the input is paused until every output
// has drained, so memory stays bounded. When the input ends, the outputs end and the count is reported. It exits
// when its parent disconnects, so it cannot outlive a benchmark that crashed.
//
// Two ways to get outputs. Without more arguments (L_relay) it listens on an output port too and its one output
// is the first connection there (the reader connects to the output port first, then the writer to the input
// port). Given ports after the directory (L_replicate) it connects to each of them on 127.0.0.1 (followers
// listening as net-sink.ts does) before it reports its input port.
//
// With `--ack` between the directory and the ports (the leader of L_replicate_acked, its followers acknowledging),
// it forwards each chunk at once and appends it asynchronously (async-append.ts), reads each follower's cumulative
// appended count (ack-counts.ts) and tells its input how many bytes it and every follower have appended whenever
// that grows, as a leader answers acks=all once its high watermark passes a request. Forwarding before its own
// write completes is the most a leader could do; Brook's leader serves followers only what it has written.
import { closeSync, openSync, writeSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { AckCountReader, encodeAckCount } from './ack-counts.js';
import { AsyncAppender } from './async-append.js';

export type RelayMessage =
  | { type: 'listening'; inputPort: number; outputPort: number | null }
  | { type: 'output-connected' }
  | { type: 'relayed'; bytes: number };

function send(message: RelayMessage): void {
  process.send?.(message);
}

const [directory, ...rest] = process.argv.slice(2);
if (directory === undefined) throw new Error('relay-process needs the directory for its file');
const acknowledge = rest[0] === '--ack';
const forwardPorts = acknowledge ? rest.slice(1) : rest;
if (acknowledge && forwardPorts.length === 0)
  throw new Error('relay-process acknowledges only for followers');
const fd = openSync(join(directory, 'relay.log'), 'w');
let position = 0;
const outputs: Socket[] = [];
/** Each follower's acknowledgements, in the order of `outputs`. */
const followerAcks: AckCountReader[] = [];
/** The input connection (one at a time), which acknowledgements go back on. */
let currentInput: Socket | undefined;
let acknowledged = 0;

/** The leader's own appends when acknowledging; its acknowledgements wait for them too. */
const appender = acknowledge ? new AsyncAppender(fd, () => acknowledgeInput()) : undefined;

/** Tells the input how far the leader and every follower have appended, if that moved. */
function acknowledgeInput(): void {
  let everyReplica = appender!.written;
  for (const reader of followerAcks) everyReplica = Math.min(everyReplica, reader.latest);
  if (everyReplica <= acknowledged) return;
  acknowledged = everyReplica;
  currentInput?.write(encodeAckCount(acknowledged));
}

function relay(input: Socket): void {
  currentInput = input;
  let undrained = 0;
  const onDrain = (): void => {
    undrained--;
    if (undrained === 0) input.resume();
  };
  input.on('data', (chunk: Buffer) => {
    if (appender !== undefined) {
      appender.append(chunk);
    } else {
      writeSync(fd, chunk, 0, chunk.length, position);
      position += chunk.length;
    }
    if (outputs.length === 0) throw new Error('relay input before its output');
    for (const output of outputs) {
      if (!output.write(chunk)) {
        undrained++;
        output.once('drain', onDrain);
      }
    }
    if (undrained > 0) input.pause();
  });
  input.on('end', () => {
    for (const output of outputs) output.end();
    // Acknowledging, the producer ends only once every byte was acknowledged, so every write has completed.
    send({ type: 'relayed', bytes: appender?.written ?? position });
  });
  input.on('error', () => input.destroy());
}

function adoptOutput(socket: Socket): void {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  outputs.push(socket);
  if (acknowledge) {
    const reader = new AckCountReader();
    followerAcks.push(reader);
    socket.on('data', (chunk: Buffer) => {
      if (reader.push(chunk)) acknowledgeInput();
    });
  }
}

const inputServer = createServer((input) => {
  input.setNoDelay(true);
  relay(input);
});

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('relay server has no port');
  return address.port;
}

let outputServer: Server | undefined;
if (forwardPorts.length === 0) {
  outputServer = createServer((socket) => {
    adoptOutput(socket);
    send({ type: 'output-connected' });
  });
  outputServer.listen(0, '127.0.0.1', () => {
    inputServer.listen(0, '127.0.0.1', () => {
      send({ type: 'listening', inputPort: portOf(inputServer), outputPort: portOf(outputServer!) });
    });
  });
} else {
  let connected = 0;
  for (const port of forwardPorts) {
    const socket = connect({ host: '127.0.0.1', port: Number(port) }, () => {
      connected++;
      if (connected < forwardPorts.length) return;
      inputServer.listen(0, '127.0.0.1', () => {
        send({ type: 'listening', inputPort: portOf(inputServer), outputPort: null });
      });
    });
    adoptOutput(socket);
  }
}

process.on('disconnect', () => {
  inputServer.close();
  outputServer?.close();
  closeSync(fd);
  process.exit(0);
});
