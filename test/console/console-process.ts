// Starts `bin/brook console` as a process on a free port against a broker, waits for its "console listening at"
// line, and stops it by its PID (SIGTERM, then SIGKILL after 10 s). Also a small JSON client for its API.

import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const START_TIMEOUT_MS = 20_000;

export interface ConsoleProcess {
  readonly url: string;
  readonly pid: number;
  log(): string;
  stop(): Promise<void>;
}

export async function startConsole(args: string[]): Promise<ConsoleProcess> {
  const child: ChildProcess = spawn(process.execPath, [BROOK, 'console', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`console did not start:\n${stdout}\n${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /console listening at (\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!.replace(/\/$/, ''));
      }
    });
    exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`console exited before listening:\n${stdout}\n${stderr}`));
    });
  }).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
  return { url, pid: child.pid!, log: () => stderr, stop };
}

/** One API call: status and parsed JSON body (read field by field by the tests; a wrong shape fails them). */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: the tests read the answers' fields directly
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}/api${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) };
}
