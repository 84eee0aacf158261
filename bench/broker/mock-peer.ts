// The C peer of the broker benchmark: librdkafka's in-memory mock cluster (rdkafka-mock-peer.c, one broker, no
// files), the fastest Kafka broker that runs on these machines. The launcher is compiled at bench time with gcc
// against the system's librdkafka-dev; where either is missing the bench prints one line saying so and goes on
// without the peer. Each D0 cell runs one peer repetition after each of Brook's, on the same G1 load (Produce v7,
// the mock's highest; Brook gets v9), so the two alternate in the same sitting. The peer runs produce only: its
// Fetch stops at v11 and its log drops old batches, so the tail consumer does not run against it (with
// `--no-tail`, Brook's figure is the like-for-like one).
//
// Lifecycle: `buildMockPeer` once per run (into a directory the caller removes), `startMockPeer` once per
// cell, `stop()` closes its stdin, which ends it; it is killed by its own PID if it does not exit.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';

/** The launcher's source in the checkout (this module runs from dist*\/bench/broker/). */
const sourceFile = fileURLToPath(new URL('../../../bench/broker/rdkafka-mock-peer.c', import.meta.url));
const startTimeoutMs = 10_000;
const answerTimeoutMs = 10_000;
const stopTimeoutMs = 5_000;

export type PeerBuild = { binary: string } | { skipped: string };

/** Compiles the launcher into `dir`; says why not (no gcc, no librdkafka-dev) instead of failing the run. */
export function buildMockPeer(dir: string): PeerBuild {
  if (!existsSync(sourceFile)) return { skipped: `its source ${sourceFile} is missing` };
  const binary = join(dir, 'rdkafka-mock-peer');
  const built = spawnSync('gcc', ['-O2', '-o', binary, sourceFile, '-lrdkafka'], { encoding: 'utf8' });
  if (built.error !== undefined) return { skipped: `gcc did not run (${built.error.message})` };
  if (built.status !== 0) {
    const first = (built.stderr ?? '').split('\n').find((line) => line.includes('error')) ?? built.stderr;
    return {
      skipped: `gcc could not build it against librdkafka (apt-get install librdkafka-dev): ${first.trim()}`,
    };
  }
  return { binary };
}

export interface MockPeer {
  readonly port: number;
  readonly pid: number;
  createTopic(name: string, partitions: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startMockPeer(binary: string): Promise<MockPeer> {
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (data: Buffer) => {
    stderr = (stderr + data.toString()).slice(-4096);
  });
  const lines = createInterface({ input: child.stdout! });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  try {
    const first = await nextLine(lines, child, startTimeoutMs, () => stderr);
    const match = /^bootstrap [^\s:]+:(\d+)$/.exec(first);
    assert(match, `the mock peer said '${first}' instead of its bootstrap servers`);
    assert(child.pid !== undefined, 'the mock peer has no pid');
    return {
      port: Number(match[1]),
      pid: child.pid,
      async createTopic(name, partitions) {
        assert(/^[A-Za-z0-9._-]+$/.test(name), `topic name ${name} is not a plain Kafka name`);
        child.stdin!.write(`topic ${name} ${partitions}\n`);
        const answer = await nextLine(lines, child, answerTimeoutMs, () => stderr);
        assert(answer === 'ok', `the mock peer could not create ${name}: ${answer}`);
      },
      stop: () => stop(child, lines, killOnExit),
    };
  } catch (error) {
    await stop(child, lines, killOnExit);
    throw error;
  }
}

/** The next line the launcher prints, failing if it exits or stays silent past `timeoutMs`. */
function nextLine(
  lines: Interface,
  child: ChildProcess,
  timeoutMs: number,
  stderr: () => string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`the mock peer did not answer in ${timeoutMs} ms: ${stderr()}`)),
      timeoutMs,
    );
    const onLine = (line: string): void => finish(undefined, line);
    const onExit = (code: number | null): void =>
      finish(new Error(`the mock peer exited (${code}): ${stderr()}`));
    function finish(error?: Error, line?: string): void {
      clearTimeout(timer);
      lines.off('line', onLine);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(line!);
    }
    lines.once('line', onLine);
    child.once('exit', onExit);
  });
}

async function stop(child: ChildProcess, lines: Interface, killOnExit: () => void): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.stdin!.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    await exited;
    clearTimeout(killer);
  }
  lines.close();
  process.off('exit', killOnExit);
}
