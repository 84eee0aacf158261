// L_net: Node-to-Node TCP over loopback between two processes. This process writes 256 KiB buffers on one
// connection as fast as the socket drains them, for the repetition's duration; a forked sink (net-sink.ts)
// counts what arrives. The figure is bytes received over the time from the first write until the sink
// confirms the last byte, so nothing still buffered in the kernel is counted. MB/s are decimal.
//
// L_sink is the same with the sink appending every chunk it receives to a file in the page cache (net-sink.ts
// given a directory): one direction of a broker's data path with no protocol at all, the limit a broker's
// produce throughput is read against (a broker receives each byte and appends it; L_relay adds the tail read).
//
// L_tls is L_net through TLS (Node's default: TLS 1.3 with the cipher it negotiates, AES-256-GCM on this
// hardware): the most that any SSL listener can move here in one direction, the ceiling of the TLS benchmark's
// ratios (bench/security/tls-throughput.ts).
//
// L_sink_acked is L_sink answering: the producer sends requests of a fixed size with at most five unacknowledged
// and the sink answers every append with its appended count (acked-send.ts), as a broker answers acks=1 after its
// own append: the round trip of a single-node write with nothing else in it, the latency floor of the cluster
// benchmark's single-node cells in latency mode.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { writeDevCertificates } from '../../src/security/dev-certs.js';
import { monitorEventLoop } from '../harness/event-loop-delay.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { type AckedSending, onePartitionWindow, roundTripNote, sendLoad } from './acked-send.js';
import { megabytesPerCpuSecondRange, nextMessage, stopHelper } from './loopback.js';
import type { SinkMessage } from './net-sink.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';

const sinkModule = fileURLToPath(new URL('./net-sink.js', import.meta.url));

/** What the sink does besides counting: append to a file (L_sink), listen with TLS (L_tls), acknowledge. */
export interface SinkMode {
  appendToFile: boolean;
  tls: boolean;
  /** Acknowledged requests (L_sink_acked; the sink appends to its file). */
  acked?: AckedSending;
}

/** One repetition of L_net, L_sink or L_tls (the sink's files go into the repetition's directory). */
export async function measureSinkOnce(context: LimitContext, mode: SinkMode): Promise<LimitSample> {
  const { appendToFile, acked } = mode;
  assert(acked === undefined || appendToFile, 'an acknowledging sink appends to its file');
  const sinkArgs = appendToFile ? [context.workDir, ...(acked === undefined ? [] : ['--ack'])] : [];
  // Certificates are made before the clock starts: openssl takes a second or so.
  const certs = mode.tls ? writeDevCertificates({ dir: join(context.workDir, 'certs') }) : undefined;
  const env =
    certs === undefined
      ? process.env
      : {
          ...process.env,
          BROOK_BENCH_SINK_TLS_CERT: certs.brokerCert,
          BROOK_BENCH_SINK_TLS_KEY: certs.brokerKey,
        };
  const sink = fork(sinkModule, sinkArgs, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env });
  let sinkUsage: ProcessWatch | undefined;
  let socket: Socket | undefined;
  let cipher: string | undefined;
  try {
    const { port } = await nextMessage<SinkMessage, 'listening'>(sink, 'listening', 'net sink');
    assert(sink.pid !== undefined, 'forked sink has no pid');
    sinkUsage = watchProcess(sink.pid);
    if (certs === undefined) {
      socket = connect({ host: '127.0.0.1', port, noDelay: true });
      await once(socket, 'connect');
    } else {
      socket = connectTls({ host: '127.0.0.1', port, ca: readFileSync(certs.caCert) });
      socket.setNoDelay(true);
      await once(socket, 'secureConnect');
      cipher = (socket as TLSSocket).getCipher().name;
    }
    const loop = monitorEventLoop();
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const {
      bytes: sent,
      acknowledgedAtMs,
      details: load,
    } = await sendLoad(socket, start + context.durationMs, acked);
    socket.end();
    // Only now (see nextMessage): the report follows the end, and no event comes between end() and this line.
    const { bytes, bytesWritten } = await nextMessage<SinkMessage, 'received'>(sink, 'received', 'net sink');
    // Acknowledged, the sink had appended every byte when the last acknowledgement came.
    const seconds = ((acknowledgedAtMs ?? performance.now()) - start) / 1000;
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
        ...load,
        senderCpuSeconds: (cpu.user + cpu.system) / 1e6,
        senderEventLoopDelay: eventLoopDelay,
        sinkCpuSeconds: usage.cpuSeconds,
        sinkSystemCpuSeconds: usage.systemSeconds,
        sinkPeakRssBytes: usage.peakRssBytes,
        ...(appendToFile ? { bytesWritten } : {}),
        ...(cipher !== undefined ? { cipher } : {}),
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
  measureOnce: (context) => measureSinkOnce(context, { appendToFile: false, tls: false }),
  note(details) {
    return `sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second`;
  },
};

export const sinkLimit: LimitDefinition = {
  name: 'L_sink',
  unit: 'MB/s',
  description:
    'TCP over loopback, 256 KiB writes, the receiver appending each chunk to a file in the page cache',
  measureOnce: (context) => measureSinkOnce(context, { appendToFile: true, tls: false }),
  note(details) {
    return `sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second`;
  },
};

export const tlsLimit: LimitDefinition = {
  name: 'L_tls',
  unit: 'MB/s',
  description: "TLS 1.3 over loopback, 256 KiB writes, two processes (Node's default cipher)",
  measureOnce: (context) => measureSinkOnce(context, { appendToFile: false, tls: true }),
  note(details) {
    return `sender ${megabytesPerCpuSecondRange(details, 'senderCpuSeconds')}, sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second`;
  },
};

export const sinkAckedLimit: LimitDefinition = {
  name: 'L_sink_acked',
  unit: 'MB/s',
  description:
    'L_sink acknowledged after each append, 5 requests of 128 KiB in flight (acks=1, one partition, one node)',
  measureOnce: (context) =>
    measureSinkOnce(context, { appendToFile: true, tls: false, acked: { window: onePartitionWindow } }),
  note(details) {
    return `sink ${megabytesPerCpuSecondRange(details, 'sinkCpuSeconds')} MB per CPU-second; ${roundTripNote(details)}`;
  },
};
