// L_rtt: request and response over loopback TCP between two processes with one request in flight, each small
// request answered by a response of a fixed size written from memory (rtt-responder.ts). A consumer that keeps one
// Fetch in flight (as Kafka's consumers do, one per broker) can move no more than this whatever its broker does:
// every response waits for the request that follows the one before, so the round trip's wake-ups (each process
// sleeping until the other's bytes arrive) are paid once per response, not amortised as in L_net's stream. Its
// default response is Kafka's max.partition.fetch.bytes (1 MiB), the size of a one-partition catch-up's fetches;
// the backlog benchmark measures it at its own fetches' size.
//
// The figure is response payload bytes per second over the repetition's time bound, after a short uncounted
// warm-up; the details give round trips per second and each side's CPU.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { megabytesPerCpuSecondRange, nextMessage, stopHelper } from './loopback.js';
import { readChunkBytes } from './read-limit.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import { RTT_REQUEST_BYTES, RTT_RESPONSE_BYTES_MAX, type RttMessage } from './rtt-frames.js';

const responderModule = fileURLToPath(new URL('./rtt-responder.js', import.meta.url));

/**
 * The longest uncounted warm-up before a repetition's clock starts (half its time bound if shorter). A second,
 * because on these virtual machines memory freed for a few seconds goes back to the host, and the first second of
 * round trips after another benchmark's phase runs at a fifth of the rate the next seconds reach (the kernel's
 * socket buffers faulting in; bench/README.md "Cold memory").
 */
const warmupMsMax = 1000;

/** One repetition: round trips with `responseBytes` answers until the context's time bound. */
export async function measureRoundTripsOnce(
  context: LimitContext,
  responseBytes: number,
): Promise<LimitSample> {
  assert(
    Number.isInteger(responseBytes) && responseBytes > 0 && responseBytes <= RTT_RESPONSE_BYTES_MAX,
    `L_rtt response of ${responseBytes} bytes`,
  );
  const responder = fork(responderModule, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let responderUsage: ProcessWatch | undefined;
  let connection: ReturnType<typeof connect> | undefined;
  try {
    const { port } = await nextMessage<RttMessage, 'listening'>(responder, 'listening', 'rtt responder');
    assert(responder.pid !== undefined, 'forked responder has no pid');
    responderUsage = watchProcess(responder.pid);
    connection = connect({ host: '127.0.0.1', port, noDelay: true });
    await once(connection, 'connect');
    const request = Buffer.alloc(RTT_REQUEST_BYTES);
    request.writeInt32BE(RTT_REQUEST_BYTES - 4, 0);
    request.writeInt32BE(responseBytes, 4);
    const frameBytes = 4 + responseBytes;
    let received = 0;
    let answered: (() => void) | null = null;
    let failed: Error | null = null;
    connection.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // One request in flight: whatever arrives belongs to its answer, and no more than the answer may.
      if (received > frameBytes)
        failed ??= new Error(`rtt responder sent ${received} bytes for ${frameBytes}`);
      if (received >= frameBytes && answered !== null) {
        const done = answered;
        answered = null;
        done();
      }
    });
    const closed = once(connection, 'close').then(() => {
      failed ??= new Error('rtt responder closed the connection');
      answered?.();
    });
    closed.catch(() => {});
    const roundTrip = async (): Promise<void> => {
      received = 0;
      const answer = new Promise<void>((resolve) => {
        answered = resolve;
      });
      connection!.write(request);
      await answer;
    };
    // Uncounted: the responder makes its answer buffer on the first request; code and memory warm up.
    const warmupEnd = performance.now() + Math.min(warmupMsMax, context.durationMs / 2);
    while (performance.now() < warmupEnd && failed === null) await roundTrip();
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const deadline = start + context.durationMs;
    let roundTrips = 0;
    while (performance.now() < deadline && failed === null) {
      await roundTrip();
      if (failed === null) roundTrips++;
    }
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    if (failed !== null) throw failed;
    const usage = responderUsage.stop();
    return {
      value: megabytesPerSecond(roundTrips * responseBytes, seconds),
      details: {
        responseBytes,
        roundTrips,
        seconds,
        roundTripsPerSecond: roundTrips / seconds,
        bytes: roundTrips * responseBytes,
        askerCpuSeconds: (cpu.user + cpu.system) / 1e6,
        responderCpuSeconds: usage.cpuSeconds,
      },
    };
  } finally {
    responderUsage?.stop();
    connection?.destroy();
    await stopHelper(responder);
  }
}

export const rttLimit: LimitDefinition = {
  name: 'L_rtt',
  unit: 'MB/s',
  description:
    'TCP over loopback, one request in flight, each answered with 1 MiB from memory, two processes',
  // In the limits table, answers of max.partition.fetch.bytes's default: a one-partition fetch.
  measureOnce: (context) => measureRoundTripsOnce(context, readChunkBytes),
  note(details) {
    const rates = details.map((d) => Number(d.roundTripsPerSecond)).sort((a, b) => a - b);
    const median = rates[Math.floor(rates.length / 2)] ?? 0;
    return `${Math.round(median)} round trips/s, responder ${megabytesPerCpuSecondRange(details, 'responderCpuSeconds')} MB per CPU-second`;
  },
};
