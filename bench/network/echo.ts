// `echo`: request/response throughput of Brook's network layer with an echo handler, against a bare Node echo
// server carrying the same frames over loopback in the same run. Both servers run in a forked process; this
// process is the load generator: one connection, a fixed window of pipelined requests, each response answered
// by sending the next request. The ratio says what framing, ordering and bounds cost over raw TCP.
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FrameReader } from '../../src/network/frame-reader.js';
import { encodeRequest } from '../../test/helpers/raw-client.js';
import { positiveInteger } from '../harness/options.js';
import { readProcessCpu, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond, ratioOfSummaries } from '../harness/ratio.js';
import { repeat, summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { formatFigure, formatSummaryRange, formatTable } from '../harness/table.js';
import type { EchoServerMessage, EchoServerMode } from './echo-server.js';

const serverModule = fileURLToPath(new URL('./echo-server.js', import.meta.url));

const usage = `usage: npm run bench -- echo [options]
  --sizes N[,N]      request body sizes in bytes (default 100,1024,16384)
  --window N         requests in flight on each connection (default 32)
  --connections N    connections driven side by side (default 1)
  --seconds N        duration of one repetition (default 3)
  --repetitions N    repetitions per figure, at least 3 (default 3)
  --options JSON     network options of the Brook server ('{"socket.send.buffer.bytes":1048576}')
  --results-dir DIR  where the result file goes (default bench/results)`;

interface Sample {
  requestsPerSecond: number;
  /** Request and response bytes, size prefixes included, over the wall time. */
  megabytesPerSecond: number;
  requests: number;
  /** Server CPU time (user + system) spent during the measurement, per answered request. */
  serverCpuMicrosPerRequest: number;
  serverPeakRssBytes: number;
}

function startServer(mode: EchoServerMode, options: string): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(serverModule, [mode, options], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} echo server did not start`)), 10_000);
    child.once('message', (message: EchoServerMessage) => {
      clearTimeout(timer);
      resolve({ child, port: message.port });
    });
    child.once('exit', (code) => reject(new Error(`${mode} echo server exited (${code})`)));
  });
}

function stopServer(child: ChildProcess): void {
  if (child.connected) child.disconnect();
  setTimeout(() => {
    if (child.exitCode === null) child.kill();
  }, 3_000).unref();
}

/**
 * Keeps `window` requests in flight for `durationMs` and counts answered ones. Responses must come back in
 * request order; a correlation id out of place fails the run.
 */
async function drive(
  socket: Socket,
  mode: EchoServerMode,
  bodyBytes: number,
  window: number,
  durationMs: number,
): Promise<Sample> {
  // Brook answers with a response header (the correlation id first); the raw server returns the request itself.
  const correlationAt = mode === 'brook' ? 0 : 4;
  const frames = Array.from({ length: window }, (_, id) => {
    const frame = encodeRequest(
      { apiKey: 18, apiVersion: 0, correlationId: id, headerVersion: 1 },
      Buffer.alloc(bodyBytes, id),
    );
    const prefixed = Buffer.allocUnsafe(4 + frame.length);
    prefixed.writeInt32BE(frame.length, 0);
    frame.copy(prefixed, 4);
    return prefixed;
  });
  const reader = new FrameReader(64 * 1024 * 1024);
  let sent = 0;
  let answered = 0;
  let bytes = 0;
  let sending = true;
  const start = performance.now();
  const deadline = start + durationMs;
  const done = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      reader.push(chunk);
      let arrived = 0;
      for (let frame = reader.next(); frame !== null; frame = reader.next()) {
        if (frame.readInt32BE(correlationAt) !== answered % window) {
          reject(new Error(`response ${answered} has correlation id ${frame.readInt32BE(correlationAt)}`));
          return;
        }
        answered++;
        arrived++;
      }
      if (sending && performance.now() >= deadline) sending = false;
      if (sending) {
        socket.cork();
        for (let i = 0; i < arrived; i++) {
          const frame = frames[sent % window]!;
          socket.write(frame);
          bytes += frame.length;
          sent++;
        }
        socket.uncork();
      }
      if (!sending && answered === sent) resolve();
    });
    socket.on('error', reject);
  });
  socket.cork();
  for (; sent < window; sent++) {
    socket.write(frames[sent]!);
    bytes += frames[sent]!.length;
  }
  socket.uncork();
  await done;
  const seconds = (performance.now() - start) / 1000;
  return {
    requestsPerSecond: answered / seconds,
    megabytesPerSecond: megabytesPerSecond(bytes, seconds),
    requests: answered,
    serverCpuMicrosPerRequest: 0,
    serverPeakRssBytes: 0,
  };
}

async function measureOnce(
  mode: EchoServerMode,
  options: string,
  bodyBytes: number,
  window: number,
  connections: number,
  durationMs: number,
): Promise<Sample> {
  const { child, port } = await startServer(mode, options);
  const watch = watchProcess(child.pid!);
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < connections; i++) {
      const socket = connect({ host: '127.0.0.1', port, noDelay: true });
      await once(socket, 'connect');
      sockets.push(socket);
    }
    const cpuBefore = readProcessCpu(child.pid!);
    const samples = await Promise.all(sockets.map((s) => drive(s, mode, bodyBytes, window, durationMs)));
    const cpuAfter = readProcessCpu(child.pid!);
    // The connections ran side by side for about the same time: their rates add up.
    const sample = { ...samples[0]! };
    for (const s of samples.slice(1)) {
      sample.requestsPerSecond += s.requestsPerSecond;
      sample.megabytesPerSecond += s.megabytesPerSecond;
      sample.requests += s.requests;
    }
    const usage = watch.stop();
    const cpuSeconds =
      cpuBefore === undefined || cpuAfter === undefined
        ? 0
        : cpuAfter.userSeconds + cpuAfter.systemSeconds - cpuBefore.userSeconds - cpuBefore.systemSeconds;
    return {
      ...sample,
      serverCpuMicrosPerRequest: (cpuSeconds * 1e6) / Math.max(sample.requests, 1),
      serverPeakRssBytes: usage.peakRssBytes,
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    watch.stop();
    stopServer(child);
  }
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sizes: { type: 'string', default: '100,1024,16384' },
      window: { type: 'string', default: '32' },
      connections: { type: 'string', default: '1' },
      seconds: { type: 'string', default: '3' },
      repetitions: { type: 'string', default: '3' },
      options: { type: 'string', default: '{}' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const sizes = values.sizes.split(',').map((s) => positiveInteger('--sizes', s));
  const window = positiveInteger('--window', values.window);
  const connections = positiveInteger('--connections', values.connections);
  const durationMs = Number(values.seconds) * 1000;
  if (!(durationMs > 0)) throw new Error(`--seconds needs a positive number, got '${values.seconds}'`);
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  const writer = new ResultWriter({ bench: 'network-echo', args, dir: values['results-dir'] });
  const rows: string[][] = [];
  for (const bodyBytes of sizes) {
    // Alternate the two servers so that drift on a shared machine affects both alike.
    const brook: Sample[] = [];
    const raw: Sample[] = [];
    await repeat(repetitions, async () => {
      raw.push(await measureOnce('raw', values.options, bodyBytes, window, connections, durationMs));
      brook.push(await measureOnce('brook', values.options, bodyBytes, window, connections, durationMs));
    });
    const brookMBs = summarize(brook.map((s) => s.megabytesPerSecond));
    const rawMBs = summarize(raw.map((s) => s.megabytesPerSecond));
    const brookRps = summarize(brook.map((s) => s.requestsPerSecond));
    const rawRps = summarize(raw.map((s) => s.requestsPerSecond));
    const ratio = ratioOfSummaries(brookRps, rawRps);
    // CPU per request is steadier than throughput on a shared machine: other load slows us, it does not bill us.
    const brookCpu = summarize(brook.map((s) => s.serverCpuMicrosPerRequest));
    const rawCpu = summarize(raw.map((s) => s.serverCpuMicrosPerRequest));
    const details = { bodyBytes, window, connections };
    writer.figure('echo-brook', 'MB/s', brookMBs, {
      ...details,
      requestsPerSecond: brookRps,
      samples: brook,
    });
    writer.figure('echo-raw', 'MB/s', rawMBs, { ...details, requestsPerSecond: rawRps, samples: raw });
    writer.write('echo-ratio', { ...details, ...ratio });
    writer.figure('echo-brook-server-cpu', 'us/request', brookCpu, details);
    writer.figure('echo-raw-server-cpu', 'us/request', rawCpu, details);
    rows.push([
      String(bodyBytes),
      formatSummaryRange(brookRps),
      formatSummaryRange(rawRps),
      formatFigure(brookMBs.median),
      formatFigure(rawMBs.median),
      formatSummaryRange(ratio),
      formatFigure(brookCpu.median),
      formatFigure(rawCpu.median),
    ]);
    console.log(
      `body ${bodyBytes} B: brook ${formatFigure(brookRps.median)} req/s, raw ${formatFigure(rawRps.median)} req/s`,
    );
  }
  console.log(
    `\n${formatTable(
      [
        'body B',
        'brook req/s',
        'raw req/s',
        'brook MB/s',
        'raw MB/s',
        'brook/raw',
        'brook cpu us/req',
        'raw cpu us/req',
      ],
      rows,
    )}\n\nrun ${writer.runId} written to ${writer.path}`,
  );
}

// Run directly (`node dist/bench/network/echo.js`) as well as through the bench runner.
if (process.argv[1] === fileURLToPath(import.meta.url)) await run(process.argv.slice(2));
