// The broker under test: one `brook server` process on a free loopback port, data in a directory the caller
// owns (normally from withTempDir, which removes it). It is started, watched and stopped by its own PID only.
// `cpuProfileDir` runs it under `node --cpu-prof`; the profile is written when it exits after SIGTERM.
//
// It runs the CLI of the same build as this module (what bin/brook does for dist/), so a benchmark built into
// a folder of its own measures the broker of that same build, whatever state dist/ is in.
//
// Also reads what /proc says of it: bytes it caused to be written to storage (write amplification) and its
// resident set now, for the RSS series that shows whether memory stays flat under load.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The checkout's root, from this module's place (dist*\/bench/broker/broker-process.js). */
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** The CLI of this build, and bin/brook's few lines to run it with the arguments that follow. */
const cliModule = new URL('../../src/cli/main.js', import.meta.url).href;
const cliScript = `import { main } from ${JSON.stringify(cliModule)};
main(process.argv.slice(1)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (error) => { console.error(error instanceof Error ? (error.stack ?? error.message) : String(error)); process.exitCode = 1; },
);`;
const startTimeoutMs = 30_000;
const stopTimeoutMs = 20_000;
/** How much of the broker's log is kept for an error message. */
const logBytesKept = 16 * 1024;

export interface BrokerOptions {
  dataDir: string;
  overrides?: Record<string, string | number | boolean>;
  cpuProfileDir?: string;
}

export interface BrokerProcess {
  readonly port: number;
  readonly pid: number;
  /** The tail of its stderr. */
  log(): string;
  /** SIGTERM, wait for exit (SIGKILL after a bound); resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startBroker(options: BrokerOptions): Promise<BrokerProcess> {
  const overrides: Record<string, string | number | boolean> = {
    'broker.id': 0,
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'log.dirs': options.dataDir,
    'offsets.topic.replication.factor': 1,
    'group.initial.rebalance.delay.ms': 0,
    ...options.overrides,
  };
  const args: string[] = [];
  if (options.cpuProfileDir !== undefined) args.push('--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir);
  args.push('--input-type=module', '-e', cliScript, 'server');
  for (const [key, value] of Object.entries(overrides)) args.push('--override', `${key}=${String(value)}`);
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (data: Buffer): void => {
    log = (log + data.toString()).slice(-logBytesKept);
  };
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A benchmark that dies must not leave its broker behind.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stdout = '';
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`broker not listening in ${startTimeoutMs} ms`)),
        startTimeoutMs,
      );
      child.stdout!.on('data', (data: Buffer) => {
        stdout += data.toString();
        const match = /listening on [^\s:]+:(\d+)/.exec(stdout);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`broker exited (${code}) before listening`));
      });
    });
    return {
      port,
      pid: child.pid!,
      log: () => log,
      stop: () => stop(child, exited, killOnExit),
    };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    process.off('exit', killOnExit);
    throw new Error(`${(error as Error).message}\n${log}`);
  }
}

async function stop(
  child: ChildProcess,
  exited: Promise<number | null>,
  killOnExit: () => void,
): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
  const code = await exited;
  clearTimeout(killer);
  process.off('exit', killOnExit);
  return code;
}

/** Bytes the process caused to be sent to storage so far (/proc/PID/io write_bytes), or undefined. */
export function readWriteBytes(pid: number): number | undefined {
  try {
    const match = /^write_bytes:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
