// The middle of L_relay, run as its own process (forked by relay-limit.ts) as a broker is: the data path every
// log broker runs, without any protocol. It listens on two ports of 127.0.0.1: the reader connects to the
// output port first, then the writer to the input port. Every chunk that arrives on the input is appended to
// one file at the next position (a synchronous write into the page cache, as the broker's inline appends) and
// only then written to the output, as a tail fetch sends what was appended. When the output's buffer is full
// the input is paused until it drains, so memory stays bounded. When the input ends, the output ends and the
// count is reported. It exits when its parent disconnects, so it cannot outlive a benchmark that crashed.
import { closeSync, openSync, writeSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

export type RelayMessage =
  | { type: 'listening'; inputPort: number; outputPort: number }
  | { type: 'output-connected' }
  | { type: 'relayed'; bytes: number };

function send(message: RelayMessage): void {
  process.send?.(message);
}

const directory = process.argv[2];
if (directory === undefined) throw new Error('relay-process needs the directory for its file');
const fd = openSync(join(directory, 'relay.log'), 'w');
let position = 0;
let output: Socket | null = null;

function relay(input: Socket): void {
  input.on('data', (chunk: Buffer) => {
    writeSync(fd, chunk, 0, chunk.length, position);
    position += chunk.length;
    if (output === null) throw new Error('relay input before its output');
    if (!output.write(chunk)) {
      input.pause();
      output.once('drain', () => input.resume());
    }
  });
  input.on('end', () => {
    output?.end();
    send({ type: 'relayed', bytes: position });
  });
  input.on('error', () => input.destroy());
}

const outputServer = createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  output = socket;
  send({ type: 'output-connected' });
});
const inputServer = createServer(relay);

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('relay server has no port');
  return address.port;
}

outputServer.listen(0, '127.0.0.1', () => {
  inputServer.listen(0, '127.0.0.1', () => {
    send({ type: 'listening', inputPort: portOf(inputServer), outputPort: portOf(outputServer) });
  });
});

process.on('disconnect', () => {
  inputServer.close();
  outputServer.close();
  closeSync(fd);
  process.exit(0);
});
