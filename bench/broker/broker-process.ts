// The broker under test: one `brook server` process on a free loopback port, data in a directory the caller
// owns (normally from withTempDir, which removes it). It is started, watched and stopped by its own PID only.
// `cpuProfileDir` runs it under `node --cpu-prof`; the profile is written when it exits after SIGTERM.
// `gcProfileDir` runs it under `--trace-gc --trace-incremental-marking` (its standard output after the listening
// line goes to DIR/broker-PID.gc.log) with gc-probe.ts, which writes DIR/broker-PID.heapprofile on exit.
//
// It runs the CLI of the same build as this module (what bin/brook does for dist/), so a benchmark built into
// a folder of its own measures the broker of that same build, whatever state dist/ is in.
//
// Also reads what /proc says of it: bytes it caused to be written to storage (write amplification) and its
// resident set now, for the RSS series that shows whether memory stays flat under load.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../src/cli/server-node-flags.js';
import type { LoopProbeReport } from './loop-probe.js';

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
  /** Trace the broker's garbage collections and sample what survives scavenges into this folder (`--gc-prof`). */
  gcProfileDir?: string;
  /** Load loop-probe.ts into the broker, reporting its event-loop delay to this file on each `probeLoop()`. */
  loopProbeFile?: string;
  /** Environment variables for the broker beside this process's own (`--compare-env`). */
  env?: Readonly<Record<string, string>>;
}

export interface BrokerProcess {
  readonly port: number;
  readonly pid: number;
  /** The tail of its stderr. */
  log(): string;
  /** SIGTERM, wait for exit (SIGKILL after `timeoutMs`, 20 s by default); resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Asks the loop probe for the event-loop delay since the previous ask (SIGUSR2); a no-op without one. */
  probeLoop(): void;
  /** The answer to the last probeLoop(), once written; undefined without a probe or after `timeoutMs`. */
  readLoopProbe(timeoutMs?: number): Promise<LoopProbeReport | undefined>;
}

const loopProbeModule = new URL('./loop-probe.js', import.meta.url).href;
const gcProbeModule = new URL('./gc-probe.js', import.meta.url).href;

export async function startBroker(options: BrokerOptions): Promise<BrokerProcess> {
  const overrides: Record<string, string | number | boolean> = {
    'broker.id': 0,
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'log.dirs': options.dataDir,
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'group.initial.rebalance.delay.ms': 0,
    ...options.overrides,
  };
  const args: string[] = [];
  if (options.cpuProfileDir !== undefined) args.push('--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir);
  if (options.loopProbeFile !== undefined) args.push('--import', loopProbeModule);
  if (options.gcProfileDir !== undefined) {
    args.push('--trace-gc', '--trace-incremental-marking', '--import', gcProbeModule);
  }
  args.push(...SERVER_NODE_FLAGS, '--input-type=module', '-e', cliScript, 'server');
  for (const [key, value] of Object.entries(overrides)) args.push('--override', `${key}=${String(value)}`);
  const env = {
    ...process.env,
    ...options.env,
    BROOK_BENCH_LOOP_PROBE: options.loopProbeFile ?? '',
    BROOK_BENCH_GC_PROFILE: options.gcProfileDir ?? '',
  };
  const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let probesSent = 0;
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
      let listening = false;
      const gcLog = options.gcProfileDir && join(options.gcProfileDir, `broker-${child.pid}.gc.log`);
      child.stdout!.on('data', (data: Buffer) => {
        // Under --gc-prof the broker's standard output is its GC trace: kept in a file, not in memory.
        if (gcLog) appendFileSync(gcLog, data);
        if (listening) return;
        stdout += data.toString();
        const match = /listening on [^\s:]+:(\d+)/.exec(stdout);
        if (match) {
          listening = true;
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
      stop: (timeoutMs = stopTimeoutMs) => stop(child, exited, killOnExit, timeoutMs),
      probeLoop() {
        if (options.loopProbeFile === undefined || child.exitCode !== null) return;
        probesSent++;
        child.kill('SIGUSR2');
      },
      readLoopProbe: (timeoutMs = 2000) => readProbe(options.loopProbeFile, probesSent, timeoutMs),
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
  timeoutMs: number,
): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(killer);
  process.off('exit', killOnExit);
  return code;
}

/** Waits until the probe file holds the answer numbered `sequence` (the broker answers between requests). */
async function readProbe(
  file: string | undefined,
  sequence: number,
  timeoutMs: number,
): Promise<LoopProbeReport | undefined> {
  if (file === undefined || sequence === 0) return undefined;
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      const report = JSON.parse(readFileSync(file, 'utf8')) as LoopProbeReport;
      if (report.sequence === sequence) return report;
    } catch {
      // Not written yet, or caught mid-write: ask again.
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
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
