// L_net: Node-to-Node TCP over loopback between two processes. This process writes 256 KiB buffers on one
// connection as fast as the socket drains them, for the repetition's duration; a forked sink (net-sink.ts)
// counts what arrives. The figure is bytes received over the time from the first write until the sink
// confirms the last byte, so nothing still buffered in the kernel is counted. MB/s are decimal.
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { monitorEventLoop } from '../harness/event-loop-delay.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import type { SinkMessage } from './net-sink.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import { writeBuffer, writeBytes } from './write-buffers.js';

const sinkModule = fileURLToPath(new URL('./net-sink.js', import.meta.url));

/** How long the sink may take to start or to confirm receipt before the repetition is abandoned. */
const sinkTimeoutMs = 10_000;

/** Waits for the first message of `type` from `child`, failing on its exit or after the timeout. */
function nextMessage<T extends SinkMessage['type']>(
  child: ChildProcess,
  type: T,
): Promise<Extract<SinkMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`net sink sent no '${type}' within ${sinkTimeoutMs} ms`)),
      sinkTimeoutMs,
    );
    const onMessage = (message: SinkMessage): void => {
      if (message.type === type) finish(undefined, message as Extract<SinkMessage, { type: T }>);
    };
    const onExit = (code: number | null): void =>
      finish(new Error(`net sink exited (${code}) before '${type}'`));
    function finish(error?: Error, message?: Extract<SinkMessage, { type: T }>): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(message!);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Writes until the deadline, waiting for 'drain' whenever the socket's buffer is full. */
async function sendUntil(socket: Socket, deadline: number): Promise<number> {
  let bytes = 0;
  let writes = 0;
  while (performance.now() < deadline) {
    const flushed = socket.write(writeBuffer(writes));
    writes++;
    bytes += writeBytes;
    if (!flushed) await once(socket, 'drain');
  }
  return bytes;
}

/** Ends the sink (ours alone, so by its own pid) and waits, briefly, until it has gone. */
async function stopSink(sink: ChildProcess): Promise<void> {
  if (sink.exitCode !== null || sink.signalCode !== null) return;
  const exited = once(sink, 'exit');
  sink.kill();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
}

async function measureOnce(context: LimitContext): Promise<LimitSample> {
  const sink = fork(sinkModule, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let sinkUsage: ProcessWatch | undefined;
  let socket: Socket | undefined;
  try {
    const { port } = await nextMessage(sink, 'listening');
    assert(sink.pid !== undefined, 'forked sink has no pid');
    sinkUsage = watchProcess(sink.pid);
    socket = connect({ host: '127.0.0.1', port, noDelay: true });
    await once(socket, 'connect');
    const received = nextMessage(sink, 'received');
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
    await stopSink(sink);
  }
}

export const netLimit: LimitDefinition = {
  name: 'L_net',
  unit: 'MB/s',
  description: 'TCP over loopback, 256 KiB writes, two processes',
  measureOnce,
  note(details) {
    // CPU seconds come in clock ticks (10 ms), so a very short repetition can read as zero.
    const perCpu = details.map((d) => (d.bytes as number) / 1e6 / Math.max(d.sinkCpuSeconds as number, 0.01));
    return `sink ${formatFigure(Math.min(...perCpu))}-${formatFigure(Math.max(...perCpu))} MB per CPU-second`;
  },
};
