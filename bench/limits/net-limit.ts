// L_net: Node-to-Node TCP over loopback between two processes. This process writes 256 KiB buffers on one
// connection as fast as the socket drains them, for the repetition's duration; a forked sink (net-sink.ts)
// counts what arrives. The figure is bytes received over the time from the first write until the sink
// confirms the last byte, so nothing still buffered in the kernel is counted. MB/s are decimal.
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

async function measureOnce(context: LimitContext): Promise<LimitSample> {
  const sink = fork(sinkModule, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
    const { bytes } = await received;
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const eventLoopDelay = loop.stop();
    const usage = sinkUsage.stop();
    assert(bytes === sent, `net sink received ${bytes} bytes of ${sent} sent`);
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
  measureOnce,
  note(details) {
    return `sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second`;
  },
};
