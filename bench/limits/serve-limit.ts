// L_serve: stored bytes moved to another process over loopback TCP with no protocol, what a broker does for a
// consumer catching up a backlog minus everything Kafka adds (requests, fetch sizes, round trips): a forked server
// (serve-process.ts) reads page-cached files in 1 MiB reads off its event loop and writes each buffer to one
// socket while the next is read; this process counts what arrives. Without sendfile every byte is copied twice on
// the server (page cache to buffer, buffer to socket) and once more by the receiver, on the same cores: the most
// any Node broker could serve those files at here, and so, with L_rtt (one fetch in flight), the limit a backlog
// consumer is read against (bench/broker/backlog.ts).
//
// The figure is bytes received over the time from connecting until the last byte arrived; the details give both
// sides' CPU.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { nextMessage, stopHelper } from './loopback.js';
import type { LimitSample } from './registry.js';
import type { ServeMessage } from './serve-process.js';

const serverModule = fileURLToPath(new URL('./serve-process.js', import.meta.url));

/** Serves `paths` once, whole and in order; the sample's value is MB/s received. */
export async function serveFilesOnce(paths: readonly string[]): Promise<LimitSample> {
  assert(paths.length > 0, 'L_serve needs files to serve');
  const expected = paths.reduce((sum, path) => sum + statSync(path).size, 0);
  const server = fork(serverModule, [...paths], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let serverUsage: ProcessWatch | undefined;
  let socket: ReturnType<typeof connect> | undefined;
  try {
    const { port } = await nextMessage<ServeMessage, 'listening'>(server, 'listening', 'file server');
    assert(server.pid !== undefined, 'forked file server has no pid');
    const failed = nextMessage<ServeMessage, 'failed'>(server, 'failed', 'file server');
    failed.catch(() => {});
    serverUsage = watchProcess(server.pid);
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    socket = connect({ host: '127.0.0.1', port, noDelay: true });
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    const ended = once(socket, 'end');
    const outcome = await Promise.race([ended.then(() => null), failed]);
    if (outcome !== null) throw new Error(`file server: ${outcome.message}`);
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const usage = serverUsage.stop();
    assert(received === expected, `L_serve received ${received} of ${expected} bytes`);
    return {
      value: megabytesPerSecond(received, seconds),
      details: {
        bytes: received,
        seconds,
        receiverCpuSeconds: (cpu.user + cpu.system) / 1e6,
        serverCpuSeconds: usage.cpuSeconds,
      },
    };
  } finally {
    serverUsage?.stop();
    socket?.destroy();
    await stopHelper(server);
  }
}
