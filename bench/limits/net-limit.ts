// L_net: Node-to-Node TCP over loopback between two processes. This process writes 256 KiB buffers on one
// connection as fast as the socket drains them, for the repetition's duration; a forked sink (net-sink.ts)
// counts what arrives. The figure is bytes received over the time from the first write until the sink
// confirms the last byte, so nothing still buffered in the kernel is counted. MB/s are decimal.
//
// L_sink is the same with the sink appending every chunk it receives to a file in the page cache (net-sink.ts
// given a directory): one direction of a broker's data path with no protocol at all, the limit a broker's
// produce throughput is read against (a broker receives each byte and appends it; L_relay adds the tail read).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { monitorEventLoop } from '../harness/event-loop-delay.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { megabytesPerCpuSecondRange, nextMessage, sendUntil, stopHelper } from './loopback.js';
import type { SinkMessage } from './net-sink.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import { writeBytes } from './write-buffers.js';

const sinkModule = fileURLToPath(new URL('./net-sink.js', import.meta.url));

/** One repetition of L_net, or of L_sink when `appendToFile` (the sink writes into the repetition's directory). */
export async function measureSinkOnce(context: LimitContext, appendToFile: boolean): Promise<LimitSample> {
  const sinkArgs = appendToFile ? [context.workDir] : [];
  const sink = fork(sinkModule, sinkArgs, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let sinkUsage: ProcessWatch | undefined;
  let socket: Socket | undefined;
  try {
    const { port } = await nextMessage<SinkMessage, 'listening'>(sink, 'listening', 'net sink');
    assert(sink.pid !== undefined, 'forked sink has no pid');
    sinkUsage = watchProcess(sink.pid);
    socket = connect({ host: '127.0.0.1', port, noDelay: true });
    await once(socket, 'connect');
    const received = nextMessage<SinkMessage, 'received'>(sink, 'received', 'net sink');
    // Awaited below; if sending fails first, its rejection must not surface as unhandled.
    received.catch(() => {});
    const loop = monitorEventLoop();
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const sent = await sendUntil(socket, start + context.durationMs);
    socket.end();
    const { bytes, bytesWritten } = await received;
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const eventLoopDelay = loop.stop();
    const usage = sinkUsage.stop();
    assert(bytes === sent, `net sink received ${bytes} bytes of ${sent} sent`);
    if (appendToFile)
      assert(bytesWritten === sent, `sink wrote ${bytesWritten} bytes to its file of ${sent}`);
    return {
      value: megabytesPerSecond(bytes, seconds),
      details: {
        bytes,
        seconds,
        writeBytes,
        senderCpuSeconds: (cpu.user + cpu.system) / 1e6,
        senderEventLoopDelay: eventLoopDelay,
        sinkCpuSeconds: usage.cpuSeconds,
        sinkPeakRssBytes: usage.peakRssBytes,
        ...(appendToFile ? { bytesWritten } : {}),
      },
    };
  } finally {
    sinkUsage?.stop();
    socket?.destroy();
    await stopHelper(sink);
  }
}

export const netLimit: LimitDefinition = {
  name: 'L_net',
  unit: 'MB/s',
  description: 'TCP over loopback, 256 KiB writes, two processes',
  measureOnce: (context) => measureSinkOnce(context, false),
  note(details) {
    return `sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second`;
  },
};

export const sinkLimit: LimitDefinition = {
  name: 'L_sink',
  unit: 'MB/s',
  description:
    'TCP over loopback, 256 KiB writes, the receiver appending each chunk to a file in the page cache',
  measureOnce: (context) => measureSinkOnce(context, true),
  note(details) {
    return `sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second`;
  },
};
