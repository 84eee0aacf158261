// What the loopback limits share (L_net and L_relay): a forked helper process that reports over its IPC
// channel, and a sender that writes the protocol's 256 KiB buffers on a socket until a deadline.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { formatFigure } from '../harness/table.js';
import { writeBuffer, writeBytes } from './write-buffers.js';

/** How long a helper process may take to start or to answer before the repetition is abandoned. */
export const helperTimeoutMs = 10_000;

/**
 * Waits for the first message of `type` from `child`, failing on its exit or after helperTimeoutMs from this
 * call: so call it once the message can come (a final report after the sender's end), not before a repetition
 * that may outlast the timeout.
 */
export function nextMessage<M extends { type: string }, T extends M['type']>(
  child: ChildProcess,
  type: T,
  helperName: string,
): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`${helperName} sent no '${type}' within ${helperTimeoutMs} ms`)),
      helperTimeoutMs,
    );
    const onMessage = (message: M): void => {
      if (message.type === type) finish(undefined, message as Extract<M, { type: T }>);
    };
    const onExit = (code: number | null): void =>
      finish(new Error(`${helperName} exited (${code}) before '${type}'`));
    function finish(error?: Error, message?: Extract<M, { type: T }>): void {
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

/** Writes until the deadline, waiting for 'drain' whenever the socket's buffer is full. Returns bytes written. */
export async function sendUntil(socket: Socket, deadline: number): Promise<number> {
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

/** Ends a helper (ours alone, so by its own pid) and waits, briefly, until it has gone. */
export async function stopHelper(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
}

/**
 * "a-b": the range over repetitions of bytes moved per CPU-second of one process, from details holding `bytes`
 * and the CPU seconds under `cpuKey`. CPU seconds come in clock ticks (10 ms), so a very short repetition can
 * read as zero: it counts as one tick.
 */
export function megabytesPerCpuSecondRange(
  details: readonly Record<string, unknown>[],
  cpuKey: string,
): string {
  const perCpu = details.map((d) => (d.bytes as number) / 1e6 / Math.max(d[cpuKey] as number, 0.01));
  return `${formatFigure(Math.min(...perCpu))}-${formatFigure(Math.max(...perCpu))}`;
}
