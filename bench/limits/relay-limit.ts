// L_relay: the data path of a log broker and its clients on this machine, without any protocol. This process
// writes 256 KiB buffers on one loopback connection to a forked relay (relay-process.ts), which appends every
// chunk it receives to a file in the page cache and then forwards it on a second connection back to this
// process, which counts it. Three parties in two processes, as in the broker benchmarks (the load generator and
// the tail consumer share the benchmark's process; the broker has its own): per byte produced, the kernel copies
// it five times (send, receive, page cache, send, receive) where L_net copies it twice.
//
// The figure is bytes in plus bytes out per second, the sum R_net counts for a broker (produce plus tail
// fetch), over the time from the first write until the last forwarded byte arrived. So L_relay / L_net is the
// highest R_net any broker could reach on this machine: a broker does at least this work, plus its protocol.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import {
  helperTimeoutMs,
  megabytesPerCpuSecondRange,
  nextMessage,
  sendUntil,
  stopHelper,
} from './loopback.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import type { RelayMessage } from './relay-process.js';
import { writeBytes } from './write-buffers.js';

const relayModule = fileURLToPath(new URL('./relay-process.js', import.meta.url));

/** Counts what arrives on `socket` and resolves with the total when it ends (or fails after a timeout). */
function countUntilEnd(socket: Socket): {
  bytes: () => number;
  ended: (timeoutMs: number) => Promise<number>;
} {
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  const end = once(socket, 'end');
  return {
    bytes: () => bytes,
    ended: async (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`relay output did not end in ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([end, timeout]);
      } finally {
        clearTimeout(timer);
      }
      return bytes;
    },
  };
}

async function measureOnce(context: LimitContext): Promise<LimitSample> {
  const relay = fork(relayModule, [context.workDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let relayUsage: ProcessWatch | undefined;
  const sockets: Socket[] = [];
  try {
    const ports = await nextMessage<RelayMessage, 'listening'>(relay, 'listening', 'relay');
    assert(relay.pid !== undefined, 'forked relay has no pid');
    assert(ports.outputPort !== null, 'relay forwards to no ports here, so it listens for its reader');
    relayUsage = watchProcess(relay.pid);
    const outputConnected = nextMessage<RelayMessage, 'output-connected'>(relay, 'output-connected', 'relay');
    const reader = connect({ host: '127.0.0.1', port: ports.outputPort, noDelay: true });
    sockets.push(reader);
    await once(reader, 'connect');
    await outputConnected;
    const received = countUntilEnd(reader);
    const writer = connect({ host: '127.0.0.1', port: ports.inputPort, noDelay: true });
    sockets.push(writer);
    await once(writer, 'connect');
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const sent = await sendUntil(writer, start + context.durationMs);
    writer.end();
    // Only now (see nextMessage): the report follows the end, and no event comes between end() and this line.
    const relayed = nextMessage<RelayMessage, 'relayed'>(relay, 'relayed', 'relay');
    // Awaited after the output's end; a rejection meanwhile must not surface as unhandled.
    relayed.catch(() => {});
    const forwarded = await received.ended(helperTimeoutMs);
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const usage = relayUsage.stop();
    const written = (await relayed).bytes;
    assert(forwarded === sent, `relay forwarded ${forwarded} bytes of ${sent} sent`);
    assert(written === sent, `relay wrote ${written} bytes to its file of ${sent} sent`);
    return {
      value: megabytesPerSecond(sent + forwarded, seconds),
      details: {
        bytes: sent + forwarded,
        bytesIn: sent,
        bytesOut: forwarded,
        bytesWritten: written,
        seconds,
        writeBytes,
        clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
        relayCpuSeconds: usage.cpuSeconds,
        relayPeakRssBytes: usage.peakRssBytes,
      },
    };
  } finally {
    relayUsage?.stop();
    for (const socket of sockets) socket.destroy();
    await stopHelper(relay);
  }
}

export const relayLimit: LimitDefinition = {
  name: 'L_relay',
  unit: 'MB/s',
  description: 'in + out of a relay that appends each chunk to the page cache, then forwards it',
  measureOnce,
  note(details) {
    const cores = details.map((d) => (d.relayCpuSeconds as number) / (d.seconds as number));
    return (
      `relay ${megabytesPerCpuSecondRange(details, 'relayCpuSeconds')} MB per CPU-second, ` +
      `${formatFigure(Math.min(...cores))}-${formatFigure(Math.max(...cores))} cores`
    );
  },
};
