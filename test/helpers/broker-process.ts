// Starts a real broker process (bin/brook server) on a free loopback port with a throwaway data directory, for
// integration tests with real clients. The broker prints "listening on HOST:PORT" once it serves; the helper
// waits for that line. stop() always ends the process it started (by its PID) and removes the directory.
//
// The wait is bounded by progress, not by a fixed short time: on a loaded machine (CI runs several suites on
// two cores) a broker can take far longer than usual to start and still be fine. As long as it moves (new log
// output, or CPU time spent, read from /proc where there is one) the helper keeps waiting, up to a generous
// overall bound; a broker that does nothing for START_STALL_MS fails at once, with its log.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVER_NODE_FLAGS } from '../../src/cli/server-node-flags.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
/** A broker that shows no progress for this long has hung (a healthy one logs or computes within seconds). */
const START_STALL_MS = 30_000;
/** The bound on a start that keeps progressing, so that a broker retrying forever still fails the test. */
const START_TIMEOUT_MS = 180_000;

/** The user plus system CPU clock ticks of a process from /proc, or null where there is no /proc. */
export function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after it start at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name and state.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * Calls `onStall` once when `progress()` has not changed for `stallMs`, or when `timeoutMs` has passed in all,
 * checking every `checkMs`. Returns the function that stops watching.
 */
export function watchProgress(
  progress: () => string,
  onStall: (reason: string) => void,
  stallMs: number,
  timeoutMs: number,
  checkMs = 1_000,
): () => void {
  const startedMs = Date.now();
  let last = progress();
  let lastChangeMs = startedMs;
  const timer = setInterval(() => {
    const now = Date.now();
    const current = progress();
    if (current !== last) {
      last = current;
      lastChangeMs = now;
    }
    if (now - lastChangeMs >= stallMs)
      onStall(`no progress for ${Math.round((now - lastChangeMs) / 1000)} s`);
    else if (now - startedMs >= timeoutMs) onStall(`still starting after ${Math.round(timeoutMs / 1000)} s`);
    else return;
    clearInterval(timer);
  }, checkMs);
  return () => clearInterval(timer);
}

export interface BrokerProcess {
  /** Its broker.id. */
  readonly brokerId: number;
  readonly host: string;
  readonly port: number;
  readonly bootstrap: string;
  readonly dataDir: string;
  readonly pid: number;
  /** Everything the broker wrote to stderr so far (its log). */
  log(): string;
  /** SIGTERM and wait for exit (graceful shutdown). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  overrides?: Record<string, string | number | boolean>;
  /** Reuse a data directory (restart tests); otherwise a fresh one is made and removed on stop. */
  dataDir?: string;
  /** Keep the data directory when stopping (restart tests remove it themselves). */
  keepDataDir?: boolean;
  port?: number;
  /** A properties file passed as --config; the overrides still apply on top. */
  configPath?: string;
  /** Extra environment variables for the broker process. */
  env?: Record<string, string>;
  /** Run bin/brook itself, so its first line picks node and its flags (else node runs it with SERVER_NODE_FLAGS). */
  asProgram?: boolean;
}

export async function startBroker(options: StartOptions = {}): Promise<BrokerProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'brook-test-'));
  const overrides: Record<string, string | number | boolean> = {
    'broker.id': 0,
    listeners: `PLAINTEXT://127.0.0.1:${options.port ?? 0}`,
    'log.dirs': dataDir,
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'group.initial.rebalance.delay.ms': 0,
    ...options.overrides,
  };
  const bin = join(REPO_ROOT, 'bin/brook');
  const args = options.asProgram ? ['server'] : [...SERVER_NODE_FLAGS, bin, 'server'];
  if (options.configPath !== undefined) args.push('--config', options.configPath);
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${String(v)}`);
  const child = spawn(options.asProgram ? bin : process.execPath, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Reused frame memory is overwritten when it becomes idle: a response or log that still used it would carry
    // garbage, which every test that reads data back would catch.
    env: { ...process.env, BROOK_DEBUG_POISON_FRAMES: '1', ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const cleanup = (): void => {
    if (!options.keepDataDir && options.dataDir === undefined)
      rmSync(dataDir, { recursive: true, force: true });
  };
  const port = await new Promise<number>((resolvePort, reject) => {
    // Output length and CPU time together: either advancing means the broker is still on its way.
    const progress = () => `${stdout.length}/${stderr.length}/${cpuTicks(child.pid!) ?? ''}`;
    const stopWatching = watchProgress(
      progress,
      (reason) => reject(new Error(`broker did not start (${reason}):\n${stderr}`)),
      START_STALL_MS,
      START_TIMEOUT_MS,
    );
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /listening on [^\s:]+:(\d+)/.exec(stdout);
      if (m) {
        stopWatching();
        resolvePort(Number(m[1]));
      }
    });
    exited.then((code) => {
      stopWatching();
      reject(new Error(`broker exited with ${code} before listening:\n${stderr}`));
    });
  }).catch(async (e: unknown) => {
    child.kill('SIGKILL');
    await exited;
    cleanup();
    throw e;
  });
  return {
    brokerId: Number(overrides['broker.id']),
    host: '127.0.0.1',
    port,
    bootstrap: `127.0.0.1:${port}`,
    dataDir,
    pid: child.pid!,
    log: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(killer);
      cleanup();
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      cleanup();
    },
  };
}

/** Runs a command to completion with a time bound; resolves with its exit code and output. */
export function run(
  command: string,
  args: string[],
  options: { input?: string | Buffer; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child: ChildProcess = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
    // A command that exits without reading its input (kcat -L, quick on a loaded machine) closes the pipe first;
    // the write's EPIPE says nothing the exit code does not, and unhandled it would fail the calling test.
    child.stdin!.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
    child.stdin!.end(options.input ?? '');
  });
}
